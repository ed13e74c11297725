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
the quota cache, the pending queues and the queue manager's routing behind the
narrow views of ``cycle_inputs``, the workload records, the options and the
cycle counter.

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

Topology-aware scheduling (docs/concepts.md#topology-aware-scheduling):
nomination also places the TAS pod sets (``topology_fit``); a preemptor
holds the domains it will take for the rest of the round, and a fitting
entry whose domains an earlier admission of the round filled is placed
again, its flavors pinned, before it is admitted.

Under fair sharing the entries are handed out one at a time by the
tournament of docs/scheduling.md#admission-order-under-fair-sharing
(``fair_share.next_entry``), with fresh shares each time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime

from scheduler.core.admission_checks import applicable_checks
from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.decisions import Admit, CycleResult, Decision, Evict, Pending, PodSetAdmission
from scheduler.core.drain import drain
from scheduler.core.fair_share import FairEntry, next_entry
from scheduler.core.flavor_assignment import Assignment, Mode
from scheduler.core.nomination import CycleParts, Entry, Round, assign, nominate
from scheduler.core.ordering import processing_key
from scheduler.core.partial_admission import minimum_note
from scheduler.core.preemption import (
    Target,
)
from scheduler.core.preemption.messages import preemption_message
from scheduler.core.requeue import execute_requeues, report_unqueued, return_head
from scheduler.core.resource_node import QuotaNode, capacity_available
from scheduler.core.resources import FRValues, to_quantity
from scheduler.core.slices import old_slice_gone, pinned_flavors, replaced_slice, retire
from scheduler.core.state import ADMITTED, WorkloadRecord
from scheduler.core.topology_fit import (
    charges_of,
    still_fits,
)

NO_LONGER_FITS = "Workload no longer fits after processing another workload"
DEFERRED_FIT = (
    "Workload has overlapping preemption targets with another workload, "
    "but will fit after these preemptions complete"
)
OVERLAPPING = "Workload has overlapping preemption targets with another workload"
WAITING_FOR_PODS_READY = "waiting for all admitted workloads to be in PodsReady condition"
"""Kueue's message while ``blockAdmission`` holds an admission back
(docs/configuration.md#waitforpodsready)."""


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
        draining_local_queues=sched.routing.draining_local_queues(),
        records=sched.records,
    )
    sched.quota.tree.ensure_forest()
    # Which queues may schedule does not change between rounds (admissions change usage,
    # not a queue's activity): asked once per cycle, not once per round.
    schedulable = [
        name for name in sorted(sched.quota.cluster_queues) if sched.quota.can_schedule(name)
    ]
    if sched.options.one_admission_per_queue:
        result, changed = _run_round(sched, now, schedulable)
        if drained:
            return replace(result, decisions=(*drained, *result.decisions)), True
        return result, changed
    decisions: list[Decision] = [*drained]
    skips: dict[str, int] = {}
    changed = bool(drained)
    for _ in range(MAX_ROUNDS):
        result, round_changed = _run_round(sched, now, schedulable)
        decisions.extend(result.decisions)
        skips.update(result.preemption_skips)
        changed = changed or round_changed
        if not result.admitted or result.evicted:
            break
    return CycleResult(decisions=tuple(_latest_pending(decisions)), preemption_skips=skips), changed


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
    decisions: list[Decision] = report_unqueued(sched.routing, sched.records)
    skips: dict[str, int] = {}
    cycle = Round(sched)
    snapshot = cycle.snapshot
    try:
        heads: list[Entry] = []
        for name in schedulable:
            record = sched.queues.pop_head(name)
            if record is not None:
                heads.append(Entry(quota.cluster_queues[name], record))
        replaced: dict[str, WorkloadRecord | None] = {}
        entries = [_nominate(cycle, entry, replaced) for entry in heads]
        for entry in _processing_order(sched, entries):
            old = replaced.get(entry.record.key)
            with old_slice_gone(cycle, old):
                made = _process(cycle, entry, now)
            if old is not None and isinstance(made[-1], Admit):
                retire(cycle, old)
                made[-1] = replace(made[-1], replaces=old.key)
            decisions.extend(made)
            if _skipped_preemption(entry, made[-1]):
                skips[entry.cq.name] = skips.get(entry.cq.name, 0) + 1
            if any(isinstance(decision, Evict) for decision in made):
                changed = True
            if isinstance(made[-1], Admit):
                changed = True
            elif return_head(sched.queues, entry.record, entry.cq, entry.requeue):
                changed = True
    finally:
        snapshot.rollback()
        cycle.release_placement_holds()
    return CycleResult(decisions=tuple(decisions), preemption_skips=skips), changed


