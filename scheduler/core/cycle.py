"""One scheduling cycle (scheduling.md 4), with kuota's multi-admission rounds.

A round pops one head from every active ClusterQueue (4.1), nominates each
against the quota tree (4.3, flavor assignment of 5), sorts the entries by
the documented processing order (``ordering.processing_key``) and processes
them one by one (4.5): NoFit and "Preempt, no candidates" are not admitted
(the latter may hold capacity for the rest of the cycle), an entry that no
longer fits after earlier ones is skipped, and a fitting entry is admitted
at once, its usage charged to the tree so no later entry can over-commit the
cohort.

Kueue admits at most one workload per CQ per cycle.  kuota keeps going: while
a round admits something, another round pops the next heads of the CQs whose
head was admitted or parked (a CQ whose head went back to its heap is done
for this cycle: capacity only shrinks inside a cycle, so it would fail
again).  ``Engine(one_admission_per_queue=True)`` restores Kueue's single
round.  Holds are rolled back when the cycle ends.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from scheduler.core.decisions import Admit, CycleResult, Decision, Pending, PodSetAdmission
from scheduler.core.flavor_assignment import Assignment, Mode, assign_flavors
from scheduler.core.ordering import processing_key
from scheduler.core.resource_node import capacity_available
from scheduler.core.resources import FRValues, to_quantity
from scheduler.core.snapshot import Snapshot
from scheduler.core.state import ADMITTED, WorkloadRecord

if TYPE_CHECKING:
    from scheduler.core.cluster_queue import ClusterQueueInfo
    from scheduler.core.engine import Engine

NO_LONGER_FITS = "Workload no longer fits after processing another workload"
NAMESPACE_MISMATCH = "workload namespace doesn't match ClusterQueue selector"
FAILED_CHECKS = "The workload has failed admission checks"

# Where a non-admitted head goes (3.6): requeue reason -> (BestEffortFIFO parks?, StrictFIFO parks?)
_PARKS: dict[str, tuple[bool, bool]] = {
    "NoFit": (True, False),
    "PreemptionNoCandidates": (True, False),
    "FailedAfterNomination": (False, False),
    "NamespaceMismatch": (True, True),
    "Generic": (True, False),
}


class _Entry:
    __slots__ = ("cq", "record", "assignment", "reason", "message", "requeue")

    def __init__(self, cq: "ClusterQueueInfo", record: WorkloadRecord) -> None:
        self.cq = cq
        self.record = record
        self.assignment: Assignment | None = None
        self.reason = ""
        self.message = ""
        self.requeue = ""


def run_cycle(engine: "Engine", now: datetime) -> tuple[CycleResult, bool]:
    """Run one cycle; returns (result, whether anything changed)."""
    engine.ensure_forest()
    changed = _execute_requeues(engine, now)
    decisions: list[Decision] = _report_unqueued(engine)
    snapshot = Snapshot()
    candidates = [
        name
        for name in sorted(engine.cluster_queues)
        if not engine.inactive_reasons(name) and name not in engine.forest.in_cycle
    ]
    try:
        while candidates:
            heads: list[_Entry] = []
            for name in candidates:
                key = engine.queues[name].pop()
                if key is not None:
                    record = engine.workloads[key]
                    record.queued_in = None
                    heads.append(_Entry(engine.cluster_queues[name], record))
            if not heads:
                break
            entries = [_nominate(engine, entry) for entry in heads]
            entries.sort(key=_sort_key)
            admitted_any = False
            still: list[str] = []
            for entry in entries:
                decision = _process(engine, snapshot, entry)
                decisions.append(decision)
                if isinstance(decision, Admit):
                    admitted_any = changed = True
                    still.append(entry.cq.name)
                elif _return(engine, entry):
                    changed = True
                    still.append(entry.cq.name)
            if engine.one_admission_per_queue or not admitted_any:
                break
            candidates = sorted(name for name in still if engine.queues[name].active_count)
    finally:
        snapshot.rollback()
    return CycleResult(decisions=tuple(decisions)), changed


def _sort_key(entry: _Entry) -> tuple[int, int, datetime, str]:
    level = entry.assignment.borrowing_level if entry.assignment is not None else 0
    return processing_key(
        borrowing_level=level,
        priority=entry.record.priority,
        timestamp=entry.record.timestamp,
        cluster_queue=entry.cq.name,
    )


def _nominate(engine: "Engine", entry: _Entry) -> _Entry:
    """Checks of 4.3, then flavor assignment; failures fill reason/message/requeue."""
    record, cq = entry.record, entry.cq
    if record.checks_failed:
        entry.reason, entry.message, entry.requeue = "PendingEvaluation", FAILED_CHECKS, "Generic"
        return entry
    if not engine.namespace_matches(cq, record.namespace):
        entry.reason, entry.message, entry.requeue = "Misconfigured", NAMESPACE_MISMATCH, "NamespaceMismatch"
        return entry
    entry.assignment = assign_flavors(
        cq=cq,
        pod_sets=record.pod_sets,
        flavors=engine.flavors,
        priority=record.priority,
        ignore_undeclared=engine.ignore_undeclared,
        fair_sharing=engine.fair_sharing,
    )
    return entry


def _process(engine: "Engine", snapshot: Snapshot, entry: _Entry) -> Decision:
    """Process one nominated entry (4.5) and return its decision."""
    record, cq, assignment = entry.record, entry.cq, entry.assignment
    if assignment is None:
        return _pending(entry)
    node = cq.node
    assert node is not None
    if assignment.mode == Mode.NO_FIT:
        entry.reason, entry.message, entry.requeue = assignment.no_fit_reason(), assignment.message(), "NoFit"
        return _pending(entry)
    if assignment.mode < Mode.FIT:
        # "Preempt, no candidates" (no preemption targets exist yet: every Preempt mode lands here).
        entry.reason, entry.message, entry.requeue = "WaitingForQuota", assignment.message(), "PreemptionNoCandidates"
        if cq.preemption.reclaim_within_cohort != "Any":
            snapshot.hold(node, _capacity_hold(cq, assignment))
        return _pending(entry)
    if any(amount > capacity_available(node, fr) for fr, amount in assignment.usage.items()):
        entry.reason, entry.message, entry.requeue = "WaitingForQuota", NO_LONGER_FITS, "FailedAfterNomination"
        return _pending(entry)
    return _admit(engine, entry, assignment)


def _capacity_hold(cq: "ClusterQueueInfo", assignment: Assignment) -> FRValues:
    """Capacity a preemptor without candidates keeps from later borrowers this cycle (4.5 step 2): pure."""
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


def _admit(engine: "Engine", entry: _Entry, assignment: Assignment) -> Admit:
    record, cq = entry.record, entry.cq
    pod_sets = tuple(
        PodSetAdmission(
            name=result.name,
            count=result.count,
            flavors=dict(result.flavors),
            resource_usage={resource: to_quantity(resource, amount) for resource, amount in result.usage.items()},
        )
        for result in assignment.pod_sets
    )
    engine.queues[cq.name].remove(record.key)
    record.state = ADMITTED
    record.cluster_queue = cq.name
    record.admission = pod_sets
    record.reason, record.message, record.tried = "QuotaReserved", f"Quota reserved in ClusterQueue {cq.name}", True
    engine.charge(record, cq.name, dict(assignment.usage))
    return Admit(workload=record.key, cluster_queue=cq.name, pod_sets=pod_sets, message=record.message)


def _pending(entry: _Entry) -> Pending:
    record = entry.record
    record.reason, record.message, record.tried = entry.reason, entry.message, True
    return Pending(workload=record.key, cluster_queue=entry.cq.name, reason=entry.reason, message=entry.message)


def _return(engine: "Engine", entry: _Entry) -> bool:
    """Put a non-admitted head back (3.6); True when it was parked as inadmissible."""
    record, cq = entry.record, entry.cq
    best_effort_parks, strict_parks = _PARKS[entry.requeue]
    park = strict_parks if cq.strict_fifo else best_effort_parks
    queue = engine.queues[cq.name]
    record.queued_in = cq.name
    if park:
        queue.park(record.queue_order())
    else:
        queue.push(record.queue_order())
    return park


def _execute_requeues(engine: "Engine", now: datetime) -> bool:
    """Run the requeue events raised since the last cycle (3.7); True if a workload moved."""
    names: set[str] = set(engine.requeue_cqs)
    for name in engine.requeue_trees:
        members = engine.tree_members(name)
        names.update(members if members else ([name] if name in engine.cluster_queues else []))
    engine.requeue_trees.clear()
    engine.requeue_cqs.clear()
    moved = 0
    for name in sorted(names):
        info = engine.cluster_queues.get(name)
        queue = engine.queues.get(name)
        if info is None or queue is None:
            continue

        def keep_parked(key: str, info: "ClusterQueueInfo" = info) -> bool:
            record = engine.workloads[key]
            if record.requeue_at is not None and record.requeue_at > now:
                return True
            return not engine.namespace_matches(info, record.namespace)

        moved += queue.requeue_inadmissible(keep_parked)
    return moved > 0


def _report_unqueued(engine: "Engine") -> list[Decision]:
    """Pending decisions for workloads whose 3.1 status changed since the last cycle."""
    decisions: list[Decision] = []
    for key in sorted(engine.to_report):
        record = engine.workloads.get(key)
        if record is None or record.state != "Pending":
            continue
        reason, message = engine.pending_status(record)
        if reason is not None:
            decisions.append(Pending(workload=key, cluster_queue=record.cluster_queue, reason=reason, message=message))
    engine.to_report.clear()
    return decisions


__all__ = ["run_cycle"]
