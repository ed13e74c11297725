"""The objects jobs name for their pod sets (a TrainJob's runtime, docs/concepts.md#trainjob):
the cluster state keeps them as watched and says which jobs to decide again when one
appears, changes or goes; a TrainJob whose runtime is missing waits with a Warning Event."""

from __future__ import annotations

from typing import Any

from scheduler.api import objects
from scheduler.jobs import Reference
from scheduler.jobs.trainjob import TRAINJOB
from scheduler.kube.informer import Event, EventType
from scheduler.kube.job_reconciler import REFERENCE_NOT_FOUND
from scheduler.kube.referenced_objects import ReferencedObjects
from scheduler.kube.watches import kind_resource
from tests.kube.fake_api import FakeApi
from tests.kube.world import NAMESPACE, World

API_VERSION = "trainer.kubeflow.org/v1alpha1"
CLUSTER = "ClusterTrainingRuntime"
NAMESPACED = "TrainingRuntime"
TRAINJOBS = kind_resource(TRAINJOB)
EVENTS_PATH = f"/api/v1/namespaces/{NAMESPACE}/events"


def runtime(name: str, *, namespace: str | None = None, cpu: str = "1") -> dict[str, Any]:
    """A runtime of one trainer step ``node`` of one pod of ``cpu`` CPUs: a
    ClusterTrainingRuntime, or a TrainingRuntime of ``namespace``."""
    metadata: dict[str, Any] = {"name": name, "uid": f"uid-{namespace}-{name}"}
    if namespace is not None:
        metadata["namespace"] = namespace
    node = {"name": "node", "image": "i", "resources": {"requests": {"cpu": cpu}}}
    return {
        "apiVersion": API_VERSION,
        "kind": NAMESPACED if namespace is not None else CLUSTER,
        "metadata": metadata,
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {
                                    "labels": {
                                        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
                                    }
                                },
                                "spec": {"template": {"spec": {"containers": [node]}}},
                            },
                        }
                    ]
                }
            },
        },
    }


def trainjob(
    name: str, namespace: str, runtime_name: str, *, kind: str | None = None, nodes: int = 1
) -> dict[str, Any]:
    ref: dict[str, Any] = {"name": runtime_name}
    if kind is not None:
        ref["kind"] = kind
    return {
        "apiVersion": API_VERSION,
        "kind": "TrainJob",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{name}",
            "labels": {"kueue.x-k8s.io/queue-name": "lq"},
            "creationTimestamp": "2026-11-22T11:00:00Z",
        },
        "spec": {"suspend": True, "runtimeRef": ref, "trainer": {"numNodes": nodes}},
    }


def event(kind: EventType, obj: dict[str, Any]) -> Event:
    return Event(kind, obj, objects.key(obj))


def jobs_by_uid(*jobs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(objects.uid(job)): job for job in jobs}


def test_a_cluster_runtime_names_every_trainjob_that_names_it_whatever_its_namespace() -> None:
    jobs = jobs_by_uid(
        trainjob("a", "team-a", "torch"),
        trainjob("b", "team-b", "torch", kind=CLUSTER),
        trainjob("c", "team-a", "other"),
        trainjob("d", "team-a", "torch", kind=NAMESPACED),
    )
    references = ReferencedObjects(jobs)
    assert sorted(references.on_event(event("ADDED", runtime("torch")))) == ["uid-a", "uid-b"]
    assert references.on_event(event("ADDED", runtime("unnamed"))) == []


def test_a_namespaced_runtime_names_the_trainjobs_of_its_namespace_only() -> None:
    jobs = jobs_by_uid(
        trainjob("a", "team-a", "local", kind=NAMESPACED),
        trainjob("b", "team-b", "local", kind=NAMESPACED),
        trainjob("c", "team-a", "local"),
    )
    references = ReferencedObjects(jobs)
    found = references.on_event(event("ADDED", runtime("local", namespace="team-a")))
    assert found == ["uid-a"], "not team-b's, not the one naming a cluster runtime"
    other = references.on_event(event("MODIFIED", runtime("local", namespace="team-b")))
    assert other == ["uid-b"]


def test_jobs_of_other_kinds_and_jobs_added_later_are_read_at_each_event() -> None:
    batch_job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "torch", "namespace": "team-a", "uid": "uid-job"},
    }
    jobs = jobs_by_uid(batch_job)
    references = ReferencedObjects(jobs)
    assert references.on_event(event("ADDED", runtime("torch"))) == []
    jobs.update(jobs_by_uid(trainjob("late", "team-a", "torch")))
    assert references.on_event(event("MODIFIED", runtime("torch"))) == ["uid-late"], (
        "the state's jobs, read when the event comes"
    )


