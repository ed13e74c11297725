"""waitForPodsReady and the maximum execution time, as Workload status data (pure).

docs/concepts.md#pods-ready and docs/concepts.md#maximum-execution-time say what
a user sees; the rules are Kueue's (docs/configuration.md#waitforpodsready,
docs/scheduling.md#eviction-and-requeue):

- ``PodsReady`` on a Workload whose job is not finished: ``True`` (reason
  ``Started``, or ``Recovered`` after a recovery) when the job's pods are
  ready as its kind counts them; else ``False``: ``WaitForRecovery`` once
  they had been ready while admitted, ``WaitForStart`` otherwise (and always
  while not admitted).  Only type, status and reason decide whether it is
  written again; the transition time moves when the status flips.
- An admitted, active Workload not being evicted whose ``PodsReady`` is not
  True is evicted (``PodsReadyTimeout``, message ``Exceeded the PodsReady
  timeout <ns>/<name>``) ``timeout`` after its ``Admitted`` transition
  (cause ``WaitForStart``), or ``recoveryTimeout`` after ``PodsReady`` went
  ``WaitForRecovery`` (cause ``WaitForRecovery``).  The eviction counts
  ``requeueState.count`` and sets ``requeueAt`` to now + the backoff; when
  ``count + 1`` would pass ``backoffLimitCount`` it is deactivated instead
  (``DeactivationTarget``, reason ``RequeuingLimitExceeded``).
- An admitted Workload with ``spec.maximumExecutionTimeSeconds`` whose
  ``accumulatedPastExecutionTimeSeconds`` plus the time since its
  ``Admitted`` transition reaches it is deactivated (``DeactivationTarget``,
  reason ``MaximumExecutionTimeExceeded``; the accumulated time is cleared).
- The time admitted is added to ``accumulatedPastExecutionTimeSeconds`` when
  ``Admitted`` goes back to False (``workload_status.released_status``).

Every deadline is computed from condition timestamps stored in the
Workload, so a restarted scheduler finds the same ones.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal

from scheduler.api import objects
from scheduler.api.config import WaitForPodsReady
from scheduler.api.pods_ready import backoff_seconds, recovery_timeout
from scheduler.api.refs import ADMITTED, DEACTIVATION_TARGET, EVICTED, PODS_READY
from scheduler.jobs.registry import readiness_unknown
from scheduler.status.conditions import find_condition, set_condition, timestamp

WAIT_FOR_START: Final = "WaitForStart"
WAIT_FOR_RECOVERY: Final = "WaitForRecovery"
STARTED: Final = "Started"
RECOVERED: Final = "Recovered"
NOT_READY_MESSAGE: Final = "Not all pods are ready or succeeded"
RECOVERY_MESSAGE: Final = "At least one pod has failed, waiting for recovery"
READY_MESSAGE: Final = "All pods reached readiness and the workload is running"

PODS_READY_TIMEOUT: Final = "PodsReadyTimeout"
"""The ``Evicted`` reason of a Workload whose pods were not ready in time."""
REQUEUING_LIMIT_EXCEEDED: Final = "RequeuingLimitExceeded"
REQUEUING_LIMIT_MESSAGE: Final = "exceeding the maximum number of re-queuing retries"
MAX_EXECUTION_EXCEEDED: Final = "MaximumExecutionTimeExceeded"
MAX_EXECUTION_MESSAGE: Final = "exceeding the maximum execution time"
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def _status(workload: Mapping[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(dict(objects.status(workload)))


def wanted_pods_ready(workload: Mapping[str, Any], ready: bool) -> tuple[bool, str, str]:
    """(status, reason, message) of ``PodsReady`` given whether the pods are ready: pure."""
    if not objects.is_admitted(workload):
        return False, WAIT_FOR_START, NOT_READY_MESSAGE
    current = objects.condition(workload, PODS_READY)
    reason = str((current or {}).get("reason") or "")
    if ready:
        if reason in (WAIT_FOR_RECOVERY, RECOVERED):
            return True, RECOVERED, READY_MESSAGE
        return True, STARTED, READY_MESSAGE
    if current is not None and (current.get("status") == "True" or reason == WAIT_FOR_RECOVERY):
        return False, WAIT_FOR_RECOVERY, RECOVERY_MESSAGE
    return False, WAIT_FOR_START, NOT_READY_MESSAGE


def pods_ready_status(
    workload: Mapping[str, Any], ready: bool, now: datetime
) -> dict[str, Any] | None:
    """The status with ``PodsReady`` as it should be, or None when it already says so: pure."""
    status, reason, message = wanted_pods_ready(workload, ready)
    current = objects.condition(workload, PODS_READY)
    if current is None and not objects.is_admitted(workload):
        return None  # the scheduler's pending or admission write says it (no write of its own)
    if (
        current is not None
        and current.get("status") == ("True" if status else "False")
        and current.get("reason") == reason
    ):
        return None
    new = _status(workload)
    new["conditions"] = set_condition(
        new.get("conditions") or [],
        kind=PODS_READY,
        status=status,
        reason=reason,
        message=message,
        now=now,
        generation=objects.generation(workload),
    )
    return new


# -- deadlines ------------------------------------------------------------------------------


def _since(workload: Mapping[str, Any], kind: str) -> datetime | None:
    return objects.parse_time((objects.condition(workload, kind) or {}).get("lastTransitionTime"))


def pods_ready_deadline(
    workload: Mapping[str, Any], settings: WaitForPodsReady | None
) -> tuple[str, datetime] | None:
    """(cause, when) the Workload is evicted for not being ready, or None: pure.

    Only an admitted, active Workload not being evicted whose ``PodsReady``
    is not True is timed (Kueue's ``admittedNotReadyWorkload``).
    """
    if settings is None or not objects.is_admitted(workload) or readiness_unknown(workload):
        return None
    if objects.is_deactivated(workload) or objects.is_true(workload, EVICTED):
        return None
    if objects.is_finished(workload):
        return None
    current = objects.condition(workload, PODS_READY)
    if current is not None and current.get("status") == "True":
        return None
    reason = (current or {}).get("reason")
    if current is None or reason in (WAIT_FOR_START, "PodsReady"):
        admitted = _since(workload, ADMITTED)
        return (WAIT_FOR_START, admitted + settings.timeout) if admitted else None
    recovery = recovery_timeout(settings)
    if reason == WAIT_FOR_RECOVERY and recovery is not None:
        since = _since(workload, PODS_READY)
        return (WAIT_FOR_RECOVERY, since + recovery) if since else None
    return None


def remaining_execution(workload: Mapping[str, Any], now: datetime) -> timedelta | None:
    """Time left before the maximum execution time, None when none applies: pure.

    ``maximumExecutionTimeSeconds`` minus the time admitted before
    (``accumulatedPastExecutionTimeSeconds``) minus the time since the current
    ``Admitted`` transition; only while ``Admitted`` is True.
    """
    limit = objects.spec(workload).get("maximumExecutionTimeSeconds")
    if not isinstance(limit, int) or isinstance(limit, bool) or not objects.is_admitted(workload):
        return None
    admitted = _since(workload, ADMITTED)
    if admitted is None:
        return None
    return timedelta(seconds=limit - accumulated_seconds(workload)) - (now - admitted)


def max_execution_deadline(workload: Mapping[str, Any]) -> datetime | None:
    """When an admitted Workload has run its maximum execution time, or None: pure."""
    admitted = _since(workload, ADMITTED)
    left = remaining_execution(workload, admitted) if admitted is not None else None
    if admitted is None or left is None or objects.is_finished(workload):
        return None
    if objects.is_true(workload, DEACTIVATION_TARGET):
        return None
    return admitted + left


def next_deadline(
    workload: Mapping[str, Any], settings: WaitForPodsReady | None
) -> datetime | None:
    """The earliest time :func:`timer_step` may have something to do, or None: pure.

    A Workload marked for deactivation by a timer and still active is due now.
    """
    if _target_reason(workload) in (REQUEUING_LIMIT_EXCEEDED, MAX_EXECUTION_EXCEEDED):
        if not objects.is_deactivated(workload):
            return _since(workload, DEACTIVATION_TARGET) or EPOCH
    found = [
        when
        for when in (
            (pods_ready_deadline(workload, settings) or (None, None))[1],
            max_execution_deadline(workload),
        )
        if when is not None
    ]
    return min(found) if found else None


def _target_reason(workload: Mapping[str, Any]) -> str | None:
    target = objects.condition(workload, DEACTIVATION_TARGET)
    if target is None or target.get("status") != "True":
        return None
    return str(target.get("reason") or "")


@dataclass(frozen=True, slots=True)
class TimerStep:
    """What a timed Workload needs now (:func:`timer_step`).

    ``evict``: evicted with ``PodsReadyTimeout`` (``cause``: ``WaitForStart``
    or ``WaitForRecovery``); ``target``: ``DeactivationTarget`` with
    ``reason`` and ``message``; ``deactivate``: the target is recorded,
    ``spec.active`` goes false.
    """

    kind: Literal["evict", "target", "deactivate"]
    reason: str = ""
    message: str = ""
    cause: str = ""


def timer_step(
    workload: Mapping[str, Any], settings: WaitForPodsReady | None, now: datetime
) -> TimerStep | None:
    """The one timed step ``workload`` needs at ``now``, or None: pure.

    In Kueue's order: a recorded timer target is carried out first, then the
    PodsReady timeout (or the requeuing limit it reaches), then the maximum
    execution time.
    """
    if not objects.has_quota_reservation(workload):
        return None
    if _target_reason(workload) in (REQUEUING_LIMIT_EXCEEDED, MAX_EXECUTION_EXCEEDED):
        return None if objects.is_deactivated(workload) else TimerStep("deactivate")
    due = pods_ready_deadline(workload, settings)
    if due is not None and due[1] <= now and settings is not None:
        limit = settings.requeuing_strategy.backoff_limit_count
        if limit is not None and requeue_count(workload) + 1 > limit:
            return TimerStep("target", REQUEUING_LIMIT_EXCEEDED, REQUEUING_LIMIT_MESSAGE)
        message = f"Exceeded the PodsReady timeout {objects.key(workload)}"
        return TimerStep("evict", PODS_READY_TIMEOUT, message, cause=due[0])
    deadline = max_execution_deadline(workload)
    if deadline is not None and deadline <= now:
        return TimerStep("target", MAX_EXECUTION_EXCEEDED, MAX_EXECUTION_MESSAGE)
    return None


# -- status the steps write ----------------------------------------------------------------


def requeue_count(workload: Mapping[str, Any]) -> int:
    """``status.requeueState.count`` (0 when absent): pure."""
    state = objects.status(workload).get("requeueState")
    count = state.get("count") if isinstance(state, Mapping) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else 0


def accumulated_seconds(workload: Mapping[str, Any]) -> int:
    """``status.accumulatedPastExecutionTimeSeconds`` (0 when absent): pure."""
    value = objects.status(workload).get("accumulatedPastExecutionTimeSeconds")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def with_timeout_requeue(
    status: dict[str, Any], settings: WaitForPodsReady, now: datetime
) -> dict[str, Any]:
    """``requeueState`` after a PodsReady timeout: count + 1, ``requeueAt`` after the backoff.

    ``requeueAt`` only moves later, as Kueue keeps a later one another
    writer set (docs/scheduling.md#eviction-and-requeue): pure.
    """
    state = dict(status.get("requeueState") or {})
    count = state.get("count")
    count = (count if isinstance(count, int) and not isinstance(count, bool) else 0) + 1
    at = now + timedelta(seconds=backoff_seconds(settings, count))
    current = objects.parse_time(state.get("requeueAt"))
    if current is None or current < at:
        state["requeueAt"] = timestamp(at)
    state["count"] = count
    status["requeueState"] = state
    return status


def timer_target_status(
    workload: Mapping[str, Any], step: TimerStep, now: datetime
) -> dict[str, Any]:
    """``DeactivationTarget=True`` with the step's reason and message: pure.

    The maximum execution time also clears ``accumulatedPastExecutionTimeSeconds``.
    """
    status = _status(workload)
    status["conditions"] = set_condition(
        status.get("conditions") or [],
        kind=DEACTIVATION_TARGET,
        status=True,
        reason=step.reason,
        message=step.message,
        now=now,
        generation=objects.generation(workload),
    )
    if step.reason == MAX_EXECUTION_EXCEEDED:
        status.pop("accumulatedPastExecutionTimeSeconds", None)
    return status


def accumulate_admitted_time(
    status: dict[str, Any], workload: Mapping[str, Any], now: datetime
) -> dict[str, Any]:
    """Add the time since ``Admitted`` went True, when it is True now (it goes False): pure."""
    admitted = find_condition(objects.conditions(workload), ADMITTED)
    if admitted is None or admitted.get("status") != "True":
        return status
    since = objects.parse_time(admitted.get("lastTransitionTime"))
    if since is None:
        return status
    seconds = int((now - since).total_seconds())
    previous = status.get("accumulatedPastExecutionTimeSeconds")
    base = previous if isinstance(previous, int) and not isinstance(previous, bool) else 0
    status["accumulatedPastExecutionTimeSeconds"] = base + seconds
    return status


__all__ = [
    "MAX_EXECUTION_EXCEEDED",
    "MAX_EXECUTION_MESSAGE",
    "NOT_READY_MESSAGE",
    "PODS_READY_TIMEOUT",
    "READY_MESSAGE",
    "RECOVERED",
    "RECOVERY_MESSAGE",
    "REQUEUING_LIMIT_EXCEEDED",
    "REQUEUING_LIMIT_MESSAGE",
    "STARTED",
    "TimerStep",
    "WAIT_FOR_RECOVERY",
    "WAIT_FOR_START",
    "accumulate_admitted_time",
    "accumulated_seconds",
    "max_execution_deadline",
    "next_deadline",
    "pods_ready_deadline",
    "pods_ready_status",
    "remaining_execution",
    "requeue_count",
    "timer_step",
    "timer_target_status",
    "wanted_pods_ready",
    "with_timeout_requeue",
]
