"""The rules kuota's CRDs carry as CEL (Workload, LocalQueue, AdmissionCheck), on a
real API server (docs/validation.md#rules-enforced-by-the-api-server).

* The CRDs install (the cluster fixture applies them): the API server accepts
  the rules' estimated cost.
* On every sample of tests/api/cel_samples.py (creates, status
  writes, updates of a Workload that holds a quota reservation), the API
  server refuses exactly where the Python twins do, at the same fields, with
  the same messages, and before any webhook is asked.
* A plain ``v1beta2`` Workload create does not reach kuota's validating
  webhook; one that only the webhook can judge still does, and is refused
  with the webhook's message; one with a field kuota warns about
  (``preemptionGates``) still gets the warning.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from e2e.kuota_install import KuotaWebhook
from tests.api.cel_samples import SAMPLES, Sample
from tests.api.test_cel_twins import twin_errors
from tests.builders.workload import pod_set, workload

from .test_webhook_scope import webhook_requests

pytestmark = pytest.mark.cluster
GROUP, VERSION, PLURAL = "kueue.x-k8s.io", "v1beta2", "workloads"


def in_namespace(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    placed = copy.deepcopy(obj)
    placed["metadata"]["namespace"] = namespace
    placed.pop("status", None)
    return placed


def refusal(error: ApiException) -> tuple[set[tuple[str, str]], str]:
    """(field, message) of each cause of a 422, and the whole answer's message."""
    assert error.status == 422, error.body
    body = json.loads(error.body)
    causes = body.get("details", {}).get("causes", [])
    return {(cause.get("field", ""), cause["message"]) for cause in causes}, body["message"]


def same_answer(server: set[tuple[str, str]], python: set[tuple[str, str, str]]) -> bool:
    """Every twin's (field, message) is a cause of the API server's answer, and no other."""
    if len(server) != len(python):
        return False
    return all(
        any(field == at and said.endswith(message) for field, said in server)
        for _, at, message in python
    )


class Objects:
    """Create, update and delete one sample's object, namespaced or cluster-scoped."""

    def __init__(self, custom: client.CustomObjectsApi, namespace: str, sample: Sample) -> None:
        self.custom, self.sample = custom, sample
        self.scope: tuple[str, ...] = (namespace,) if sample.namespaced else ()
        self.kind = "namespaced" if sample.namespaced else "cluster"

    async def create(self, obj: dict[str, Any], **options: Any) -> Any:
        call = getattr(self.custom, f"create_{self.kind}_custom_object")
        return await call(GROUP, VERSION, *self.scope, self.sample.plural, obj, **options)

    async def replace(self, name: str, obj: dict[str, Any], *, status: bool = False) -> Any:
        suffix = "_status" if status else ""
        call = getattr(self.custom, f"replace_{self.kind}_custom_object{suffix}")
        return await call(GROUP, VERSION, *self.scope, self.sample.plural, name, obj)

    async def get(self, name: str) -> Any:
        call = getattr(self.custom, f"get_{self.kind}_custom_object")
        return await call(GROUP, VERSION, *self.scope, self.sample.plural, name)

    async def set(self, name: str, field: str, value: Any) -> Any:
        """``field`` (``status`` or ``spec``) replaced by ``value`` on the stored object; read
        again and retried when the running scheduler wrote in between (409), a few times."""
        for _ in range(10):
            current = await self.get(name)
            try:
                return await self.replace(name, {**current, field: value}, status=field == "status")
            except ApiException as error:
                if error.status != 409:
                    raise
        raise AssertionError(f"{name}: {field} kept changing under the test")

    async def delete(self, name: str) -> None:
        call = getattr(self.custom, f"delete_{self.kind}_custom_object")
        await call(GROUP, VERSION, *self.scope, self.sample.plural, name)


async def answer_of(custom: client.CustomObjectsApi, namespace: str, sample: Sample) -> Any:
    """The API server's answer to ``sample``: None when accepted, else its refusal."""
    objects = Objects(custom, namespace, sample)
    obj = in_namespace(sample.object, namespace) if sample.namespaced else sample.object
    if sample.status is None and sample.update_spec is None:
        try:
            await objects.create(obj, dry_run="All")
            return None
        except ApiException as error:
            return refusal(error)
    created = await objects.create(obj)
    name = created["metadata"]["name"]
    try:
        for status in (*sample.history, sample.old_status):
            if status is not None:
                await objects.set(name, "status", status)
        if sample.status is not None:
            await objects.set(name, "status", sample.status)
        else:
            await objects.set(name, "spec", sample.new()["spec"])
        return None
    except ApiException as error:
        return refusal(error)
    finally:
        if not sample.namespaced:  # the namespace goes with the test; this object would stay
            await objects.delete(name)


