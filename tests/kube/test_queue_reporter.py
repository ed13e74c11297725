"""Queue status refreshes cost what changed: nothing computed when nothing changed, the
queues of a changed Workload when one did, every queue when a spec changed; and what a
user reads in the statuses stays right throughout."""

from __future__ import annotations

from typing import Any

from scheduler.api import objects
from scheduler.core.decisions import Admit, Evict, Pending
from scheduler.core.engine import Engine
from scheduler.kube.informer import Event
from scheduler.kube.queue_changes import QueueChanges
from scheduler.kube.queue_reporter import QueueReporter
from scheduler.kube.rest import ApiError, Unreachable
from scheduler.kube.state import ClusterState
from scheduler.kube.writer import Writer
from tests.builders import (
    T0,
    admission_check,
    cluster_queue,
    flavor_quotas,
    local_queue,
    resource_flavor,
    workload,
)
from tests.kube.fake_api import FakeApi

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
NS = "ml"


def cq_path(name: str) -> str:
    return f"{KUEUE}/clusterqueues/{name}"


def lq_path(name: str) -> str:
    return f"{KUEUE}/namespaces/{NS}/localqueues/{name}"


def wl_path(name: str) -> str:
    return f"{KUEUE}/namespaces/{NS}/workloads/{name}"


class Cluster:
    """Two ClusterQueues ``a`` and ``b`` (4 CPUs each), LocalQueues ``a`` and ``b`` on them."""

    def __init__(self) -> None:
        self.api = FakeApi()
        self.state = ClusterState(Engine())
        self.reporter = QueueReporter(
            engine=self.state.engine, state=self.state, writer=Writer(self.api), clock=lambda: T0
        )
        self.put(f"{KUEUE}/resourceflavors/default", resource_flavor("default").build())
        for name in ("a", "b"):
            self.put(
                cq_path(name),
                cluster_queue(name)
                .resource_group(flavor_quotas("default").resource("cpu", "4"))
                .build(),
            )
            self.put(lq_path(name), local_queue(name, NS).cluster_queue(name).build())

    def put(self, path: str, obj: dict[str, Any]) -> None:
        self.api.put(path, obj)
        self.deliver()

    def deliver(self) -> None:
        """Every write so far reaches the state as a watch event."""
        for kind, obj in self.api.events():
            self.state.on_kueue(Event(kind, obj, objects.key(obj)))  # type: ignore[arg-type]

    async def refresh(self) -> list[str]:
        """One refresh; the paths it wrote."""
        before = len(self.api.calls)
        await self.reporter.refresh()
        return [call.path for call in self.api.calls[before:]]

    def status(self, path: str) -> dict[str, Any]:
        return dict(self.api.store[path].get("status") or {})


def admitted(name: str, queue: str) -> dict[str, Any]:
    return (
        workload(name, NS)
        .queue(queue)
        .pod_set(cpu="1")
        .reserve_quota(queue, at=T0)
        .admitted(at=T0)
        .build()
    )


async def test_nothing_changed_nothing_computed_and_nothing_written() -> None:
    cluster = Cluster()
    written = await cluster.refresh()
    assert len(written) == 4, "a new term writes every status once"
    cluster.deliver()  # kuota's own writes come back
    await cluster.refresh()  # they are compared once more, and equal
    assert await cluster.refresh() == []
    assert cluster.reporter.last_computed == 0


async def test_a_workload_change_recomputes_its_queues_only_and_they_read_right() -> None:
    cluster = Cluster()
    await cluster.refresh()
    cluster.deliver()
    await cluster.refresh()

    cluster.put(wl_path("train"), admitted("train", "a"))
    written = await cluster.refresh()
    assert sorted(written) == sorted([f"{cq_path('a')}/status", f"{lq_path('a')}/status"])
    assert cluster.reporter.last_computed == 2, "ClusterQueue a and LocalQueue a"
    assert cluster.status(cq_path("a"))["admittedWorkloads"] == 1
    assert cluster.status(lq_path("a"))["admittedWorkloads"] == 1
    assert cluster.status(cq_path("b"))["admittedWorkloads"] == 0

    finished = workload.__new__(workload)
    finished.raw = cluster.api.store[wl_path("train")]
    cluster.put(wl_path("train"), finished.finished(at=T0).raw)
    await cluster.refresh()
    assert cluster.status(cq_path("a"))["admittedWorkloads"] == 0
    assert cluster.status(lq_path("a"))["admittedWorkloads"] == 0


