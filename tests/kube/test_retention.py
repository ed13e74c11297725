"""objectRetentionPolicies carried out (docs/configuration.md): against the in-memory API
server, a finished Workload is deleted once ``afterFinished`` elapsed (its Job kept, and
given no new Workload), the Job of a Workload kuota deactivated is deleted with background
propagation after ``afterDeactivatedByKueue``, one deactivated by hand is kept, and the
schedule comes from the condition timestamps, so a new scheduler keeps it."""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

from scheduler.api.config import ObjectRetentionPolicies
from scheduler.core.decisions import Admit
from scheduler.kube.retention import RetentionCollector
from tests.builders.base import condition

from .world import NOW, World, job_path, workload_path

MINUTE = timedelta(minutes=1)


def collector(world: World, **policies: timedelta) -> RetentionCollector:
    return RetentionCollector(
        state=world.cluster,
        writer=world.writer,
        clock=world.clock,
        policies=ObjectRetentionPolicies(**policies),
    )


def deletes(world: World) -> list[tuple[str, Any]]:
    return [(call.path, call.body) for call in world.api.calls if call.verb == "DELETE"]


async def finished_job(world: World, name: str) -> str:
    key = await world.submit(name)
    assert [type(d) for d in (await world.cycle()).decisions] == [Admit]
    world.deliver()
    await world.executor.jobs.reconcile_jobs()  # started
    world.deliver()
    done = copy.deepcopy(world.job(name))
    done["status"] = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
    world.add(job_path(name), done)
    await world.executor.jobs.reconcile_jobs()  # Finished
    world.deliver()
    return key


def put_workload_status(world: World, key: str, **status: Any) -> None:
    changed = copy.deepcopy(world.workload(key))
    changed["spec"]["active"] = False
    changed["status"] = status
    world.add(workload_path(key.split("/", 1)[1]), changed)


async def test_a_finished_workload_is_deleted_once_its_period_elapsed_and_its_job_kept() -> None:
    world = World().setup()
    key = await finished_job(world, "a")
    retention = collector(world, after_finished=MINUTE)
    assert not await retention.collect()
    world.clock.advance(59)
    assert not await retention.collect()
    world.clock.advance(1)
    assert await retention.collect()
    ((path, preconditions),) = deletes(world)
    assert path == workload_path(key.split("/", 1)[1])
    assert set(preconditions) == {"uid", "resourceVersion"}
    assert job_path("a") in world.api.store, "the Job stays"
    world.deliver()
    await world.executor.jobs.reconcile_jobs()
    world.deliver()
    assert world.cluster.workload_for("uid-a") is None, "a finished Job gets no new Workload"
    await world.writer.events_sent()
    assert any(
        call.body
        and call.body.get("message") == "Deleted finished workload due to elapsed retention"
        for call in world.api.calls
        if call.verb == "POST"
    )


async def test_the_job_of_a_workload_kuota_deactivated_is_deleted_in_the_background() -> None:
    world = World().setup()
    key = await world.submit("a")
    evicted = condition("Evicted", reason="DeactivatedDueToAdmissionCheck", at=NOW)
    put_workload_status(world, key, conditions=[evicted])
    retention = collector(world, after_deactivated_by_kueue=timedelta(0))
    assert await retention.collect()
    assert deletes(world) == [(job_path("a"), {"uid": "uid-a"})]
    assert world.api.propagations == [(job_path("a"), "Background")]


async def test_a_workload_deactivated_by_hand_keeps_its_job() -> None:
    world = World().setup()
    key = await world.submit("a")
    put_workload_status(world, key, conditions=[condition("Evicted", reason="Deactivated", at=NOW)])
    retention = collector(world, after_deactivated_by_kueue=timedelta(0))
    world.clock.advance(3600)
    assert not await retention.collect()
    assert deletes(world) == []


async def test_a_new_scheduler_deletes_what_fell_due_while_none_ran() -> None:
    world = World().setup()
    key = await world.submit("a")
    long_ago = NOW - timedelta(hours=2)
    finished = [condition("Finished", reason="Succeeded", at=long_ago)]
    changed = copy.deepcopy(world.workload(key))
    changed["status"] = {"conditions": finished}
    world.add(workload_path(key.split("/", 1)[1]), changed)
    assert await collector(world, after_finished=timedelta(hours=1)).collect(), "at once"


async def test_without_policies_nothing_is_deleted() -> None:
    world = World().setup()
    await finished_job(world, "a")
    retention = RetentionCollector(
        state=world.cluster, writer=world.writer, clock=world.clock, policies=None
    )
    world.clock.advance(10**6)
    assert not await retention.collect()
    assert deletes(world) == []
