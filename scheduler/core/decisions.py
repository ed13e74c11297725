"""What one scheduling cycle decides, as plain data.

The engine never writes to the API: a cycle returns decisions and the caller
(the live scheduler, ``kuota simulate``, the tests) carries them out or prints
them.  An ``Admit`` carries the admission record (docs/scheduling.md#admission); a
``Pending`` carries the ``QuotaReserved=False`` reason and the exact message a
user reads (docs/scheduling.md#pending-reasons), and when that message comes
from flavor assignment, the structure it was rendered from: the shortages
(what would have to free up) and the blockers (what no release cures); an
``Evict`` names a victim of preemption (docs/scheduling.md#preemption-messages): its quota stays
counted until the caller says its pods are gone (``Engine.release``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from scheduler.api.quantity import Quantity
from scheduler.api.topology_assignment import TopologyAssignment
from scheduler.core.pending_reasons import Blocker, Shortage

WorkloadKey = str
"""``<namespace>/<name>`` of a Workload."""


@dataclass(frozen=True, slots=True)
class PodSetAdmission:
    """The assignment of one pod set (``status.admission.podSetAssignments[i]``)."""

    name: str
    count: int
    flavors: Mapping[str, str]
    """Resource name -> flavor name."""
    resource_usage: Mapping[str, Quantity]
    """Total for the pod set (per-pod x count), after transformations."""
    topology_assignment: TopologyAssignment | None = None
    """Where its pods go (docs/concepts.md#topology-aware-scheduling)."""
    delayed_topology_request: str | None = None
    """``Pending`` while a MultiKueue worker is to place it."""


@dataclass(frozen=True, slots=True)
class Admit:
    workload: WorkloadKey
    cluster_queue: str
    pod_sets: tuple[PodSetAdmission, ...]
    message: str
    admission_checks: tuple[str, ...] = ()
    """The admission checks that apply, sorted: the quota is reserved, and the
    workload is ``Admitted`` only when every one of them is ``Ready``."""
    replaces: WorkloadKey | None = None
    """An elastic job's new slice: the slice it replaces, finished now (its quota moved here).

    See docs/concepts.md#elastic-jobs."""


@dataclass(frozen=True, slots=True)
class Pending:
    workload: WorkloadKey
    cluster_queue: str | None
    reason: str
    message: str
    shortages: tuple[Shortage, ...] = ()
    """Per flavor and resource, what must free up; in the order ``message`` names them."""
    blockers: tuple[Blocker, ...] = ()
    """What no release of quota cures (maximum exceeded, taint, ...); in message order."""


@dataclass(frozen=True, slots=True)
class Evict:
    victim: WorkloadKey
    preemptor: WorkloadKey | None
    reason: str
    message: str
    cause: str = ""
    """The underlying cause Kueue records with some reasons (``PodsReadyTimeout``:
    ``WaitForStart`` or ``WaitForRecovery``); empty for the others."""


Decision = Admit | Pending | Evict


@dataclass(frozen=True, slots=True)
class CycleResult:
    """Every decision of one cycle, in the order they were made."""

    decisions: tuple[Decision, ...]
    preemption_skips: Mapping[str, int] = field(default_factory=dict)
    """ClusterQueue -> its workloads that had preemption targets but were skipped because
    another workload of the cycle claimed the same ones (in the cycle's last round with any)."""

    @property
    def admitted(self) -> int:
        """How many workloads this cycle admitted: pure."""
        return sum(1 for decision in self.decisions if isinstance(decision, Admit))

    @property
    def evicted(self) -> int:
        """How many workloads this cycle evicted: pure."""
        return sum(1 for decision in self.decisions if isinstance(decision, Evict))


__all__ = ["Admit", "CycleResult", "Decision", "Evict", "Pending", "PodSetAdmission", "WorkloadKey"]
