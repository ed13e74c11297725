"""Nomination: one round's shared state, and each head's flavor and topology assignment.

See docs/scheduling.md#the-scheduling-cycle.  A round pops one head per
ClusterQueue (an ``Entry``), and ``nominate`` gives it its assignment:
nomination's checks, flavor assignment (docs/scheduling.md#flavor-assignment),
the topology placement of its TAS pod sets
(docs/concepts.md#topology-aware-scheduling), the preemption targets, and
partial admission when the whole workload neither fits nor has targets.
``Round`` holds what the entries of a round share: the snapshot of
temporary holds, the preemption view, the victims chosen so far and the
domains preemptors keep.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.cycle_inputs import CycleQueues, CycleQuota, CycleRouting, SchedulingOptions
from scheduler.core.flavor_assignment import Assignment, Mode, assign_flavors
from scheduler.core.partial_admission import can_be_partially_admitted
from scheduler.core.partial_admission import search as search_partial
from scheduler.core.pending_reasons import NO_DETAILS, Details
from scheduler.core.preemption import (
    PreemptionContext,
    PreemptionHistory,
    Preemptor,
    Target,
    TargetMemo,
)
from scheduler.core.resource_node import QuotaNode
from scheduler.core.resources import FRValues
from scheduler.core.snapshot import Snapshot
from scheduler.core.state import ScanPosition, WorkloadRecord
from scheduler.core.topology_fit import (
    Unplaced,
    apply_topology,
    needs_placement,
    place_workload,
    reserve_placement,
)
from scheduler.core.workload import PodSetInfo

NAMESPACE_MISMATCH = "workload namespace doesn't match ClusterQueue selector"
FAILED_CHECKS = "The workload has failed admission checks"


class Entry:
    __slots__ = (
        "cq",
        "record",
        "assignment",
        "targets",
        "reason",
        "message",
        "details",
        "requeue",
    )

    def __init__(self, cq: ClusterQueueInfo, record: WorkloadRecord) -> None:
        self.cq = cq
        self.record = record
        self.assignment: Assignment | None = None
        self.targets: tuple[Target, ...] = ()
        self.reason = ""
        self.message = ""
        self.details: Details = NO_DETAILS
        self.requeue = ""

    @property
    def preemptor(self) -> Preemptor:
        record = self.record
        return Preemptor(
            key=record.key,
            uid=record.uid,
            priority=record.priority,
            timestamp=record.timestamp,
            cq=self.cq,
        )


class CycleParts:
    """The engine's parts a cycle works on, and the number of cycles run so far."""

    __slots__ = ("quota", "queues", "routing", "records", "options", "cycles", "history")

    def __init__(
        self,
        *,
        quota: CycleQuota,
        queues: CycleQueues,
        routing: CycleRouting,
        records: Mapping[str, WorkloadRecord],
        options: SchedulingOptions,
        history: PreemptionHistory | None = None,
    ) -> None:
        self.quota = quota
        self.queues = queues
        """The pending queues: heads out and back, requeue events."""
        self.routing = routing
        """The queue manager: queueing statuses to report, draining LocalQueues."""
        self.records = records
        self.options = options
        self.history = history if history is not None else PreemptionHistory()
        """Past evictions by preemption (the loop guard); the engine restarts it."""
        self.cycles = 0
        """Cycles (rounds) run so far: the age of a flavor-scan position.

        See docs/scheduling.md#flavor-scan-position.
        """


class Round:
    """What one round shares between entries: the snapshot, the preemption view, the victims."""

    __slots__ = ("sched", "snapshot", "context", "victims", "placement_holds")

    def __init__(self, sched: CycleParts) -> None:
        self.sched = sched
        self.snapshot = Snapshot()
        quota, options = sched.quota, sched.options
        self.context = PreemptionContext(
            admitted=quota.admitted,
            records=sched.records,
            cluster_queues=quota.cluster_queues,
            fair_sharing=options.fair_sharing,
            strategies=options.strategies,
            history=sched.history,
            local_queue_usage=sched.queues.local_queue_usage,
        )
        self.victims: dict[str, tuple[QuotaNode, FRValues]] = {}
        """Every workload chosen as a victim earlier in this cycle -> (its CQ node, its usage)."""
        self.placement_holds: list[str] = []
        """Keys under which preemptors hold topology domains until the round ends."""

    def hold_placement(self, entry: Entry, victims: tuple[Target, ...]) -> None:
        """Keep the domains a preemptor will take from later entries of this round.

        See docs/concepts.md#topology-aware-scheduling.
        """
        assignment = entry.assignment
        if assignment is None or not any(
            result.topology_flavor is not None or result.mode < Mode.FIT
            for result in assignment.pod_sets
        ):
            return
        quota = self.sched.quota
        charges = reserve_placement(
            assignment,
            cq=entry.cq,
            pod_sets=entry.record.pod_sets,
            flavors=quota.flavors,
            cache=quota.topology,
            victims=[target.workload for target in victims],
        )
        if charges:
            key = f"\x00hold/{entry.record.key}"
            quota.topology.held.charge(key, charges)
            self.placement_holds.append(key)

    def release_placement_holds(self) -> None:
        for key in self.placement_holds:
            self.sched.quota.topology.held.release(key)
        self.placement_holds.clear()

    def usage_of(self, target: Target) -> tuple[QuotaNode, FRValues]:
        record = self.sched.records[target.workload]
        node = self.sched.quota.cluster_queues[target.cluster_queue].node
        assert node is not None and record.usage is not None
        return node, record.usage[target.cluster_queue]


