"""When an ended Workload, or its job, is deleted: ``objectRetentionPolicies`` (pure).

Kueue's two policies of the Configuration's ``objectRetentionPolicies.workloads``
(docs/configuration.md), measured from the Workload's condition timestamps so
that a restarted scheduler keeps the same schedule:

- ``afterFinished``: a Workload ``Finished=True`` for that long is deleted
  (Kueue's Workload controller); its job is kept.  Any finished Workload,
  whoever made it.
- ``afterDeactivatedByKueue``: the **job** of a Workload that kuota (not a
  user) deactivated — ``spec.active: false`` with ``Evicted=True`` and a
  reason ``DeactivatedDueTo<cause>`` (an admission check rejected it, a
  limit was exceeded) — is deleted that long after the eviction (Kueue's Job
  controller), with background propagation: its pods and its Workload go with
  it.  A Workload deactivated by hand (reason ``Deactivated``) and a Workload
  without a job are kept.  kuota deletes the job only once the Workload has
  given its quota back (its pods have stopped), so no quota is freed before
  the pods are gone (docs/concepts.md#eviction-and-restore).

``0`` deletes at once; an absent policy deletes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final, Literal

from scheduler.api import objects
from scheduler.api.refs import EVICTED, FINISHED
from scheduler.jobs.protocol import RawObject

DEACTIVATED_BY_KUEUE: Final = "DeactivatedDueTo"
"""The prefix of the ``Evicted`` reasons of a deactivation kuota made (Kueue's rule)."""
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Expiry:
    """When to delete what: the Workload itself, or its job."""

    at: datetime
    what: Literal["workload", "job"]


def _since(condition: RawObject | None) -> datetime:
    found = objects.parse_time((condition or {}).get("lastTransitionTime"))
    return found if found is not None else EPOCH


def deactivated_by_kueue(workload: RawObject) -> bool:
    """``spec.active: false`` and evicted with a ``DeactivatedDueTo<cause>`` reason: pure."""
    evicted = objects.condition(workload, EVICTED)
    return (
        objects.is_deactivated(workload)
        and evicted is not None
        and evicted.get("status") == "True"
        and str(evicted.get("reason") or "").startswith(DEACTIVATED_BY_KUEUE)
    )


def expiry(
    workload: RawObject,
    *,
    after_finished: timedelta | None,
    after_deactivated: timedelta | None,
) -> Expiry | None:
    """When ``workload`` (or its job) is to be deleted, None when never (module docstring): pure.

    A Workload deactivated by kuota that still holds quota has no expiry
    yet: it gets one once its quota is released.
    """
    if objects.is_finished(workload):
        if after_finished is None:
            return None
        return Expiry(_since(objects.condition(workload, FINISHED)) + after_finished, "workload")
    if after_deactivated is None or not deactivated_by_kueue(workload):
        return None
    if objects.has_quota_reservation(workload):
        return None
    return Expiry(_since(objects.condition(workload, EVICTED)) + after_deactivated, "job")


__all__ = ["DEACTIVATED_BY_KUEUE", "Expiry", "deactivated_by_kueue", "expiry"]
