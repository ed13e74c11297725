"""``stopPolicy`` on a real cluster (docs/concepts.md#stop-policies): Hold, HoldAndDrain, resume.

A running Job of a ClusterQueue set to ``Hold`` keeps running; set to
``HoldAndDrain`` it is stopped like a victim of preemption: its Workload gets
``Evicted`` with Kueue's reason and message, the Job is suspended, its pods go,
and the quota is released with ``Requeued=False`` until the queue runs again.
A Job submitted meanwhile waits with the stopped queue's reason.  Back to
``None``, both are admitted and their pods run again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client

from .kuota_scheduler import SchedulerReplica
from .test_scheduler import GROUP, VERSION, condition, flavor, job, workloads_of
from .waiting import eventually

pytestmark = pytest.mark.cluster


def cluster_queue(name: str, flavor_name: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": flavor_name, "resources": [{"name": "cpu", "nominalQuota": "2"}]}
                    ],
                }
            ],
        },
    }


@pytest.fixture
async def stoppable(api: client.ApiClient, namespace: str) -> AsyncIterator[str]:
    """A flavor, a ClusterQueue with 2 cpu and the LocalQueue ``user-queue``; the CQ's name."""
    custom = client.CustomObjectsApi(api)
    flavor_name, cq_name = f"ondemand-{namespace}", f"stoppable-{namespace}"
    await custom.create_cluster_custom_object(
        GROUP, VERSION, "resourceflavors", flavor(flavor_name, {"instance-type": "ondemand"})
    )
    await custom.create_cluster_custom_object(
        GROUP, VERSION, "clusterqueues", cluster_queue(cq_name, flavor_name)
    )
    await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "localqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "LocalQueue",
            "metadata": {"name": "user-queue"},
            "spec": {"clusterQueue": cq_name},
        },
    )
    yield cq_name
    batch = client.BatchV1Api(api)
    for name in ("long", "later"):
        try:
            await batch.delete_namespaced_job(name, namespace, propagation_policy="Background")
        except client.ApiException:
            pass
    await custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", cq_name)
    await custom.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", flavor_name)


async def set_stop_policy(api: client.ApiClient, cq_name: str, policy: str) -> None:
    await client.CustomObjectsApi(api).patch_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        cq_name,
        {"spec": {"stopPolicy": policy}},
        _content_type="application/merge-patch+json",
    )


async def test_hold_and_drain_evicts_the_running_job_and_resuming_runs_it_again(
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    stoppable: str,
) -> None:
    custom, batch, core = (
        client.CustomObjectsApi(api),
        client.BatchV1Api(api),
        client.CoreV1Api(api),
    )
    await batch.create_namespaced_job(
        namespace, job("long", "user-queue", delay="600s", tolerate_spot=False)
    )

    async def workload(name: str = "long") -> dict[str, Any]:
        return (await workloads_of(api, namespace)).get(name) or {}

    async def pods(name: str = "long") -> list[client.V1Pod]:
        listed = await core.list_namespaced_pod(
            namespace, label_selector=f"batch.kubernetes.io/job-name={name}"
        )
        return list(listed.items)

    def running(items: list[client.V1Pod]) -> bool:
        return any(p.status.phase == "Running" for p in items)

    await eventually(pods, running, timeout=60, what="the Job's pod running")

    # Hold: nothing new is admitted, the running Job keeps running.
    await set_stop_policy(api, stoppable, "Hold")

    async def cq_status() -> dict[str, Any]:
        return await custom.get_cluster_custom_object(GROUP, VERSION, "clusterqueues", stoppable)

    await eventually(
        cq_status,
        lambda cq: (condition(cq, "Active") or {}).get("reason") == "Stopped",
        timeout=30,
        what="the ClusterQueue reported stopped",
    )
    await asyncio.sleep(3)  # a few scheduler turns
    held = await workload()
    assert (condition(held, "Evicted") or {}).get("status") != "True", held["status"]
    assert running(await pods()), "Hold keeps admitted workloads running"

    # HoldAndDrain: the running Job is evicted with Kueue's reason and message.
    await set_stop_policy(api, stoppable, "HoldAndDrain")
    evicted = await eventually(
        workload,
        lambda wl: (condition(wl, "Evicted") or {}).get("status") == "True",
        timeout=60,
        what="the Workload of the stopped ClusterQueue evicted",
    )
    reason = condition(evicted, "Evicted") or {}
    assert (reason.get("reason"), reason.get("message")) == (
        "ClusterQueueStopped",
        "The ClusterQueue is stopped",
    )
    assert (condition(evicted, "Preempted") or {}).get("status") != "True"
    await eventually(
        lambda: batch.read_namespaced_job("long", namespace),
        lambda j: j.spec.suspend is True,
        timeout=30,
        what="the Job suspended",
    )
    await eventually(pods, lambda items: not items, timeout=60, what="the Job's pods gone")
    released = await eventually(
        workload,
        lambda wl: (condition(wl, "QuotaReserved") or {}).get("status") == "False",
        timeout=60,
        what="the drained Workload's quota released",
    )
    assert "admission" not in (released.get("status") or {})
    requeued = condition(released, "Requeued") or {}
    assert (requeued.get("status"), requeued.get("reason")) == ("False", "ClusterQueueStopped")

    # A Job submitted to the stopped queue waits, and says why.
    await batch.create_namespaced_job(
        namespace, job("later", "user-queue", delay="600s", tolerate_spot=False)
    )
    waiting = await eventually(
        lambda: workload("later"),
        lambda wl: (condition(wl, "QuotaReserved") or {}).get("reason") == "Suspended",
        timeout=60,
        what="the new Workload pending with the stopped queue's reason",
    )
    assert condition(waiting, "QuotaReserved")["message"] == f"ClusterQueue {stoppable} is inactive"
    assert (await batch.read_namespaced_job("later", namespace)).spec.suspend is True

    # Resumed: both are admitted (1 cpu each of 2) and run.
    await set_stop_policy(api, stoppable, "None")
    for name in ("long", "later"):
        await eventually(
            lambda name=name: pods(name),  # type: ignore[misc]
            running,
            timeout=90,
            what=f"the {name} Job running after the ClusterQueue resumed",
        )
    readmitted = await workload()
    assert (condition(readmitted, "QuotaReserved") or {}).get("status") == "True"
    assert (condition(readmitted, "Evicted") or {}).get("status") == "False"
    requeued = condition(readmitted, "Requeued") or {}
    assert (requeued.get("status"), requeued.get("reason")) == ("True", "ClusterQueueRestarted")


