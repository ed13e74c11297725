"""A small cluster for the scheduler's adapters: engine, state, writer, executor over a FakeApi.

``World`` stands in for one leader: objects are put into the fake API server
and delivered to the state like watch events when the test says so
(:meth:`World.deliver`), so a test controls exactly what the scheduler has
seen.  Builders make the raw objects of a small setup: flavor ``spot`` (node
label and toleration), ClusterQueue ``cq`` with 2 CPUs that preempts lower
priorities, LocalQueue ``ml/lq``, and queued Jobs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from scheduler.api import objects
from scheduler.api.refs import V1BETA2
from scheduler.core.decisions import CycleResult
from scheduler.core.engine import Engine
from scheduler.jobs import BATCH_JOB
from scheduler.kube.executor import Executor
from scheduler.kube.informer import Event
from scheduler.kube.state import KUEUE_KINDS, ClusterState
from scheduler.kube.watches import kind_resource
from scheduler.kube.writer import Writer, kueue_resource

from .fake_api import FakeApi

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
NAMESPACE = "ml"
KUEUE = f"/apis/{V1BETA2}"
JOBS = kind_resource(BATCH_JOB)
SPOT_TOLERATION = {"key": "spot", "operator": "Exists", "effect": "NoSchedule"}


def job_path(name: str) -> str:
    return JOBS.object_path(name, namespace=NAMESPACE)


def workload_path(name: str) -> str:
    return kueue_resource("workloads").object_path(name, namespace=NAMESPACE)


def flavor() -> dict[str, Any]:
    return {
        "apiVersion": V1BETA2,
        "kind": "ResourceFlavor",
        "metadata": {"name": "spot"},
        "spec": {"nodeLabels": {"instance-type": "spot"}, "tolerations": [SPOT_TOLERATION]},
    }


def cluster_queue(cpu: str = "2") -> dict[str, Any]:
    return {
        "apiVersion": V1BETA2,
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "namespaceSelector": {},
            "preemption": {"withinClusterQueue": "LowerPriority"},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": "spot", "resources": [{"name": "cpu", "nominalQuota": cpu}]}
                    ],
                }
            ],
        },
    }


def local_queue() -> dict[str, Any]:
    return {
        "apiVersion": V1BETA2,
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": NAMESPACE},
        "spec": {"clusterQueue": "cq"},
    }


def namespace() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": NAMESPACE, "labels": {"kubernetes.io/metadata.name": NAMESPACE}},
    }


def priority_class(name: str, value: int, *, default: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": default,
    }


def job(name: str, *, cpu: str = "1", priority_class_name: str | None = None) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
    }
    if priority_class_name:
        pod_spec["priorityClassName"] = priority_class_name
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": f"uid-{name}",
            "creationTimestamp": "2026-11-22T11:00:00Z",
            "labels": {"kueue.x-k8s.io/queue-name": "lq"},
        },
        "spec": {
            "suspend": True,
            "parallelism": 1,
            "completions": 1,
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec},
        },
    }


class World:
    def __init__(self) -> None:
        self.api = FakeApi()
        self.engine = Engine()
        self.cluster = ClusterState(self.engine)
        self.writer = Writer(self.api)
        self.now = NOW
        self.executor = Executor(
            engine=self.engine, state=self.cluster, writer=self.writer, clock=lambda: self.now
        )

    def add(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Store ``obj`` in the API server and let the scheduler see it."""
        stored = self.api.put(path, obj)
        self.deliver()
        return stored

    def deliver(self) -> None:
        """Hand every queued watch event to the state, as the informers would."""
        for kind, obj in self.api.events():
            event = Event(kind, obj, objects.key(obj))  # type: ignore[arg-type]
            match str(obj.get("kind")):
                case "Job":
                    self.cluster.on_job(event)
                case "Namespace":
                    self.cluster.on_namespace(event)
                case "PriorityClass":
                    self.cluster.on_priority_class(event)
                case kind if kind in KUEUE_KINDS:
                    self.cluster.on_kueue(event)
                case _:
                    pass  # Events: the scheduler watches none

    def setup(self, *, cpu: str = "2") -> World:
        """Flavor, ClusterQueue, LocalQueue and Namespace, seen by the scheduler."""
        self.add(f"{KUEUE}/resourceflavors/spot", flavor())
        self.add(f"{KUEUE}/clusterqueues/cq", cluster_queue(cpu))
        self.add(
            f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{NAMESPACE}/localqueues/lq", local_queue()
        )
        self.add(f"/api/v1/namespaces/{NAMESPACE}", namespace())
        return self

    async def submit(self, name: str, **job_options: Any) -> str:
        """A queued Job and its Workload (made by the executor, then seen); the Workload's key."""
        self.add(job_path(name), job(name, **job_options))
        await self.executor.jobs.reconcile_jobs()
        self.deliver()
        workload = self.cluster.workload_for(f"uid-{name}")
        assert workload is not None, f"{name} has a Workload"
        return objects.key(workload)

    async def cycle(self) -> CycleResult:
        """One engine cycle carried out, then what the API server answered delivered."""
        result = self.engine.cycle(self.now)
        await self.executor.carry_out(result.decisions)
        await self.writer.events_sent()
        return result

    def job(self, name: str) -> dict[str, Any]:
        return self.api.store[job_path(name)]

    def workload(self, key: str) -> dict[str, Any]:
        return self.api.store[workload_path(key.split("/", 1)[1])]

    def state(self, key: str) -> str:
        return self.engine.workload_state(key).state
