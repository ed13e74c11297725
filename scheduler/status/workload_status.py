"""What the scheduler writes into a Workload's status, built as data (pure).

The engine decides; this module turns a decision into the exact ``status``
fields (docs/scheduling.md#admission, docs/scheduling.md#pending-reasons,
docs/concepts.md#workload-life-cycle): the ``admission`` record and the
``QuotaReserved`` / ``Admitted`` / ``Evicted`` / ``Finished`` conditions.
Each function returns the *whole* new status (the writer applies the
scheduler's part of it, :func:`scheduler.kube.writer.workload_status_apply`),
or None when the stored status already says exactly that, so an unchanged
explanation costs no write.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from scheduler.api import objects
from scheduler.api.refs import (
    ADMITTED,
    DEACTIVATION_TARGET,
    EVICTED,
    FINISHED,
    ON_HOLD,
    PODS_READY,
    PREEMPTED,
    QUOTA_RESERVED,
    REQUEUED,
)
from scheduler.core.decisions import Admit, Evict, Pending
from scheduler.core.resources import format_quantity
from scheduler.status.check_status import (
    ADMITTED_MESSAGE,
    EVICTED_BY_CHECK,
    UNSATISFIED_MESSAGE,
    UNSATISFIED_REASON,
    all_ready,
    reset_on_eviction,
    synced_checks,
    with_retry_requeue,
)
from scheduler.status.conditions import find_condition, set_condition, truncate
from scheduler.status.pods_ready import (
    NOT_READY_MESSAGE,
    WAIT_FOR_START,
    accumulate_admitted_time,
)


def _status(workload: Mapping[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(dict(objects.status(workload)))


def _generation(workload: Mapping[str, Any]) -> int | None:
    return objects.generation(workload)


RESTARTED: Mapping[str, tuple[str, str]] = {
    "ClusterQueueStopped": (
        "ClusterQueueRestarted",
        "The ClusterQueue was restarted after being stopped",
    ),
    "LocalQueueStopped": (
        "LocalQueueRestarted",
        "The LocalQueue was restarted after being stopped",
    ),
}
"""Eviction reason whose ``Requeued`` stays False until the queue runs again -> (reason, message)
of ``Requeued=True`` once it does (docs/scheduling.md#eviction-and-requeue)."""

BACKOFF: Mapping[str, tuple[str, str]] = {
    EVICTED_BY_CHECK: ("BackoffFinished", "The workload backoff was finished"),
    "PodsReadyTimeout": ("BackoffFinished", "The workload backoff was finished"),
}
"""Eviction reason whose ``Requeued`` stays False until its backoff ends."""
REACTIVATED: tuple[str, str] = ("Reactivated", "The workload was reactivated")
"""``Requeued=True`` of a deactivated Workload the scheduler considers again
(docs/scheduling.md#eviction-and-requeue)."""


def _requeued_again(
    conditions: list[dict[str, Any]],
    now: datetime,
    generation: int | None,
    status: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """``Requeued=True`` for a workload back in a queue that runs again, or after its backoff.

    The scheduler considering the workload (admitting it, or explaining a wait
    that is not the stopped queue's) is the proof that its queue was restarted,
    or that its backoff (``requeueState.requeueAt``, the engine keeps the
    workload out of its queue until then) is over.  Pure.
    """
    requeued = find_condition(conditions, REQUEUED)
    if requeued is None or requeued.get("status") != "False":
        return conditions
    reason = str(requeued.get("reason", ""))
    restarted = RESTARTED.get(reason) or BACKOFF.get(reason)
    if reason.startswith("Deactivated"):  # considered again: it was reactivated
        restarted = REACTIVATED
    if restarted is None:
        return conditions
    requeue = (status or {}).get("requeueState") or {}
    until = objects.parse_time(requeue.get("requeueAt")) if isinstance(requeue, Mapping) else None
    if reason in BACKOFF and until is not None and until > now:
        return conditions  # still backing off
    reason, message = restarted
    return set_condition(
        conditions,
        kind=REQUEUED,
        status=True,
        reason=reason,
        message=message,
        now=now,
        generation=generation,
    )


def admission_record(decision: Admit) -> dict[str, Any]:
    """``status.admission`` for an Admit decision (docs/scheduling.md#admission).

    A pod set placed by topology records its assignment (v1beta2 encoding;
    docs/concepts.md#topology-aware-scheduling), one whose placement a
    MultiKueue worker makes records ``delayedTopologyRequest: Pending``.
    """
    assignments = []
    for pod_set in decision.pod_sets:
        item: dict[str, Any] = {
            "name": pod_set.name,
            "flavors": dict(pod_set.flavors),
            "resourceUsage": {r: format_quantity(r, q) for r, q in pod_set.resource_usage.items()},
            "count": pod_set.count,
        }
        if pod_set.topology_assignment is not None:
            item["topologyAssignment"] = pod_set.topology_assignment.encoded()
        if pod_set.delayed_topology_request is not None:
            item["delayedTopologyRequest"] = pod_set.delayed_topology_request
        assignments.append(item)
    return {"clusterQueue": decision.cluster_queue, "podSetAssignments": assignments}


def _waiting_for_pods(
    conditions: list[dict[str, Any]], now: datetime, generation: int | None
) -> list[dict[str, Any]]:
    """``PodsReady=False`` (``WaitForStart``) unless it already says so: what Kueue's job
    reconciler writes on a Workload not admitted yet (docs/concepts.md#pods-ready),
    carried by the scheduler's own write so it costs none of its own: pure."""
    current = find_condition(conditions, PODS_READY)
    if (
        current is not None
        and current.get("status") == "False"
        and current.get("reason") == WAIT_FOR_START
    ):
        return conditions
    return set_condition(
        conditions,
        kind=PODS_READY,
        status=False,
        reason=WAIT_FOR_START,
        message=NOT_READY_MESSAGE,
        now=now,
        generation=generation,
    )


def admitted_status(
    workload: Mapping[str, Any], decision: Admit, now: datetime, *, pods_ready: bool = False
) -> dict[str, Any]:
    """The whole new status for an admission: record plus conditions, in one write.

    ``pods_ready``: waitForPodsReady is on; the pods of the admitted job are
    not ready yet (``PodsReady=False``, ``WaitForStart``).
    """
    status = _status(workload)
    generation = _generation(workload)
    conditions = list(status.get("conditions") or [])
    if pods_ready:
        conditions = _waiting_for_pods(conditions, now, generation)
    conditions = set_condition(
        conditions,
        kind=QUOTA_RESERVED,
        status=True,
        reason="QuotaReserved",
        message=f"Quota reserved in ClusterQueue {decision.cluster_queue}",
        now=now,
        generation=generation,
    )
    for kind in (EVICTED, PREEMPTED):
        previous = find_condition(conditions, kind)
        if previous is not None and previous.get("status") == "True":
            conditions = set_condition(
                conditions,
                kind=kind,
                status=False,
                reason="QuotaReserved",
                message=f"Previously: {previous.get('message', '')}",
                now=now,
                generation=generation,
            )
    # The checks that apply are listed (missing ones Pending); Admitted waits for them.
    checks = synced_checks(status.get("admissionChecks") or [], decision.admission_checks, now)
    if checks or status.get("admissionChecks"):
        status["admissionChecks"] = checks
    ready = all_ready(checks)
    conditions = set_condition(
        conditions,
        kind=ADMITTED,
        status=ready,
        reason="Admitted" if ready else UNSATISFIED_REASON,
        message=ADMITTED_MESSAGE if ready else UNSATISFIED_MESSAGE,
        now=now,
        generation=generation,
    )
    status["conditions"] = _requeued_again(conditions, now, generation, status)
    status["admission"] = admission_record(decision)
    return status


def pending_status(
    workload: Mapping[str, Any], decision: Pending, now: datetime, *, pods_ready: bool = False
) -> dict[str, Any] | None:
    """The status that explains a wait, or None when it already says exactly that.

    ``pods_ready``: waitForPodsReady is on; a Workload without ``PodsReady``
    gets it False (``WaitForStart``).
    """
    status = _status(workload)
    conditions = list(status.get("conditions") or [])
    current = find_condition(conditions, QUOTA_RESERVED)
    message = truncate(decision.message)
    generation = _generation(workload)
    if pods_ready and find_condition(conditions, PODS_READY) is None:
        conditions = _waiting_for_pods(conditions, now, generation)
    if decision.reason != "Suspended":  # considered by the scheduler: its queue runs
        conditions = _requeued_again(conditions, now, generation, status)
    if (
        current is not None
        and current.get("status") == "False"
        and current.get("reason") == decision.reason
        and current.get("message") == message
        and "admission" not in status
        and conditions == list(status.get("conditions") or [])
    ):
        return None
    return _without_reservation(
        status,
        conditions,
        reason=decision.reason,
        message=message,
        now=now,
        generation=generation,
        admitted=True,
    )


def _without_reservation(
    status: dict[str, Any],
    conditions: list[dict[str, Any]],
    *,
    reason: str,
    message: str,
    now: datetime,
    generation: int | None,
    admitted: bool,
) -> dict[str, Any]:
    """``status`` with ``QuotaReserved=False`` (``reason``) and no admission; ``Admitted=False``
    too when ``admitted`` (the condition is to be written): pure."""
    conditions = set_condition(
        conditions,
        kind=QUOTA_RESERVED,
        status=False,
        reason=reason,
        message=message,
        now=now,
        generation=generation,
    )
    if admitted:
        conditions = set_condition(
            conditions,
            kind=ADMITTED,
            status=False,
            reason="NoReservation",
            message="The workload has no reservation",
            now=now,
            generation=generation,
        )
    status["conditions"] = conditions
    status.pop("admission", None)
    return status


def finished_status(
    workload: Mapping[str, Any], *, reason: str, message: str, now: datetime
) -> dict[str, Any] | None:
    """``Finished=True``, the admission kept for the record; None when already finished."""
    status = _status(workload)
    conditions = list(status.get("conditions") or [])
    current = find_condition(conditions, FINISHED)
    if current is not None and current.get("status") == "True":
        return None
    status["conditions"] = set_condition(
        conditions,
        kind=FINISHED,
        status=True,
        reason=reason,
        message=message or f"Job finished: {reason}",
        now=now,
        generation=_generation(workload),
    )
    return status


def condition_status(
    workload: Mapping[str, Any],
    *,
    kind: str,
    status: bool,
    reason: str,
    message: str,
    now: datetime,
) -> dict[str, Any]:
    """The Workload's status with condition ``kind`` set as given (a pod group's
    ``WaitingForReplacementPods``): pure."""
    result = _status(workload)
    result["conditions"] = set_condition(
        list(result.get("conditions") or []),
        kind=kind,
        status=status,
        reason=reason,
        message=message,
        now=now,
        generation=_generation(workload),
    )
    return result


def evicted_status(
    workload: Mapping[str, Any], decision: Evict, now: datetime
) -> dict[str, Any] | None:
    """``Evicted=True`` (and ``Preempted=True`` for preemptions) on a Workload holding quota.

    The admission stays: quota is released only when the Job's pods are gone
    (:func:`released_status`).  None when the Workload already says exactly that.
    """
    status = _status(workload)
    conditions = list(status.get("conditions") or [])
    current = find_condition(conditions, EVICTED)
    message = truncate(decision.message)
    if (
        current is not None
        and current.get("status") == "True"
        and current.get("message") == message
    ):
        return None
    generation = _generation(workload)
    preempted = decision.preemptor is not None
    conditions = set_condition(
        conditions,
        kind=EVICTED,
        status=True,
        reason="Preempted" if preempted else decision.reason,
        message=message,
        now=now,
        generation=generation,
    )
    if preempted:
        conditions = set_condition(
            conditions,
            kind=PREEMPTED,
            status=True,
            reason=decision.reason,
            message=message,
            now=now,
            generation=generation,
        )
    target = find_condition(conditions, DEACTIVATION_TARGET)
    if target is not None and not decision.preemptor and decision.reason.startswith("Deactivated"):
        conditions = [c for c in conditions if c is not target and c.get("type") != target["type"]]
    if not decision.preemptor and decision.reason.startswith("Deactivated"):
        status.pop(
            "requeueState", None
        )  # cleared on deactivation (docs/scheduling.md#eviction-and-requeue)
    status["conditions"] = conditions
    status["schedulingStats"] = counted_eviction(status.get("schedulingStats"), decision)
    if status.get("admissionChecks"):
        if decision.reason == EVICTED_BY_CHECK:
            status = with_retry_requeue(status, now)
        status["admissionChecks"] = reset_on_eviction(status["admissionChecks"], now)
    return status


def eviction_stat_key(decision: Evict) -> tuple[str, str]:
    """(reason, underlyingCause) of ``schedulingStats.evictions`` for an eviction: pure.

    A preemption counts as ``Preempted``; ``DeactivatedDueTo<cause>`` as
    ``Deactivated`` with that cause; a PodsReady timeout with its cause.
    """
    if decision.preemptor is not None:
        return "Preempted", ""
    if decision.reason.startswith("DeactivatedDueTo"):
        return "Deactivated", decision.reason.removeprefix("DeactivatedDueTo")
    return decision.reason, decision.cause


def counted_eviction(stats: object, decision: Evict) -> dict[str, Any]:
    """``schedulingStats`` with the eviction's entry counted once more: pure."""
    reason, cause = eviction_stat_key(decision)
    current = dict(stats) if isinstance(stats, Mapping) else {}
    entries = [dict(e) for e in current.get("evictions") or [] if isinstance(e, Mapping)]
    for entry in entries:
        if entry.get("reason") == reason and (entry.get("underlyingCause") or "") == cause:
            count = entry.get("count")
            entry["count"] = (count if isinstance(count, int) else 0) + 1
            break
    else:
        entries.append({"reason": reason, "underlyingCause": cause, "count": 1})
    current["evictions"] = entries
    return current


def released_status(workload: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """The eviction completed: admission removed, pending again, ``Requeued``.

    The time it was admitted is added to ``accumulatedPastExecutionTimeSeconds``.
    """
    status = accumulate_admitted_time(_status(workload), workload, now)
    conditions = list(status.get("conditions") or [])
    evicted = find_condition(conditions, EVICTED) or {}
    message = str(evicted.get("message", ""))
    reason = str(evicted.get("reason", "Preempted"))
    generation = _generation(workload)
    conditions = set_condition(
        conditions,
        kind=QUOTA_RESERVED,
        status=False,
        reason="PendingEvaluation",
        message=message,
        now=now,
        generation=generation,
    )
    conditions = set_condition(
        conditions,
        kind=ADMITTED,
        status=False,
        reason="NoReservation",
        message="The workload has no reservation",
        now=now,
        generation=generation,
    )
    deactivated = reason.startswith("Deactivated")
    if (
        reason in ("Preempted", "NodeFailures")
        or reason in RESTARTED
        or reason in BACKOFF
        or deactivated
    ):
        conditions = set_condition(
            conditions,
            kind=REQUEUED,
            status=reason not in RESTARTED and reason not in BACKOFF and not deactivated,
            reason=reason,
            message=message,
            now=now,
            generation=generation,
        )
    status["conditions"] = conditions
    status.pop("admission", None)
    return status


def on_hold_status(workload: Mapping[str, Any], message: str, now: datetime) -> dict[str, Any]:
    """The quota given back on purpose: admission removed, ``QuotaReserved=False`` with
    reason ``OnHold`` (not queued until :func:`off_hold_status`), ``Admitted=False``.

    The time it was admitted is added to ``accumulatedPastExecutionTimeSeconds``.
    """
    status = accumulate_admitted_time(_status(workload), workload, now)
    generation = _generation(workload)
    conditions = list(status.get("conditions") or [])
    return _without_reservation(
        status,
        conditions,
        reason=ON_HOLD,
        message=message,
        now=now,
        generation=generation,
        admitted=find_condition(conditions, ADMITTED) is not None,
    )


OFF_HOLD_MESSAGE = "Workload no longer on hold; waiting for quota reservation"


def off_hold_status(workload: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """The hold taken off: ``QuotaReserved=False``, reason ``PendingEvaluation``: queued again."""
    status = _status(workload)
    status["conditions"] = set_condition(
        list(status.get("conditions") or []),
        kind=QUOTA_RESERVED,
        status=False,
        reason="PendingEvaluation",
        message=OFF_HOLD_MESSAGE,
        now=now,
        generation=_generation(workload),
    )
    return status
