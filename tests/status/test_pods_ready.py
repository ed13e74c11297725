"""waitForPodsReady and the maximum execution time as Workload status data
(scheduler.status.pods_ready): the PodsReady condition Kueue's job reconciler writes,
the timeout and recovery deadlines read back from condition times, the requeue backoff
and its limit, the maximum execution time and the time accumulated over admissions."""

from __future__ import annotations

from datetime import timedelta

from scheduler.api.config import RequeuingStrategy, WaitForPodsReady
from scheduler.core.decisions import Evict, Pending
from scheduler.status.pods_ready import (
    MAX_EXECUTION_EXCEEDED,
    REQUEUING_LIMIT_EXCEEDED,
    TimerStep,
    next_deadline,
    pods_ready_deadline,
    pods_ready_status,
    remaining_execution,
    timer_step,
    timer_target_status,
    wanted_pods_ready,
    with_timeout_requeue,
)
from scheduler.status.workload_status import evicted_status, pending_status, released_status
from tests.builders import T0, workload

SETTINGS = WaitForPodsReady(
    timeout=timedelta(minutes=5),
    recovery_timeout=timedelta(minutes=1),
    requeuing_strategy=RequeuingStrategy(backoff_base_seconds=60, backoff_limit_count=2),
)


def admitted(at: float = 0) -> workload:
    return (
        workload("w", "ml").queue("lq").pod_set(count=1).reserve_quota("cq", at=at).admitted(at=at)
    )


def pods_ready(built: workload, status: str, reason: str, at: float = 0) -> workload:
    return built.condition("PodsReady", status, reason=reason, at=at)


def reason_of(status: dict, kind: str) -> tuple[str, str]:
    found = next(c for c in status["conditions"] if c["type"] == kind)
    return found["status"], found["reason"]


def test_pods_ready_follows_kueues_reasons_through_start_failure_and_recovery() -> None:
    pending = workload("w", "ml").queue("lq").pod_set().build()
    assert wanted_pods_ready(pending, True)[:2] == (False, "WaitForStart")  # not admitted
    fresh = admitted().build()
    assert wanted_pods_ready(fresh, False)[:2] == (False, "WaitForStart")
    assert wanted_pods_ready(fresh, True) == (
        True,
        "Started",
        "All pods reached readiness and the workload is running",
    )
    running = pods_ready(admitted(), "True", "Started").build()
    assert wanted_pods_ready(running, False) == (
        False,
        "WaitForRecovery",
        "At least one pod has failed, waiting for recovery",
    )
    failing = pods_ready(admitted(), "False", "WaitForRecovery").build()
    assert wanted_pods_ready(failing, False)[:2] == (False, "WaitForRecovery")
    assert wanted_pods_ready(failing, True)[:2] == (True, "Recovered")


def test_pods_ready_is_written_only_when_status_or_reason_changes() -> None:
    now = T0 + timedelta(seconds=30)
    fresh = admitted().build()
    first = pods_ready_status(fresh, False, now)
    assert first is not None and reason_of(first, "PodsReady") == ("False", "WaitForStart")
    assert pods_ready_status({**fresh, "status": first}, False, now) is None
    ready = pods_ready_status({**fresh, "status": first}, True, now)
    assert ready is not None and reason_of(ready, "PodsReady") == ("True", "Started")
    # A pending Workload without the condition gets it from the scheduler's own writes.
    assert pods_ready_status(workload("w", "ml").pod_set().build(), False, now) is None


def test_the_timeout_runs_from_the_admission_and_recovery_from_the_failure() -> None:
    start = admitted(at=100).build()
    assert pods_ready_deadline(start, SETTINGS) == (
        "WaitForStart",
        T0 + timedelta(seconds=100, minutes=5),
    )
    failing = pods_ready(admitted(at=100), "False", "WaitForRecovery", at=400).build()
    assert pods_ready_deadline(failing, SETTINGS) == (
        "WaitForRecovery",
        T0 + timedelta(seconds=400, minutes=1),
    )
    no_recovery = WaitForPodsReady(recovery_timeout=timedelta(0))
    assert pods_ready_deadline(failing, no_recovery) is None  # 0s turns recovery off
    assert pods_ready_deadline(pods_ready(admitted(), "True", "Started").build(), SETTINGS) is None
    assert pods_ready_deadline(start, None) is None  # waitForPodsReady off
    assert pods_ready_deadline(admitted().evicted("Preempted").build(), SETTINGS) is None
    assert pods_ready_deadline(admitted().inactive().build(), SETTINGS) is None


def test_a_due_timeout_evicts_with_kueues_message_and_cause() -> None:
    start = admitted().build()
    before = T0 + timedelta(minutes=5) - timedelta(seconds=1)
    assert timer_step(start, SETTINGS, before) is None
    step = timer_step(start, SETTINGS, T0 + timedelta(minutes=5))
    assert step == TimerStep(
        "evict", "PodsReadyTimeout", "Exceeded the PodsReady timeout ml/w", cause="WaitForStart"
    )


