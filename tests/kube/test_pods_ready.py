"""waitForPodsReady and the maximum execution time in the live scheduler, against an
in-memory API server: ``PodsReady`` follows the Job's ready pods, a Workload whose pods
are not ready in time is evicted with ``requeueState`` written (also by a scheduler that
started after the timeout passed: the deadline is read back from the conditions), the
requeuing limit and the maximum execution time deactivate it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from scheduler.api import objects
from scheduler.api.config import parse_configuration
from scheduler.api.pods_ready import wait_for_pods_ready
from scheduler.core.engine import Engine
from scheduler.kube.executor import Executor
from scheduler.kube.informer import Event
from scheduler.kube.state import KUEUE_KINDS, ClusterState
from scheduler.kube.workload_timers import WorkloadTimers
from scheduler.kube.writer import Writer

from .world import World, job_path


def timers(world: World) -> WorkloadTimers:
    return WorkloadTimers(
        state=world.cluster,
        writer=world.writer,
        clock=lambda: world.now,
        settings=wait_for_pods_ready(world.engine.config),
        evict=world.executor.admissions.evict,
    )


def condition(obj: dict[str, Any], kind: str) -> tuple[str, str, str]:
    found = next(c for c in obj["status"]["conditions"] if c["type"] == kind)
    return found["status"], found["reason"], found["message"]


def set_job_status(world: World, name: str, **status: Any) -> None:
    current = dict(world.job(name))
    current["status"] = {**current.get("status", {}), **status}
    world.add(job_path(name), current)


async def admitted(world: World, name: str = "train") -> str:
    key = await world.submit(name)
    await world.cycle()
    world.deliver()
    assert world.job(name)["spec"]["suspend"] is False
    return key


async def test_pods_ready_follows_the_jobs_ready_pods() -> None:
    world = World().setup()
    key = await admitted(world)
    assert condition(world.workload(key), "PodsReady") == (
        "False",
        "WaitForStart",
        "Not all pods are ready or succeeded",
    ), "written with the admission, no write of its own"
    set_job_status(world, "train", active=1, ready=1)
    await world.executor.jobs.reconcile_jobs()
    world.deliver()
    assert condition(world.workload(key), "PodsReady")[:2] == ("True", "Started")
    set_job_status(world, "train", active=1, ready=0)
    await world.executor.jobs.reconcile_jobs()
    world.deliver()
    assert condition(world.workload(key), "PodsReady")[:2] == ("False", "WaitForRecovery")
    set_job_status(world, "train", active=1, ready=1)
    await world.executor.jobs.reconcile_jobs()
    world.deliver()
    assert condition(world.workload(key), "PodsReady")[:2] == ("True", "Recovered")


async def test_pods_not_ready_in_time_are_evicted_and_backed_off() -> None:
    world = World().setup()
    key = await admitted(world)
    clock = timers(world)
    world.clock.advance(29 * 60)
    assert not await clock.reconcile(), "30 minutes, Kueue's default timeout"
    world.clock.advance(60)
    assert await clock.reconcile()
    world.deliver()
    workload = world.workload(key)
    assert condition(workload, "Evicted") == (
        "True",
        "PodsReadyTimeout",
        f"Exceeded the PodsReady timeout {key}",
    )
    evicted_at = world.now
    assert workload["status"]["requeueState"] == {
        "count": 1,
        "requeueAt": (evicted_at + timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    assert workload["status"]["schedulingStats"] == {
        "evictions": [{"reason": "PodsReadyTimeout", "underlyingCause": "WaitForStart", "count": 1}]
    }
    for _ in range(3):  # the Job is suspended, restored, and the quota goes back
        await world.executor.jobs.reconcile_jobs()
        world.deliver()
    assert world.job("train")["spec"]["suspend"] is True
    released = world.workload(key)
    assert condition(released, "Requeued")[:2] == ("False", "PodsReadyTimeout")
    assert released["status"]["accumulatedPastExecutionTimeSeconds"] == 30 * 60


async def test_a_scheduler_started_after_the_timeout_evicts_at_once() -> None:
    world = World().setup()
    key = await admitted(world)
    world.clock.advance(31 * 60)  # nobody led meanwhile; a new leader lists everything
    engine = Engine()
    state = ClusterState(engine)
    for obj in list(world.api.store.values()):
        if obj.get("kind") in KUEUE_KINDS:
            state.on_kueue(Event("ADDED", obj, objects.key(obj)))
        elif obj.get("kind") == "Job":
            state.on_job(Event("ADDED", obj, objects.key(obj)))
    writer = Writer(world.api)
    executor = Executor(engine=engine, state=state, writer=writer, clock=world.clock)
    fresh = WorkloadTimers(
        state=state,
        writer=writer,
        clock=lambda: world.now,
        settings=wait_for_pods_ready(engine.config),
        evict=executor.admissions.evict,
    )
    assert await fresh.reconcile()
    assert condition(world.workload(key), "Evicted")[1] == "PodsReadyTimeout"


async def test_the_requeuing_limit_deactivates_instead_of_evicting_again() -> None:
    config = parse_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "waitForPodsReady": {
                "timeout": "1m",
                "requeuingStrategy": {"backoffLimitCount": 0},
            },
        }
    )
    world = World(config).setup()
    key = await admitted(world)
    clock = timers(world)
    world.clock.advance(61)
    assert await clock.reconcile()
    world.deliver()
    workload = world.workload(key)
    assert condition(workload, "DeactivationTarget") == (
        "True",
        "RequeuingLimitExceeded",
        "exceeding the maximum number of re-queuing retries",
    )
    assert workload["spec"]["active"] is False
    await world.executor.jobs.reconcile_jobs()
    world.deliver()
    assert condition(world.workload(key), "Evicted") == (
        "True",
        "DeactivatedDueToRequeuingLimitExceeded",
        "The workload is deactivated due to exceeding the maximum number of re-queuing retries",
    )


async def test_the_maximum_execution_time_deactivates_with_kueues_reason() -> None:
    world = World().setup()
    key = await world.submit("train")
    limited = dict(world.job("train"))
    workload = world.workload(key)
    assert "maximumExecutionTimeSeconds" not in workload["spec"]
    limited["metadata"] = {
        **limited["metadata"],
        "labels": {**limited["metadata"]["labels"], "kueue.x-k8s.io/max-exec-time-seconds": "60"},
    }
    world.add(job_path("train"), limited)
    await world.executor.jobs.reconcile_jobs()  # the Workload is rebuilt with the limit
    world.deliver()
    assert world.workload(key)["spec"]["maximumExecutionTimeSeconds"] == 60
    await world.cycle()
    world.deliver()
    set_job_status(world, "train", active=1, ready=1)
    await world.executor.jobs.reconcile_jobs()
    world.deliver()
    clock = timers(world)
    world.clock.advance(59)
    assert not await clock.reconcile()
    world.clock.advance(1)
    assert await clock.reconcile()
    world.deliver()
    assert condition(world.workload(key), "DeactivationTarget")[:2] == (
        "True",
        "MaximumExecutionTimeExceeded",
    )
    assert world.workload(key)["spec"]["active"] is False
    await world.executor.jobs.reconcile_jobs()
    world.deliver()
    await world.writer.events_sent()
    assert condition(world.workload(key), "Evicted") == (
        "True",
        "DeactivatedDueToMaximumExecutionTimeExceeded",
        "The workload is deactivated due to exceeding the maximum execution time",
    )
    warnings = [
        (e["reason"], e["message"])
        for e in world.api.store.values()
        if e.get("kind") == "Event" and e.get("type") == "Warning"
    ]
    assert ("MaximumExecutionTimeExceeded", "The maximum execution time (60s) exceeded") in warnings
