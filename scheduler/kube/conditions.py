"""What the scheduler writes into a Workload's status, built as data (pure).

The engine decides; this module turns a decision into the exact ``status``
fields of scheduling.md 6.1/6.2/4.7/6.5: the ``admission`` record and the
``QuotaReserved`` / ``Admitted`` / ``Evicted`` / ``Finished`` conditions.
Nothing here talks to the API server, so every message and every
``lastTransitionTime`` rule is unit-tested directly.

Kubernetes condition rule kept throughout: ``lastTransitionTime`` changes only
when a condition's ``status`` changes; reason and message may change freely.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from scheduler.core.decisions import Admit, Evict, Pending
from scheduler.core.resources import format_quantity

MAX_MESSAGE_BYTES = 32768


def timestamp(now: datetime) -> str:
    """RFC 3339 in UTC with second precision, as the API server stores it."""
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def truncate(message: str, limit: int = MAX_MESSAGE_BYTES) -> str:
    """Condition messages are capped; a cut message ends with ``" ..."`` (pure)."""
    encoded = message.encode()
    if len(encoded) <= limit:
        return message
    return encoded[: limit - 4].decode(errors="ignore") + " ..."


def find_condition(conditions: Sequence[Mapping[str, Any]], kind: str) -> Mapping[str, Any] | None:
    return next((c for c in conditions if c.get("type") == kind), None)


def set_condition(
    conditions: Sequence[Mapping[str, Any]],
    *,
    kind: str,
    status: bool,
    reason: str,
    message: str,
    now: datetime,
    generation: int | None = None,
) -> list[dict[str, Any]]:
    """A new list with ``kind`` set; the transition time moves only when status flips (pure)."""
    wanted = "True" if status else "False"
    result = [dict(c) for c in conditions]
    existing = next((c for c in result if c.get("type") == kind), None)
    entry: dict[str, Any] = {
        "type": kind,
        "status": wanted,
        "reason": reason,
        "message": truncate(message),
    }
    if generation is not None:
        entry["observedGeneration"] = generation
    if (
        existing is not None
        and existing.get("status") == wanted
        and existing.get("lastTransitionTime")
    ):
        entry["lastTransitionTime"] = existing["lastTransitionTime"]
    else:
        entry["lastTransitionTime"] = timestamp(now)
    if existing is None:
        result.append(entry)
    else:
        result[result.index(existing)] = entry
    return result


def _status(workload: Mapping[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(dict(workload.get("status") or {}))


def _generation(workload: Mapping[str, Any]) -> int | None:
    value = (workload.get("metadata") or {}).get("generation")
    return value if isinstance(value, int) else None


def admission_record(decision: Admit) -> dict[str, Any]:
    """``status.admission`` for an Admit decision (scheduling.md 6.1)."""
    return {
        "clusterQueue": decision.cluster_queue,
        "podSetAssignments": [
            {
                "name": pod_set.name,
                "flavors": dict(pod_set.flavors),
                "resourceUsage": {
                    r: format_quantity(r, q) for r, q in pod_set.resource_usage.items()
                },
                "count": pod_set.count,
            }
            for pod_set in decision.pod_sets
        ],
    }


def admitted_status(workload: Mapping[str, Any], decision: Admit, now: datetime) -> dict[str, Any]:
    """The whole new status for an admission: record plus conditions (6.2), in one write."""
    status = _status(workload)
    generation = _generation(workload)
    conditions = list(status.get("conditions") or [])
    conditions = set_condition(
        conditions,
        kind="QuotaReserved",
        status=True,
        reason="QuotaReserved",
        message=f"Quota reserved in ClusterQueue {decision.cluster_queue}",
        now=now,
        generation=generation,
    )
    for kind in ("Evicted", "Preempted"):
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
    conditions = set_condition(
        conditions,
        kind="Admitted",
        status=True,
        reason="Admitted",
        message="The workload is admitted",
        now=now,
        generation=generation,
    )
    status["conditions"] = conditions
    status["admission"] = admission_record(decision)
    return status


def pending_status(
    workload: Mapping[str, Any], decision: Pending, now: datetime
) -> dict[str, Any] | None:
    """The status that explains a wait (4.7), or None when it already says exactly that."""
    status = _status(workload)
    conditions = list(status.get("conditions") or [])
    current = find_condition(conditions, "QuotaReserved")
    message = truncate(decision.message)
    if (
        current is not None
        and current.get("status") == "False"
        and current.get("reason") == decision.reason
        and current.get("message") == message
        and "admission" not in status
    ):
        return None
    generation = _generation(workload)
    conditions = set_condition(
        conditions,
        kind="QuotaReserved",
        status=False,
        reason=decision.reason,
        message=message,
        now=now,
        generation=generation,
    )
    conditions = set_condition(
        conditions,
        kind="Admitted",
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
    """``Finished=True`` (6.5); the admission is kept for the record.  None when already finished."""
    status = _status(workload)
    conditions = list(status.get("conditions") or [])
    current = find_condition(conditions, "Finished")
    if current is not None and current.get("status") == "True":
        return None
    status["conditions"] = set_condition(
        conditions,
        kind="Finished",
        status=True,
        reason=reason,
        message=message or f"Job finished: {reason}",
        now=now,
        generation=_generation(workload),
    )
    return status


def is_admitted(workload: Mapping[str, Any]) -> bool:
    """Pure: the Workload records an admission (QuotaReserved=True and an admission record)."""
    status = workload.get("status") or {}
    reserved = find_condition(status.get("conditions") or [], "QuotaReserved")
    return (
        bool(status.get("admission")) and reserved is not None and reserved.get("status") == "True"
    )


def is_finished(workload: Mapping[str, Any]) -> bool:
    status = workload.get("status") or {}
    finished = find_condition(status.get("conditions") or [], "Finished")
    return finished is not None and finished.get("status") == "True"


def evicted_status(
    workload: Mapping[str, Any], decision: Evict, now: datetime
) -> dict[str, Any] | None:
    """``Evicted=True`` (and ``Preempted=True`` for preemptions) on a Workload that holds quota (6.4).

    The admission stays: quota is released only when the Job's pods are gone
    (:func:`released_status`).  None when the Workload already says exactly that.
    """
    status = _status(workload)
    conditions = list(status.get("conditions") or [])
    current = find_condition(conditions, "Evicted")
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
        kind="Evicted",
        status=True,
        reason="Preempted" if preempted else decision.reason,
        message=message,
        now=now,
        generation=generation,
    )
    if preempted:
        conditions = set_condition(
            conditions,
            kind="Preempted",
            status=True,
            reason=decision.reason,
            message=message,
            now=now,
            generation=generation,
        )
    status["conditions"] = conditions
    return status


def is_evicting(workload: Mapping[str, Any]) -> bool:
    """Pure: evicted while still holding its admission (the Job must stop before quota is released)."""
    evicted = find_condition((workload.get("status") or {}).get("conditions") or [], "Evicted")
    return is_admitted(workload) and evicted is not None and evicted.get("status") == "True"


def released_status(workload: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """The eviction completed (6.4 step 3): admission removed, pending again, ``Requeued`` (3.9)."""
    status = _status(workload)
    conditions = list(status.get("conditions") or [])
    evicted = find_condition(conditions, "Evicted") or {}
    message = str(evicted.get("message", ""))
    reason = str(evicted.get("reason", "Preempted"))
    generation = _generation(workload)
    conditions = set_condition(
        conditions,
        kind="QuotaReserved",
        status=False,
        reason="PendingEvaluation",
        message=message,
        now=now,
        generation=generation,
    )
    conditions = set_condition(
        conditions,
        kind="Admitted",
        status=False,
        reason="NoReservation",
        message="The workload has no reservation",
        now=now,
        generation=generation,
    )
    if reason in ("Preempted", "NodeFailures"):
        conditions = set_condition(
            conditions,
            kind="Requeued",
            status=True,
            reason=reason,
            message=message,
            now=now,
            generation=generation,
        )
    status["conditions"] = conditions
    status.pop("admission", None)
    return status