def test_the_backoff_doubles_and_the_limit_deactivates_instead() -> None:
    now = T0 + timedelta(minutes=10)
    first = with_timeout_requeue({}, SETTINGS, now)
    assert first["requeueState"] == {"count": 1, "requeueAt": "2024-01-01T00:11:00Z"}
    second = with_timeout_requeue(first, SETTINGS, now)
    assert second["requeueState"] == {"count": 2, "requeueAt": "2024-01-01T00:12:00Z"}
    capped = WaitForPodsReady(
        requeuing_strategy=RequeuingStrategy(backoff_base_seconds=60, backoff_max_seconds=90)
    )
    assert with_timeout_requeue({"requeueState": {"count": 5}}, capped, now)["requeueState"] == {
        "count": 6,
        "requeueAt": "2024-01-01T00:11:30Z",
    }
    at_limit = admitted().status(requeueState={"count": 2}).build()
    step = timer_step(at_limit, SETTINGS, T0 + timedelta(hours=1))
    assert step == TimerStep(
        "target",
        REQUEUING_LIMIT_EXCEEDED,
        "exceeding the maximum number of re-queuing retries",
    )
    target = timer_target_status(at_limit, step, now)
    assert reason_of(target, "DeactivationTarget") == ("True", "RequeuingLimitExceeded")
    marked = {**at_limit, "status": target}
    assert timer_step(marked, SETTINGS, now) == TimerStep("deactivate")
    assert next_deadline(marked, SETTINGS) is not None


def test_a_pods_ready_eviction_counts_scheduling_stats_and_deactivation_clears_requeue() -> None:
    now = T0 + timedelta(minutes=5)
    start = admitted().build()
    decision = Evict("ml/w", None, "PodsReadyTimeout", "m", cause="WaitForStart")
    status = evicted_status(start, decision, now)
    assert status is not None
    assert status["schedulingStats"] == {
        "evictions": [{"reason": "PodsReadyTimeout", "underlyingCause": "WaitForStart", "count": 1}]
    }
    again = evicted_status(
        {**start, "status": {**status, "conditions": []}},
        decision,
        now,
    )
    assert again is not None and again["schedulingStats"]["evictions"][0]["count"] == 2
    waiting = admitted().status(requeueState={"count": 1}).build()
    deactivated = Evict("ml/w", None, "DeactivatedDueToRequeuingLimitExceeded", "m")
    cleared = evicted_status(waiting, deactivated, now)
    assert cleared is not None and "requeueState" not in cleared
    assert cleared["schedulingStats"]["evictions"] == [
        {"reason": "Deactivated", "underlyingCause": "RequeuingLimitExceeded", "count": 1}
    ]


def test_maximum_execution_time_counts_past_admissions_and_deactivates() -> None:
    built = admitted(at=100).build()
    built["spec"]["maximumExecutionTimeSeconds"] = 60
    built["status"]["accumulatedPastExecutionTimeSeconds"] = 20
    assert remaining_execution(built, T0 + timedelta(seconds=110)) == timedelta(seconds=30)
    assert next_deadline(built, None) == T0 + timedelta(seconds=140)
    assert timer_step(built, None, T0 + timedelta(seconds=139)) is None
    step = timer_step(built, None, T0 + timedelta(seconds=140))
    assert step == TimerStep(
        "target", MAX_EXECUTION_EXCEEDED, "exceeding the maximum execution time"
    )
    target = timer_target_status(built, step, T0 + timedelta(seconds=140))
    assert "accumulatedPastExecutionTimeSeconds" not in target
    assert remaining_execution(workload("w").pod_set().build(), T0) is None


def test_the_time_admitted_accumulates_when_the_eviction_completes() -> None:
    built = admitted(at=100).evicted("PodsReadyTimeout").build()
    released = released_status(built, T0 + timedelta(seconds=145))
    assert released["accumulatedPastExecutionTimeSeconds"] == 45
    built["status"]["accumulatedPastExecutionTimeSeconds"] = 10
    assert (
        released_status(built, T0 + timedelta(seconds=145))["accumulatedPastExecutionTimeSeconds"]
        == 55
    )
    assert reason_of(released, "Requeued") == ("False", "PodsReadyTimeout")


def test_a_deactivated_workload_is_not_requeued_until_it_is_considered_again() -> None:
    reason = "DeactivatedDueToRequeuingLimitExceeded"
    built = admitted().inactive().evicted(reason, "m").build()
    released = released_status(built, T0 + timedelta(seconds=5))
    assert reason_of(released, "Requeued") == ("False", reason)
    waiting = Pending("ml/w", "cq", "WaitingForQuota", "no room")
    again = pending_status({**built, "status": released}, waiting, T0 + timedelta(minutes=1))
    assert again is not None and reason_of(again, "Requeued") == ("True", "Reactivated")


def test_a_kind_that_cannot_report_readiness_is_not_timed_one_that_can_is() -> None:
    import scheduler.jobs.kinds  # noqa: F401  (registers every kind)

    def owned_by(api_version: str, kind: str) -> dict:
        built = admitted().build()
        built["metadata"]["ownerReferences"] = [
            {"apiVersion": api_version, "kind": kind, "name": "x", "uid": "u", "controller": True}
        ]
        return built

    lws = owned_by("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")
    assert pods_ready_deadline(lws, SETTINGS) is None, "no readiness reported: not evicted for it"
    job = owned_by("batch/v1", "Job")
    assert pods_ready_deadline(job, SETTINGS) is not None
