"""The quota maths of one node of the cohort tree.

See docs/scheduling.md#the-quota-tree, docs/scheduling.md#available-capacity
and docs/scheduling.md#borrowing-level.

ClusterQueues and Cohorts form a forest.  Every node keeps, per FR, what it
was configured with (``nominal``, optional ``borrowing_limit`` and
``lending_limit``) and two derived numbers:

* ``subtree_quota``: a CQ's nominal; a cohort's nominal plus what each child
  lends it (``SubtreeQuota(k) - LocalQuota(k)``);
* ``local_quota``: the guaranteed part a lending limit keeps out of the
  parent's reach, ``max(0, SubtreeQuota - LendingLimit)`` (0 without a limit).

``usage`` of a CQ is the sum of its reserving workloads; ``usage`` of a cohort
is what its children could not absorb in their guaranteed quota:
``sum(max(0, Usage(k) - LocalQuota(k)))``.  ``add_usage`` / ``remove_usage``
keep that invariant incrementally (only the excess over a node's guaranteed
quota travels upward), so a cycle never recomputes the tree.

All values are Python ints (docs/scheduling.md#quantities: no overflow, no floats).  The same
functions serve the live cache and the cycle's what-if changes.
"""

from __future__ import annotations

from fractions import Fraction

from scheduler.core.resources import FlavorResource, FRValues


class QuotaNode:
    """One ClusterQueue or Cohort in the resource tree."""

    __slots__ = (
        "name",
        "is_cohort",
        "parent",
        "children",
        "nominal",
        "borrowing_limit",
        "lending_limit",
        "subtree_quota",
        "local_quota",
        "usage",
        "height",
        "weight",
    )

    def __init__(self, name: str, *, is_cohort: bool) -> None:
        self.name = name
        self.is_cohort = is_cohort
        self.parent: QuotaNode | None = None
        self.children: list[QuotaNode] = []
        self.nominal: FRValues = {}
        self.borrowing_limit: FRValues = {}
        self.lending_limit: FRValues = {}
        self.subtree_quota: FRValues = {}
        self.local_quota: FRValues = {}
        self.usage: FRValues = {}
        self.height = 0
        self.weight: Fraction = Fraction(1)
        """``spec.fairSharing.weight``; 0 makes any borrowing share infinite.

        See docs/scheduling.md#weights.
        """

    def __repr__(self) -> str:
        kind = "Cohort" if self.is_cohort else "ClusterQueue"
        return f"<{kind} {self.name}>"

    def root(self) -> QuotaNode:
        """The root of this node's tree: pure."""
        node = self
        while node.parent is not None:
            node = node.parent
        return node


def subtree_queues(node: QuotaNode) -> list[str]:
    """Names of the ClusterQueues at or under ``node`` (unordered): pure."""
    stack, found = [node], []
    while stack:
        current = stack.pop()
        if current.is_cohort:
            stack.extend(current.children)
        else:
            found.append(current.name)
    return found


def compute_quotas(node: QuotaNode) -> None:
    """Fill ``subtree_quota``, ``local_quota`` and ``height`` bottom-up for ``node``'s subtree.

    Invariant after the call: for every FR anywhere below ``node``, the FR is a
    key of ``node.subtree_quota`` (possibly 0), so the root enumerates all FRs.
    """
    subtree = dict(node.nominal)
    height = 0
    for child in node.children:
        compute_quotas(child)
        for fr, quota in child.subtree_quota.items():
            subtree[fr] = subtree.get(fr, 0) + quota - child.local_quota.get(fr, 0)
        height = max(height, child.height + 1 if child.is_cohort else 1)
    node.subtree_quota = subtree
    node.local_quota = {
        fr: max(0, quota - node.lending_limit[fr])
        for fr, quota in subtree.items()
        if fr in node.lending_limit
    }
    node.height = height


def recompute_cohort_usage(node: QuotaNode) -> None:
    """Rebuild cohort usage bottom-up from the CQs' usage (CQ usage is the source of truth).

    Invariant: ``Usage(cohort) = sum over children k of max(0, Usage(k) - LocalQuota(k))``.
    """
    if not node.is_cohort:
        return
    usage: FRValues = {}
    for child in node.children:
        recompute_cohort_usage(child)
        for fr, used in child.usage.items():
            stored = used - child.local_quota.get(fr, 0)
            if stored > 0:
                usage[fr] = usage.get(fr, 0) + stored
    node.usage = usage


def local_available(node: QuotaNode, fr: FlavorResource) -> int:
    """Guaranteed quota of ``node`` not yet used, ``max(0, LocalQuota - Usage)``: pure."""
    return max(0, node.local_quota.get(fr, 0) - node.usage.get(fr, 0))


