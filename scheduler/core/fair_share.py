"""Dominant resource share and the fair-sharing admission order.

See docs/scheduling.md#dominant-resource-share and
docs/scheduling.md#admission-order-under-fair-sharing.

A node's DRS says how much it borrows from its parent, relative to what the
parent could lend: per resource name (flavors summed) ``borrowed x 1000 /
lendable``, the largest ratio wins, divided by the node's weight.  A weight
of 0 makes any borrowing infinitely unfair, yet two such nodes still compare
by their unweighted ratios.  ``Share.key`` is that comparison as one tuple.

kuota computes the ratio exactly (``Fraction``), not with Kueue's integer
division; ties the spec's examples rely on (111 <= 111) hold either way.

The admission order is a tournament per cohort tree: at each cohort the
contenders are the winners of its child cohorts and the entries of its child
CQs; a contender whose node does not borrow on its requested FRs wins, then
lower DRS, higher priority, earlier timestamp, first seen.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Generic, TypeVar

from scheduler.core.resource_node import QuotaNode, potential
from scheduler.core.resources import FRValues
from scheduler.core.snapshot import Snapshot

MAX_INT64 = 9223372036854775807


@dataclass(frozen=True, slots=True)
class Share:
    """One DRS value."""

    borrowing: bool
    unweighted: Fraction
    infinite: bool
    """Weight 0 and borrowing."""
    value: Fraction
    """``unweighted / weight`` (0 when ``infinite``; see ``key``)."""

    @property
    def key(self) -> tuple[int, Fraction]:
        """Comparison key: infinite shares above finite ones: pure.

        Two infinite shares compare by ``unweighted``.
        """
        return (1, self.unweighted) if self.infinite else (0, self.value)

    def weighted_share(self) -> int:
        """``status.fairSharing.weightedShare``: ``ceil(share)``, or max int64 for +inf: pure."""
        return MAX_INT64 if self.infinite else math.ceil(self.value)

    def precise(self) -> float:
        """The share as Kueue's weighted-share gauges report it (+inf when infinite): pure."""
        return math.inf if self.infinite else float(self.value)


ZERO = Share(borrowing=False, unweighted=Fraction(0), infinite=False, value=Fraction(0))


def lendable(parent: QuotaNode) -> dict[str, int]:
    """Per resource name, what ``parent`` could give a child: pure.

    The sum, over the root's flavors, of their potential.
    """
    totals: dict[str, int] = {}
    for fr in parent.root().subtree_quota:
        totals[fr[1]] = totals.get(fr[1], 0) + potential(parent, fr)
    return totals


def dominant_resource_share(
    node: QuotaNode, lendable_cache: dict[int, dict[str, int]] | None = None
) -> Share:
    """DRS of ``node`` with the tree as it is now: pure."""
    parent = node.parent
    if parent is None:
        return ZERO
    borrowed: dict[str, int] = {}
    for fr, quota in node.subtree_quota.items():
        over = node.usage.get(fr, 0) - quota
        if over > 0:
            borrowed[fr[1]] = borrowed.get(fr[1], 0) + over
    if not borrowed:
        return ZERO
    if lendable_cache is not None and id(parent) in lendable_cache:
        lend = lendable_cache[id(parent)]
    else:
        lend = lendable(parent)
        if lendable_cache is not None:
            lendable_cache[id(parent)] = lend
    best = Fraction(0)
    for resource in sorted(borrowed):
        total = lend.get(resource, 0)
        if total > 0:
            best = max(best, Fraction(borrowed[resource] * 1000, total))
    if best == 0:
        return Share(borrowing=True, unweighted=best, infinite=False, value=best)
    if node.weight == 0:
        return Share(borrowing=True, unweighted=best, infinite=True, value=Fraction(0))
    return Share(borrowing=True, unweighted=best, infinite=False, value=best / node.weight)


def borrows_on(node: QuotaNode, frs: FRValues) -> bool:
    """Whether ``node`` uses more than its subtree quota on one of ``frs``: pure."""
    return any(node.usage.get(fr, 0) > node.subtree_quota.get(fr, 0) for fr in frs)


E = TypeVar("E")


@dataclass(slots=True)
class FairEntry(Generic[E]):
    """One entry of the tournament: the CQ node, its usage if admitted, priority and timestamp."""

    entry: E
    node: QuotaNode
    usage: FRValues
    priority: int
    timestamp: datetime


def next_entry(entries: Sequence[FairEntry[E]]) -> FairEntry[E]:
    """The entry to process next under fair sharing: pure (the tree is restored)."""
    first = min(entries, key=lambda item: item.node.name)
    if first.node.parent is None:
        return first
    root = first.node.root()
    in_tree = [item for item in entries if item.node.root() is root]
    records: dict[int, dict[int, tuple[bool, tuple[int, Fraction]]]] = {}
    cache: dict[int, dict[str, int]] = {}
    for index, item in enumerate(in_tree):
        with Snapshot.trial() as trial:
            trial.add(item.node, item.usage)
            per_level: dict[int, tuple[bool, tuple[int, Fraction]]] = {}
            child = item.node
            while child.parent is not None:
                per_level[id(child.parent)] = (
                    borrows_on(child, item.usage),
                    dominant_resource_share(child, cache).key,
                )
                child = child.parent
            records[index] = per_level
    return _tournament(root, list(enumerate(in_tree)), records)


def _tournament(
    cohort: QuotaNode,
    items: list[tuple[int, FairEntry[E]]],
    records: dict[int, dict[int, tuple[bool, tuple[int, Fraction]]]],
) -> FairEntry[E]:
    contenders: list[tuple[int, FairEntry[E]]] = []
    for child in sorted(cohort.children, key=lambda node: (node.is_cohort, node.name)):
        if child.is_cohort:
            below = [(index, item) for index, item in items if _under(item.node, child)]
            if below:
                winner = _tournament(child, below, records)
                contenders.append(next((index, item) for index, item in below if item is winner))
        else:
            contenders.extend((index, item) for index, item in items if item.node is child)

    def rank(pair: tuple[int, FairEntry[E]]) -> tuple[bool, tuple[int, Fraction], int, datetime]:
        index, item = pair
        borrows, share = records[index][id(cohort)]
        return (borrows, share, -item.priority, item.timestamp)

    best = contenders[0]
    for pair in contenders[1:]:
        if rank(pair) < rank(best):
            best = pair
    return best[1]


def _under(node: QuotaNode, ancestor: QuotaNode) -> bool:
    current: QuotaNode | None = node
    while current is not None:
        if current is ancestor:
            return True
        current = current.parent
    return False


__all__ = [
    "FairEntry",
    "MAX_INT64",
    "Share",
    "ZERO",
    "borrows_on",
    "dominant_resource_share",
    "lendable",
    "next_entry",
]