def _nominate(cycle: Round, entry: Entry, replaced: dict[str, WorkloadRecord | None]) -> Entry:
    """Nominate ``entry``; a workload slice as if the slice it replaces were gone.

    See docs/concepts.md#elastic-jobs.  ``replaced`` gets the old slice of
    every entry that replaces one.
    """
    found = replaced_slice(cycle.sched.records, entry.record, entry.cq.name)
    if isinstance(found, str):
        entry.reason, entry.message, entry.requeue = "Pending", found, "Generic"
        return entry
    if found is None:
        return nominate(cycle, entry)
    replaced[entry.record.key] = found
    context = cycle.context
    context.excluded = {found.key}  # what it takes over is no preemption candidate
    try:
        with old_slice_gone(cycle, found):
            return nominate(cycle, entry, pinned=pinned_flavors(entry.cq, found))
    finally:
        context.excluded = set()


def _skipped_preemption(entry: Entry, last: Decision) -> bool:
    """Whether ``entry`` gave way to another workload of the round that claimed its
    preemption targets first (then it waits): pure.

    See docs/metrics.md (``kueue_admission_cycle_preemption_skips``).
    """
    if not isinstance(last, Pending):
        return False
    if last.message in (OVERLAPPING, DEFERRED_FIT):
        return True
    return last.message == NO_LONGER_FITS and bool(entry.targets)


def _processing_order(sched: CycleParts, entries: list[Entry]) -> Iterator[Entry]:
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
    contenders: list[FairEntry[Entry]] = []
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


def _sort_key(entry: Entry) -> tuple[int, int, datetime, str]:
    level = entry.assignment.borrowing_level if entry.assignment is not None else 0
    return processing_key(
        borrowing_level=level,
        priority=entry.record.priority,
        timestamp=entry.record.timestamp,
        cluster_queue=entry.cq.name,
    )


def _process(cycle: Round, entry: Entry, now: datetime) -> list[Decision]:
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
            cycle.hold_placement(entry, ())
        return [_pending(entry)]
    if deferred:
        cycle.snapshot.hold(node, assignment.usage)
        cycle.hold_placement(entry, tuple(entry.targets))
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
    if assignment.mode == Mode.FIT and not _still_placed(cycle, entry):
        entry.reason, entry.message, entry.requeue = (
            "WaitingForQuota",
            NO_LONGER_FITS,
            "FailedAfterNomination",
        )
        return [_pending(entry)]
    assignment = entry.assignment
    if assignment.mode < Mode.FIT:
        cycle.snapshot.hold(node, assignment.usage)
        cycle.hold_placement(entry, entry.targets)
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


def _recompute(cycle: Round, entry: Entry) -> bool:
    """Overlapping victims: reassign with them gone, flavors pinned; True: a DeferredFit."""
    assignment = entry.assignment
    assert assignment is not None
    context = cycle.context
    topology = cycle.sched.quota.topology
    with cycle.snapshot.without(cycle.victims.values()), topology.held.without(cycle.victims):
        context.excluded = set(cycle.victims)
        try:
            entry.assignment, entry.targets = assign(cycle, entry, pinned=assignment.chosen)
        finally:
            context.excluded = set()
    return entry.assignment.mode == Mode.FIT


def _still_placed(cycle: Round, entry: Entry) -> bool:
    """Whether a fitting entry's placement still has room, after earlier admissions.

    When it has not, the assignment is made again, flavors pinned: the
    topology may hold the pods elsewhere (docs/concepts.md#topology-aware-scheduling).
    """
    assignment = entry.assignment
    assert assignment is not None
    quota = cycle.sched.quota
    charges = charges_of(assignment, entry.record.pod_sets)
    if not charges or still_fits(quota.topology, charges):
        return True
    entry.assignment, entry.targets = assign(cycle, entry, pinned=assignment.chosen)
    return entry.assignment.mode == Mode.FIT


def _fits(cycle: Round, node: QuotaNode, usage: FRValues, targets: tuple[Target, ...]) -> bool:
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


def _issue(cycle: Round, entry: Entry) -> list[Decision]:
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


def _admit(sched: CycleParts, entry: Entry, assignment: Assignment, now: datetime) -> Admit:
    record, cq = entry.record, entry.cq
    pod_sets = tuple(
        PodSetAdmission(
            name=result.name,
            count=result.count,
            flavors=dict(result.flavors),
            resource_usage={
                resource: to_quantity(resource, amount) for resource, amount in result.usage.items()
            },
            topology_assignment=result.topology,
            delayed_topology_request="Pending" if result.topology_delayed else None,
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
    sched.quota.charge(
        record, cq.name, dict(assignment.usage), now, charges_of(assignment, record.pod_sets)
    )
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


def _pending(entry: Entry) -> Pending:
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