def add_usage(node: QuotaNode, fr: FlavorResource, amount: int) -> None:
    """Charge ``amount`` of ``fr`` to ``node``.

    What its guaranteed (local) quota cannot absorb is charged to the parent.
    """
    current: QuotaNode | None = node
    while current is not None:
        free_locally = local_available(current, fr)
        current.usage[fr] = current.usage.get(fr, 0) + amount
        amount -= free_locally
        if amount <= 0:
            return
        current = current.parent


def remove_usage(node: QuotaNode, fr: FlavorResource, amount: int) -> None:
    """Release ``amount`` of ``fr`` from ``node``.

    The parent gives back ``min(amount, Usage - LocalQuota)`` when positive.
    """
    current: QuotaNode | None = node
    while current is not None:
        stored_in_parent = min(amount, current.usage.get(fr, 0) - current.local_quota.get(fr, 0))
        current.usage[fr] = current.usage.get(fr, 0) - amount
        amount = stored_in_parent
        if amount <= 0:
            return
        current = current.parent


def available(node: QuotaNode, fr: FlavorResource) -> int:
    """Available capacity (may be negative after over-admission): pure.

    A root offers ``SubtreeQuota - Usage``; a child offers its unused
    guaranteed quota plus what the parent offers, the latter capped by its
    borrowing limit (what it lends, minus what it already uses there, plus the
    limit).
    """
    if node.parent is None:
        return node.subtree_quota.get(fr, 0) - node.usage.get(fr, 0)
    from_parent = available(node.parent, fr)
    limit = node.borrowing_limit.get(fr)
    if limit is not None:
        local = node.local_quota.get(fr, 0)
        stored_in_parent = node.subtree_quota.get(fr, 0) - local
        used_in_parent = max(0, node.usage.get(fr, 0) - local)
        from_parent = min(from_parent, stored_in_parent - used_in_parent + limit)
    return local_available(node, fr) + from_parent


def capacity_available(node: QuotaNode, fr: FlavorResource) -> int:
    """``Available(cq) = max(0, available(cq))``, the unused quota a CQ can take now: pure."""
    return max(0, available(node, fr))


def potential(node: QuotaNode, fr: FlavorResource) -> int:
    """Maximum capacity of ``fr`` for ``node`` ignoring all usage: pure."""
    if node.parent is None:
        return node.subtree_quota.get(fr, 0)
    result = node.local_quota.get(fr, 0) + potential(node.parent, fr)
    limit = node.borrowing_limit.get(fr)
    if limit is not None:
        result = min(result, node.subtree_quota.get(fr, 0) + limit)
    return result


def borrowing_level(node: QuotaNode, fr: FlavorResource, amount: int) -> int:
    """Height of the smallest subtree from ``node`` whose quota absorbs ``amount`` more: pure.

    0 means "fits in the CQ's nominal quota" (or the CQ has no cohort).
    """
    found = _absorbing_ancestor(node, fr, amount)
    if found is None:
        return node.root().height
    return found.height if found is not node else 0


def may_reclaim_in_hierarchy(node: QuotaNode, fr: FlavorResource, amount: int) -> bool:
    """True when the subtree absorbing ``amount`` is not the root: pure.

    Reclamation is then possible.
    """
    if node.parent is None:
        return False
    found = _absorbing_ancestor(node, fr, amount)
    return found is not None and found.parent is not None


def _absorbing_ancestor(node: QuotaNode, fr: FlavorResource, amount: int) -> QuotaNode | None:
    """The node of the borrowing-level walk that absorbs ``amount``, or None: pure.

    ``node`` itself for level 0.
    """
    if node.usage.get(fr, 0) + amount <= node.nominal.get(fr, 0) or node.parent is None:
        return node
    remaining = amount - local_available(node, fr)
    ancestor: QuotaNode | None = node.parent
    while ancestor is not None:
        if ancestor.usage.get(fr, 0) + remaining <= ancestor.subtree_quota.get(fr, 0):
            return ancestor
        remaining -= local_available(ancestor, fr)
        ancestor = ancestor.parent
    return None


def borrowed(node: QuotaNode, fr: FlavorResource) -> int:
    """``max(0, Usage - Nominal)`` for a CQ with a cohort, else 0: pure."""
    if node.parent is None:
        return 0
    return max(0, node.usage.get(fr, 0) - node.nominal.get(fr, 0))


__all__ = [
    "QuotaNode",
    "add_usage",
    "available",
    "borrowed",
    "borrowing_level",
    "capacity_available",
    "compute_quotas",
    "local_available",
    "may_reclaim_in_hierarchy",
    "potential",
    "recompute_cohort_usage",
    "remove_usage",
]
