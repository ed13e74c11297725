"""Admission checks: which apply to a workload, and what they do to a ClusterQueue (pure).

See docs/scheduling.md#admission-checks and
docs/scheduling.md#inactive-clusterqueues.  A ClusterQueue lists checks in
``admissionChecksStrategy.admissionChecks[]``; a check with no ``onFlavors``
covers every flavor of the queue.  Once flavors are assigned, a check
applies when its flavors meet the assigned ones.  A queue is inactive while
it references a check that does not exist or is not ``Active``, or while
its MultiKueue checks are misconfigured (more than one; one limited to some
flavors; one next to a ProvisioningRequest check).

The states a check controller writes into ``status.admissionChecks`` decide
the rest: all ``Ready`` admits, any ``Retry`` evicts and requeues after
a backoff, any ``Rejected`` deactivates.  The messages of those transitions
are built here, as Kueue words them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from scheduler.api.refs import MULTIKUEUE_CONTROLLER, PROVISIONING_REQUEST_CONTROLLER

PENDING = "Pending"
READY = "Ready"
RETRY = "Retry"
REJECTED = "Rejected"


@dataclass(frozen=True, slots=True)
class CheckInfo:
    """What the engine knows of one AdmissionCheck object."""

    controller: str
    active: bool
    """Its ``Active`` condition is True."""


@dataclass(frozen=True, slots=True)
class CheckRule:
    """One entry of a ClusterQueue's ``admissionChecksStrategy``."""

    name: str
    on_flavors: frozenset[str]
    """The flavors it covers (every flavor of the queue when ``onFlavors`` is empty)."""


def check_rules(
    rules: Iterable[tuple[str, Sequence[str]]], queue_flavors: Sequence[str]
) -> tuple[CheckRule, ...]:
    """The rules of a queue, ``onFlavors`` filled in with every flavor when empty: pure."""
    every = frozenset(queue_flavors)
    return tuple(
        CheckRule(name=name, on_flavors=frozenset(flavors) if flavors else every)
        for name, flavors in rules
    )


def applicable_checks(rules: Iterable[CheckRule], flavors: Iterable[str]) -> tuple[str, ...]:
    """The checks that apply to a workload assigned to ``flavors``, sorted by name: pure."""
    assigned = set(flavors)
    return tuple(sorted({rule.name for rule in rules if rule.on_flavors & assigned}))


def uses_multikueue(rules: Iterable[CheckRule], checks: Mapping[str, CheckInfo]) -> bool:
    """Whether a queue lists a MultiKueue check (its workloads run on worker clusters): pure."""
    return any(
        (info := checks.get(rule.name)) is not None and info.controller == MULTIKUEUE_CONTROLLER
        for rule in rules
    )


def inactive_fragments(
    rules: Sequence[CheckRule], queue_flavors: Sequence[str], checks: Mapping[str, CheckInfo]
) -> list[tuple[str, str]]:
    """(reason, message fragment) of every check problem of a queue, in documented order: pure."""
    every = frozenset(queue_flavors)
    missing: list[str] = []
    inactive: list[str] = []
    multikueue: set[str] = set()
    per_flavor: list[str] = []
    provisioning: set[str] = set()
    for rule in {rule.name: rule for rule in rules}.values():
        info = checks.get(rule.name)
        if info is None:
            missing.append(rule.name)
            continue
        if not info.active:
            inactive.append(rule.name)
        if info.controller == PROVISIONING_REQUEST_CONTROLLER:
            provisioning.add(rule.name)
        if info.controller == MULTIKUEUE_CONTROLLER:
            multikueue.add(rule.name)
            if rule.on_flavors != every:
                per_flavor.append(rule.name)
    fragments: list[tuple[str, str]] = []
    if missing:
        fragments.append(
            (
                "AdmissionCheckNotFound",
                f"references missing AdmissionCheck(s): {','.join(sorted(missing))}",
            )
        )
    if inactive:
        fragments.append(
            (
                "AdmissionCheckInactive",
                f"references inactive AdmissionCheck(s): {','.join(sorted(inactive))}",
            )
        )
    if len(multikueue) > 1:
        fragments.append(
            (
                "MultipleMultiKueueAdmissionChecks",
                "Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, "
                f"found: {','.join(sorted(multikueue))}",
            )
        )
    if per_flavor:
        fragments.append(
            (
                "MultiKueueAdmissionCheckAppliedPerFlavor",
                "Cannot specify MultiKueue AdmissionCheck per flavor, "
                f"found: {','.join(sorted(per_flavor))}",
            )
        )
    if multikueue and provisioning:
        fragments.append(
            (
                "MultiKueueWithProvisioningRequest",
                "Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks together, "
                f"found: {','.join(sorted(multikueue))}, {','.join(sorted(provisioning))}",
            )
        )
    return fragments


@dataclass(frozen=True, slots=True)
class CheckState:
    """One ``status.admissionChecks`` entry, as the rules below read it."""

    name: str
    state: str
    message: str = ""
    last_transition_time: datetime | None = None
    requeue_after_seconds: int | None = None


def states_message(checks: Iterable[CheckState], state: str) -> str:
    """``AdmissionCheck(s) in <state> state: "<a>" (<msg>); "<b>"`` (Kueue's wording): pure."""
    chosen = sorted((check for check in checks if check.state == state), key=lambda c: c.name)
    parts = [
        f'"{check.name}" ({check.message})' if check.message else f'"{check.name}"'
        for check in chosen
    ]
    noun = "AdmissionChecks" if len(chosen) > 1 else "AdmissionCheck"
    return f"{noun} in {state} state: {'; '.join(parts)}"


def retry_eviction_message(checks: Iterable[CheckState]) -> str:
    """The ``Evicted`` message when checks went ``Retry``: pure."""
    return f"Evicted due to {states_message(checks, RETRY)}"


def rejected_message(checks: Iterable[CheckState]) -> str:
    """The ``DeactivationTarget`` message when checks went ``Rejected``: pure."""
    return states_message(checks, REJECTED)


def retry_requeue_at(checks: Iterable[CheckState]) -> datetime | None:
    """Latest ``lastTransitionTime + requeueAfterSeconds`` over the ``Retry`` checks: pure."""
    times = [
        check.last_transition_time + timedelta(seconds=check.requeue_after_seconds)
        for check in checks
        if check.state == RETRY
        and check.requeue_after_seconds is not None
        and check.last_transition_time is not None
    ]
    return max(times, default=None)


def waiting_for(checks: Iterable[CheckState]) -> list[CheckState]:
    """The checks that are not ``Ready`` yet, by name: pure."""
    return sorted((c for c in checks if c.state != READY), key=lambda c: c.name)


__all__ = [
    "PENDING",
    "READY",
    "REJECTED",
    "RETRY",
    "CheckInfo",
    "CheckRule",
    "CheckState",
    "applicable_checks",
    "check_rules",
    "inactive_fragments",
    "rejected_message",
    "uses_multikueue",
    "retry_eviction_message",
    "retry_requeue_at",
    "states_message",
    "waiting_for",
]
