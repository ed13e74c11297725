"""The executor's rules, against an in-memory API server (no cluster).

Admission: the status write comes first and the Job is started from it;
nothing starts when that write fails, and the engine forgets its assumption.
Eviction: Evicted/Preempted first, the Job stopped and restored, the quota
released only when the Job has no pods and the release is recorded.
Conflicts: a Job that moved is decided again from the fresh object.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler import logs
from scheduler.api import objects
from scheduler.core.decisions import Admit, Evict, Pending
from scheduler.kube.fence import Fenced
from scheduler.kube.informer import Event
from scheduler.kube.rest import ApiError
from tests.builders import pod

from .world import SPOT_TOLERATION, World, job_path, workload_path


def patches(world: World) -> list[str]:
    return [call.path for call in world.api.calls if call.verb == "PATCH"]


def running(world: World, name: str, *, active: int) -> None:
    """The Job controller's view: ``active`` pods, started at some point."""
    current = dict(world.job(name))
    current["status"] = {"active": active, "startTime": "2026-11-22T11:30:00Z"} if active else {}
    world.add(job_path(name), current)


async def test_the_admission_is_written_to_the_workload_before_the_job_starts_from_it() -> None:
    world = World().setup()
    key = await world.submit("train")
    result = await world.cycle()

    assert [type(d) for d in result.decisions] == [Admit]
    name = key.split("/", 1)[1]
    assert patches(world) == [workload_path(name) + "/status", job_path("train")]
    admission = world.workload(key)["status"]["admission"]
    assert admission["clusterQueue"] == "cq"
    assert admission["podSetAssignments"][0]["flavors"] == {"cpu": "spot"}
    started = world.job("train")
    assert started["spec"]["suspend"] is False
    pod_spec = started["spec"]["template"]["spec"]
    assert pod_spec["nodeSelector"] == {"instance-type": "spot"}
    assert SPOT_TOLERATION in pod_spec["tolerations"], "the flavor's toleration, from the engine"


async def test_nothing_starts_when_the_admission_cannot_be_written_and_the_engine_forgets() -> None:
    world = World().setup()
    key = await world.submit("train")
    world.api.fail("PATCH", "/status", ApiError("HTTP 500: etcd timeout", status=500))
    result = await world.cycle()

    assert [type(d) for d in result.decisions] == [Admit], "the engine had assumed it"
    assert job_path("train") not in patches(world), "no Job patch without the recorded admission"
    assert world.job("train")["spec"]["suspend"] is True
    assert world.state(key) == "Pending", "the assumption is dropped"
    assert world.engine.view.cluster_queue_status("cq").usage["spot"]["cpu"].milli_value() == 0
    assert "admission" not in world.workload(key).get("status", {})

    world.deliver()
    retried = await world.cycle()
    assert [type(d) for d in retried.decisions] == [Admit], "re-applied from the state: pending"
    assert world.job("train")["spec"]["suspend"] is False


async def test_forget_puts_back_exactly_what_the_state_holds() -> None:
    world = World().setup()
    key = await world.submit("train")
    await world.cycle()
    world.deliver()
    assert world.state(key) == "Admitted"

    # The engine assumed something the API server never recorded: forgetting
    # it restores the Workload as stored (admitted, with its quota).
    world.cluster.forget(key)
    assert world.state(key) == "Admitted"
    assert world.engine.view.cluster_queue_status("cq").admitted == 1

    stored_pending = {**world.cluster.stored("Workload")[key], "status": {}}
    world.cluster.remember(stored_pending)  # the same version, as a write's answer
    world.cluster.forget(key)
    assert world.state(key) == "Pending"
    assert world.engine.view.cluster_queue_status("cq").admitted == 0


async def test_a_workload_deleted_before_its_admission_is_written_is_dropped() -> None:
    world = World().setup()
    key = await world.submit("train")
    result = world.engine.cycle(world.now)
    # Its deletion is seen after the cycle decided, before the admission is written.
    world.cluster.on_kueue(Event("DELETED", world.workload(key), key))
    await world.executor.carry_out(result.decisions)

    assert patches(world) == []
    with pytest.raises(KeyError):
        world.engine.view.workload_state(key)


