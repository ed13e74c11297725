"""Admission fair sharing: each LocalQueue's decayed usage, and the order it gives.

See docs/concepts.md#admission-fair-sharing.

A ClusterQueue whose ``spec.admissionScope.admissionMode`` is
``UsageBasedAdmissionFairSharing`` hands out its pending workloads to the
LocalQueue that used least: a LocalQueue's usage is its *consumed* resources
(a moving average of what its admitted workloads hold, halved every
``usageHalfLifeTime``) plus the *entry penalties* of workloads admitted since
the last sample, each resource weighted by ``resourceWeights`` (default 1),
summed, and divided by the LocalQueue's ``fairSharing.weight`` (weight 0:
last).  Within the same usage the ClusterQueue's own order decides.

The penalty of an admission is ``alpha(usageSamplingInterval)`` times what it
holds, so two admissions in a row from the same LocalQueue already count
before the next sample.  A sample, at most once per ``usageSamplingInterval``
per LocalQueue (at once when an admitted workload's penalty is waiting),
folds the elapsed time into consumed::

    alpha(t)  = 1 - 0.5 ** (t / halfLife)        (0 when halfLife is 0)
    consumed' = consumed x (1 - alpha(elapsed)) + admitted x alpha(elapsed)
                + the penalties of the workloads now admitted

A half-life of 0 forgets everything at each sample.  Amounts are kept in
nano-units, each product rounded down, as Kubernetes quantities are.

Everything here is pure: the time is always an argument.  The consumed
resources and the time of the last sample are what a LocalQueue's
``status.fairSharing.admissionFairSharingStatus`` shows, and what ``seed``
reads back after a restart; pending penalties live in memory only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_FLOOR, Decimal

from scheduler.api.config import Configuration
from scheduler.api.feature_gates import enabled
from scheduler.api.models import ClusterQueueSpec, LocalQueue

Nanos = dict[str, int]
"""Resource name -> amount in nano-units (``Quantity.nanos``)."""

USAGE_BASED = "UsageBasedAdmissionFairSharing"


@dataclass(frozen=True, slots=True)
class FairSharingSettings:
    """The Configuration's ``admissionFairSharing``, in seconds."""

    half_life: float
    sampling_interval: float
    resource_weights: Mapping[str, float] = field(default_factory=dict)


def settings_from(config: Configuration) -> FairSharingSettings | None:
    """The settings when admission fair sharing is on (section present, gate on): pure."""
    section = config.admission_fair_sharing
    if section is None or not enabled(config.feature_gates, "AdmissionFairSharing"):
        return None
    half_life = section.usage_half_life_time
    return FairSharingSettings(
        half_life=half_life.total_seconds() if half_life is not None else 0.0,
        sampling_interval=section.usage_sampling_interval.total_seconds(),
        resource_weights=dict(section.resource_weights),
    )


def alpha(elapsed: float, half_life: float) -> float:
    """The weight of the newest sample after ``elapsed`` seconds: pure."""
    if half_life == 0:
        return 0.0
    return 1.0 - math.pow(0.5, elapsed / half_life)


def scaled(amounts: Mapping[str, int], factor: float) -> Nanos:
    """``amounts`` times ``factor``, each rounded down to a nano-unit: pure.

    The factor is taken by its shortest decimal spelling, so the product is exact
    before the rounding.
    """
    exact = Decimal(repr(factor))
    return {
        name: int((Decimal(amount) * exact).to_integral_value(rounding=ROUND_FLOOR))
        for name, amount in amounts.items()
    }


def added(*lists: Mapping[str, int]) -> Nanos:
    """The per-resource sum of ``lists``: pure."""
    total: Nanos = {}
    for amounts in lists:
        for name, amount in amounts.items():
            total[name] = total.get(name, 0) + amount
    return total


def decayed(
    consumed: Mapping[str, int], admitted: Mapping[str, int], elapsed: float, half_life: float
) -> Nanos:
    """``consumed`` after ``elapsed`` seconds during which ``admitted`` was held: pure."""
    weight = alpha(elapsed, half_life)
    return added(scaled(consumed, 1 - weight), scaled(admitted, weight))


def weighted_usage(
    amounts: Mapping[str, int], lq_weight: float, resource_weights: Mapping[str, float]
) -> float:
    """A LocalQueue's usage: weighted sum of ``amounts`` over its weight (0: +inf): pure."""
    usage = 0.0
    for name in sorted(amounts):
        usage += resource_weights.get(name, 1.0) * (amounts[name] / 1e9)
    if lq_weight <= 0:
        return math.inf
    return usage / lq_weight


@dataclass(slots=True)
class LedgerEntry:
    """One LocalQueue's history: consumed, last sample, penalties awaiting their sample."""

    consumed: Nanos = field(default_factory=dict)
    last_update: datetime | None = None
    penalties: dict[str, Nanos] = field(default_factory=dict)
    """Workload key -> the penalty its admission cost (replaced if it is admitted again)."""

    def amounts(self) -> Nanos:
        return added(self.consumed, *self.penalties.values())


