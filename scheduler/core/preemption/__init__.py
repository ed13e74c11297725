"""Preemption: which admitted workloads to evict so a pending one fits.

See docs/scheduling.md#preemption and docs/scheduling.md#preemption-under-fair-sharing.

Two callers ask the same question.  Flavor assignment (its quota
classification, docs/scheduling.md#quota-classification) asks it for one
FR that lacks unused quota, to learn the flavor's mode ("Preempt, no
candidates", ``Preempt`` or ``Reclaim``) and its borrowing level once the
targets are gone; nomination (docs/scheduling.md#the-scheduling-cycle) asks
it once more for the chosen assignment, with every FR whose mode is not Fit as the FRs needing
preemption and the workload's whole usage as the request.

The answer comes in three steps, one module each:

* ``candidates``: who may be preempted at all, by policy, classified and in
  the documented order (docs/scheduling.md#preemption-policies,
  docs/scheduling.md#candidate-order);
* ``classical``: the minimal set of docs/scheduling.md#minimal-victim-set
  (remove candidates until the preemptor fits, then give back every victim that is not needed);
* ``fair``: dominant resource shares and the strategies of
  docs/scheduling.md#preemption-under-fair-sharing, used instead
  of ``classical`` when the Configuration enables fair sharing.

The types they share (``Preemptor``, ``PreemptionContext``, ``Target``) live
in ``context``, below all three, and are re-exported here.

Every search runs inside ``Snapshot.trial()``, so the quota tree is always
left exactly as it was found.  A workload already being evicted (its quota
not yet released) stays a candidate and is ordered first, so a preemptor that
waits finds the same victims again instead of choosing new ones.
"""

from __future__ import annotations

from scheduler.core.preemption.candidates import Candidate, classical_candidates, fair_candidates
from scheduler.core.preemption.classical import PlacementFits, minimal_targets
from scheduler.core.preemption.context import (
    PreemptionContext,
    PreemptionHistory,
    Preemptor,
    Target,
)
from scheduler.core.preemption.fair import fair_targets
from scheduler.core.resource_node import borrowing_level
from scheduler.core.resources import FlavorResource, FRValues
from scheduler.core.snapshot import Snapshot


def find_targets(
    ctx: PreemptionContext,
    preemptor: Preemptor,
    requests: FRValues,
    needed: set[FlavorResource],
    placement_fits: PlacementFits | None = None,
) -> tuple[Target, ...]:
    """Victims whose eviction lets ``requests`` fit in the preemptor's CQ; () if none do: pure.

    ``needed`` are the FRs needing preemption; a candidate must use one of them.
    ``placement_fits``: the preemptor's pods must also find room in its
    topology once the victims are gone.  The quota tree is read and
    temporarily changed, always restored.
    """
    if not needed:
        return ()
    if ctx.fair_sharing:
        pool = fair_candidates(ctx, preemptor, needed)
        chosen = fair_targets(preemptor.cq, requests, needed, pool, ctx.strategies, placement_fits)
    else:
        pool = classical_candidates(ctx, preemptor, requests, needed)
        chosen = minimal_targets(preemptor.cq, requests, needed, pool, placement_fits)
    return tuple(Target(workload=c.key, cluster_queue=c.cq_name, reason=c.reason) for c in chosen)


class TargetMemo:
    """``find_targets`` for one preemptor on one unchanged tree, each question answered once.

    Nomination asks the flavor-assignment question (one FR) and then the
    whole-workload one; for a workload with one resource they are the same
    question, and at a thousand queues the candidate search is most of a
    cycle.  Valid only while the tree, the context's exclusions and the
    history stay as they were: the caller makes one per assignment attempt.
    """

    __slots__ = ("ctx", "preemptor", "_answers")

    def __init__(self, ctx: PreemptionContext, preemptor: Preemptor) -> None:
        self.ctx = ctx
        self.preemptor = preemptor
        self._answers: dict[
            tuple[frozenset[tuple[FlavorResource, int]], frozenset[FlavorResource], bool],
            tuple[Target, ...],
        ] = {}

    def targets(
        self,
        requests: FRValues,
        needed: set[FlavorResource],
        placement_fits: PlacementFits | None = None,
    ) -> tuple[Target, ...]:
        key = (frozenset(requests.items()), frozenset(needed), placement_fits is not None)
        answer = self._answers.get(key)
        if answer is None:
            answer = self._answers[key] = find_targets(
                self.ctx, self.preemptor, requests, needed, placement_fits
            )
        return answer

    def simulate_one(self, fr: FlavorResource, amount: int) -> tuple[tuple[Target, ...], int]:
        return simulate_one(self.ctx, self.preemptor, fr, amount, self.targets({fr: amount}, {fr}))


def simulate_one(
    ctx: PreemptionContext,
    preemptor: Preemptor,
    fr: FlavorResource,
    amount: int,
    targets: tuple[Target, ...] | None = None,
) -> tuple[tuple[Target, ...], int]:
    """Quota classification's simulation for one FR: (targets, borrowing level without them): pure.

    ``targets``: ``find_targets`` for ``{fr: amount}``, when the caller has it already.
    """
    if targets is None:
        targets = find_targets(ctx, preemptor, {fr: amount}, {fr})
    node = preemptor.cq.node
    assert node is not None
    if not targets:
        return (), borrowing_level(node, fr, amount)
    with Snapshot.trial() as trial:
        for target in targets:
            record = ctx.records[target.workload]
            victim_node = ctx.cluster_queues[target.cluster_queue].node
            if record.usage and victim_node is not None:
                trial.remove(victim_node, record.usage[target.cluster_queue])
        return targets, borrowing_level(node, fr, amount)


__all__ = [
    "Candidate",
    "PlacementFits",
    "Preemptor",
    "PreemptionContext",
    "PreemptionHistory",
    "Target",
    "TargetMemo",
    "find_targets",
    "simulate_one",
]