async def test_a_job_that_moved_is_started_from_the_fresh_object_after_the_conflict() -> None:
    world = World().setup()
    await world.submit("train")
    moved = dict(world.job("train"))
    moved["metadata"] = {**moved["metadata"], "labels": {**moved["metadata"]["labels"], "x": "y"}}
    world.api.put(job_path("train"), moved)  # someone's write the scheduler has not seen yet

    await world.cycle()
    assert world.job("train")["spec"]["suspend"] is True, "the stale patch was refused"
    assert "uid-train" in world.cluster.jobs_to_decide, "the Job will be decided again"

    world.deliver()
    assert await world.executor.jobs.reconcile_jobs()
    started = world.job("train")
    assert started["spec"]["suspend"] is False
    assert started["metadata"]["labels"]["x"] == "y", "the other writer's change survives"


async def preempted(world: World) -> tuple[str, str]:
    """``low`` admitted and running on all the quota, then ``high`` arrives and preempts it."""
    world.add("/apis/scheduling.k8s.io/v1/priorityclasses/high", _high_class())
    low = await world.submit("low", cpu="2")
    await world.cycle()
    world.deliver()
    running(world, "low", active=1)
    high = await world.submit("high", cpu="2", priority_class_name="high")
    result = await world.cycle()
    assert [type(d) for d in result.decisions] == [Evict, Pending]
    world.deliver()
    return low, high


def _high_class() -> dict[str, Any]:
    from .world import priority_class

    return priority_class("high", 100)


async def test_eviction_stops_and_restores_the_job_and_releases_quota_only_after_its_pods() -> None:
    world = World().setup()
    low, high = await preempted(world)

    evicted = world.workload(low)
    assert objects.is_true(evicted, "Evicted") and objects.is_true(evicted, "Preempted")
    assert objects.has_quota_reservation(evicted), "the admission stays until the pods are gone"

    assert await world.executor.jobs.reconcile_jobs()  # suspend
    world.deliver()
    assert world.job("low")["spec"]["suspend"] is True
    assert await world.executor.jobs.reconcile_jobs()  # clear startTime, restore the template
    world.deliver()
    assert "nodeSelector" not in world.job("low")["spec"]["template"]["spec"]
    world.cluster.jobs_to_decide.add("uid-low")
    assert not await world.executor.jobs.reconcile_jobs(), "pods still active: nothing to release"
    assert objects.has_quota_reservation(world.workload(low))
    assert [type(d) for d in (await world.cycle()).decisions] != [Admit]

    running(world, "low", active=0)  # the Job controller removed the pods
    assert await world.executor.jobs.reconcile_jobs()
    released = world.workload(low)
    assert not objects.has_quota_reservation(released)
    assert objects.is_true(released, "Requeued")
    world.deliver()
    assert world.state(high) == "Pending"
    result = await world.cycle()
    assert Admit in [type(d) for d in result.decisions]
    assert world.state(high) == "Admitted"


def job_pod(world: World, job: str, *, phase: str = "Running") -> dict[str, Any]:
    """A pod the Job controller made from the started Job's template (its labels kept)."""
    labels = world.api.store[job_path(job)]["spec"]["template"]["metadata"]["labels"]
    return (
        pod(f"{job}-pod", "ml").uid(f"pod-{job}").labels(labels).unset("spec").phase(phase).build()
    )


async def test_a_pod_the_job_status_does_not_count_yet_holds_the_quota_until_it_is_gone() -> None:
    """Seen in a chaos run: preempted right after it started, the Job's status.active was
    still 0 while its new pod ran; its quota went to the next Workload."""
    world = World().setup()
    world.add("/apis/scheduling.k8s.io/v1/priorityclasses/high", _high_class())
    low = await world.submit("low", cpu="2")
    await world.cycle()
    world.deliver()
    pod = job_pod(world, "low")
    assert pod["metadata"]["labels"]["kueue.x-k8s.io/job-uid"] == "uid-low"
    world.add("/api/v1/namespaces/ml/pods/low-pod", pod)  # status.active still 0
    high = await world.submit("high", cpu="2", priority_class_name="high")
    await world.cycle()
    world.deliver()
    for _ in range(3):  # suspend, restore: the Job's counters say nothing runs
        await world.executor.jobs.reconcile_jobs()
        world.deliver()
    assert objects.has_quota_reservation(world.workload(low)), "its pod still runs"
    assert Admit not in [type(d) for d in (await world.cycle()).decisions]

    terminating = {
        **pod,
        "metadata": {**pod["metadata"], "deletionTimestamp": "2026-11-22T12:00:00Z"},
    }
    world.add("/api/v1/namespaces/ml/pods/low-pod", terminating)
    assert not await world.executor.jobs.reconcile_jobs(), "in its grace period: still live"
    assert objects.has_quota_reservation(world.workload(low))

    await world.api.delete("/api/v1/namespaces/ml/pods/low-pod")
    world.deliver()
    assert await world.executor.jobs.reconcile_jobs()
    assert not objects.has_quota_reservation(world.workload(low)), "released once the pod is gone"
    world.deliver()
    assert Admit in [type(d) for d in (await world.cycle()).decisions]
    assert world.state(high) == "Admitted"


