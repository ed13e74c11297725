"""One scheduling cycle, with kuota's multi-admission rounds.

A round (docs/scheduling.md#the-scheduling-cycle) pops one head from every
active ClusterQueue, nominates each against the quota tree (flavor
assignment: docs/scheduling.md#flavor-assignment), sorts the entries by
the documented processing order (``ordering.processing_key``) and processes
them one by one: NoFit and "Preempt, no candidates" are not admitted
(the latter may hold capacity for the rest of the cycle), an entry that no
longer fits after earlier ones is skipped, and a fitting entry is admitted
at once, its usage charged to the tree so no later entry can over-commit the
cohort.

Kueue admits at most one workload per CQ per cycle.  kuota keeps going: a
kuota cycle runs Kueue's cycle (one round: a fresh snapshot, one head per CQ,
capacity holds that last that round only) again and again while a round
admits something.  Because each round *is* a Kueue cycle, the final outcome
is the same as one-at-a-time admission by construction (a property test
checks it); the deep queue simply drains within one call.  Only the latest
Pending decision of a workload is reported.  ``Engine(one_admission_per_queue
=True)`` runs a single round.

The cycle receives the engine's parts, not the engine: a ``CycleParts`` holds
the quota cache and the queue manager behind the narrow views of
``cycle_inputs``, the workload records, the options and the cycle counter.

Preemption (docs/scheduling.md#the-scheduling-cycle): an entry whose assignment
needs preemption got its targets at nomination.  If an earlier entry of this
cycle already chose one of them, its assignment is recomputed with those
victims gone (pinned to the nominated flavors); a plain Fit then is a
*DeferredFit* that holds its usage and waits.  Otherwise the entry must fit
with the cycle's victims and its own targets removed; it then holds its usage
for the rest of the cycle and issues an ``Evict`` per target not already being
evicted.  Victims keep their quota until ``Engine.release``; the preemptor
stays at the head of its BestEffortFIFO queue (sticky) and is admitted in the
first cycle it fits.

kuota decision, against preemption ping-pong: an entry that issued preemptions
and waits for them (``WorkloadRecord.claims_freed``) is processed before every
other entry of a cycle, ahead of the documented order
(docs/scheduling.md#processing-order), so the capacity its victims free goes to
it and not to another queue's head (in Kueue, a higher-priority borrower of
another queue can take it first, and the victims can then reclaim it back,
forever).  With the loop guard of ``preemption.candidates`` this makes every
input settle.

kuota decision: an entry admitted in Fit mode must fit with this cycle's
victims still counted (they still hold quota until released), so an
admission never over-commits the cache, even transiently.

Partial admission (docs/scheduling.md#partial-admission): a head whose full
assignment neither fits nor has preemption targets, and which has a pod set
with ``minCount``, is nominated with the largest reduced counts that do
(``partial_admission.search``); the admission records and charges those counts.

Under fair sharing the entries are handed out one at a time by the
tournament of docs/scheduling.md#admission-order-under-fair-sharing
(``fair_share.next_entry``), with fresh shares each time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime

from scheduler.core.admission_checks import applicable_checks
from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.cycle_inputs import CycleQueues, CycleQuota, SchedulingOptions
from scheduler.core.decisions import Admit, CycleResult, Decision, Evict, Pending, PodSetAdmission
from scheduler.core.drain import drain
from scheduler.core.fair_share import FairEntry, next_entry
from scheduler.core.flavor_assignment import Assignment, Mode, assign_flavors
from scheduler.core.ordering import processing_key
from scheduler.core.partial_admission import can_be_partially_admitted, minimum_note
from scheduler.core.partial_admission import search as search_partial
from scheduler.core.pending_reasons import NO_DETAILS, Details
from scheduler.core.preemption import (
    PreemptionContext,
    PreemptionHistory,
    Preemptor,
    Target,
    TargetMemo,
)
from scheduler.core.preemption.messages import preemption_message
from scheduler.core.requeue import execute_requeues, report_unqueued, return_head
from scheduler.core.resource_node import QuotaNode, capacity_available
from scheduler.core.resources import FRValues, to_quantity
from scheduler.core.snapshot import Snapshot
from scheduler.core.state import ADMITTED, ScanPosition, WorkloadRecord
from scheduler.core.workload import PodSetInfo

NO_LONGER_FITS = "Workload no longer fits after processing another workload"
NAMESPACE_MISMATCH = "workload namespace doesn't match ClusterQueue selector"
FAILED_CHECKS = "The workload has failed admission checks"
DEFERRED_FIT = (
    "Workload has overlapping preemption targets with another workload, "
    "but will fit after these preemptions complete"
)
OVERLAPPING = "Workload has overlapping preemption targets with another workload"
WAITING_FOR_PODS_READY = "waiting for all admitted workloads to be in PodsReady condition"
"""Kueue's message while ``blockAdmission`` holds an admission back
(docs/configuration.md#waitforpodsready)."""


class _Entry:
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

    __slots__ = ("quota", "queues", "records", "options", "cycles", "history")

    def __init__(
        self,
        *,
        quota: CycleQuota,
        queues: CycleQueues,
        records: Mapping[str, WorkloadRecord],
        options: SchedulingOptions,
        history: PreemptionHistory | None = None,
    ) -> None:
        self.quota = quota
        self.queues = queues
        self.records = records
        self.options = options
        self.history = history if history is not None else PreemptionHistory()
        """Past evictions by preemption (the loop guard); the engine restarts it."""
        self.cycles = 0
        """Cycles (rounds) run so far: the age of a flavor-scan position.

        See docs/scheduling.md#flavor-scan-position.
        """

    def run(self, now: datetime) -> tuple[CycleResult, bool]:
        """One kuota cycle at ``now``; (result, whether anything changed)."""
        return run_cycle(self, now)


class _Cycle:
    """What one round shares between entries: the snapshot, the preemption view, the victims."""

    __slots__ = ("sched", "snapshot", "context", "victims")

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

    def usage_of(self, target: Target) -> tuple[QuotaNode, FRValues]:
        record = self.sched.records[target.workload]
        node = self.sched.quota.cluster_queues[target.cluster_queue].node
        assert node is not None and record.usage is not None
        return node, record.usage[target.cluster_queue]


MAX_ROUNDS = 10_000


def run_cycle(sched: CycleParts, now: datetime) -> tuple[CycleResult, bool]:
    """Run one kuota cycle; returns (result, whether anything changed).

    Kueue rounds are repeated while they admit (and stop at an eviction, whose
    victims must be released from outside before anything else can happen).
    First, the admitted workloads of queues set to ``HoldAndDrain`` are
    evicted (``drain``, docs/scheduling.md#stop-policies).
    """
    drained = drain(
        cluster_queues=sched.quota.cluster_queues,
        admitted=sched.quota.admitted,
        draining_local_queues=sched.queues.draining_local_queues(),
        records=sched.records,
    )
    sched.quota.ensure_forest()
    # Which queues may schedule does not change between rounds (admissions change usage,
    # not a queue's activity): asked once per cycle, not once per round.
    schedulable = [
        name for name in sorted(sched.quota.cluster_queues) if sched.quota.can_schedule(name)
    ]
    if sched.options.one_admission_per_queue:
        result, changed = _run_round(sched, now, schedulable)
        if drained:
            return CycleResult(decisions=(*drained, *result.decisions)), True
        return result, changed
    decisions: list[Decision] = [*drained]
    changed = bool(drained)
    for _ in range(MAX_ROUNDS):
        result, round_changed = _run_round(sched, now, schedulable)
        decisions.extend(result.decisions)
        changed = changed or round_changed
        if not result.admitted or result.evicted:
            break
    return CycleResult(decisions=tuple(_latest_pending(decisions))), changed


def _latest_pending(decisions: list[Decision]) -> list[Decision]:
    """Drop a Pending decision when a later one of the same cycle concerns its workload: pure."""
    last: dict[str, int] = {}
    for index, decision in enumerate(decisions):
        if isinstance(decision, (Admit, Pending)):
            last[decision.workload] = index
    return [
        decision
        for index, decision in enumerate(decisions)
        if not isinstance(decision, Pending) or last.get(decision.workload) == index
    ]


def _run_round(
    sched: CycleParts, now: datetime, schedulable: list[str]
) -> tuple[CycleResult, bool]:
    """One Kueue cycle: one head per active ClusterQueue.

    See docs/scheduling.md#the-scheduling-cycle.
    """
    quota = sched.quota  # its forest is current: run_cycle ensured it, rounds change usage only
    sched.cycles += 1
    changed = execute_requeues(quota, sched.queues, sched.records, now)
    decisions: list[Decision] = report_unqueued(sched.queues, sched.records)
    cycle = _Cycle(sched)
    snapshot = cycle.snapshot
    try:
        heads: list[_Entry] = []
        for name in schedulable:
            record = sched.queues.pop_head(name)
            if record is not None:
                heads.append(_Entry(quota.cluster_queues[name], record))
        entries = [_nominate(cycle, entry) for entry in heads]
        for entry in _processing_order(sched, entries):
            made = _process(cycle, entry, now)
            decisions.extend(made)
            if any(isinstance(decision, Evict) for decision in made):
                changed = True
            if isinstance(made[-1], Admit):
                changed = True
            elif return_head(sched.queues, entry.record, entry.cq, entry.requeue):
                changed = True
    finally:
        snapshot.rollback()
    return CycleResult(decisions=tuple(decisions)), changed


def _processing_order(sched: CycleParts, entries: list[_Entry]) -> Iterator[_Entry]:
    """Entries in processing order: the classical sort or the fair tournament.

    See docs/scheduling.md#processing-order and
    docs/scheduling.md#admission-order-under-fair-sharing.
    """
    claims = sorted((entry for entry in entries if entry.record.claims_freed), key=_sort_key)
    entries = [entry for entry in entries if not entry.record.claims_freed]
    yield from claims
    if not sched.options.fair_sharing:
        yield from sorted(entries, key=_sort_key)
        return
    contenders: list[FairEntry[_Entry]] = []
    for entry in sorted(entries, key=lambda item: item.cq.name):
        if entry.assignment is None or entry.cq.node is None:
            yield entry
        else:
            record = entry.record
            contenders.append(
                FairEntry(
                    entry, entry.cq.node, entry.assignment.usage, record.priority, record.timestamp
                )
            )
    while contenders:
        chosen = next_entry(contenders)
        contenders.remove(chosen)
        yield chosen.entry


def _sort_key(entry: _Entry) -> tuple[int, int, datetime, str]:
    level = entry.assignment.borrowing_level if entry.assignment is not None else 0
    return processing_key(
        borrowing_level=level,
        priority=entry.record.priority,
        timestamp=entry.record.timestamp,
        cluster_queue=entry.cq.name,
    )


def _nominate(cycle: _Cycle, entry: _Entry) -> _Entry:
    """Nomination's checks, then flavor assignment and preemption targets.

    A failed check fills the entry's reason, message and requeue reason.
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
    entry.assignment, entry.targets = _assign(
        cycle, entry, start_after=_scan_start(sched, record, cq.name)
    )
    record.scan = ScanPosition(
        entry.assignment.last_tried, sched.cycles, sched.quota.allocatable_generation(cq.name)
    )
    return entry


def _assign(
    cycle: _Cycle,
    entry: _Entry,
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

    def attempt(pod_sets: tuple[PodSetInfo, ...]) -> tuple[Assignment, tuple[Target, ...]]:
        memo = TargetMemo(context, preemptor)
        assignment = assign_flavors(
            cq=entry.cq,
            pod_sets=pod_sets,
            flavors=sched.quota.flavors,
            ignore_undeclared=sched.options.ignore_undeclared,
            fair_sharing=sched.options.fair_sharing,
            simulate=memo.simulate_one,
            start_after=start_after,
            pinned=pinned,
        )
        targets: tuple[Target, ...] = ()
        if assignment.mode in (Mode.PREEMPT, Mode.RECLAIM):
            targets = memo.targets(dict(assignment.usage), assignment.preempt_frs)
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
    if sched.quota.allocatable_generation(cq) > scan.generation and stale:
        return {}
    return scan.last_tried


def _process(cycle: _Cycle, entry: _Entry, now: datetime) -> list[Decision]:
    """Process one nominated entry; its decisions, the entry's own last.

    The cases are those of docs/scheduling.md#the-scheduling-cycle.
    """
    record, cq = entry.record, entry.cq
    if entry.assignment is None:
        return [_pending(entry)]
    node = cq.node
    assert node is not None
    deferred = False
    if entry.targets and any(target.workload in cycle.victims for target in entry.targets):
        deferred = _recompute(cycle, entry)
    assignment = entry.assignment
    assert assignment is not None
    if assignment.mode == Mode.NO_FIT:
        record.claims_freed = False
        entry.reason, entry.requeue = assignment.no_fit_reason(), "NoFit"
        entry.message, entry.details = assignment.pending()
        entry.message += minimum_note(record.pod_sets)
        return [_pending(entry)]
    if assignment.mode < Mode.FIT and not entry.targets:
        record.claims_freed = False
        entry.reason, entry.requeue = "WaitingForQuota", "PreemptionNoCandidates"
        entry.message, entry.details = assignment.pending()
        entry.message += minimum_note(record.pod_sets)
        if cq.preemption.reclaim_within_cohort != "Any":
            cycle.snapshot.hold(node, _capacity_hold(cq, assignment))
        return [_pending(entry)]
    if deferred:
        cycle.snapshot.hold(node, assignment.usage)
        record.scan = None
        entry.reason, entry.message, entry.requeue = (
            "WaitingForPreemptedWorkloads",
            DEFERRED_FIT,
            "PendingPreemption",
        )
        return [_pending(entry)]
    if any(target.workload in cycle.victims for target in entry.targets):
        entry.reason, entry.message, entry.requeue = (
            "WaitingForQuota",
            OVERLAPPING,
            "FailedAfterNomination",
        )
        return [_pending(entry)]
    if not _fits(cycle, node, assignment.usage, entry.targets):
        entry.reason, entry.message, entry.requeue = (
            "WaitingForQuota",
            NO_LONGER_FITS,
            "FailedAfterNomination",
        )
        return [_pending(entry)]
    if assignment.mode < Mode.FIT:
        cycle.snapshot.hold(node, assignment.usage)
        evictions = _issue(cycle, entry)
        record.claims_freed = True
        record.scan = None
        entry.reason, entry.requeue = "WaitingForPreemptedWorkloads", "PendingPreemption"
        message, entry.details = assignment.pending()
        entry.message = f"{message}. Pending the preemption of {len(entry.targets)} workload(s)"
        return [*evictions, _pending(entry)]
    if cycle.sched.options.block_admission and _pods_not_ready(cycle.sched):
        # Kueue waits for them before admitting this one; here it stays at the head
        # of its queue and is tried again next cycle.
        entry.reason, entry.message, entry.requeue = (
            "WaitingForPodsReady",
            WAITING_FOR_PODS_READY,
            "FailedAfterNomination",
        )
        return [_pending(entry)]
    return [_admit(cycle.sched, entry, assignment, now)]


def _pods_not_ready(sched: CycleParts) -> bool:
    """Some workload holding quota is not ``PodsReady`` (blockAdmission): pure."""
    records = sched.records
    return any(
        not records[key].pods_ready
        for keys in sched.quota.admitted.values()
        for key in keys
        if key in records
    )


def _recompute(cycle: _Cycle, entry: _Entry) -> bool:
    """Overlapping victims: reassign with them gone, flavors pinned; True: a DeferredFit."""
    assignment = entry.assignment
    assert assignment is not None
    context = cycle.context
    with cycle.snapshot.without(cycle.victims.values()):
        context.excluded = set(cycle.victims)
        try:
            entry.assignment, entry.targets = _assign(cycle, entry, pinned=assignment.chosen)
        finally:
            context.excluded = set()
    return entry.assignment.mode == Mode.FIT


def _fits(cycle: _Cycle, node: QuotaNode, usage: FRValues, targets: tuple[Target, ...]) -> bool:
    """Whether ``usage`` fits once this cycle's victims and ``targets`` are gone.

    An admission (no targets) is tested with the victims still counted: they
    hold quota until released (module docstring).
    """
    if not targets:
        return all(amount <= capacity_available(node, fr) for fr, amount in usage.items())
    gone = dict(cycle.victims)
    for target in targets:
        gone.setdefault(target.workload, cycle.usage_of(target))
    with cycle.snapshot.without(gone.values()):
        return all(amount <= capacity_available(node, fr) for fr, amount in usage.items())


def _issue(cycle: _Cycle, entry: _Entry) -> list[Decision]:
    """Issue the preemptions: an ``Evict`` per target not already being evicted.

    See docs/scheduling.md#preemption-messages.
    """
    sched, preemptor = cycle.sched, entry.record
    decisions: list[Decision] = []
    for target in entry.targets:
        cycle.victims[target.workload] = cycle.usage_of(target)
        victim = sched.records[target.workload]
        if victim.evicted:
            continue
        message = preemption_message(
            preemptor_uid=preemptor.uid,
            preemptor_job_uid=preemptor.job_uid,
            reason=target.reason,
            preemptor_node=entry.cq.node,
            victim_node=sched.quota.cluster_queues[target.cluster_queue].node,
        )
        victim.evicted = True
        victim.evictions += 1
        victim.eviction_message = message
        victim.eviction_reason = "Preempted"
        cycle.context.history.evicted(preemptor.key, victim.key)
        decisions.append(
            Evict(
                victim=target.workload,
                preemptor=preemptor.key,
                reason=target.reason,
                message=message,
            )
        )
    return decisions


def _capacity_hold(cq: ClusterQueueInfo, assignment: Assignment) -> FRValues:
    """Capacity a preemptor without candidates keeps from later borrowers: pure.

    It is held for the rest of the round only (docs/scheduling.md#the-scheduling-cycle).
    """
    node = cq.node
    assert node is not None
    borrows = assignment.borrowing_level > 0
    hold: FRValues = {}
    for fr, request in assignment.usage.items():
        nominal, used = node.nominal.get(fr, 0), node.usage.get(fr, 0)
        if borrows:
            limit = node.borrowing_limit.get(fr)
            amount = request if limit is None else min(request, nominal + limit - used)
        else:
            amount = min(request, nominal - used)
        hold[fr] = max(0, amount)
    return hold


def _admit(sched: CycleParts, entry: _Entry, assignment: Assignment, now: datetime) -> Admit:
    record, cq = entry.record, entry.cq
    pod_sets = tuple(
        PodSetAdmission(
            name=result.name,
            count=result.count,
            flavors=dict(result.flavors),
            resource_usage={
                resource: to_quantity(resource, amount) for resource, amount in result.usage.items()
            },
        )
        for result in assignment.pod_sets
    )
    record.state = ADMITTED
    record.pods_ready = False  # its pods start now
    record.assumed = True  # until the Workload's status shows it (Engine._apply_workload)
    record.cluster_queue = cq.name
    record.admission = pod_sets
    record.set_status("QuotaReserved", f"Quota reserved in ClusterQueue {cq.name}")
    record.scan = None
    record.claims_freed = False
    sched.history.admitted(record.key)
    sched.quota.charge(record, cq.name, dict(assignment.usage), now)
    sched.queues.admitted(record, cq.name)
    checks = applicable_checks(
        cq.check_rules, (flavor for pod_set in pod_sets for flavor in pod_set.flavors.values())
    )
    record.awaiting_checks = bool(checks)
    return Admit(
        workload=record.key,
        cluster_queue=cq.name,
        pod_sets=pod_sets,
        message=record.message,
        admission_checks=checks,
    )


def _pending(entry: _Entry) -> Pending:
    record = entry.record
    record.set_status(entry.reason, entry.message, entry.details)
    shortages, blockers = entry.details
    return Pending(
        workload=record.key,
        cluster_queue=entry.cq.name,
        reason=entry.reason,
        message=entry.message,
        shortages=shortages,
        blockers=blockers,
    )


__all__ = ["CycleParts", "run_cycle"]
