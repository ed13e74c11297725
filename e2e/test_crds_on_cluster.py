"""kuota's CRDs on a real API server: they install and become Established,
every ``v1beta2`` example of the seeds is created through the API server and
reads back with what the user wrote, and kubectl shows the printer columns
and short names users expect."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes_asyncio import client

from e2e.cluster.tools import ToolPaths
from e2e.kuota_install import kubectl
from scheduler.api.crds import load_crds
from scheduler.api.quantity import Quantity, QuantityError
from tests.api.seed_examples import documents
from tests.cli.test_validate import seed_is_known_invalid

from .fixtures import ClusterHandle

pytestmark = pytest.mark.cluster

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
PLURALS = {crd["spec"]["names"]["kind"]: crd["spec"]["names"]["plural"] for crd in load_crds()}
NAMESPACED = {
    crd["spec"]["names"]["kind"] for crd in load_crds() if crd["spec"]["scope"] == "Namespaced"
}
SEEDS = [doc for doc in documents() if doc.api_version == f"{GROUP}/{VERSION}"]


@pytest.fixture(scope="session")
def crds(cluster: ClusterHandle, kuota: Any) -> Iterator[list[str]]:
    """The CRDs as kuota installs them (with their conversion webhook): one installation
    per session.

    Installing them again without conversion here would break every later
    test that reads a legacy version.
    """
    yield [crd["metadata"]["name"] for crd in load_crds()]


def same_value(wrote: Any, stored: Any) -> bool:
    """What the user wrote is in the stored object (the server may add defaults)."""
    if isinstance(wrote, dict):
        return isinstance(stored, dict) and all(
            k in stored and same_value(v, stored[k]) for k, v in wrote.items()
        )
    if isinstance(wrote, list):
        return (
            isinstance(stored, list)
            and len(wrote) == len(stored)
            and all(same_value(a, b) for a, b in zip(wrote, stored, strict=True))
        )
    if wrote == stored:
        return True
    try:
        return Quantity.parse(wrote) == Quantity.parse(stored)
    except (QuantityError, TypeError):
        return False


def test_every_crd_is_established(cluster: ClusterHandle, crds: list[str]) -> None:
    kubectl_binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    listed = json.loads(
        kubectl(kubectl_binary, cluster.kubeconfig, "get", "crd", "-o", "json").stdout
    )
    established = {
        item["metadata"]["name"]
        for item in listed["items"]
        if any(
            c["type"] == "Established" and c["status"] == "True"
            for c in item["status"]["conditions"]
        )
    }
    assert set(crds) <= established
    assert len(crds) == 10


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"{s.source[:3]}:{s.line}:{s.kind}")
async def test_seed_is_created_and_read_back(
    seed: Any, crds: list[str], api: client.ApiClient, namespace: str
) -> None:
    body = copy.deepcopy(seed.raw)
    if seed_is_known_invalid(body):  # refused by kuota's webhook, as by Kueue's
        with pytest.raises(client.ApiException) as refused:
            await client.CustomObjectsApi(api).create_cluster_custom_object(
                GROUP,
                VERSION,
                PLURALS[seed.kind],
                {**body, "metadata": {"name": f"invalid-{namespace}"}},
            )
        assert refused.value.status in (403, 422) and "spec.resourceGroups" in str(
            refused.value.body
        )
        return
    body["metadata"]["name"] = (
        f"{body['metadata']['name']}-{namespace}"  # cluster-scoped names are shared
    )
    custom = client.CustomObjectsApi(api)
    plural = PLURALS[seed.kind]
    if seed.kind in NAMESPACED:
        body["metadata"]["namespace"] = namespace
        await custom.create_namespaced_custom_object(GROUP, VERSION, namespace, plural, body)
        stored = await custom.get_namespaced_custom_object(
            GROUP, VERSION, namespace, plural, body["metadata"]["name"]
        )
    else:
        await custom.create_cluster_custom_object(GROUP, VERSION, plural, body)
        try:
            stored = await custom.get_cluster_custom_object(
                GROUP, VERSION, plural, body["metadata"]["name"]
            )
        finally:
            await custom.delete_cluster_custom_object(
                GROUP, VERSION, plural, body["metadata"]["name"]
            )
    assert stored["apiVersion"] == f"{GROUP}/{VERSION}"
    wrote = {
        key: value for key, value in body.items() if key not in ("apiVersion", "metadata", "status")
    }
    assert same_value(wrote, stored), (
        f"stored object lost what the seed wrote: {json.dumps(stored)[:2000]}"
    )


async def test_kubectl_get_shows_the_expected_columns(
    cluster: ClusterHandle, crds: list[str], api: client.ApiClient, namespace: str
) -> None:
    kubectl_binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    custom = client.CustomObjectsApi(api)
    name = f"cq-{namespace}"
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {
                "cohortName": "team-ab",
                "queueingStrategy": "StrictFIFO",
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "9"}]}
                        ],
                    }
                ],
            },
        },
    )
    try:
        table = kubectl(kubectl_binary, cluster.kubeconfig, "get", "cq", name).stdout.splitlines()
        assert table[0].split() == [
            "NAME",
            "COHORT",
            "STRATEGY",
            "PENDING",
            "WORKLOADS",
            "ADMITTED",
            "WORKLOADS",
            "AGE",
        ]
        assert table[1].split()[:3] == [name, "team-ab", "StrictFIFO"]
    finally:
        await custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", name)
    await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "workloads",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "Workload",
            "metadata": {"name": "wl1"},
            "spec": {
                "queueName": "user-queue",
                "podSets": [
                    {
                        "name": "main",
                        "count": 1,
                        "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
                    }
                ],
            },
        },
    )
    workloads = kubectl(
        kubectl_binary, cluster.kubeconfig, "get", "wl", "-n", namespace
    ).stdout.splitlines()
    assert workloads[0].split()[:4] == ["NAME", "QUEUE", "ADMITTED", "BY"]
    assert workloads[1].split()[:2] == ["wl1", "user-queue"]
