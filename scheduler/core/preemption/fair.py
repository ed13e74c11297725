"""Fair-sharing victim selection (docs/scheduling.md#preemption-under-fair-sharing).

With the preemptor P simulated as admitted in its CQ ``Q``, target CQs are
visited from the most unfair down (``_next_target``): at each cohort the
borrowing child CQ with the highest DRS (ties: the one whose first remaining
candidate sorts first) competes with the highest-DRS child cohort (ties: the
last in name order), and a cohort wins ties and is descended into.  From a
target ``T`` the first strategy takes a victim when

* ``T`` is ``Q`` itself (``InClusterQueue``), or
* ``Q`` with P stays within its nominal quota (``InCohortReclamation``), or
* the strategy passes between ``Q'`` and ``T'``, the children of their lowest
  common ancestor (``InCohortFairSharing``):
  ``LessThanOrEqualToFinalShare``: DRS(Q') <= DRS(T' without the victim);
  ``LessThanInitialShare``: DRS(Q') < DRS(T').

Candidates refused go to a retry list that a second strategy, if configured,
visits once per target CQ.  Once P fits, P's simulated usage is undone and
the fill-back of the classical search drops victims that are not needed.  Neither strategy
can make two workloads preempt each other back and forth.
"""

from __future__ import annotations

from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.fair_share import Share, dominant_resource_share
from scheduler.core.preemption.candidates import (
    FAIR_SHARING,
    IN_CLUSTER_QUEUE,
    RECLAMATION,
    Candidate,
)
from scheduler.core.preemption.classical import (
    BORROW,
    PlacementFits,
    fits,
    give_back_unneeded,
    placed,
)
from scheduler.core.preemption.context import (
    DEFAULT_STRATEGIES,
    LESS_THAN_INITIAL_SHARE,
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
)
from scheduler.core.resource_node import QuotaNode
from scheduler.core.resources import FlavorResource, FRValues
from scheduler.core.snapshot import Snapshot, Trial


def strategy_passes(
    strategy: str, preemptor_new: Share, target_old: Share, target_new: Share
) -> bool:
    """Whether ``strategy`` allows the preemption (the strategy table): pure."""
    if strategy == LESS_THAN_OR_EQUAL_TO_FINAL_SHARE:
        return preemptor_new.key <= target_new.key
    return preemptor_new.key < target_old.key


def _path(node: QuotaNode) -> list[QuotaNode]:
    path = [node]
    while path[-1].parent is not None:
        path.append(path[-1].parent)
    return path


def lca_children(preemptor: QuotaNode, target: QuotaNode) -> tuple[QuotaNode, QuotaNode]:
    """``(Q', T')``: the children of the lowest common ancestor on the paths to Q and T: pure."""
    preemptor_path = _path(preemptor)
    on_preemptor_path = {id(node): index for index, node in enumerate(preemptor_path)}
    below = target
    for node in _path(target)[1:]:
        if id(node) in on_preemptor_path:
            return preemptor_path[on_preemptor_path[id(node)] - 1], below
        below = node
    return preemptor_path[-1], below


class _Search:
    """State of one fair-sharing search: remaining candidates per CQ and dropped nodes."""

    def __init__(self, preemptor: QuotaNode, remaining: dict[str, list[Candidate]]) -> None:
        self.preemptor = preemptor
        self.remaining = remaining
        self.dropped: set[int] = set()
        self.on_path = {id(node) for node in _path(preemptor)}
        self.cache: dict[int, dict[str, int]] = {}

    def share(self, node: QuotaNode) -> Share:
        return dominant_resource_share(node, self.cache)

    def next_target(self) -> QuotaNode | None:
        """The next target CQ, most unfair first, with current shares; None: the root is dropped."""
        root = self.preemptor.root()
        if root is self.preemptor:
            return root if self.remaining.get(root.name) else None
        while id(root) not in self.dropped:
            node = root
            while True:
                best_queue: tuple[QuotaNode, Share] | None = None
                best_cohort: tuple[QuotaNode, Share] | None = None
                for child in sorted(node.children, key=lambda item: item.name):
                    if id(child) in self.dropped:
                        continue
                    share = self.share(child)
                    if not child.is_cohort:
                        if not self.remaining.get(child.name) or (
                            child is not self.preemptor and not share.borrowing
                        ):
                            self.dropped.add(id(child))
                            continue
                        if (
                            best_queue is None
                            or share.key > best_queue[1].key
                            or (
                                share.key == best_queue[1].key
                                and self.remaining[child.name][0].order_key
                                < self.remaining[best_queue[0].name][0].order_key
                            )
                        ):
                            best_queue = (child, share)
                    else:
                        if not share.borrowing and id(child) not in self.on_path:
                            self.dropped.add(id(child))
                            continue
                        if best_cohort is None or share.key >= best_cohort[1].key:
                            best_cohort = (child, share)
                if best_queue is None and best_cohort is None:
                    self.dropped.add(id(node))
                    break
                if best_cohort is not None and (
                    best_queue is None or best_cohort[1].key >= best_queue[1].key
                ):
                    node = best_cohort[0]
                    continue
                assert best_queue is not None
                return best_queue[0]
        return None