async def test_quota_stays_counted_when_the_release_cannot_be_recorded() -> None:
    world = World().setup()
    low, high = await preempted(world)
    for _ in range(2):
        await world.executor.jobs.reconcile_jobs()
        world.deliver()
    running(world, "low", active=0)
    world.api.fail("PATCH", "/status", ApiError("HTTP 500", status=500))

    assert not await world.executor.jobs.reconcile_jobs()
    assert objects.has_quota_reservation(world.workload(low))
    assert world.state(low) == "Admitted", "the engine keeps the quota counted"
    result = await world.cycle()
    assert Admit not in [type(d) for d in result.decisions]

    world.cluster.jobs_to_decide.add("uid-low")  # the next event on the Job
    assert await world.executor.jobs.reconcile_jobs()
    world.deliver()
    assert Admit in [type(d) for d in (await world.cycle()).decisions]


async def test_pending_explanations_are_written_within_the_budget_and_only_when_changed() -> None:
    world = World().setup(cpu="1")
    world.executor.pending.status_writes_per_second = 1
    keys = [await world.submit(name) for name in ("a", "b")]
    decisions = [Pending(key, "cq", "Pending", f"couldn't assign flavors to {key}") for key in keys]
    await world.executor.carry_out(decisions)
    written = [k for k in keys if objects.condition(world.workload(k), "QuotaReserved")]
    assert written == keys[:1], "one pending status write per turn at 1/s"
    assert list(world.executor.pending.queued) == keys[1:], "the other waits for the next turn"

    world.deliver()
    await world.executor.pending.flush()
    world.deliver()
    for key in keys:
        reserved = objects.condition(world.workload(key), "QuotaReserved")
        assert reserved is not None and reserved["status"] == "False"
        assert reserved["message"] == f"couldn't assign flavors to {key}"

    writes = len(patches(world))
    await world.executor.carry_out(decisions[:1])
    assert len(patches(world)) == writes, "an unchanged explanation costs no write"
    await world.executor.carry_out([Pending(keys[0], "cq", "Pending", "a new reason")])
    assert len(patches(world)) == writes + 1


async def test_an_explanation_queued_before_the_admission_is_not_written_after_it() -> None:
    """Pending explanations are written in the background: one queued while the Workload
    waited must not take back the admission a later cycle made meanwhile."""
    world = World().setup(cpu="1")
    key = await world.submit("a")
    world.executor.pending.queue([Pending(key, "cq", "Pending", "waiting for quota")])
    await world.cycle()  # admits it; the explanation stays queued (say, already taken)
    world.deliver()
    world.executor.pending.queue([Pending(key, "cq", "Pending", "waiting for quota")])
    await world.executor.pending.flush()
    world.deliver()
    assert world.state(key) == "Admitted"
    assert objects.has_quota_reservation(world.workload(key)), "the admission stands"


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JsonFormatter())
    logger = logging.getLogger("kuota")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    yield stream
    logger.removeHandler(handler)
    logger.setLevel(level)


async def test_every_line_about_an_object_names_it(log_lines: io.StringIO) -> None:
    world = World().setup()
    key = await world.submit("train")
    with logs.bind(cycle=7):
        await world.cycle()
    lines = [json.loads(line) for line in log_lines.getvalue().splitlines()]
    admitted = next(line for line in lines if line["msg"] == "admitted")
    assert admitted["object"] == key and admitted["cycle"] == 7
    started = next(line for line in lines if line["msg"] == "started job")
    assert started["object"] == "ml/train" and started["cycle"] == 7


