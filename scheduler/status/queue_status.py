"""ClusterQueue and LocalQueue status, built as data (pure; docs/scheduling.md#queue-status).

The engine knows counts and usage; these functions shape them into the
``status`` a user reads with ``kubectl get cq`` / ``kubectl describe lq`` and
return None when the stored status already says the same, so the scheduler
writes a queue's status only when something changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from scheduler.api import objects
from scheduler.api.quantity import Quantity
from scheduler.api.refs import ACTIVE
from scheduler.core.engine import ClusterQueueStatus
from scheduler.core.fair_share import Share
from scheduler.core.resources import format_quantity
from scheduler.status.conditions import find_condition, set_condition, timestamp

FairUsage = tuple[Mapping[str, int], datetime]
"""A LocalQueue's consumed resources (nano-units) and the time of their last sample."""
LQ_READY = "Can submit new workloads to localQueue"
LQ_BLOCKED = "Can't submit new workloads to clusterQueue"


def _flavor_list(
    usage: Mapping[str, Mapping[str, Quantity]],
    borrowed: Mapping[str, Mapping[str, Quantity]] | None,
) -> list[dict[str, Any]]:
    flavors = []
    for flavor, resources in usage.items():
        entries = []
        for resource in sorted(resources):
            entry: dict[str, Any] = {
                "name": resource,
                "total": format_quantity(resource, resources[resource]),
            }
            if borrowed is not None:
                entry["borrowed"] = format_quantity(
                    resource, borrowed.get(flavor, {}).get(resource, Quantity.zero())
                )
            entries.append(entry)
        flavors.append({"name": flavor, "resources": entries})
    return flavors