PenaltyFate = Callable[[str], str]
"""Workload key -> ``"settle"`` (admitted: fold it in), ``"keep"`` (not yet) or ``"drop"``
(it will never be admitted from this LocalQueue)."""


class UsageLedger:
    """Every LocalQueue's admission fair sharing history and weight (module docstring)."""

    __slots__ = ("settings", "_entries", "_weights")

    def __init__(self, settings: FairSharingSettings) -> None:
        self.settings = settings
        self._entries: dict[str, LedgerEntry] = {}
        self._weights: dict[str, float] = {}

    def set_weight(self, local_queue: str, weight: float) -> None:
        self._weights[local_queue] = weight

    def seed(
        self, local_queue: str, consumed: Mapping[str, int], last_update: datetime | None
    ) -> None:
        """Take a LocalQueue's history from its status, unless this ledger has one already
        (its own samples are newer than the status it wrote)."""
        if local_queue not in self._entries:
            self._entries[local_queue] = LedgerEntry(dict(consumed), last_update)

    def forget(self, local_queue: str) -> None:
        """The LocalQueue is gone: its history and weight too."""
        self._entries.pop(local_queue, None)
        self._weights.pop(local_queue, None)

    def entry(self, local_queue: str) -> LedgerEntry | None:
        return self._entries.get(local_queue)

    def usage(self, local_queue: str) -> float:
        """The LocalQueue's weighted usage, consumed plus pending penalties: pure."""
        entry = self._entries.get(local_queue)
        amounts = entry.amounts() if entry is not None else {}
        weight = self._weights.get(local_queue, 1.0)
        return weighted_usage(amounts, weight, self.settings.resource_weights)

    def admitted(self, local_queue: str, workload: str, holds: Mapping[str, int]) -> None:
        """A workload of the LocalQueue was admitted holding ``holds``: its entry penalty."""
        penalty = scaled(holds, alpha(self.settings.sampling_interval, self.settings.half_life))
        self._entries.setdefault(local_queue, LedgerEntry()).penalties[workload] = penalty

    def sample(
        self,
        local_queue: str,
        admitted: Mapping[str, int],
        fate: PenaltyFate,
        now: datetime,
    ) -> bool:
        """Fold the time since the last sample into consumed, if due; True when it sampled.

        Due at the first sample, once ``usageSamplingInterval`` has passed, or as soon
        as a pending penalty can be settled.  ``admitted`` is what the LocalQueue's
        admitted workloads hold now.
        """
        entry = self._entries.setdefault(local_queue, LedgerEntry())
        settle: list[str] = []
        for workload in list(entry.penalties):
            verdict = fate(workload)
            if verdict == "drop":
                del entry.penalties[workload]
            elif verdict == "settle":
                settle.append(workload)
        last = entry.last_update
        elapsed = 0.0 if last is None else max(0.0, (now - last).total_seconds())
        if last is not None and not settle and elapsed < self.settings.sampling_interval:
            return False
        half_life = self.settings.half_life
        if half_life == 0:
            consumed: Nanos = {}
        else:
            consumed = decayed(entry.consumed, admitted, elapsed, half_life)
        folded = [entry.penalties.pop(workload) for workload in settle]
        entry.consumed = added(consumed, *folded) if half_life else {}
        entry.last_update = now if last is None or now > last else last
        return True

    def local_queues(self) -> Iterable[str]:
        return list(self._entries)


def usage_based(spec: ClusterQueueSpec) -> bool:
    """Whether a ClusterQueue orders its workloads by LocalQueue usage: pure."""
    scope = spec.admission_scope
    return scope is not None and scope.admission_mode == USAGE_BASED


def seed_local_queue(ledger: UsageLedger | None, key: str, queue: LocalQueue) -> None:
    """Take a LocalQueue's weight from its spec, and its history from its status when the
    ledger has none yet (after a restart): pure but for ``ledger`` (None: nothing to do)."""
    if ledger is None:
        return
    sharing = queue.spec.fair_sharing
    ledger.set_weight(key, float(sharing.weight.as_decimal()) if sharing is not None else 1.0)
    status = queue.status.admission_fair_sharing
    if status is not None:
        consumed = {str(name): amount.nanos for name, amount in status.consumed_resources.items()}
        ledger.seed(key, consumed, status.last_update)


__all__ = [
    "USAGE_BASED",
    "FairSharingSettings",
    "LedgerEntry",
    "Nanos",
    "PenaltyFate",
    "UsageLedger",
    "alpha",
    "decayed",
    "scaled",
    "seed_local_queue",
    "settings_from",
    "usage_based",
    "weighted_usage",
]