async def test_hold_and_drain_stops_the_job_and_resuming_admits_it_again() -> None:
    """A stopped ClusterQueue's running Job is evicted like a preemption, then requeued."""
    from prometheus_client import REGISTRY

    from scheduler.kube.kueue_metrics import RECORDER

    from .world import KUEUE, cluster_queue

    RECORDER.role = "leader"
    labels = {
        "cluster_queue": "cq",
        "reason": "ClusterQueueStopped",
        "underlying_cause": "",
        "priority_class": "",
        "replica_role": "leader",
    }
    before = REGISTRY.get_sample_value("kueue_evicted_workloads_total", labels) or 0.0
    world = World().setup()
    key = await world.submit("train")
    await world.cycle()
    world.deliver()
    running(world, "train", active=1)
    stopped = cluster_queue()
    stopped["spec"]["stopPolicy"] = "HoldAndDrain"
    world.add(f"{KUEUE}/clusterqueues/cq", stopped)

    result = await world.cycle()
    assert result.decisions == (
        Evict(key, None, "ClusterQueueStopped", "The ClusterQueue is stopped"),
    )
    world.deliver()
    evicted = objects.condition(world.workload(key), "Evicted") or {}
    assert (evicted.get("status"), evicted.get("reason"), evicted.get("message")) == (
        "True",
        "ClusterQueueStopped",
        "The ClusterQueue is stopped",
    )
    assert not objects.is_true(world.workload(key), "Preempted")
    after = REGISTRY.get_sample_value("kueue_evicted_workloads_total", labels)
    assert after == before + 1
    for _ in range(2):  # suspend, then restore the template
        assert await world.executor.jobs.reconcile_jobs()
        world.deliver()
    assert world.job("train")["spec"]["suspend"] is True
    running(world, "train", active=0)
    assert await world.executor.jobs.reconcile_jobs()
    world.deliver()
    released = world.workload(key)
    assert not objects.has_quota_reservation(released)
    requeued = objects.condition(released, "Requeued") or {}
    assert (requeued.get("status"), requeued.get("reason")) == ("False", "ClusterQueueStopped")
    assert Admit not in [type(d) for d in (await world.cycle()).decisions]
    assert world.engine.view.workload_state(key).reason == "Suspended"

    world.add(f"{KUEUE}/clusterqueues/cq", cluster_queue())
    result = await world.cycle()
    assert [type(d) for d in result.decisions] == [Admit]
    world.deliver()
    readmitted = world.workload(key)
    requeued = objects.condition(readmitted, "Requeued") or {}
    assert (requeued.get("status"), requeued.get("reason"), requeued.get("message")) == (
        "True",
        "ClusterQueueRestarted",
        "The ClusterQueue was restarted after being stopped",
    )
    assert world.job("train")["spec"]["suspend"] is False


async def test_an_eviction_that_cannot_be_written_is_issued_again_next_cycle() -> None:
    world = World().setup()
    world.add("/apis/scheduling.k8s.io/v1/priorityclasses/high", _high_class())
    low = await world.submit("low", cpu="2")
    await world.cycle()
    world.deliver()
    running(world, "low", active=1)
    high = await world.submit("high", cpu="2", priority_class_name="high")
    world.api.fail(
        "PATCH", "/status", ApiError("HTTP 409: the object has been modified", status=409)
    )

    first = await world.cycle()
    assert [type(d) for d in first.decisions] == [Evict, Pending]
    world.deliver()
    assert not objects.is_true(world.workload(low), "Evicted")
    assert world.engine.view.workload_state(low).reason == "QuotaReserved", "not evicted after all"

    second = await world.cycle()
    assert [d.victim for d in second.decisions if isinstance(d, Evict)] == [low]
    assert objects.is_true(world.workload(low), "Evicted")
    assert world.state(high) == "Pending"


async def test_a_fenced_pending_writer_does_not_end_the_next_term_too() -> None:
    """Seen in Kueue's large benchmark: the API server stopped answering, the Lease was
    lost, the pending writer ended fenced, and every later term re-raised that failure at
    its first turn."""
    world = World().setup()
    executor = world.executor

    async def fenced() -> None:
        raise Fenced("not leading")

    executor.pending._paced = asyncio.get_running_loop().create_task(fenced())
    await asyncio.sleep(0)
    await executor.stop_background()  # the term ends
    key = await world.submit("a")
    executor.pending.queue([Pending(key, "cq", "Pending", "waiting for quota")])
    executor.pending.write_soon()  # the next term's first turn: nothing to raise
    await executor.stop_background()
