"""Quota follows the Workload's own status, whoever wrote it.

A Workload holds quota iff its status has ``admission`` and
``QuotaReserved=True`` and it is not ``Finished``; this holds for every
Workload, owned by a Job or not.  The one exception is an admission the
engine made itself and has not yet seen recorded ("assumed"): a view of the
object from before that write must not release it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scheduler.api.parse import parse_object
from scheduler.core.decisions import Evict
from scheduler.core.engine import Engine
from tests.builders import (
    T0,
    cluster_queue,
    condition,
    flavor_quotas,
    local_queue,
    resource_flavor,
    workload,
)


def setup(*workloads: workload) -> Engine:
    engine = Engine()
    for obj in (
        resource_flavor("default"),
        cluster_queue("cq").resource_group(flavor_quotas("default", cpu="1")),
        local_queue("lq").cluster_queue("cq"),
        *workloads,
    ):
        engine.apply(obj.model())
    return engine


def first() -> workload:
    return workload("first").queue("lq").created(1).pod_set(cpu="1")


def second() -> workload:
    """Ahead of ``first`` in the queue once both wait (no preemption in ``cq``)."""
    return workload("second").queue("lq").created(2).priority(5).pod_set(cpu="1")


def used(engine: Engine) -> str:
    return str(engine.view.cluster_queue_status("cq").usage["default"]["cpu"])


def states(engine: Engine) -> dict[str, str]:
    engine.run_until_steady(T0)
    return {key: engine.view.workload_state(key).state for key in engine.view.workload_keys()}


def with_status(builder: workload, change: str) -> Any:
    """``builder`` (holding quota) as another writer left it after ``change``."""
    raw = copy.deepcopy(builder.raw)
    status = raw["status"]
    conditions = status["conditions"]
    if change == "admission and reservation cleared":
        del status["admission"]
        conditions[0] = condition("QuotaReserved", "False", reason="Test", message=None, at=5)
    elif change == "reservation false, admission kept":
        conditions[0] = condition("QuotaReserved", "False", reason="Test", message=None, at=5)
    elif change == "admission cleared, reservation true":
        del status["admission"]
    elif change == "finished":
        conditions.append(condition("Finished", "True", reason="Test", message=None, at=5))
    elif change == "evicted, still reserved":
        conditions.append(condition("Evicted", "True", reason="Test", message=None, at=5))
    return parse_object(raw)


@pytest.mark.parametrize(
    "change",
    [
        "admission and reservation cleared",
        "reservation false, admission kept",
        "admission cleared, reservation true",
        "finished",
    ],
)
def test_a_workload_without_an_owner_frees_its_quota_when_its_status_stops_holding_it(
    change: str,
) -> None:
    holder = first().reserve_quota("cq")
    engine = setup(holder, second())
    assert states(engine) == {"default/first": "Admitted", "default/second": "Pending"}

    engine.apply(with_status(holder, change))

    after = states(engine)
    assert after["default/second"] == "Admitted", "the quota it held is free"
    assert used(engine) == "1"
    assert after["default/first"] == ("Finished" if change == "finished" else "Pending")


def test_a_workload_being_evicted_keeps_its_quota_until_the_reservation_is_cleared() -> None:
    holder = first().reserve_quota("cq")
    engine = setup(holder, second())
    engine.apply(with_status(holder, "evicted, still reserved"))
    assert states(engine) == {"default/first": "Admitted", "default/second": "Pending"}


def test_a_job_owned_workload_follows_its_status_the_same_way() -> None:
    holder = first().job_uid("job-1").reserve_quota("cq")
    engine = setup(holder, second())
    assert states(engine)["default/second"] == "Pending"
    engine.apply(with_status(holder, "admission and reservation cleared"))
    assert states(engine)["default/second"] == "Admitted"


def test_an_admission_the_engine_made_is_assumed_until_its_status_is_seen() -> None:
    engine = setup(first())
    states(engine)
    engine.apply(second().model())
    assert states(engine) == {"default/first": "Admitted", "default/second": "Pending"}
    assert engine.view.records["default/first"].assumed

    engine.apply(first().model())  # a view from before the admission was written
    assert states(engine) == {"default/first": "Admitted", "default/second": "Pending"}, (
        "an older view must not release an admission not yet recorded"
    )

    engine.apply(first().reserve_quota("cq").model())  # the informer shows the write
    assert not engine.view.records["default/first"].assumed
    engine.apply(first().model())  # now someone cleared it
    assert engine.view.workload_state("default/first").state == "Pending"
    assert states(engine) == {"default/first": "Pending", "default/second": "Admitted"}
    assert used(engine) == "1"


def test_the_write_answer_confirms_an_assumed_admission() -> None:
    engine = setup(first())
    states(engine)
    engine.admission_recorded("default/first")
    assert not engine.view.records["default/first"].assumed

    engine.apply(with_status(first().reserve_quota("cq"), "admission and reservation cleared"))
    assert engine.view.workload_state("default/first").state == "Pending"


def test_a_preemption_victim_released_by_another_writer_is_released_once() -> None:
    low = first().priority(0).reserve_quota("cq")
    high = workload("high").queue("lq").created(3).priority(10).pod_set(cpu="1")
    engine = setup(low)
    engine.apply(
        cluster_queue("cq")
        .resource_group(flavor_quotas("default", cpu="1"))
        .preemption(withinClusterQueue="LowerPriority")
        .model()
    )
    engine.apply(high.model())
    result = engine.cycle(T0)
    assert [d.victim for d in result.decisions if isinstance(d, Evict)] == ["default/first"]

    engine.apply(with_status(low, "admission and reservation cleared"))
    engine.release("default/first")  # the Job path, later: a no-op now
    assert states(engine)["default/high"] == "Admitted"
    assert used(engine) == "1"


def test_a_deactivated_workload_keeps_its_quota_until_its_status_releases_it() -> None:
    """Deactivation evicts; the job's pods may still run, so the quota waits for the status."""
    holding = first().reserve_quota("cq").admitted()
    engine = setup(holding, second())
    assert states(engine)["default/second"] == "Pending"
    engine.apply(holding.copy().inactive().model())
    assert used(engine) == "1", "counted while the status still records the reservation"
    assert states(engine)["default/second"] == "Pending"
    assert not any(isinstance(d, Evict) for d in engine.cycle(T0).decisions), "not evicted twice"
    released = first().inactive().condition("QuotaReserved", "False", reason="Pending")
    engine.apply(released.model())
    assert states(engine) == {"default/first": "Pending", "default/second": "Admitted"}
