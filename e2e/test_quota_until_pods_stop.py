"""An evicted Job keeps its quota until its last pod has stopped (docs/concepts.md).

A pod in its termination grace period still holds its node: here it takes
20 s to stop (kwok's ``pod-delete`` stage waits for the pod's
``pod-delete.stage.kwok.x-k8s.io/delay``), while the Job controller no
longer counts it as active.  The preemptor must not be admitted onto that
quota before the pod is gone.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from kubernetes_asyncio import client

from .kuota_scheduler import SchedulerReplica
from .test_scheduler import GROUP, VERSION, condition, workloads_of
from .waiting import eventually

pytestmark = pytest.mark.cluster
GRACE_SECONDS = 20


def job(name: str, queue: str, *, priority_class: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": GRACE_SECONDS + 10,
        "tolerations": [
            {"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
        ],
        "containers": [
            {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "2"}}}
        ],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    annotations = {
        "pod-complete.stage.kwok.x-k8s.io/delay": "600s",
        "pod-delete.stage.kwok.x-k8s.io/delay": f"{GRACE_SECONDS}s",
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": queue}},
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "template": {"metadata": {"annotations": annotations}, "spec": spec},
        },
    }


async def test_a_preemptor_waits_until_the_victims_terminating_pod_is_gone(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str
) -> None:
    custom, batch, core, scheduling = (
        client.CustomObjectsApi(api),
        client.BatchV1Api(api),
        client.CoreV1Api(api),
        client.SchedulingV1Api(api),
    )
    names = {"flavor": f"spot-{namespace}", "cq": f"grace-{namespace}", "pc": f"high-{namespace}"}
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "resourceflavors",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ResourceFlavor",
            "metadata": {"name": names["flavor"]},
            "spec": {
                "nodeLabels": {"instance-type": "spot"},
                "nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
            },
        },
    )
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ClusterQueue",
            "metadata": {"name": names["cq"]},
            "spec": {
                "namespaceSelector": {},
                "preemption": {"withinClusterQueue": "LowerPriority"},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {
                                "name": names["flavor"],
                                "resources": [{"name": "cpu", "nominalQuota": "2"}],
                            }
                        ],
                    }
                ],
            },
        },
    )
    await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "localqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "LocalQueue",
            "metadata": {"name": "lq"},
            "spec": {"clusterQueue": names["cq"]},
        },
    )
    await scheduling.create_priority_class(
        client.V1PriorityClass(metadata=client.V1ObjectMeta(name=names["pc"]), value=1000)
    )
    try:
        await batch.create_namespaced_job(namespace, job("low", "lq"))

        async def low_pods() -> list[Any]:
            listed = await core.list_namespaced_pod(
                namespace, label_selector="batch.kubernetes.io/job-name=low"
            )
            return list(listed.items)

        await eventually(
            low_pods,
            lambda pods: any(p.status.phase == "Running" for p in pods),
            timeout=90,
            what="the low-priority Job's pod running",
        )
        await batch.create_namespaced_job(namespace, job("high", "lq", priority_class=names["pc"]))
        await eventually(
            low_pods,
            lambda pods: any(p.metadata.deletion_timestamp for p in pods),
            timeout=60,
            what="the preempted Job's pod terminating",
        )
        terminating_since = time.monotonic()
        # While the pod is in its grace period, the victim holds the quota and the
        # preemptor waits: checked every second until the pod is gone.
        while await low_pods():
            workloads = await workloads_of(api, namespace)
            low, high = workloads.get("low") or {}, workloads.get("high") or {}
            assert (condition(low, "QuotaReserved") or {}).get("status") == "True", (
                "the victim's quota is released while its pod still terminates"
            )
            assert (condition(high, "QuotaReserved") or {}).get("status") != "True", (
                "the preemptor was admitted onto quota a terminating pod still holds"
            )
            assert time.monotonic() - terminating_since < GRACE_SECONDS + 40
            await asyncio.sleep(1)
        waited = time.monotonic() - terminating_since
        assert waited >= GRACE_SECONDS - 5, f"the pod was gone after {waited:.0f} s"

        async def high_workload() -> dict[str, Any]:
            return (await workloads_of(api, namespace)).get("high") or {}

        await eventually(
            high_workload,
            lambda wl: (condition(wl, "QuotaReserved") or {}).get("status") == "True",
            timeout=60,
            what="the preemptor admitted once the victim's pod is gone",
        )
    finally:
        await batch.delete_collection_namespaced_job(namespace, propagation_policy="Background")
        await custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", names["cq"])
        await custom.delete_cluster_custom_object(
            GROUP, VERSION, "resourceflavors", names["flavor"]
        )
        await scheduling.delete_priority_class(names["pc"])
