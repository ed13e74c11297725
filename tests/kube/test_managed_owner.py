"""A job made by a queued job (a RayJob's RayCluster, which carries its labels) is left to it."""

from __future__ import annotations

from typing import Any

from scheduler.api import objects
from scheduler.jobs.raycluster import RAYCLUSTER
from scheduler.jobs.rayjob import RAYJOB
from scheduler.kube.informer import Event
from scheduler.kube.watches import kind_resource
from tests.builders import cluster_queue, flavor_quotas, ray_cluster, ray_job
from tests.kube.world import KUEUE, NAMESPACE, World

RAYJOBS, RAYCLUSTERS = kind_resource(RAYJOB), kind_resource(RAYCLUSTER)


def deliver(world: World) -> None:
    for kind, obj in world.api.events():
        event = Event(kind, obj, objects.key(obj))  # type: ignore[arg-type]
        if obj.get("kind") in ("RayJob", "RayCluster"):
            world.cluster.on_job(event)
        else:
            world.api.pending_events.append((kind, obj))
            world.deliver()


def child_cluster(owner: dict[str, Any], *, uid: str) -> dict[str, Any]:
    """The RayCluster KubeRay makes for a RayJob: the RayJob's labels, owned by it, running."""
    cluster = ray_cluster("j-raycluster", NAMESPACE).uid(uid).queue("lq").build()
    cluster["spec"]["suspend"] = False
    cluster["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "name": objects.name(owner),
            "uid": objects.uid(owner),
            "controller": True,
        }
    ]
    return cluster


async def test_the_cluster_of_a_queued_rayjob_gets_no_workload_and_is_not_suspended() -> None:
    world = World().setup()
    job = ray_job("j", NAMESPACE).uid("uid-j").queue("lq").requests(cpu="1").build()
    world.api.put(RAYJOBS.object_path("j", namespace=NAMESPACE), job)
    path = RAYCLUSTERS.object_path("j-raycluster", namespace=NAMESPACE)
    world.api.put(path, child_cluster(job, uid="uid-c"))
    deliver(world)
    assert world.cluster.managed_owner("uid-c") is not None
    await world.executor.jobs.reconcile_jobs()
    deliver(world)
    owners = [
        wl["metadata"]["ownerReferences"][0]["kind"]
        for key, wl in world.api.store.items()
        if "/workloads/" in key
    ]
    assert owners == ["RayJob"], "only the RayJob is queued"
    assert world.api.store[path]["spec"]["suspend"] is False, "the child is its owner's business"


async def test_a_cluster_whose_owner_is_not_queued_is_a_job_of_its_own() -> None:
    world = World().setup()
    owner = ray_job("j", NAMESPACE).uid("uid-j").build()  # no queue name
    world.api.put(RAYJOBS.object_path("j", namespace=NAMESPACE), owner)
    world.api.put(
        RAYCLUSTERS.object_path("j-raycluster", namespace=NAMESPACE),
        child_cluster(owner, uid="uid-c"),
    )
    deliver(world)
    assert world.cluster.managed_owner("uid-c") is None


async def test_an_elastic_rayjob_follows_the_cluster_its_autoscaler_scales() -> None:
    world = World().setup()
    quotas = flavor_quotas("spot", cpu="8", memory="16Gi")
    world.add(f"{KUEUE}/clusterqueues/cq", cluster_queue("cq").resource_group(quotas).build())
    job = ray_job("j", NAMESPACE).uid("uid-j").queue("lq")
    job.annotations({"kueue.x-k8s.io/elastic-job": "true"}).requests(cpu="1")
    job.cluster_spec(enableInTreeAutoscaling=True).worker_group("w", replicas=1)
    job.requests(cpu="1")
    path = RAYJOBS.object_path("j", namespace=NAMESPACE)
    world.api.put(path, job.build())
    deliver(world)
    await world.executor.jobs.reconcile_jobs()
    deliver(world)
    await world.cycle()
    deliver(world)
    await world.executor.jobs.reconcile_jobs()
    deliver(world)
    started = world.api.store[path]
    assert started["spec"]["suspend"] is False, "admitted and started"
    started["status"] = {"rayClusterName": "j-raycluster"}
    world.api.put(path, started)
    child = child_cluster(started, uid="uid-c")
    child["spec"]["workerGroupSpecs"] = [
        {**started["spec"]["rayClusterSpec"]["workerGroupSpecs"][0], "replicas": 3}
    ]
    world.api.put(RAYCLUSTERS.object_path("j-raycluster", namespace=NAMESPACE), child)
    deliver(world)
    await world.executor.jobs.reconcile_jobs()
    deliver(world)
    slices = sorted(
        (
            wl["metadata"]["creationTimestamp"],
            [(p["name"], p["count"]) for p in wl["spec"]["podSets"]],
        )
        for key, wl in world.api.store.items()
        if "/workloads/" in key
    )
    assert [counts for _, counts in slices] == [
        [("head", 1), ("w", 1), ("submitter", 1)],
        [("head", 1), ("w", 3), ("submitter", 1)],
    ], "the autoscaler's 3 workers ask for a new slice"