def _preemptor_fits(trial: Trial, node: QuotaNode, requests: FRValues) -> bool:
    """With P's simulated usage taken off again, does P fit (borrowing allowed)?"""
    trial.remove(node, requests)
    try:
        return fits(node, requests, BORROW)
    finally:
        trial.add(node, requests)


def _take(trial: Trial, victims: list[Candidate], candidate: Candidate, reason: str) -> None:
    trial.remove(candidate.node, candidate.usage)
    candidate.reason = reason
    victims.append(candidate)


def fair_targets(
    cq: ClusterQueueInfo,
    requests: FRValues,
    needed: set[FlavorResource],
    candidates: list[Candidate],
    strategies: tuple[str, ...],
    placement_fits: PlacementFits | None = None,
) -> list[Candidate]:
    """The fair-sharing victim set for ``requests`` in ``cq``, or [] when P cannot be made to fit.

    Pure: the quota tree is changed during the search and always restored.
    """
    queue_node = cq.node
    assert queue_node is not None
    strategies = strategies or DEFAULT_STRATEGIES
    remaining: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        remaining.setdefault(candidate.cq_name, []).append(candidate)
    with Snapshot.trial() as trial:
        trial.add(queue_node, requests)
        victims: list[Candidate] = []
        retry: dict[str, list[Candidate]] = {}
        fitted = False
        search = _Search(queue_node, remaining)
        while not fitted:
            target = search.next_target()
            if target is None:
                break
            pool = remaining[target.name]
            if target is queue_node:
                _take(trial, victims, pool.pop(0), IN_CLUSTER_QUEUE)
            elif all(queue_node.usage.get(fr, 0) <= queue_node.nominal.get(fr, 0) for fr in needed):
                _take(trial, victims, pool.pop(0), RECLAMATION)
            else:
                preemptor_side, target_side = lca_children(queue_node, target)
                preemptor_new, target_old = search.share(preemptor_side), search.share(target_side)
                if preemptor_new.infinite and not target_old.infinite:
                    retry.setdefault(target.name, []).extend(pool)
                    pool.clear()
                    continue
                taken = False
                while pool and not taken:
                    candidate = pool.pop(0)
                    trial.remove(candidate.node, candidate.usage)
                    target_new = search.share(target_side)
                    trial.add(candidate.node, candidate.usage)
                    if strategy_passes(strategies[0], preemptor_new, target_old, target_new):
                        _take(trial, victims, candidate, FAIR_SHARING)
                        taken = True
                    else:
                        retry.setdefault(target.name, []).append(candidate)
                if not taken:
                    continue
            fitted = _preemptor_fits(trial, queue_node, requests) and placed(
                placement_fits, victims
            )
        if not fitted and len(strategies) > 1:
            search = _Search(queue_node, retry)
            while not fitted:
                target = search.next_target()
                if target is None:
                    break
                preemptor_side, target_side = lca_children(queue_node, target)
                if search.share(preemptor_side).key < search.share(target_side).key:
                    _take(trial, victims, retry[target.name][0], FAIR_SHARING)
                    fitted = _preemptor_fits(trial, queue_node, requests) and placed(
                        placement_fits, victims
                    )
                search.dropped.add(id(target))
        if not fitted:
            return []
        trial.remove(queue_node, requests)
        return give_back_unneeded(trial, queue_node, requests, BORROW, victims, placement_fits)


__all__ = [
    "DEFAULT_STRATEGIES",
    "LESS_THAN_INITIAL_SHARE",
    "LESS_THAN_OR_EQUAL_TO_FINAL_SHARE",
    "fair_targets",
    "lca_children",
    "strategy_passes",
]
