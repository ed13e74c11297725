"""LeaderWorkerSets queued by kuota on the local cluster, with the real LeaderWorkerSet controller.

The controller (``sigs.k8s.io/lws`` v0.9.0, built from its Go module) makes
a StatefulSet of leaders and one of workers per group; kuota's webhook marks
the LeaderWorkerSet's pod templates, so every pod it makes is gated at
creation; the scheduler makes one Workload per group (Kueue's names) and
puts each pod into its group's pod group; a group is admitted whole, its
gates come off with the flavor's node label, and its pods run on the
flavor's kwok nodes.  A group that does not fit waits with its pods gated;
scaling down deletes the Workload of the group that went; deleting the
LeaderWorkerSet deletes its Workloads and gives the quota back.  A
higher-priority LeaderWorkerSet preempts a lower one: the evicted group's
pods are deleted, the controller makes them again (gated), and the group
runs again once the quota is free.  ``kuota explain leaderworkerset/NAME``
explains every group.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client

from e2e.cluster.frameworks import FrameworkController
from scheduler.jobs.leaderworkerset.replicas import group_workload_name

from ..conftest import FrameworkControllers
from ..fixtures import ClusterHandle
from ..kuota_scheduler import SchedulerReplica
from ..test_user_commands import kuota
from ..waiting import eventually
from .queues import (
    RUN_FOR_AN_HOUR,
    Queues,
    condition,
    create_queues,
    delete_queues,
    gated,
    is_true,
    pods,
    quota_given_back,
    running_on_flavor,
    waiting_for_quota,
    workloads,
)

pytestmark = pytest.mark.cluster

GROUP, VERSION, PLURAL = "leaderworkerset.x-k8s.io", "v1", "leaderworkersets"
NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"


@pytest.fixture
def lws_controller(framework_controllers: FrameworkControllers) -> FrameworkController:
    return framework_controllers.start("lws")


@pytest.fixture
async def queues(api: client.ApiClient, namespace: str) -> AsyncIterator[Queues]:
    """750m CPU: one group of a leader and a worker of 250m each fits, two do not."""
    created = await create_queues(api, namespace, cpu="750m")
    yield created
    await delete_queues(api, created)


def leader_worker_set(
    name: str, *, replicas: int = 1, priority_class: str | None = None
) -> dict[str, Any]:
    """A queued LeaderWorkerSet: groups of a leader and one worker, 250m CPU each."""

    def template(role: str) -> dict[str, Any]:
        return {
            "metadata": {"labels": {"role": role}, "annotations": dict(RUN_FOR_AN_HOUR)},
            "spec": {
                "terminationGracePeriodSeconds": 1,
                "containers": [
                    {
                        "name": "c",
                        "image": "busybox",
                        "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
                    }
                ],
            },
        }

    labels = {"kueue.x-k8s.io/queue-name": "user-queue"}
    if priority_class:
        labels["kueue.x-k8s.io/priority-class"] = priority_class
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "leaderWorkerTemplate": {
                "size": 2,
                "leaderTemplate": template("leader"),
                "workerTemplate": template("worker"),
            },
        },
    }


class Lws:
    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.api, self.namespace = api, namespace
        self.custom = client.CustomObjectsApi(api)

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        created: dict[str, Any] = await self.custom.create_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL, body
        )
        return created

    async def read(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = await self.custom.get_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL, name
        )
        return found

    async def scale(self, name: str, replicas: int) -> None:
        await self.custom.patch_namespaced_custom_object(
            GROUP,
            VERSION,
            self.namespace,
            PLURAL,
            name,
            [{"op": "replace", "path": "/spec/replicas", "value": replicas}],
        )

    async def delete(self, name: str) -> None:
        await self.custom.delete_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL, name
        )

    async def group_pods(self, name: str, index: int) -> list[client.V1Pod]:
        return await pods(
            self.api,
            self.namespace,
            f"{NAME_LABEL}={name},leaderworkerset.sigs.k8s.io/group-index={index}",
        )


def group_running(found: list[client.V1Pod]) -> bool:
    return len(found) == 2 and all(running_on_flavor(pod) for pod in found)


async def test_groups_are_queued_admitted_on_the_flavor_scaled_down_and_released(
    lws_controller: FrameworkController,
    kuota_scheduler: SchedulerReplica,
    cluster: ClusterHandle,
    api: client.ApiClient,
    namespace: str,
    queues: Queues,
) -> None:
    lws = Lws(api, namespace)
    created = await lws.create(leader_worker_set("serve"))
    group0 = group_workload_name(created, 0)
    spec = created["spec"]["leaderWorkerTemplate"]
    for template in (spec["leaderTemplate"], spec["workerTemplate"]):
        assert template["metadata"]["annotations"]["kueue.x-k8s.io/pod-suspending-parent"] == (
            "leaderworkerset.x-k8s.io/leaderworkerset"
        ), "kuota's webhook marks the templates of a queued LeaderWorkerSet"
        assert template["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "user-queue"

    found = await eventually(
        lambda: workloads(api, namespace),
        lambda got: group0 in got and is_true(got[group0], "QuotaReserved"),
        timeout=120,
        what="the first group's Workload admitted",
    )
    workload = found[group0]
    assert workload["metadata"]["labels"]["kueue.x-k8s.io/job-uid"] == created["metadata"]["uid"]
    assert [(p["name"], p["count"]) for p in workload["spec"]["podSets"]] == [
        ("leader", 1),
        ("worker", 1),
    ]
    assert list(found) == [group0], "the group's pods get no Workloads of their own"
    running = await eventually(
        lambda: lws.group_pods("serve", 0),
        group_running,
        timeout=120,
        what="the first group's pods running on the flavor's nodes",
    )
    roles = sorted(pod.metadata.annotations["kueue.x-k8s.io/role-hash"] for pod in running)
    assert roles == ["leader", "worker"]

    await lws.scale("serve", 2)
    serving = await lws.read("serve")
    group1 = group_workload_name(serving, 1)
    waiting = await eventually(
        lambda: workloads(api, namespace),
        lambda got: group1 in got and waiting_for_quota(got[group1]),
        timeout=120,
        what="the second group's Workload waiting for quota",
    )
    message = (condition(waiting[group1], "QuotaReserved") or {})["message"]
    assert "insufficient unused quota for cpu" in message, message
    held = await eventually(
        lambda: lws.group_pods("serve", 1),
        lambda found: len(found) == 2 and all(gated(pod) for pod in found),
        timeout=120,
        what="the second group's pods made, and held back by kuota's gate",
    )
    assert all(pod.spec.node_name is None for pod in held)

    explained = await kuota(cluster, "explain", "leaderworkerset/serve", "-n", namespace)
    assert explained.returncode == 0, explained.stderr
    assert f"(Workload {group0})" in explained.stdout and f"(Workload {group1})" in explained.stdout
    assert "It is admitted" in explained.stdout or "admitted" in explained.stdout
    assert "It is pending in LocalQueue user-queue" in explained.stdout, explained.stdout

    await lws.scale("serve", 1)
    await eventually(
        lambda: workloads(api, namespace),
        lambda got: list(got) == [group0],
        timeout=120,
        what="the Workload of the group that went deleted",
    )

    await lws.delete("serve")
    await eventually(
        lambda: workloads(api, namespace),
        lambda got: not got,
        timeout=120,
        what="the LeaderWorkerSet's Workloads deleted with it",
    )
    await quota_given_back(api, queues, timeout=60, what="the ClusterQueue's quota given back")


async def test_a_higher_priority_set_preempts_and_the_evicted_group_runs_again_afterwards(
    lws_controller: FrameworkController,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    queues: Queues,
) -> None:
    lws = Lws(api, namespace)
    low = await lws.create(leader_worker_set("low", priority_class=queues.low))
    low_group = group_workload_name(low, 0)
    first_pods = await eventually(
        lambda: lws.group_pods("low", 0),
        group_running,
        timeout=180,
        what="the low-priority group running",
    )

    high = await lws.create(leader_worker_set("high", priority_class=queues.high))
    high_group = group_workload_name(high, 0)
    found = await eventually(
        lambda: workloads(api, namespace),
        lambda got: high_group in got and is_true(got[high_group], "QuotaReserved"),
        timeout=120,
        what="the high-priority group admitted",
    )
    evicted = found[low_group]
    assert is_true(evicted, "Evicted") and is_true(evicted, "Preempted"), evicted["status"]
    assert not is_true(evicted, "QuotaReserved")
    assert found[high_group]["spec"]["priority"] == 1000
    await eventually(
        lambda: lws.group_pods("high", 0),
        group_running,
        timeout=120,
        what="the high-priority group running on the flavor's nodes",
    )
    old_uids = {pod.metadata.uid for pod in first_pods}
    again = await eventually(
        lambda: lws.group_pods("low", 0),
        lambda found: (
            len(found) == 2
            and all(gated(pod) for pod in found)
            and not {pod.metadata.uid for pod in found} & old_uids
        ),
        timeout=120,
        what="the evicted group's pods deleted and made again, held back",
    )
    assert all(pod.spec.node_name is None for pod in again)

    await lws.delete("high")
    await eventually(
        lambda: lws.group_pods("low", 0),
        group_running,
        timeout=180,
        what="the evicted group admitted again and running",
    )
    readmitted = (await workloads(api, namespace))[low_group]
    assert is_true(readmitted, "QuotaReserved")
    await lws.delete("low")
