"""The classical minimal victim set (docs/scheduling.md#minimal-victim-set).

An attempt walks the ordered candidates, removing each allowed one from the
tree until the preemptor fits; then it gives back, newest selection excluded
and from the second-to-last to the first, every victim whose return still
lets the preemptor fit.  What is left is minimal in that sense: no
single victim can be spared.

Two fit tests: ``borrow`` (every FR of the request fits the CQ's unused
quota, borrowing allowed) and ``noBorrow`` (that, and the CQ ends within its
nominal quota).  The plan says which to try, in order:

* no cross-CQ candidates, or ``borrowWithinCohort`` off while P's CQ is not
  strictly below nominal in every needed FR: ``[borrow]``;
* ``borrowWithinCohort`` off and no hierarchical candidate: ``[noBorrow, borrow]``;
* otherwise ``[borrow, noBorrow]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.preemption.candidates import HIERARCHICAL, SAME_QUEUE, Candidate
from scheduler.core.resource_node import QuotaNode, capacity_available
from scheduler.core.resources import FlavorResource, FRValues
from scheduler.core.snapshot import Snapshot, Trial

BORROW, NO_BORROW = "borrow", "noBorrow"

PlacementFits = Callable[[Sequence[str]], bool]
"""Whether the preemptor's pods can be placed in its topology once these workloads are gone."""


def placed(placement_fits: PlacementFits | None, victims: Sequence[Candidate]) -> bool:
    """The topology half of a fit test (always true without one): pure."""
    return placement_fits is None or placement_fits([victim.key for victim in victims])


def fits(node: QuotaNode, requests: FRValues, attempt: str) -> bool:
    """The fit test of ``attempt`` for ``requests`` in CQ ``node`` (current tree): pure."""
    if any(amount > capacity_available(node, fr) for fr, amount in requests.items()):
        return False
    if attempt == NO_BORROW:
        return all(
            node.usage.get(fr, 0) + amount <= node.nominal.get(fr, 0)
            for fr, amount in requests.items()
        )
    return True


def attempt_plan(
    cq: ClusterQueueInfo, needed: set[FlavorResource], candidates: list[Candidate]
) -> list[str]:
    """Which fit tests to try, in order (module docstring): pure."""
    node = cq.node
    assert node is not None
    borrow_on = cq.preemption.borrow_within_cohort.policy != "Never"
    cross = [candidate for candidate in candidates if candidate.group != SAME_QUEUE]
    below_nominal = all(node.usage.get(fr, 0) < node.nominal.get(fr, 0) for fr in needed)
    if not cross or (not borrow_on and not below_nominal):
        return [BORROW]
    if not borrow_on and not any(candidate.group == HIERARCHICAL for candidate in cross):
        return [NO_BORROW, BORROW]
    return [BORROW, NO_BORROW]


def _within_nominal(node: QuotaNode, needed: set[FlavorResource]) -> bool:
    return all(node.usage.get(fr, 0) <= node.nominal.get(fr, 0) for fr in needed)


def _shielded(victim: QuotaNode, preemptor: QuotaNode, needed: set[FlavorResource]) -> bool:
    """Whether a cohort between the victim's CQ and the common ancestor is within quota: pure.

    Such a cohort shields the victim; "between" excludes both ends.
    """
    ancestors_of_preemptor = set()
    node: QuotaNode | None = preemptor
    while node is not None:
        ancestors_of_preemptor.add(id(node))
        node = node.parent
    node = victim.parent
    while node is not None and id(node) not in ancestors_of_preemptor:
        if all(node.usage.get(fr, 0) <= node.subtree_quota.get(fr, 0) for fr in needed):
            return True
        node = node.parent
    return False


def give_back_unneeded(
    trial: Trial,
    node: QuotaNode,
    requests: FRValues,
    attempt: str,
    targets: list[Candidate],
    placement_fits: PlacementFits | None = None,
) -> list[Candidate]:
    """Fill back: return victims, second-to-last to first, while the preemptor still fits.

    Linear in the number of targets: a preemptor at its borrowing limit can
    collect thousands of cross-queue candidates before its own queue's, and
    nearly all of them are given back here.
    """
    returned: set[int] = set()
    for index in range(len(targets) - 2, -1, -1):
        victim = targets[index]
        trial.add(victim.node, victim.usage)
        kept = [t for i, t in enumerate(targets) if i != index and i not in returned]
        if fits(node, requests, attempt) and placed(placement_fits, kept):
            returned.add(index)
        else:
            trial.remove(victim.node, victim.usage)
    return [victim for index, victim in enumerate(targets) if index not in returned]


def minimal_targets(
    cq: ClusterQueueInfo,
    requests: FRValues,
    needed: set[FlavorResource],
    candidates: list[Candidate],
    placement_fits: PlacementFits | None = None,
) -> list[Candidate]:
    """The minimal victim set for ``requests`` in ``cq``, or [] when no attempt succeeds.

    ``placement_fits``: the preemptor's topology must also hold its pods
    (docs/concepts.md#topology-aware-scheduling).

    Pure: the quota tree is changed during the search and always restored.
    """
    node = cq.node
    assert node is not None
    for attempt in attempt_plan(cq, needed, candidates):
        with Snapshot.trial() as trial:
            targets: list[Candidate] = []
            for candidate in candidates:
                if candidate.group != SAME_QUEUE:
                    if attempt == BORROW and candidate.only_without_borrowing:
                        continue
                    if _within_nominal(candidate.node, needed) or _shielded(
                        candidate.node, node, needed
                    ):
                        continue
                trial.remove(candidate.node, candidate.usage)
                targets.append(candidate)
                if fits(node, requests, attempt) and placed(placement_fits, targets):
                    return give_back_unneeded(
                        trial, node, requests, attempt, targets, placement_fits
                    )
    return []


__all__ = [
    "BORROW",
    "NO_BORROW",
    "PlacementFits",
    "attempt_plan",
    "fits",
    "give_back_unneeded",
    "minimal_targets",
    "placed",
]