async def test_the_api_server_refuses_as_the_python_twins_do(
    kuota: KuotaWebhook, api: client.ApiClient, namespace: str, fleet_paused: None
) -> None:
    """The API server alone judges the samples: no scheduler writes their status meanwhile
    (the session's fleet is paused; it would answer a queued sample's Workload)."""
    custom = client.CustomObjectsApi(api)
    disagreements = []
    for sample in SAMPLES:
        python = twin_errors(sample)
        answer = await answer_of(custom, namespace, sample)
        if answer is None:
            if python:
                disagreements.append((sample.name, "accepted", sorted(python)))
            continue
        causes, message = answer
        if "admission webhook" in message or not same_answer(causes, python):
            disagreements.append((sample.name, sorted(causes), sorted(python)))
    assert disagreements == []


def only_the_webhook_judges(name: str) -> list[tuple[dict[str, Any], str]]:
    """Workloads the CEL rules pass and a webhook rule refuses, with the field it names."""
    labelled = pod_set()
    labelled.raw["template"]["metadata"] = {"labels": {"bad key!": "x"}}
    no_containers = pod_set().template({"spec": {"containers": []}})
    return [
        (
            workload(f"{name}-pods")
            .uid(None)
            .created(None)
            .pod_set(requests={"pods": "1"})
            .build(),
            "spec.podSets[0].template.spec.containers[0].resources.requests[pods]",
        ),
        (
            workload(f"{name}-label").uid(None).created(None).pod_sets(labelled).build(),
            "spec.podSets[0].template.metadata.labels",
        ),
        (
            workload(f"{name}-empty").uid(None).created(None).pod_sets(no_containers).build(),
            "spec.podSets[0].template.spec.containers",
        ),
        (
            workload(f"{name}-gated")
            .uid(None)
            .created(None)
            .annotations({"kueue.x-k8s.io/admission-gated-by": "not a gate"})
            .pod_set(cpu="1")
            .build(),
            "metadata.annotations[kueue.x-k8s.io/admission-gated-by]",
        ),
    ]


async def test_a_plain_create_skips_the_webhook_and_the_rest_still_reach_it(
    kuota: KuotaWebhook, api: client.ApiClient, namespace: str
) -> None:
    custom = client.CustomObjectsApi(api)
    asked: list[float] = []
    for attempt in range(3):
        before = webhook_requests(kuota, "workload")
        obj = (
            workload(f"plain-{attempt}")
            .uid(None)
            .created(None)
            .queue("lq")
            .pod_set(count=3, cpu="500m")
            .build()
        )
        await custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, in_namespace(obj, namespace)
        )
        asked.append(webhook_requests(kuota, "workload") - before)
        if asked[-1] == 0:
            break
    # Other tests' Workloads go through the endpoint too: one quiet try is enough.
    assert 0 in asked, f"every plain create was asked: {asked}"
    for obj, field in only_the_webhook_judges("judged"):
        before = webhook_requests(kuota, "workload")
        with pytest.raises(ApiException) as refused:
            await custom.create_namespaced_custom_object(
                GROUP, VERSION, namespace, PLURAL, in_namespace(obj, namespace)
            )
        answer = json.loads(refused.value.body)
        assert 'admission webhook "workload.validate.kuota.io"' in answer["message"]
        assert field in {cause.get("field") for cause in answer["details"]["causes"]}
        assert webhook_requests(kuota, "workload") > before


async def test_a_create_with_a_field_kuota_warns_about_still_gets_the_warning(
    kuota: KuotaWebhook, api: client.ApiClient, namespace: str
) -> None:
    custom = client.CustomObjectsApi(api)
    obj = (
        workload("gates")
        .uid(None)
        .created(None)
        .pod_set(cpu="1")
        .spec(preemptionGates=[{"name": "example.com/gate"}])
        .build()
    )
    before = webhook_requests(kuota, "workload")
    _, status, headers = await custom.create_namespaced_custom_object_with_http_info(
        GROUP, VERSION, namespace, PLURAL, in_namespace(obj, namespace)
    )
    assert status == 201
    assert "spec.preemptionGates: kuota does not hold preemptions back" in headers.get(
        "Warning", ""
    )
    assert webhook_requests(kuota, "workload") > before