def test_get_returns_the_object_as_last_seen_and_none_once_deleted() -> None:
    references = ReferencedObjects({})
    cluster = Reference(API_VERSION, CLUSTER, "torch", None)
    namespaced = Reference(API_VERSION, NAMESPACED, "torch", "team-a")
    assert references.get(cluster) is None
    references.on_event(event("ADDED", runtime("torch")))
    assert references.get(cluster) == runtime("torch")
    assert references.get(namespaced) is None, "a TrainingRuntime of the same name is another"
    references.on_event(event("MODIFIED", runtime("torch", cpu="2")))
    assert references.get(cluster) == runtime("torch", cpu="2")
    references.on_event(event("ADDED", runtime("torch", namespace="team-a")))
    assert references.get(namespaced) == runtime("torch", namespace="team-a")
    assert references.get(Reference(API_VERSION, NAMESPACED, "torch", "team-b")) is None
    references.on_event(event("DELETED", runtime("torch")))
    assert references.get(cluster) is None
    assert references.get(namespaced) is not None, "only the deleted one is gone"


def test_a_deleted_runtime_names_the_trainjobs_to_decide_again() -> None:
    references = ReferencedObjects(jobs_by_uid(trainjob("a", "team-a", "torch")))
    references.on_event(event("ADDED", runtime("torch")))
    assert references.on_event(event("DELETED", runtime("torch"))) == ["uid-a"]


# -- through the cluster state and the job reconciler --------------------------------------------


def stored_events(api: FakeApi) -> list[dict[str, Any]]:
    return [obj for path, obj in api.store.items() if path.startswith(EVENTS_PATH + "/")]


def deliver(world: World) -> None:
    """Watch events to the state: TrainJobs as jobs, runtimes as referenced objects."""
    for kind, obj in world.api.events():
        match str(obj.get("kind")):
            case "TrainJob":
                world.cluster.on_job(event(kind, obj))  # type: ignore[arg-type]
            case "ClusterTrainingRuntime" | "TrainingRuntime":
                # as scheduler/kube/watches.py's handler does
                named = world.cluster.references.on_event(event(kind, obj))  # type: ignore[arg-type]
                world.cluster.jobs_to_decide.update(named)
            case _:
                world.api.pending_events.append((kind, obj))
                world.deliver()


async def test_a_trainjob_waits_for_its_runtime_then_is_queued_when_it_appears() -> None:
    world = World().setup(cpu="4")
    path = TRAINJOBS.object_path("train", namespace=NAMESPACE)
    world.api.put(path, trainjob("train", NAMESPACE, "torch", nodes=3))
    deliver(world)
    await world.executor.jobs.reconcile_jobs()
    await world.writer.events_sent()
    assert world.cluster.workload_for("uid-train") is None, "no pod sets without the runtime"
    (waiting,) = stored_events(world.api)
    assert waiting["reason"] == REFERENCE_NOT_FOUND
    assert "ClusterTrainingRuntime torch" in waiting["message"]
    assert waiting["involvedObject"]["kind"] == "TrainJob"

    world.api.put(
        "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/torch", runtime("torch")
    )
    deliver(world)
    assert "uid-train" in world.cluster.jobs_to_decide, "the runtime names it"
    await world.executor.jobs.reconcile_jobs()
    deliver(world)
    workload = world.cluster.workload_for("uid-train")
    assert workload is not None
    assert [(p["name"], p["count"]) for p in workload["spec"]["podSets"]] == [("node", 3)]
    (container,) = workload["spec"]["podSets"][0]["template"]["spec"]["containers"]
    assert container["resources"] == {"requests": {"cpu": "1"}}
    assert "kuota.resolvedRuntimeSpec" not in world.api.store[path], "never written"


async def test_the_event_of_a_trainjob_waiting_for_its_runtime_is_a_warning() -> None:
    """docs/concepts.md#trainjob, docs/api-differences.md: a Warning Event ``ReferenceNotFound``."""
    world = World().setup()
    world.api.put(
        TRAINJOBS.object_path("train", namespace=NAMESPACE),
        trainjob("train", NAMESPACE, "mine", kind=NAMESPACED),
    )
    deliver(world)
    await world.executor.jobs.reconcile_jobs()
    await world.writer.events_sent()
    (waiting,) = stored_events(world.api)
    assert waiting["reason"] == REFERENCE_NOT_FOUND
    assert f"TrainingRuntime mine in namespace {NAMESPACE}" in waiting["message"]
    assert waiting["type"] == "Warning"
