"""Other writers of a Workload's status on the local cluster.

Kueue writes a Workload's admission status by server-side apply as the field
manager ``kueue-admission``, and its tooling (for example the
scheduler-perf runner, which creates Workloads directly, with no Job) ends
an admission the same way.  kuota writes that status the same way, so such a
tool can really remove ``status.admission``; and kuota takes its quota from
the Workload's own status, so the quota comes free whether or not a Job owns
the Workload.

Each test: a ClusterQueue with quota for one; the first Workload is
admitted, a second (ahead in the queue once both wait: higher priority, no
preemption) waits; another client applies the first's status as
``kueue-admission`` without the admission and with ``QuotaReserved=False``;
the admission is gone from the object and kuota admits the second.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from kubernetes_asyncio import client

from .kuota_scheduler import SchedulerReplica
from .test_scheduler import GROUP, VERSION, condition, flavor, job
from .waiting import eventually

pytestmark = pytest.mark.cluster
MANAGER = "kueue-admission"


async def one_cpu_queue(
    api: client.ApiClient, namespace: str, *, preempt: bool
) -> AsyncIterator[str]:
    """Flavor, a ClusterQueue with 1 cpu and LocalQueue ``lq``; yields the CQ name."""
    custom = client.CustomObjectsApi(api)
    flavor_name, cq_name = f"one-{namespace}", f"one-{namespace}"
    await custom.create_cluster_custom_object(
        GROUP, VERSION, "resourceflavors", flavor(flavor_name, {"instance-type": "ondemand"})
    )
    spec: dict[str, Any] = {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu"],
                "flavors": [
                    {"name": flavor_name, "resources": [{"name": "cpu", "nominalQuota": "1"}]}
                ],
            }
        ],
    }
    if preempt:
        spec["preemption"] = {"withinClusterQueue": "LowerPriority"}
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ClusterQueue",
            "metadata": {"name": cq_name},
            "spec": spec,
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
            "spec": {"clusterQueue": cq_name},
        },
    )
    yield cq_name
    await custom.delete_namespaced_custom_object(GROUP, VERSION, namespace, "localqueues", "lq")
    await custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", cq_name)
    await custom.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", flavor_name)


@pytest.fixture
async def queue_for_one(api: client.ApiClient, namespace: str) -> AsyncIterator[str]:
    """A ClusterQueue with quota for one Workload, no preemption."""
    async for name in one_cpu_queue(api, namespace, preempt=False):
        yield name


@pytest.fixture
async def preempting_queue_for_one(api: client.ApiClient, namespace: str) -> AsyncIterator[str]:
    """A ClusterQueue with quota for one Workload that preempts lower priorities."""
    async for name in one_cpu_queue(api, namespace, preempt=True):
        yield name


def ownerless_workload(name: str, *, priority: int) -> dict[str, Any]:
    """A Workload as Kueue's scheduler-perf runner creates it: directly, no Job, no owner."""
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Workload",
        "metadata": {"name": name},
        "spec": {
            "queueName": "lq",
            "priority": priority,
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                {
                                    "name": "main",
                                    "image": "busybox",
                                    "resources": {"requests": {"cpu": "1"}},
                                }
                            ],
                        }
                    },
                }
            ],
        },
    }


def reserved(workload: dict[str, Any]) -> bool:
    return (condition(workload, "QuotaReserved") or {}).get("status") == "True" and "admission" in (
        workload.get("status") or {}
    )


def released_by_another_tool(workload: dict[str, Any]) -> dict[str, Any]:
    """The status another tool applies to end the admission, as Kueue's tooling does: every
    condition the Workload has, ``QuotaReserved`` and ``Admitted`` False, and no ``admission``.

    Applying as ``kueue-admission`` without ``admission`` removes it when that manager owns it.
    """
    conditions = []
    for item in copy.deepcopy(workload["status"]["conditions"]):
        if item["type"] in ("QuotaReserved", "Admitted") and item["status"] == "True":
            item.update(status="False", reason="Pending", message="released by another tool")
            item["lastTransitionTime"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        conditions.append(item)
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Workload",
        "metadata": {"name": workload["metadata"]["name"]},
        "status": {"conditions": conditions},
    }


async def apply_status_as_kueue_admission(
    api: client.ApiClient, namespace: str, body: dict[str, Any]
) -> dict[str, Any]:
    """Server-side apply of a Workload's status as ``kueue-admission`` (forced)."""
    answer: dict[str, Any] = await client.CustomObjectsApi(
        api
    ).patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        namespace,
        "workloads",
        body["metadata"]["name"],
        body,
        field_manager=MANAGER,
        force=True,
        _content_type="application/apply-patch+yaml",
    )
    return answer


