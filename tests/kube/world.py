"""A small cluster for the scheduler's adapters: engine, state, writer, executor over a FakeApi.

``World`` stands in for one leader: objects are put into the fake API server
and delivered to the state like watch events when the test says so
(:meth:`World.deliver`), so a test controls exactly what the scheduler has
seen.  Presets of ``tests.builders`` make the raw objects of a small setup: flavor ``spot`` (node
label and toleration), ClusterQueue ``cq`` with 2 CPUs that preempts lower
priorities, LocalQueue ``ml/lq``, and queued Jobs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from scheduler.api import objects
from scheduler.api.config import Configuration
from scheduler.api.refs import V1BETA2
from scheduler.core.decisions import CycleResult
from scheduler.core.engine import Engine
from scheduler.jobs import BATCH_JOB
from scheduler.kube.executor import Executor
from scheduler.kube.informer import Event
from scheduler.kube.state import KUEUE_KINDS, ClusterState
from scheduler.kube.watches import kind_resource
from scheduler.kube.writer import Writer, kueue_resource
from tests import builders
from tests.builders import flavor_quotas, resource_flavor
from tests.clock import FakeClock
from tests.kube.fake_api import FakeApi

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
    """ResourceFlavor ``spot``: nodes labelled ``instance-type=spot``, its taint tolerated."""
    return (
        resource_flavor("spot")
        .node_labels({"instance-type": "spot"})
        .toleration("spot", operator="Exists", effect="NoSchedule")
        .build()
    )


def cluster_queue(cpu: str = "2") -> dict[str, Any]:
    """ClusterQueue ``cq``: ``cpu`` CPUs of flavor spot, preempting lower priorities."""
    return (
        builders.cluster_queue("cq")
        .preemption(withinClusterQueue="LowerPriority")
        .resource_group(flavor_quotas("spot", cpu=cpu))
        .build()
    )


def local_queue() -> dict[str, Any]:
    return builders.local_queue("lq", NAMESPACE).cluster_queue("cq").build()


def namespace() -> dict[str, Any]:
    return builders.namespace(NAMESPACE).build()


def priority_class(name: str, value: int, *, default: bool = False) -> dict[str, Any]:
    return builders.priority_class(name, value).global_default(default).build()


def job(name: str, *, cpu: str = "1", priority_class_name: str | None = None) -> dict[str, Any]:
    """A queued Job ``ml/<name>`` of one pod of ``cpu`` CPUs, created an hour before NOW."""
    built = (
        builders.job(name, NAMESPACE)
        .uid(f"uid-{name}")
        .created("2026-11-22T11:00:00Z")
        .queue("lq")
        .template_labels(app=name)
        .image("i")
        .requests(cpu=cpu)
    )
    if priority_class_name:
        built.priority_class_name(priority_class_name)
    return built.build()


class World:
    def __init__(self, config: Configuration | None = None) -> None:
        self.api = FakeApi()
        self.engine = Engine(config)
        self.cluster = ClusterState(self.engine)
        self.writer = Writer(self.api)
        self.clock = FakeClock(NOW)
        self.executor = Executor(
            engine=self.engine, state=self.cluster, writer=self.writer, clock=self.clock
        )

    @property
    def now(self) -> datetime:
        return self.clock.now

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
                case "Pod":
                    self.cluster.pods.on_job_pod(event)  # the pods of a started job
                case "Namespace":
                    self.cluster.settings.on_namespace(event)
                case "PriorityClass":
                    self.cluster.settings.on_priority_class(event)
                case "LimitRange":
                    self.cluster.settings.on_limit_range(event)
                case "RuntimeClass":
                    self.cluster.settings.on_runtime_class(event)
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
        return self.engine.view.workload_state(key).state