def nominate(
    cycle: Round, entry: Entry, *, pinned: Mapping[tuple[str, int], str] | None = None
) -> Entry:
    """Nomination's checks, then flavor assignment and preemption targets.

    A failed check fills the entry's reason, message and requeue reason.
    ``pinned``: flavors the entry must take (a workload slice keeps its
    predecessor's, docs/concepts.md#elastic-jobs).
    """
    sched = cycle.sched
    record, cq = entry.record, entry.cq
    if record.checks_failed:
        entry.reason, entry.message, entry.requeue = "PendingEvaluation", FAILED_CHECKS, "Generic"
        return entry
    if not sched.quota.namespace_matches(cq, record.namespace):
        entry.reason, entry.message, entry.requeue = (
            "Misconfigured",
            NAMESPACE_MISMATCH,
            "NamespaceMismatch",
        )
        return entry
    entry.assignment, entry.targets = assign(
        cycle, entry, start_after=_scan_start(sched, record, cq.name), pinned=pinned
    )
    record.scan = ScanPosition(
        entry.assignment.last_tried, sched.cycles, sched.quota.tree.allocatable_generation(cq.name)
    )
    return entry


def assign(
    cycle: Round,
    entry: Entry,
    *,
    start_after: Mapping[tuple[str, int], int] | None = None,
    pinned: Mapping[tuple[str, int], str] | None = None,
) -> tuple[Assignment, tuple[Target, ...]]:
    """Flavor assignment and, when it needs preemption, the whole workload's targets.

    When the full workload neither fits nor has targets and a pod set has a
    ``minCount``, the largest reduced counts that do are used
    (docs/scheduling.md#partial-admission); the
    assignment's pod-set results then carry the reduced counts.
    """
    sched, context, preemptor = cycle.sched, cycle.context, entry.preemptor

    quota, cq = sched.quota, entry.cq
    levels = quota.topology_levels(cq.name)

    def attempt(pod_sets: tuple[PodSetInfo, ...]) -> tuple[Assignment, tuple[Target, ...]]:
        memo = TargetMemo(context, preemptor)
        assignment = assign_flavors(
            cq=cq,
            pod_sets=pod_sets,
            flavors=quota.flavors,
            ignore_undeclared=sched.options.ignore_undeclared,
            fair_sharing=sched.options.fair_sharing,
            simulate=memo.simulate_one,
            start_after=start_after,
            pinned=pinned,
            topology_levels=levels,
        )
        placed = False
        if levels:
            delayed = quota.topology_delayed(cq.name)
            apply_topology(
                assignment,
                cq=cq,
                pod_sets=pod_sets,
                flavors=quota.flavors,
                cache=quota.topology,
                delayed=delayed,
            )
            placed = not delayed and needs_placement(cq, pod_sets, assignment, quota.flavors)
        targets: tuple[Target, ...] = ()
        if assignment.mode in (Mode.PREEMPT, Mode.RECLAIM):

            def placement_fits(victims: Sequence[str]) -> bool:
                found = place_workload(
                    cq, pod_sets, assignment, quota.flavors, quota.topology, without=victims
                )
                return not isinstance(found, Unplaced)

            targets = memo.targets(
                dict(assignment.usage), assignment.preempt_frs, placement_fits if placed else None
            )
        return assignment, targets

    def usable(
        pod_sets: tuple[PodSetInfo, ...],
    ) -> tuple[Assignment, tuple[Target, ...]] | None:
        found = attempt(pod_sets)
        return found if _usable(*found) else None

    pod_sets = entry.record.pod_sets
    full = attempt(pod_sets)
    if _usable(*full) or not can_be_partially_admitted(pod_sets):
        return full
    reduced = search_partial(pod_sets, usable)
    return full if reduced is None else reduced


def _usable(assignment: Assignment, targets: tuple[Target, ...]) -> bool:
    """A Fit, or a preemption with targets (what ends the partial-admission search): pure."""
    return assignment.mode == Mode.FIT or (
        assignment.mode in (Mode.PREEMPT, Mode.RECLAIM) and bool(targets)
    )


def _scan_start(
    sched: CycleParts, record: WorkloadRecord, cq: str
) -> Mapping[tuple[str, int], int]:
    """Where the flavor scan resumes: the last position, unless stale after a quota change.

    See docs/scheduling.md#flavor-scan-position.  Pure.
    """
    scan = record.scan
    if scan is None or not sched.options.resume_flavor_scan:
        return {}
    stale = scan.cycle < sched.cycles - 1
    if sched.quota.tree.allocatable_generation(cq) > scan.generation and stale:
        return {}
    return scan.last_tried


__all__ = ["CycleParts", "Entry", "Round", "assign", "nominate"]