async def test_an_ownerless_workload_released_by_another_tool_frees_its_quota(
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    queue_for_one: str,
) -> None:
    custom = client.CustomObjectsApi(api)

    async def read(name: str) -> dict[str, Any]:
        found: dict[str, Any] = await custom.get_namespaced_custom_object(
            GROUP, VERSION, namespace, "workloads", name
        )
        return found

    await custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, "workloads", ownerless_workload("first", priority=0)
    )
    first = await eventually(
        lambda: read("first"), reserved, timeout=60, what="the ownerless Workload admitted"
    )
    assert first["status"]["admission"]["clusterQueue"] == queue_for_one

    await custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, "workloads", ownerless_workload("second", priority=100)
    )
    waiting = await eventually(
        lambda: read("second"),
        lambda wl: (condition(wl, "QuotaReserved") or {}).get("status") == "False",
        timeout=60,
        what="the second Workload waiting, with its explanation",
    )
    assert "admission" not in waiting.get("status", {})

    answer = await apply_status_as_kueue_admission(api, namespace, released_by_another_tool(first))
    assert "admission" not in answer["status"], (
        "the other tool's apply as kueue-admission removed the admission"
    )
    assert (condition(answer, "QuotaReserved") or {}).get("status") == "False"

    second = await eventually(
        lambda: read("second"),
        reserved,
        timeout=60,
        what="the second Workload admitted on the quota the first one held",
    )
    assert second["status"]["admission"]["clusterQueue"] == queue_for_one
    after = await read("first")
    assert not reserved(after), "one cpu: the first waits now"
    assert "admission" not in after.get("status", {}), "the admission did not come back"
    managers = {
        entry["manager"]
        for entry in second["metadata"].get("managedFields", [])
        if entry.get("subresource") == "status"
    }
    assert managers == {MANAGER}, f"kuota writes the status as {MANAGER} only: {managers}"


async def test_a_job_owned_workload_released_by_another_tool_frees_its_quota(
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    queue_for_one: str,
) -> None:
    custom, batch = client.CustomObjectsApi(api), client.BatchV1Api(api)
    high = f"high-{namespace}"
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "workloadpriorityclasses",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": high},
            "value": 100,
        },
    )
    try:
        await release_a_running_job(api, namespace, high)
    finally:
        for name in ("first", "second"):
            await batch.delete_namespaced_job(name, namespace, propagation_policy="Background")
        await custom.delete_cluster_custom_object(GROUP, VERSION, "workloadpriorityclasses", high)


async def release_a_running_job(api: client.ApiClient, namespace: str, high: str) -> None:
    custom, batch = client.CustomObjectsApi(api), client.BatchV1Api(api)

    async def workload_of(job_name: str) -> dict[str, Any]:
        listed = await custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "workloads")
        for item in listed["items"]:
            if any(o["name"] == job_name for o in item["metadata"].get("ownerReferences", [])):
                return dict(item)
        return {}

    first_job = job("first", "lq", delay="600s", tolerate_spot=False)
    await batch.create_namespaced_job(namespace, first_job)
    first = await eventually(
        lambda: workload_of("first"), reserved, timeout=60, what="the first Job's Workload admitted"
    )
    second_job = job("second", "lq", delay="600s", tolerate_spot=False)
    second_job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = high
    await batch.create_namespaced_job(namespace, second_job)
    await eventually(
        lambda: workload_of("second"),
        lambda wl: (condition(wl, "QuotaReserved") or {}).get("status") == "False",
        timeout=60,
        what="the second Job's Workload waiting",
    )
    first = await workload_of("first")

    answer = await apply_status_as_kueue_admission(api, namespace, released_by_another_tool(first))
    assert "admission" not in answer["status"]

    async def first_suspended() -> bool:
        stored = await batch.read_namespaced_job("first", namespace)
        return bool(stored.spec.suspend)

    await eventually(
        first_suspended,
        lambda suspended: suspended,
        timeout=60,
        what="the first Job stopped: its Workload holds no admission",
    )
    await eventually(
        lambda: workload_of("second"),
        reserved,
        timeout=60,
        what="the second Job's Workload admitted on the freed quota",
    )


async def test_an_ownerless_victim_is_released_by_its_runner_as_kueues_tooling_does(
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    preempting_queue_for_one: str,
) -> None:
    """Kueue's scheduler-perf flow: kuota evicts an ownerless Workload (it keeps its
    reservation: no Job to stop); the runner, seeing Evicted and QuotaReserved both
    True, ends the eviction by applying the status as kueue-admission with the
    resourceVersion it read; the preemptor is then admitted."""
    custom = client.CustomObjectsApi(api)

    async def read(name: str) -> dict[str, Any]:
        found: dict[str, Any] = await custom.get_namespaced_custom_object(
            GROUP, VERSION, namespace, "workloads", name
        )
        return found

    await custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, "workloads", ownerless_workload("low", priority=0)
    )
    await eventually(lambda: read("low"), reserved, timeout=60, what="the low Workload admitted")
    await custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, "workloads", ownerless_workload("high", priority=100)
    )
    evicting = await eventually(
        lambda: read("low"),
        lambda wl: reserved(wl) and (condition(wl, "Evicted") or {}).get("status") == "True",
        timeout=60,
        what="the low Workload evicted, still holding its reservation",
    )
    assert (condition(evicting, "Preempted") or {}).get("status") == "True"
    assert not reserved(await read("high"))

    finished = released_by_another_tool(evicting)
    finished["metadata"]["resourceVersion"] = evicting["metadata"]["resourceVersion"]
    answer = await apply_status_as_kueue_admission(api, namespace, finished)
    assert "admission" not in answer["status"]

    high = await eventually(
        lambda: read("high"), reserved, timeout=60, what="the preemptor admitted"
    )
    assert high["status"]["admission"]["clusterQueue"] == preempting_queue_for_one
    low = await read("low")
    assert not reserved(low) and "admission" not in low.get("status", {})