async def test_hold_and_drain_on_a_local_queue_evicts_its_job_and_resuming_runs_it_again(
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    stoppable: str,
) -> None:
    custom, batch, core = (
        client.CustomObjectsApi(api),
        client.BatchV1Api(api),
        client.CoreV1Api(api),
    )
    await batch.create_namespaced_job(
        namespace, job("long", "user-queue", delay="600s", tolerate_spot=False)
    )

    async def workload() -> dict[str, Any]:
        return (await workloads_of(api, namespace)).get("long") or {}

    async def pods() -> list[client.V1Pod]:
        listed = await core.list_namespaced_pod(
            namespace, label_selector="batch.kubernetes.io/job-name=long"
        )
        return list(listed.items)

    def running(items: list[client.V1Pod]) -> bool:
        return any(p.status.phase == "Running" for p in items)

    async def set_local_policy(policy: str) -> None:
        await custom.patch_namespaced_custom_object(
            GROUP,
            VERSION,
            namespace,
            "localqueues",
            "user-queue",
            {"spec": {"stopPolicy": policy}},
            _content_type="application/merge-patch+json",
        )

    await eventually(pods, running, timeout=60, what="the Job's pod running")
    await set_local_policy("HoldAndDrain")
    evicted = await eventually(
        workload,
        lambda wl: (condition(wl, "Evicted") or {}).get("status") == "True",
        timeout=60,
        what="the Workload of the stopped LocalQueue evicted",
    )
    reason = condition(evicted, "Evicted") or {}
    assert (reason.get("reason"), reason.get("message")) == (
        "LocalQueueStopped",
        "The LocalQueue is stopped",
    )
    await eventually(pods, lambda items: not items, timeout=60, what="the Job's pods gone")
    waiting = await eventually(
        workload,
        lambda wl: (condition(wl, "QuotaReserved") or {}).get("reason") == "Suspended",
        timeout=60,
        what="the drained Workload pending with the stopped LocalQueue's reason",
    )
    assert condition(waiting, "QuotaReserved")["message"] == "LocalQueue user-queue is inactive"
    assert (await batch.read_namespaced_job("long", namespace)).spec.suspend is True

    await set_local_policy("None")
    await eventually(pods, running, timeout=90, what="the Job running after the LocalQueue resumed")
    requeued = condition(await workload(), "Requeued") or {}
    assert (requeued.get("status"), requeued.get("reason")) == ("True", "LocalQueueRestarted")
