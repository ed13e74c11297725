"""Who may be preempted, and in which order.

See docs/scheduling.md#preemption-policies, docs/scheduling.md#candidate-order
and, under fair sharing, docs/scheduling.md#preemption-under-fair-sharing.

A candidate must hold quota on at least one FR needing preemption.  Policies
(``P`` the preemptor, ``C`` the candidate, effective priorities):

* ``withinClusterQueue`` (C in P's CQ): ``Never``; ``LowerPriority``:
  ``prio(C) < prio(P)``; ``LowerOrNewerEqualPriority``: that, or equal
  priority with P's queue-order timestamp strictly earlier than C's.
* ``reclaimWithinCohort`` (C in another CQ of the tree): ``Never``;
  ``LowerPriority``; ``Any``.  C's CQ must be above its nominal quota in a
  needed FR (a CQ within its nominal quota is never reclaimed from).

Candidate order, smallest first, mirrored by ``order_key``:

1. already being evicted (its preemption was issued, quota not yet released);
2. the class: hierarchical reclaim, then other cross-CQ candidates, then P's
   own CQ (classical preemption; under fair sharing only "other CQs
   before P's own CQ");
   (admission fair sharing, in P's own CQ when it orders by LocalQueue usage)
   the workloads of the LocalQueue with the higher usage first;
3. lower effective priority;
4. most recently reserved (later ``QuotaReserved`` first);
5. UID (then key), for determinism.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from scheduler.core.preemption.context import PreemptionContext, Preemptor
from scheduler.core.resource_node import QuotaNode, local_available
from scheduler.core.resources import FlavorResource, FRValues
from scheduler.core.state import WorkloadRecord

HIERARCHICAL, CROSS_QUEUE, SAME_QUEUE = 0, 1, 2
"""Candidate classes, in the order they are tried (docs/scheduling.md#candidate-order)."""

IN_CLUSTER_QUEUE = "InClusterQueue"
RECLAMATION = "InCohortReclamation"
RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"
FAIR_SHARING = "InCohortFairSharing"


@dataclass(slots=True)
class Candidate:
    """One admitted workload that policy allows to evict."""

    key: str
    cq_name: str
    node: QuotaNode
    usage: FRValues
    priority: int
    evicted: bool
    group: int
    reason: str
    only_without_borrowing: bool
    """"Reclaim without borrowing": usable only if P ends within its nominal quota."""
    order_key: OrderKey


OrderKey = tuple[bool, int, float, int, float, int, str, str]


def _order_key(record: WorkloadRecord, group: int, lq_usage: float = 0.0) -> OrderKey:
    """The candidate-order sort key (module docstring, criteria 1-5): pure."""
    reserved, sequence = record.reserved_at
    return (
        not record.evicted,
        group,
        -lq_usage,
        record.priority,
        -reserved.timestamp(),
        -sequence,
        record.uid,
        record.key,
    )


def _candidate(
    record: WorkloadRecord,
    cq_name: str,
    node: QuotaNode,
    group: int,
    reason: str,
    only_without_borrowing: bool = False,
    lq_usage: float = 0.0,
) -> Candidate:
    assert record.usage is not None
    return Candidate(
        key=record.key,
        cq_name=cq_name,
        node=node,
        usage=record.usage[cq_name],
        priority=record.priority,
        evicted=record.evicted,
        group=group,
        reason=reason,
        only_without_borrowing=only_without_borrowing,
        order_key=_order_key(record, group, lq_usage),
    )


def within_queue_allows(policy: str, candidate: WorkloadRecord, preemptor: Preemptor) -> bool:
    """``withinClusterQueue`` (docs/scheduling.md#preemption-policies): pure."""
    if policy == "LowerPriority":
        return candidate.priority < preemptor.priority
    if policy == "LowerOrNewerEqualPriority":
        return candidate.priority < preemptor.priority or (
            candidate.priority == preemptor.priority and preemptor.timestamp < candidate.timestamp
        )
    return False


def reclaim_allows(policy: str, candidate: WorkloadRecord, preemptor: Preemptor) -> bool:
    """``reclaimWithinCohort`` (docs/scheduling.md#preemption-policies): pure."""
    if policy == "Any":
        return True
    if policy == "LowerPriority":
        return candidate.priority < preemptor.priority
    return False


def uses_needed(usage: FRValues, needed: set[FlavorResource]) -> bool:
    """Whether ``usage`` holds quota on a needed FR: pure.

    A plain loop: this runs for every admitted workload of every queue a
    preemptor looks at, and a generator in ``any`` costs twice as much.
    """
    for fr in needed:
        if usage.get(fr, 0) > 0:
            return True
    return False


def over_quota(node: QuotaNode, needed: set[FlavorResource]) -> bool:
    """A CQ above its nominal quota, or a cohort above its subtree quota, in a needed FR: pure."""
    quota = node.subtree_quota if node.is_cohort else node.nominal
    usage = node.usage
    for fr in needed:  # a loop, not any(<generator>): see uses_needed
        if usage.get(fr, 0) > quota.get(fr, 0):
            return True
    return False


def loop_guard(ctx: PreemptionContext, preemptor: str) -> set[str]:
    """The workloads ``preemptor`` may not newly evict, so preemption never loops: pure.

    kuota's rule, beyond Kueue's (docs/scheduling.md#loop-guard: Kueue's
    rules can ping-pong when a queue both preempts inside itself and reclaims
    from its cohort).  Evictions by preemption form a graph, an edge from preemptor to
    victim.  A new eviction is not issued when

    1. the victim evicted the preemptor, directly or through a chain of
       evictions (the new edge would close a cycle: the preemptor would undo
       an eviction that led to its own), or
    2. the preemptor already evicted the victim and has not been admitted
       since (its first attempt gave its capacity to someone else).

    The graph then has no cycle, so for a fixed set of workloads preemption
    ends: were some workload evicted forever, some preemptor would evict it
    again and again, each time re-admitted (2) and so evicted again in between,
    by someone evicted forever too, and so on backwards through a finite
    acyclic graph, which cannot go on.  A workload being evicted already is
    not guarded (choosing it again issues nothing new).

    The argument needs the input unchanged, and no more: the engine forgets
    the history of a cohort tree when a workload of it finishes or is deleted,
    and all of it when quotas or priorities change (``PreemptionHistory``),
    so a team still gets its nominal quota back once things change.  A
    scheduler restart forgets it too (one more round of a loop at most).  A
    guarded eviction is one Kueue would issue; the preemptor waits instead.
    """
    return ctx.history.guarded(preemptor)


def _records(
    ctx: PreemptionContext,
    cq_name: str,
    preemptor: Preemptor,
    needed: set[FlavorResource],
    guarded: set[str],
) -> Iterator[WorkloadRecord]:
    # Any order: candidates are sorted by their total order key (criteria, then UID, key).
    records, excluded, own = ctx.records, ctx.excluded, preemptor.key
    for key in ctx.admitted.get(cq_name, ()):
        record = records[key]
        usage = record.usage.get(cq_name) if record.usage else None
        if (
            usage is None
            or key == own
            or (excluded and key in excluded)
            or (guarded and key in guarded and not record.evicted)
        ):
            continue
        if uses_needed(usage, needed):
            yield record


def _same_queue(
    ctx: PreemptionContext, preemptor: Preemptor, needed: set[FlavorResource], guarded: set[str]
) -> list[Candidate]:
    cq = preemptor.cq
    policy = cq.preemption.within_cluster_queue
    node = cq.node
    assert node is not None
    if policy == "Never":
        return []
    usage = ctx.local_queue_usage(cq.name) if ctx.local_queue_usage is not None else None
    return [
        _candidate(
            record,
            cq.name,
            node,
            SAME_QUEUE,
            IN_CLUSTER_QUEUE,
            lq_usage=0.0
            if usage is None
            else usage(f"{record.namespace}/{record.queue_name or ''}"),
        )
        for record in _records(ctx, cq.name, preemptor, needed, guarded)
        if within_queue_allows(policy, record, preemptor)
    ]


def _over_quota_queues(
    node: QuotaNode, skip: QuotaNode, needed: set[FlavorResource]
) -> Iterator[QuotaNode]:
    """CQs under ``node``, descending only into nodes over their quota in a needed FR: pure."""
    if node is skip or not over_quota(node, needed):
        return
    if not node.is_cohort:
        yield node
        return
    for child in node.children:
        yield from _over_quota_queues(child, skip, needed)


def classical_candidates(
    ctx: PreemptionContext,
    preemptor: Preemptor,
    requests: FRValues,
    needed: set[FlavorResource],
    *,
    prune: bool = True,
) -> list[Candidate]:
    """Classical candidates, classified, in candidate order: pure (reads the tree).

    ``prune``: leave out the candidates the victim search cannot use (below);
    ``prune=False`` is the plain definition, the reference a property test
    holds the pruned search to.
    """
    cq = preemptor.cq
    node = cq.node
    assert node is not None
    guarded = loop_guard(ctx, preemptor.key)
    found = _same_queue(ctx, preemptor, needed, guarded)
    policy = cq.preemption
    if node.parent is not None and policy.reclaim_within_cohort != "Never":
        borrow = policy.borrow_within_cohort
        threshold = borrow.max_priority_threshold
        advantage = all(
            node.usage.get(fr, 0) + amount <= node.nominal.get(fr, 0)
            for fr, amount in requests.items()
        )
        remaining = {
            fr: max(0, amount - local_available(node, fr)) for fr, amount in requests.items()
        }
        # Without borrowWithinCohort, a CQ not strictly below its nominal quota tries only the
        # "borrow" fit (classical.attempt_plan), which skips every reclaim-without-borrowing
        # candidate: collecting them would only cost time (at a thousand queues, most of a
        # cycle), so a level that would yield nothing else is not walked.
        useless_reclaims = (
            prune
            and borrow.policy == "Never"
            and not all(node.usage.get(fr, 0) < node.nominal.get(fr, 0) for fr in needed)
        )
        child: QuotaNode = node
        ancestor: QuotaNode | None = node.parent
        while ancestor is not None:
            for sibling in ancestor.children:
                if sibling is child or (useless_reclaims and not advantage):
                    continue
                for queue in _over_quota_queues(sibling, node, needed):
                    for record in _records(ctx, queue.name, preemptor, needed, guarded):
                        if not reclaim_allows(policy.reclaim_within_cohort, record, preemptor):
                            continue
                        if advantage:
                            found.append(
                                _candidate(record, queue.name, queue, HIERARCHICAL, RECLAMATION)
                            )
                        elif (
                            borrow.policy == "Never"
                            or record.priority >= preemptor.priority
                            or (threshold is not None and record.priority > threshold)
                        ):
                            found.append(
                                _candidate(
                                    record, queue.name, queue, CROSS_QUEUE, RECLAMATION, True
                                )
                            )
                        else:
                            found.append(
                                _candidate(
                                    record, queue.name, queue, CROSS_QUEUE, RECLAIM_WHILE_BORROWING
                                )
                            )
            advantage = advantage or all(
                ancestor.usage.get(fr, 0) + amount <= ancestor.subtree_quota.get(fr, 0)
                for fr, amount in remaining.items()
            )
            remaining = {
                fr: max(0, amount - local_available(ancestor, fr))
                for fr, amount in remaining.items()
            }
            child, ancestor = ancestor, ancestor.parent
    found.sort(key=lambda candidate: candidate.order_key)
    return found


def fair_candidates(
    ctx: PreemptionContext, preemptor: Preemptor, needed: set[FlavorResource]
) -> list[Candidate]:
    """Fair-sharing candidates, in candidate order: pure.

    P's own CQ by policy, plus the borrowing CQs of the whole tree.
    """
    cq = preemptor.cq
    node = cq.node
    assert node is not None
    guarded = loop_guard(ctx, preemptor.key)
    found = _same_queue(ctx, preemptor, needed, guarded)
    reclaim = cq.preemption.reclaim_within_cohort
    if node.parent is not None and reclaim != "Never":
        stack = [node.root()]
        while stack:
            current = stack.pop()
            if current.is_cohort:
                stack.extend(current.children)
                continue
            if current is node or not any(
                current.usage.get(fr, 0) > current.nominal.get(fr, 0) for fr in needed
            ):
                continue
            for record in _records(ctx, current.name, preemptor, needed, guarded):
                if reclaim_allows(reclaim, record, preemptor):
                    found.append(
                        _candidate(record, current.name, current, CROSS_QUEUE, FAIR_SHARING)
                    )
    found.sort(key=lambda candidate: candidate.order_key)
    return found


__all__ = [
    "CROSS_QUEUE",
    "Candidate",
    "FAIR_SHARING",
    "HIERARCHICAL",
    "IN_CLUSTER_QUEUE",
    "RECLAIM_WHILE_BORROWING",
    "RECLAMATION",
    "SAME_QUEUE",
    "classical_candidates",
    "fair_candidates",
    "loop_guard",
    "over_quota",
    "reclaim_allows",
    "uses_needed",
    "within_queue_allows",
]
