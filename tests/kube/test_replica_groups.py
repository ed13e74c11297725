"""A LeaderWorkerSet through the scheduler's adapters: Workloads made, pods placed, admitted.

The LeaderWorkerSet and its pods are put into a fake API server and handed to
the state the way the informers of ``watches.py`` route them: the object as a
job, its gated pods outside any group to ``on_unplaced_pod``, the pods it
placed (now labelled managed) as members of their pod group.
"""

from __future__ import annotations

from typing import Any

from scheduler.api import objects
from scheduler.core.decisions import Admit
from scheduler.jobs.leaderworkerset import LEADER_WORKER_SET
from scheduler.jobs.leaderworkerset.replicas import group_workload_name
from scheduler.kube.informer import Event
from scheduler.kube.watches import kind_resource
from tests.builders import leader_worker_set, pod
from tests.kube.world import NAMESPACE, World, workload_path

LWS = kind_resource(LEADER_WORKER_SET)
FRAMEWORK = "leaderworkerset.x-k8s.io/leaderworkerset"
GATE = "kueue.x-k8s.io/admission"


def lws_path(name: str) -> str:
    return LWS.object_path(name, namespace=NAMESPACE)


def pod_path(name: str) -> str:
    return f"/api/v1/namespaces/{NAMESPACE}/pods/{name}"


def lws(replicas: int = 1, size: int = 2) -> dict[str, Any]:
    """A queued LeaderWorkerSet of ``replicas`` groups: a leader and ``size - 1`` workers."""
    built = (
        leader_worker_set("serve", NAMESPACE)
        .uid("uid-serve")
        .queue("lq")
        .replicas(replicas)
        .size(size)
        .requests(cpu="500m")
        .leader_template()
    )
    return LEADER_WORKER_SET.propagate(built.build())


def made_pod(name: str, group: str, *, leader: str | None = None) -> dict[str, Any]:
    """A pod the LeaderWorkerSet controller made, as kuota's pod webhook left it (gated)."""
    built = (
        pod(name, NAMESPACE)
        .uid(f"uid-{name}")
        .queue("lq")
        .labels(
            {
                "leaderworkerset.sigs.k8s.io/name": "serve",
                "leaderworkerset.sigs.k8s.io/group-index": group,
            }
        )
        .annotations({"kueue.x-k8s.io/pod-suspending-parent": FRAMEWORK})
        .requests(cpu="500m")
        .pod_spec(schedulingGates=[{"name": GATE}])
    )
    if leader:
        built.annotations({"leaderworkerset.sigs.k8s.io/leader-name": leader})
    return built.build()


def deliver(world: World) -> None:
    """Route the API server's events as the informers do."""
    for kind, obj in world.api.events():
        event = Event(kind, obj, objects.key(obj))  # type: ignore[arg-type]
        if obj.get("kind") == "LeaderWorkerSet":
            world.cluster.on_job(event)
        elif obj.get("kind") == "Pod":
            if objects.label(obj, "kueue.x-k8s.io/managed") == "true":
                world.cluster.on_job(event)
            else:
                world.cluster.pods.on_unplaced_pod(LEADER_WORKER_SET, event)
        else:
            world.api.pending_events.append((kind, obj))
            world.deliver()


async def test_a_group_is_queued_placed_and_started_on_its_flavor() -> None:
    world = World().setup(cpu="1")
    world.api.put(lws_path("serve"), lws())
    deliver(world)

    assert await world.executor.jobs.reconcile_jobs()
    deliver(world)
    name = group_workload_name(world.api.store[lws_path("serve")], 0)
    workload = world.api.store[workload_path(name)]
    assert [(p["name"], p["count"]) for p in workload["spec"]["podSets"]] == [
        ("leader", 1),
        ("worker", 1),
    ]

    world.api.put(pod_path("serve-0"), made_pod("serve-0", "0"))
    world.api.put(pod_path("serve-0-1"), made_pod("serve-0-1", "0", leader="serve-0"))
    deliver(world)
    assert await world.executor.jobs.reconcile_jobs()  # placed into the group
    deliver(world)
    for pod_name, role in (("serve-0", "leader"), ("serve-0-1", "worker")):
        placed = world.api.store[pod_path(pod_name)]
        assert objects.label(placed, "kueue.x-k8s.io/managed") == "true"
        assert objects.annotation(placed, "kueue.x-k8s.io/pod-group-name") == name
        assert objects.annotation(placed, "kueue.x-k8s.io/role-hash") == role

    result = await world.cycle()
    assert [type(d) for d in result.decisions] == [Admit]
    deliver(world)
    await world.executor.jobs.reconcile_jobs()  # the group's gates come off (if not already)
    deliver(world)
    for pod_name in ("serve-0", "serve-0-1"):
        started = world.api.store[pod_path(pod_name)]
        assert "schedulingGates" not in started["spec"]
        assert started["spec"]["nodeSelector"] == {"instance-type": "spot"}


async def test_scaling_down_deletes_the_workload_of_the_group_that_went() -> None:
    world = World().setup(cpu="4")
    world.api.put(lws_path("serve"), lws(replicas=2))
    deliver(world)
    assert await world.executor.jobs.reconcile_jobs()
    deliver(world)
    stored = world.api.store[lws_path("serve")]
    names = [group_workload_name(stored, index) for index in (0, 1)]
    assert all(workload_path(name) in world.api.store for name in names)

    world.api.put(lws_path("serve"), {**stored, "spec": {**stored["spec"], "replicas": 1}})
    deliver(world)
    assert await world.executor.jobs.reconcile_jobs()
    deliver(world)
    assert workload_path(names[0]) in world.api.store
    assert workload_path(names[1]) not in world.api.store


async def test_a_pod_seen_before_its_owner_is_placed_once_the_owner_is_seen() -> None:
    world = World().setup(cpu="1")
    world.api.put(pod_path("serve-0"), made_pod("serve-0", "0"))
    deliver(world)
    assert not await world.executor.jobs.reconcile_jobs(), "no owner yet: nothing to decide"
    world.api.put(lws_path("serve"), lws(size=1))
    deliver(world)
    assert await world.executor.jobs.reconcile_jobs()
    deliver(world)
    placed = world.api.store[pod_path("serve-0")]
    assert objects.label(placed, "kueue.x-k8s.io/managed") == "true"