def _changed(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether ``wanted`` differs, ignoring condition transition times (pure)."""

    def strip(status: Mapping[str, Any]) -> dict[str, Any]:
        copy = {k: v for k, v in status.items() if k != "conditions"}
        copy["conditions"] = sorted(
            (
                {k: v for k, v in c.items() if k != "lastTransitionTime"}
                for c in status.get("conditions") or []
            ),
            key=lambda c: str(c.get("type")),
        )
        return copy

    return strip(current) != strip(wanted)


def cluster_queue_status(
    queue: Mapping[str, Any], state: ClusterQueueStatus, now: datetime
) -> dict[str, Any] | None:
    """The ClusterQueue status for ``queue`` (its stored object), or None when unchanged."""
    current = dict(objects.status(queue))
    generation = objects.generation(queue)
    wanted = {
        k: v
        for k, v in current.items()
        if k
        not in (
            "pendingWorkloads",
            "reservingWorkloads",
            "admittedWorkloads",
            "flavorsReservation",
            "flavorsUsage",
            "fairSharing",
        )
    }
    wanted["conditions"] = set_condition(
        current.get("conditions") or [],
        kind=ACTIVE,
        status=state.active,
        reason=state.active_reason,
        message=state.active_message,
        now=now,
        generation=generation,
    )
    wanted["pendingWorkloads"] = state.pending
    wanted["reservingWorkloads"] = state.reserving if state.reserving >= 0 else state.admitted
    wanted["admittedWorkloads"] = state.admitted
    wanted["flavorsReservation"] = _flavor_list(state.usage, state.borrowed)
    if state.admitted_usage is None:
        wanted["flavorsUsage"] = wanted["flavorsReservation"]
    else:
        wanted["flavorsUsage"] = _flavor_list(state.admitted_usage, state.admitted_borrowed)
    if state.weighted_share is not None:
        wanted["fairSharing"] = {"weightedShare": state.weighted_share}
    return wanted if _changed(current, wanted) else None


def cohort_status(cohort: Mapping[str, Any], share: Share | None) -> dict[str, Any] | None:
    """The Cohort status for ``cohort`` (its stored object), or None when unchanged.

    A Cohort's status holds only ``fairSharing.weightedShare``, there with fair
    sharing on (``share`` not None) and absent without it
    (docs/scheduling.md#queue-status).
    """
    current = dict(objects.status(cohort))
    wanted = {k: v for k, v in current.items() if k != "fairSharing"}
    if share is not None:
        wanted["fairSharing"] = {"weightedShare": share.weighted_share()}
    return wanted if wanted != current else None


def local_queue_status(
    queue: Mapping[str, Any],
    workloads: Iterable[Mapping[str, Any]],
    *,
    cluster_queue: ClusterQueueStatus | None,
    now: datetime,
    fair_usage: FairUsage | None = None,
) -> dict[str, Any] | None:
    """The LocalQueue status for ``queue`` from its Workloads, or None when unchanged.

    ``fair_usage``: its admission fair sharing history (consumed nano-units, last
    sample), shown as ``fairSharing.admissionFairSharingStatus``; None leaves
    ``fairSharing`` as it is.
    """
    current = dict(objects.status(queue))
    stopped = objects.spec(queue).get("stopPolicy") not in (None, "", "None")
    pending = reserving = admitted = 0
    totals: dict[str, dict[str, Quantity]] = {}
    if cluster_queue is not None:
        for flavor, resources in cluster_queue.usage.items():
            totals[flavor] = {resource: Quantity.zero() for resource in resources}
    admitted_totals = {flavor: dict(resources) for flavor, resources in totals.items()}
    for workload in workloads:
        if objects.is_finished(workload):
            continue
        if not objects.has_quota_reservation(workload):
            pending += 1
            continue
        reserving += 1
        # Waiting for admission checks: reserved, not admitted.
        counted = not objects.awaits_admission_checks(workload)
        admitted += counted
        for assignment in objects.pod_set_assignments(workload):
            flavors = assignment.get("flavors") or {}
            for resource, amount in (assignment.get("resourceUsage") or {}).items():
                flavor_name = flavors.get(resource)
                if flavor_name is None:
                    continue
                try:
                    quantity = Quantity.parse(amount)
                except ValueError:
                    continue
                for sums in (totals, admitted_totals) if counted else (totals,):
                    bucket = sums.setdefault(flavor_name, {})
                    bucket[resource] = bucket.get(resource, Quantity.zero()) + quantity
    if stopped:
        active, reason, message = False, "Stopped", "LocalQueue is stopped"
    elif cluster_queue is None:
        active, reason, message = False, "ClusterQueueDoesNotExist", LQ_BLOCKED
    elif not cluster_queue.active:
        active, reason, message = False, "ClusterQueueIsInactive", LQ_BLOCKED
    else:
        active, reason, message = True, "Ready", LQ_READY
    generation = objects.generation(queue)
    wanted = {
        k: v
        for k, v in current.items()
        if k
        not in (
            "pendingWorkloads",
            "reservingWorkloads",
            "admittedWorkloads",
            "flavorsReservation",
            "flavorsUsage",
        )
    }
    wanted["conditions"] = set_condition(
        current.get("conditions") or [],
        kind=ACTIVE,
        status=active,
        reason=reason,
        message=message,
        now=now,
        generation=generation,
    )
    if fair_usage is not None:
        consumed, last_update = fair_usage
        wanted["fairSharing"] = {
            "weightedShare": 0,
            "admissionFairSharingStatus": {
                "consumedResources": {
                    name: str(Quantity(amount)) for name, amount in sorted(consumed.items())
                },
                "lastUpdate": timestamp(last_update),
            },
        }
    wanted["pendingWorkloads"] = 0 if stopped else pending
    wanted["reservingWorkloads"] = reserving
    wanted["admittedWorkloads"] = admitted
    wanted["flavorsReservation"] = _flavor_list(totals, None)
    if admitted == reserving:
        wanted["flavorsUsage"] = wanted["flavorsReservation"]
    else:
        wanted["flavorsUsage"] = _flavor_list(
            {
                flavor: {
                    resource: admitted_totals.get(flavor, {}).get(resource, Quantity.zero())
                    for resource in resources
                }
                for flavor, resources in totals.items()
            },
            None,
        )
    return wanted if _changed(current, wanted) else None


USAGE_BASED = "UsageBasedAdmissionFairSharing"


def ignored_admission_mode(queue: Mapping[str, Any], *, configured: bool) -> str | None:
    """Why a ClusterQueue's usage-based admission mode has no effect, or None: pure.

    The mode orders a queue by its LocalQueues' usage only when the
    scheduler's Configuration has an ``admissionFairSharing`` section and the
    gate ``AdmissionFairSharing`` is on (docs/concepts.md#admission-fair-sharing);
    Kueue then ignores it silently, kuota says so.
    """
    scope = objects.spec(queue).get("admissionScope")
    mode = scope.get("admissionMode") if isinstance(scope, Mapping) else None
    if mode != USAGE_BASED or configured:
        return None
    return (
        f"spec.admissionScope.admissionMode: {USAGE_BASED} has no effect: the scheduler's "
        "Configuration has no admissionFairSharing section (or the AdmissionFairSharing gate "
        "is off), so this ClusterQueue orders its workloads as without it"
    )


def active_condition(status: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return find_condition(status.get("conditions") or [], ACTIVE)
