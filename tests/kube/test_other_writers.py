"""Other writers of a Workload's status, and Workloads no Job owns.

The scheduler writes status as Kueue does (server-side apply as
``kueue-admission``), so another tool applying as that manager can finish an
eviction; the engine then frees the quota from the Workload's own status,
with or without an owner Job.  Watch events older than what the scheduler
already stored are ignored.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from scheduler.api import objects
from scheduler.api.refs import V1BETA2
from scheduler.core.decisions import Admit
from scheduler.kube.informer import Event
from tests.builders import workload

from .world import NAMESPACE, World, workload_path


def ownerless(name: str, *, priority: int = 0, created: str = "2026-11-22T11:00:00Z") -> dict:  # type: ignore[type-arg]
    """A Workload created directly (as Kueue's scheduler-perf runner does): no Job, no owner."""
    built = workload(name, NAMESPACE).created(created).queue("lq").priority(priority)
    return built.pod_set(cpu="1").build()


def applied_by_another_tool(stored: dict[str, Any], *, finish: bool) -> dict[str, Any]:
    """What a tool applying as ``kueue-admission`` sends: the reservation cleared (and finished).

    The admission is left out of the applied configuration, which removes it.
    """
    conditions = [
        {**c, "status": "False", "reason": "Pending", "message": "released by a tool"}
        if c["type"] in ("QuotaReserved", "Admitted")
        else c
        for c in stored["status"]["conditions"]
    ]
    if finish:
        conditions.append(
            {
                "type": "Finished",
                "status": "True",
                "reason": "Succeeded",
                "message": "done",
                "lastTransitionTime": "2026-11-22T12:00:00Z",
            }
        )
    return {
        "apiVersion": V1BETA2,
        "kind": "Workload",
        "metadata": {"name": stored["metadata"]["name"], "namespace": NAMESPACE},
        "status": {"conditions": conditions},
    }


@pytest.mark.parametrize("finish", [True, False], ids=["finished", "reservation-cleared"])
async def test_an_ownerless_workload_is_admitted_and_its_quota_freed_by_another_writer(
    finish: bool,
) -> None:
    world = World().setup(cpu="1")
    world.add(workload_path("first"), ownerless("first"))
    first, second = f"{NAMESPACE}/first", f"{NAMESPACE}/second"
    assert [type(d) for d in (await world.cycle()).decisions] == [Admit]
    world.deliver()
    assert objects.has_quota_reservation(world.workload(first))
    world.add(workload_path("second"), ownerless("second", created="2026-11-22T11:00:05Z"))
    await world.cycle()
    assert world.state(second) == "Pending"

    await world.api.apply(
        workload_path("first") + "/status",
        applied_by_another_tool(world.workload(first), finish=finish),
        field_manager="kueue-admission",
        force=True,
    )
    assert "admission" not in world.workload(first)["status"], (
        "the scheduler's apply made kueue-admission the owner: the other tool could clear it"
    )
    world.deliver()
    await world.cycle()
    world.deliver()

    # Finished: second takes the quota.  Only cleared: first is pending again,
    # still first in line, and is admitted again (its admission written anew).
    holder = second if finish else first
    assert world.state(holder) == "Admitted"
    assert objects.has_quota_reservation(world.workload(holder))
    other = first if finish else second
    assert not objects.has_quota_reservation(world.workload(other))
    assert str(world.engine.view.cluster_queue_status("cq").usage["spot"]["cpu"]) == "1"


async def test_an_ownerless_victim_keeps_its_quota_until_another_writer_ends_the_eviction() -> None:
    world = World().setup(cpu="1")
    world.add(workload_path("low"), ownerless("low", priority=0))
    await world.cycle()
    world.deliver()
    world.add(workload_path("high"), ownerless("high", priority=10))
    low, high = f"{NAMESPACE}/low", f"{NAMESPACE}/high"

    await world.cycle()  # evicts low; no Job to stop: someone else ends the eviction
    world.deliver()
    await world.cycle()
    world.deliver()
    evicting = world.workload(low)
    assert objects.is_evicting(evicting), "Evicted, still holding its reservation (as Kueue)"
    assert world.state(high) == "Pending"

    # The runner's part, as Kueue's test tooling does it: QuotaReserved=False,
    # admission cleared, applied as kueue-admission with the resourceVersion.
    released = applied_by_another_tool(evicting, finish=False)
    released["metadata"]["resourceVersion"] = evicting["metadata"]["resourceVersion"]
    await world.api.apply(
        workload_path("low") + "/status", released, field_manager="kueue-admission", force=True
    )
    world.deliver()
    await world.cycle()
    world.deliver()
    assert world.state(high) == "Admitted"
    assert objects.has_quota_reservation(world.workload(high))
    assert world.state(low) == "Pending"


async def test_a_watch_event_older_than_the_admission_written_does_not_release_it() -> None:
    world = World().setup(cpu="1")
    before = world.add(workload_path("first"), ownerless("first"))
    world.add(workload_path("second"), ownerless("second", created="2026-11-22T11:00:05Z"))
    await world.cycle()  # admits first; the answer is stored in the state
    first = f"{NAMESPACE}/first"
    assert objects.has_quota_reservation(world.cluster.stored("Workload")[first])
    world.api.events()  # the watch has not delivered the write yet ...

    # ... but a relist or a slow watch delivers the version from before it.
    world.cluster.on_kueue(Event("MODIFIED", copy.deepcopy(before), first))

    assert objects.has_quota_reservation(world.cluster.stored("Workload")[first]), (
        "the stale one is dropped"
    )
    await world.cycle()
    assert world.state(first) == "Admitted"
    assert world.state(f"{NAMESPACE}/second") == "Pending", "no quota counted twice"


def test_the_state_ignores_a_job_event_older_than_the_job_it_has() -> None:
    world = World().setup()
    from .world import job, job_path

    old = world.add(job_path("train"), job("train"))
    newer = world.add(job_path("train"), {**old, "spec": {**old["spec"], "parallelism": 2}})
    world.cluster.on_job(Event("MODIFIED", old, objects.key(old)))
    assert (world.cluster.job("uid-train") or {})["spec"]["parallelism"] == 2
    assert world.cluster.job("uid-train") == newer


async def test_a_view_from_before_an_admission_in_flight_does_not_release_it() -> None:
    world = World().setup(cpu="1")
    before = world.add(workload_path("first"), ownerless("first"))
    world.add(workload_path("second"), ownerless("second", created="2026-11-22T11:00:05Z"))
    first, second = f"{NAMESPACE}/first", f"{NAMESPACE}/second"
    world.api.latency = 0.05
    turn = asyncio.create_task(world.cycle())
    while not world.api.in_flight.get(workload_path("first") + "/status"):
        await asyncio.sleep(0.001)

    # The admission write is on its way; the watch delivers the Workload as it was.
    world.cluster.on_kueue(Event("MODIFIED", copy.deepcopy(before), first))
    assert world.state(first) == "Admitted", "assumed: the view predates the admission"
    await turn
    world.api.latency = 0
    world.deliver()
    await world.cycle()
    assert world.state(first) == "Admitted"
    assert world.state(second) == "Pending", "the single cpu is counted once"
    assert objects.has_quota_reservation(world.workload(first))


async def test_an_admission_confirmed_by_its_write_is_released_by_a_newer_view_without_it() -> None:
    world = World().setup(cpu="1")
    world.add(workload_path("first"), ownerless("first"))
    first = f"{NAMESPACE}/first"
    await world.cycle()
    world.api.events()  # the watch never shows the admission itself (a relist skipped it) ...
    admitted = world.workload(first)
    cleared = await world.api.apply(
        workload_path("first") + "/status",
        applied_by_another_tool(admitted, finish=False),
        field_manager="kueue-admission",
        force=True,
    )
    # ... only the version after another tool cleared it.
    world.api.events()
    world.cluster.on_kueue(Event("MODIFIED", cleared, first))
    assert world.state(first) == "Pending", "the write's answer confirmed it: the object decides"
