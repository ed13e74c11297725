"""What the framework end-to-end tests share: a flavor, a small ClusterQueue, priorities.

Each framework's test (``e2e/test_<framework>.py``) queues the framework's
objects, run by the framework's real controller, in a ClusterQueue of the
on-demand kwok nodes small enough that one object waits while another runs,
with two WorkloadPriorityClasses for preemption.  The helpers here read what
a user would read: the Workloads of the namespace and their conditions, the
ClusterQueue's usage, the pods and where they run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from kubernetes_asyncio import client

from ..waiting import eventually

KUEUE, V1BETA2 = "kueue.x-k8s.io", "v1beta2"
LOW, HIGH = "low", "high"
RUN_FOR_AN_HOUR = {"pod-complete.stage.kwok.x-k8s.io/delay": "3600s"}
"""Pod annotations: kwok keeps such a pod running (not completed) for an hour."""


@dataclass(frozen=True)
class Queues:
    flavor: str
    cluster_queue: str
    local_queue: str = "user-queue"
    low: str = ""
    high: str = ""


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next(
        (c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind), None
    )


def is_true(obj: dict[str, Any], kind: str) -> bool:
    return (condition(obj, kind) or {}).get("status") == "True"


def waiting_for_quota(workload: dict[str, Any]) -> bool:
    found = condition(workload, "QuotaReserved") or {}
    return found.get("status") == "False" and found.get("reason") == "WaitingForQuota"


async def create_queues(
    api: client.ApiClient, namespace: str, *, cpu: str, memory: str = "4Gi"
) -> Queues:
    """Flavor of the on-demand kwok nodes, ClusterQueue of ``cpu`` CPUs that preempts lower
    priorities, LocalQueue ``user-queue``, WorkloadPriorityClasses low (100) and high (1000)."""
    custom = client.CustomObjectsApi(api)
    flavor, cluster_queue = f"ondemand-{namespace}", f"cq-{namespace}"
    queues = Queues(flavor, cluster_queue, low=f"{LOW}-{namespace}", high=f"{HIGH}-{namespace}")
    await custom.create_cluster_custom_object(
        KUEUE,
        V1BETA2,
        "resourceflavors",
        {
            "apiVersion": f"{KUEUE}/{V1BETA2}",
            "kind": "ResourceFlavor",
            "metadata": {"name": flavor},
            "spec": {"nodeLabels": {"instance-type": "ondemand"}},
        },
    )
    await custom.create_cluster_custom_object(
        KUEUE,
        V1BETA2,
        "clusterqueues",
        {
            "apiVersion": f"{KUEUE}/{V1BETA2}",
            "kind": "ClusterQueue",
            "metadata": {"name": cluster_queue},
            "spec": {
                "namespaceSelector": {},
                "preemption": {"withinClusterQueue": "LowerPriority"},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory"],
                        "flavors": [
                            {
                                "name": flavor,
                                "resources": [
                                    {"name": "cpu", "nominalQuota": cpu},
                                    {"name": "memory", "nominalQuota": memory},
                                ],
                            }
                        ],
                    }
                ],
            },
        },
    )
    await custom.create_namespaced_custom_object(
        KUEUE,
        V1BETA2,
        namespace,
        "localqueues",
        {
            "apiVersion": f"{KUEUE}/{V1BETA2}",
            "kind": "LocalQueue",
            "metadata": {"name": queues.local_queue},
            "spec": {"clusterQueue": cluster_queue},
        },
    )
    for name, value in ((queues.low, 100), (queues.high, 1000)):
        await custom.create_cluster_custom_object(
            KUEUE,
            V1BETA2,
            "workloadpriorityclasses",
            {
                "apiVersion": f"{KUEUE}/{V1BETA2}",
                "kind": "WorkloadPriorityClass",
                "metadata": {"name": name},
                "value": value,
            },
        )
    return queues


async def delete_queues(api: client.ApiClient, queues: Queues) -> None:
    custom = client.CustomObjectsApi(api)
    for plural, name in (
        ("clusterqueues", queues.cluster_queue),
        ("resourceflavors", queues.flavor),
        ("workloadpriorityclasses", queues.low),
        ("workloadpriorityclasses", queues.high),
    ):
        try:
            await custom.delete_cluster_custom_object(KUEUE, V1BETA2, plural, name)
        except client.ApiException as failure:
            if failure.status != 404:
                raise


async def queues_fixture(
    api: client.ApiClient, namespace: str, *, cpu: str
) -> AsyncIterator[Queues]:
    queues = await create_queues(api, namespace, cpu=cpu)
    yield queues
    await delete_queues(api, queues)


async def workloads(api: client.ApiClient, namespace: str) -> dict[str, dict[str, Any]]:
    """The namespace's Workloads by name."""
    listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
        KUEUE, V1BETA2, namespace, "workloads"
    )
    return {item["metadata"]["name"]: item for item in listed["items"]}


async def cluster_queue_usage(api: client.ApiClient, name: str) -> dict[str, str]:
    """The ClusterQueue's reserved quota per resource (``status.flavorsReservation``)."""
    found = await client.CustomObjectsApi(api).get_cluster_custom_object(
        KUEUE, V1BETA2, "clusterqueues", name
    )
    usage: dict[str, str] = {}
    for flavor in (found.get("status") or {}).get("flavorsReservation") or []:
        for resource in flavor.get("resources") or []:
            usage[resource["name"]] = str(resource.get("total", "0"))
    return usage


def nothing_reserved(usage: dict[str, str]) -> bool:
    return all(value in ("0", "0m") for value in usage.values())


async def quota_given_back(
    api: client.ApiClient, queues: Queues, *, timeout: float, what: str
) -> None:
    """Wait until the ClusterQueue reserves nothing any more."""
    await eventually(
        lambda: cluster_queue_usage(api, queues.cluster_queue),
        nothing_reserved,
        timeout=timeout,
        what=what,
    )


async def pods(api: client.ApiClient, namespace: str, selector: str) -> list[client.V1Pod]:
    listed = await client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector=selector)
    return list(listed.items)


def gated(pod: client.V1Pod) -> bool:
    gates = pod.spec.scheduling_gates or []
    return any(gate.name == "kueue.x-k8s.io/admission" for gate in gates)


def running_on_flavor(pod: client.V1Pod) -> bool:
    """Running on an on-demand kwok node, steered there by the flavor's node label."""
    return (
        pod.status.phase == "Running"
        and bool(pod.spec.node_name)
        and pod.spec.node_name.startswith("kwok-ondemand-")
        and (pod.spec.node_selector or {}).get("instance-type") == "ondemand"
    )


class NamespacedObjects:
    """Create, read and delete the objects of one custom kind in one namespace."""

    def __init__(
        self, api: client.ApiClient, namespace: str, group: str, version: str, plural: str
    ) -> None:
        self.api, self.namespace = api, namespace
        self.custom = client.CustomObjectsApi(api)
        self.where = (group, version, namespace, plural)

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        created: dict[str, Any] = await self.custom.create_namespaced_custom_object(
            *self.where, body
        )
        return created

    async def read(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = await self.custom.get_namespaced_custom_object(*self.where, name)
        return found

    async def delete(self, name: str) -> None:
        await self.custom.delete_namespaced_custom_object(*self.where, name)