async def test_a_workload_moved_to_another_queue_leaves_the_first_one_s_count() -> None:
    cluster = Cluster()
    pending = workload("wait", NS).queue("a").pod_set(cpu="1").build()
    cluster.put(wl_path("wait"), pending)
    await cluster.refresh()
    assert cluster.status(lq_path("a"))["pendingWorkloads"] == 1

    moved = dict(cluster.api.store[wl_path("wait")])
    moved["spec"] = {**moved["spec"], "queueName": "b"}
    cluster.put(wl_path("wait"), moved)
    await cluster.refresh()
    assert cluster.status(lq_path("a"))["pendingWorkloads"] == 0
    assert cluster.status(lq_path("b"))["pendingWorkloads"] == 1
    assert cluster.status(cq_path("b"))["pendingWorkloads"] == 1


async def test_a_spec_change_recomputes_every_queue() -> None:
    cluster = Cluster()
    await cluster.refresh()
    cluster.deliver()
    await cluster.refresh()
    changed = dict(cluster.api.store[cq_path("b")])
    changed["metadata"] = {**changed["metadata"], "generation": 2}
    changed["spec"] = {**changed["spec"], "stopPolicy": "Hold"}
    cluster.put(cq_path("b"), changed)
    written = await cluster.refresh()
    assert cluster.reporter.last_computed == 4
    assert sorted(written) == sorted([f"{cq_path('b')}/status", f"{lq_path('b')}/status"])
    assert cluster.status(lq_path("b"))["conditions"][0]["reason"] == "ClusterQueueIsInactive"


async def test_a_status_that_could_not_be_written_is_tried_by_the_next_refresh() -> None:
    cluster = Cluster()
    await cluster.refresh()
    cluster.deliver()
    cluster.put(wl_path("train"), admitted("train", "a"))
    cluster.api.fail("PATCH", "clusterqueues/a", Unreachable("connection refused"))
    await cluster.refresh()
    assert cluster.status(cq_path("a"))["admittedWorkloads"] == 0, "not written yet"
    cluster.api.fail("PATCH", "clusterqueues/a", ApiError("forbidden", status=403))
    await cluster.refresh()
    assert cluster.status(cq_path("a"))["admittedWorkloads"] == 0, "refused"
    await cluster.refresh()
    assert cluster.status(cq_path("a"))["admittedWorkloads"] == 1


def test_decisions_mark_the_queue_they_count_in_and_pending_ones_nothing() -> None:
    changes = QueueChanges()
    changes.take()
    victim = admitted("old", "b")
    changes.touch_decisions(
        [
            Admit(workload="ml/new", cluster_queue="a", pod_sets=(), message=""),
            Evict(victim="ml/old", preemptor="ml/new", reason="Preempted", message=""),
            Pending(workload="ml/wait", cluster_queue="c", reason="Pending", message=""),
        ],
        {"ml/old": victim},
    )
    marked = changes.take()
    assert not marked.everything
    assert marked.cluster_queues == {"a", "b"}
    assert marked.local_queues == {"ml/b"}
    assert not changes.take(), "taken: nothing marked any more"


async def test_an_admission_check_becoming_active_makes_its_cluster_queue_active() -> None:
    cluster = Cluster()
    path = f"{KUEUE}/admissionchecks/prov"
    cluster.put(path, admission_check("prov", "example.com/prov").active(False).build())
    checked = (
        cluster_queue("checked")
        .resource_group(flavor_quotas("default").resource("cpu", "4"))
        .admission_checks("prov")
        .build()
    )
    cluster.put(cq_path("checked"), checked)
    await cluster.refresh()
    cluster.deliver()
    await cluster.refresh()
    assert await cluster.refresh() == [] and cluster.reporter.last_computed == 0
    assert cluster.status(cq_path("checked"))["conditions"][0]["status"] == "False"

    # The check's controller writes its status only: the same generation.
    cluster.put(path, admission_check("prov", "example.com/prov").active(True).build())
    await cluster.refresh()
    assert cluster.status(cq_path("checked"))["conditions"][0]["status"] == "True"
