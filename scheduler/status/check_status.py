"""The workload side of admission checks, as status data (pure).

See docs/scheduling.md#admission-checks.

Check controllers own each entry's ``state``, ``message``,
``requeueAfterSeconds`` and ``podSetUpdates``; kuota keeps the list equal to
the checks that apply (missing ones added ``Pending``, others dropped, sorted
by name) and reacts to the states:

- every check ``Ready`` on a Workload that holds quota: ``Admitted=True``
  (then its Job starts, with the checks' ``podSetUpdates``);
- any ``Rejected``: ``DeactivationTarget`` (reason ``AdmissionCheck``), then
  ``spec.active: false``; the eviction that follows is
  ``DeactivatedDueToAdmissionCheck``;
- any ``Retry`` (and none ``Rejected``): evicted with reason
  ``AdmissionCheck``; the eviction resets every check to ``Pending`` and
  sets ``requeueState.requeueAt`` from the checks' ``requeueAfterSeconds``.

:func:`next_check_step` says which of these a Workload needs now; the
executor (``scheduler.kube.checks``) writes it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from scheduler.api import objects
from scheduler.api.refs import (
    ACTIVE,
    ADMITTED,
    DEACTIVATION_TARGET,
    EVICTED,
    PROVISIONING_REQUEST_CONTROLLER,
)
from scheduler.core.admission_checks import (
    PENDING,
    READY,
    REJECTED,
    RETRY,
    CheckState,
    rejected_message,
    retry_eviction_message,
    retry_requeue_at,
)
from scheduler.status.conditions import find_condition, set_condition, timestamp

ADMITTED_MESSAGE = "The workload is admitted"
UNSATISFIED_REASON = "UnsatisfiedAdmissionChecks"
UNSATISFIED_MESSAGE = "The workload has not all checks ready"
EVICTED_BY_CHECK = "AdmissionCheck"
"""The ``Evicted`` reason of a ``Retry``; the ``DeactivationTarget`` reason of a ``Rejected``."""


def check_states(entries: Iterable[Mapping[str, Any]]) -> list[CheckState]:
    """The raw ``status.admissionChecks`` entries as ``CheckState``s: pure."""
    result = []
    for entry in entries:
        after = entry.get("requeueAfterSeconds")
        result.append(
            CheckState(
                name=str(entry.get("name", "")),
                state=str(entry.get("state", "")),
                message=str(entry.get("message") or ""),
                last_transition_time=objects.parse_time(entry.get("lastTransitionTime")),
                requeue_after_seconds=after if isinstance(after, int) else None,
            )
        )
    return result


def synced_checks(
    entries: Sequence[Mapping[str, Any]], names: Iterable[str], now: datetime
) -> list[dict[str, Any]]:
    """The entries for exactly ``names``: existing ones kept, missing ones ``Pending``: pure."""
    by_name = {str(entry.get("name")): dict(entry) for entry in entries}
    result = []
    for name in sorted(set(names)):
        entry = by_name.get(name)
        if entry is None:
            entry = {
                "name": name,
                "state": PENDING,
                "message": "",
                "lastTransitionTime": timestamp(now),
            }
        result.append(entry)
    return result


def all_ready(entries: Sequence[Mapping[str, Any]]) -> bool:
    """Every listed check is ``Ready``: pure."""
    return all(entry.get("state") == READY for entry in entries)


def reset_on_eviction(entries: Sequence[Mapping[str, Any]], now: datetime) -> list[dict[str, Any]]:
    """Every check that is not ``Pending`` back to ``Pending`` (as Kueue words it): pure.

    A ``Retry`` one counts the retry (``retryCount + 1``); ``requeueAfterSeconds`` is kept.
    """
    result = []
    for raw in entries:
        entry = dict(raw)
        state = entry.get("state")
        if state != PENDING:
            reset: dict[str, Any] = {
                "name": entry.get("name"),
                "state": PENDING,
                "message": f"Reset to Pending after eviction. Previously: {state}",
                "lastTransitionTime": timestamp(now),
            }
            if entry.get("requeueAfterSeconds") is not None:
                reset["requeueAfterSeconds"] = entry["requeueAfterSeconds"]
            if state == RETRY:
                count = entry.get("retryCount")
                reset["retryCount"] = (count if isinstance(count, int) else 0) + 1
            entry = reset
        result.append(entry)
    return result


def with_retry_requeue(status: dict[str, Any], now: datetime) -> dict[str, Any]:
    """``requeueState.requeueAt`` from the ``Retry`` checks, when it lies ahead: pure.

    Read before :func:`reset_on_eviction` (which moves the checks' transition times).
    """
    at = retry_requeue_at(check_states(status.get("admissionChecks") or []))
    if at is None or at <= now:
        return status
    requeue = dict(status.get("requeueState") or {})
    current = objects.parse_time(requeue.get("requeueAt"))
    if current is None or current < at:
        requeue["requeueAt"] = timestamp(at)
        status["requeueState"] = requeue
    return status


@dataclass(frozen=True, slots=True)
class CheckStep:
    """What a Workload with admission checks needs now (:func:`next_check_step`)."""

    kind: Literal["admit", "retry", "reject", "deactivate", "sync"]
    message: str = ""
    checks: tuple[str, ...] = ()
    """``sync``: the checks that apply now."""


def next_check_step(
    workload: Mapping[str, Any], applicable: tuple[str, ...] | None = None
) -> CheckStep | None:
    """The one check reaction ``workload`` needs now, or None (module docstring): pure.

    Only a Workload that holds quota, is not being evicted, finished or
    deactivated is concerned; ``Rejected`` wins over ``Retry``, which wins
    over admitting.  ``applicable``: the checks its ClusterQueue applies to it
    now (None: unknown); a Workload not admitted yet whose list differs gets
    it synced first (a check removed from the queue no longer holds it).
    """
    entries = objects.admission_check_states(workload)
    if not entries or not objects.has_quota_reservation(workload):
        return None
    names = tuple(sorted(str(entry.get("name")) for entry in entries))
    if applicable is not None and names != applicable and not objects.is_admitted(workload):
        if not objects.is_true(workload, EVICTED) and not objects.is_deactivated(workload):
            return CheckStep("sync", checks=applicable)
    if objects.is_true(workload, EVICTED) or objects.is_finished(workload):
        return None
    if objects.is_deactivated(workload):
        return None
    states = check_states(entries)
    if objects.is_true(workload, DEACTIVATION_TARGET):
        return CheckStep("deactivate")  # the target is recorded: spec.active goes false next
    if any(state.state == REJECTED for state in states):
        return CheckStep("reject", rejected_message(states))
    if any(state.state == RETRY for state in states):
        return CheckStep("retry", retry_eviction_message(states))
    if all_ready(entries) and not objects.is_admitted(workload):
        return CheckStep("admit")
    return None


def _status(workload: Mapping[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(dict(objects.status(workload)))


def checks_admitted_status(workload: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """``Admitted=True``: quota reserved and every check ``Ready``: pure."""
    status = _status(workload)
    status["conditions"] = set_condition(
        status.get("conditions") or [],
        kind=ADMITTED,
        status=True,
        reason="Admitted",
        message=ADMITTED_MESSAGE,
        now=now,
        generation=objects.generation(workload),
    )
    return status


def synced_status(
    workload: Mapping[str, Any], checks: Sequence[str], now: datetime
) -> dict[str, Any]:
    """The check list made equal to ``checks``, and ``Admitted`` recomputed: pure."""
    status = _status(workload)
    entries = synced_checks(status.get("admissionChecks") or [], checks, now)
    status["admissionChecks"] = entries
    ready = all_ready(entries)
    status["conditions"] = set_condition(
        status.get("conditions") or [],
        kind=ADMITTED,
        status=ready,
        reason="Admitted" if ready else UNSATISFIED_REASON,
        message=ADMITTED_MESSAGE if ready else UNSATISFIED_MESSAGE,
        now=now,
        generation=objects.generation(workload),
    )
    return status


def deactivation_target_status(
    workload: Mapping[str, Any], message: str, now: datetime
) -> dict[str, Any]:
    """``DeactivationTarget=True`` (reason ``AdmissionCheck``): a check rejected it: pure."""
    status = _status(workload)
    status["conditions"] = set_condition(
        status.get("conditions") or [],
        kind=DEACTIVATION_TARGET,
        status=True,
        reason=EVICTED_BY_CHECK,
        message=message,
        now=now,
        generation=objects.generation(workload),
    )
    return status


def deactivation(workload: Mapping[str, Any]) -> tuple[str, str]:
    """(``Evicted`` reason, message) of deactivating ``workload``: pure.

    ``DeactivatedDueTo<cause>`` and ``"The workload is deactivated due to <message>"``
    when a ``DeactivationTarget`` says why; else plain ``Deactivated``.
    """
    target = find_condition(objects.conditions(workload), DEACTIVATION_TARGET)
    if target is None or target.get("status") != "True":
        return "Deactivated", "The workload is deactivated"
    cause = str(target.get("reason") or "")
    message = str(target.get("message") or "")
    return (
        f"DeactivatedDueTo{cause}" if cause else "Deactivated",
        f"The workload is deactivated due to {message}",
    )


UNSUPPORTED_CONTROLLERS: Mapping[str, str] = {
    PROVISIONING_REQUEST_CONTROLLER: "ProvisioningRequest",
}
"""Check controllers Kueue ships and kuota does not run -> what they would provide."""
UNSUPPORTED_REASON = "ControllerNotSupported"


def unsupported_check_status(check: Mapping[str, Any], now: datetime) -> dict[str, Any] | None:
    """``Active=False`` on a check whose controller kuota ships no implementation of: pure.

    Nobody else would ever set it Active, and a ClusterQueue that uses it must
    say why it admits nothing (``AdmissionCheckInactive``) instead of
    letting work through.  None when the check is another controller's, or
    already says so.
    """
    controller = str(objects.spec(check).get("controllerName") or "")
    feature = UNSUPPORTED_CONTROLLERS.get(controller)
    if feature is None:
        return None
    message = (
        f"kuota does not run the {controller} admission check controller "
        f"({feature} is not supported): ClusterQueues using this check admit no workloads"
    )
    status = _status(check)
    current = list(status.get("conditions") or [])
    wanted = set_condition(
        current,
        kind=ACTIVE,
        status=False,
        reason=UNSUPPORTED_REASON,
        message=message,
        now=now,
        generation=objects.generation(check),
    )
    if wanted == current:
        return None
    status["conditions"] = wanted
    return status


__all__ = [
    "UNSUPPORTED_CONTROLLERS",
    "UNSUPPORTED_REASON",
    "unsupported_check_status",
    "ADMITTED_MESSAGE",
    "EVICTED_BY_CHECK",
    "UNSATISFIED_MESSAGE",
    "UNSATISFIED_REASON",
    "CheckStep",
    "all_ready",
    "check_states",
    "checks_admitted_status",
    "deactivation",
    "deactivation_target_status",
    "next_check_step",
    "reset_on_eviction",
    "synced_checks",
    "synced_status",
    "with_retry_requeue",
]
