"""A queued object of a kind kuota does not manage is told so, on the object.

TFJob (Kubeflow Trainer v1) stands for every such kind
(docs/concepts.md#kinds-kuota-does-not-manage): its CRD (a minimal one: no
training operator runs it here, and none is needed to
see what kuota writes) is installed while the scheduler runs, as a team would
install the training operator into a cluster that already has kuota.  The scheduler, with
the chart's permissions only, notices the kind within its recheck period and
puts one Warning Event ``NotManaged`` on each TFJob that names a queue;
one that names none gets nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from scheduler.api.refs import QUEUE_NAME_LABEL

from .kuota_scheduler import SchedulerReplica
from .waiting import eventually

pytestmark = pytest.mark.cluster
GROUP, VERSION, PLURAL = "kubeflow.org", "v1", "tfjobs"
CRD_NAME = f"{PLURAL}.{GROUP}"
RECHECK_SECONDS = 60
"""How long the scheduler may take to notice a kind whose CRD appears (source.RECHECK_SECONDS)."""


def tfjob_crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": PLURAL, "singular": "tfjob", "kind": "TFJob"},
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


def tfjob(name: str, queue: str | None) -> dict[str, Any]:
    labels = {QUEUE_NAME_LABEL: queue} if queue else {}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "TFJob",
        "metadata": {"name": name, "labels": labels},
        "spec": {"tfReplicaSpecs": {}},
    }


@pytest.fixture
async def tfjob_kind(api: client.ApiClient) -> AsyncIterator[None]:
    extensions = client.ApiextensionsV1Api(api)
    with contextlib.suppress(ApiException):
        await extensions.create_custom_resource_definition(tfjob_crd())

    async def established() -> bool:
        crd = await extensions.read_custom_resource_definition(CRD_NAME)
        conditions = crd.status.conditions or []
        return any(c.type == "Established" and c.status == "True" for c in conditions)

    await eventually(established, bool, timeout=30, what="the TFJob CRD established")
    yield
    await extensions.delete_custom_resource_definition(CRD_NAME)


async def test_a_queued_tfjob_gets_one_not_managed_warning(
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    tfjob_kind: None,
) -> None:
    custom = client.CustomObjectsApi(api)
    for name, queue in (("queued", "user-queue"), ("plain", None)):
        await custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, tfjob(name, queue)
        )
    core = client.CoreV1Api(api)

    async def warnings() -> list[Any]:
        listed = await core.list_namespaced_event(namespace)
        return [e for e in listed.items if e.reason == "NotManaged"]

    told = await eventually(
        warnings,
        bool,
        timeout=RECHECK_SECONDS + 30,
        what="a NotManaged Event on the queued TFJob",
    )
    (event,) = told
    assert event.type == "Warning"
    assert (event.involved_object.kind, event.involved_object.name) == ("TFJob", "queued")
    assert "kuota does not manage kubeflow.org/tfjob" in event.message
    assert "runs unqueued" in event.message
    assert event.reporting_component == "kuota-scheduler"
    assert event.count == 1
    # The unlabelled one came in the same list and watch: it got nothing.
    assert [e.involved_object.name for e in await warnings()] == ["queued"]
