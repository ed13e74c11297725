"""The quota tree: the cohort forest over ClusterQueue and Cohort quotas (pure).

See docs/scheduling.md#the-quota-tree.  The quota cache keeps the ClusterQueues
and what admitted workloads use; this part keeps each ClusterQueue's integer
quota, the Cohort specs and fair-sharing weights, and the forest built from
them (``hierarchy.build_forest``).

The forest is rebuilt lazily, only when a quota or the tree's structure
changed (``ensure_forest``); usage then moves incrementally on ``charge`` and
``release`` (while a rebuild is due, the rebuild counts it instead).  Every
rebuild bumps the quota generation and every release bumps the ClusterQueue's
own generation, which together tell the flavor-scan position that quota may
have changed (``allocatable_generation``).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from scheduler.api.models import Cohort
from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.hierarchy import CohortSpecInfo, Forest, NodeQuota, build_forest, quota_of
from scheduler.core.resource_node import add_usage, remove_usage, subtree_queues
from scheduler.core.resources import FRValues


class QuotaTree:
    """Quotas, Cohort specs and weights, and the cohort forest over them (module docstring)."""

    def __init__(
        self, cluster_queues: Mapping[str, ClusterQueueInfo], usage: Mapping[str, FRValues]
    ) -> None:
        self._cluster_queues = cluster_queues
        """The quota cache's ClusterQueues (shared): the forest's leaves."""
        self._usage = usage
        """The quota cache's usage per ClusterQueue (shared): what a rebuild counts."""
        self._quotas: dict[str, NodeQuota] = {}
        self._cohorts: dict[str, CohortSpecInfo] = {}
        self._cohort_weights: dict[str, Fraction] = {}
        self._forest = Forest()
        self._dirty = True
        self._quota_generation = 0
        self._cq_generation: dict[str, int] = {}

    # --- ClusterQueues and Cohorts -------------------------------------------------

    def place(self, old: ClusterQueueInfo | None, info: ClusterQueueInfo, quota: NodeQuota) -> bool:
        """ClusterQueue ``info`` (replacing ``old``) with ``quota``; whether its quota changed.

        A change the tree does not hold (not its cohort, weight or quota) keeps the
        tree: ``info`` takes over ``old``'s node.
        """
        old_quota = self._quotas.get(info.name)
        self._quotas[info.name] = quota
        if (
            old is not None
            and old.node is not None
            and not self._dirty
            and (old.cohort, old.weight, old_quota) == (info.cohort, info.weight, quota)
        ):
            # A status update (kuota writes each queue's about once a second) or a change the
            # tree does not hold: keep the tree.  Rebuilding it for every such event meant,
            # at a thousand queues, a thousand-node rebuild per event.
            info.node = old.node
        else:
            self._dirty = True
        return old_quota != quota

    def drop(self, name: str) -> None:
        """ClusterQueue ``name`` is gone from the tree."""
        self._quotas.pop(name, None)
        self._dirty = True

    def apply_cohort(self, cohort: Cohort) -> bool:
        """Insert or replace a Cohort's spec (parent, quota, fair-sharing weight).

        True when its parent, quota or weight changed (a status update changes none).
        """
        spec = cohort.spec
        parent = str(spec.parent_name) if spec.parent_name else None
        info = CohortSpecInfo(parent, quota_of(spec.resource_groups))
        sharing = spec.fair_sharing
        weight = Fraction(sharing.weight.as_decimal()) if sharing is not None else Fraction(1)
        changed = (self._cohorts.get(cohort.name), self._cohort_weights.get(cohort.name)) != (
            info,
            weight,
        )
        self._cohorts[cohort.name] = info
        self._cohort_weights[cohort.name] = weight  # weight 1 unless fairSharing says so
        self._dirty = True
        return changed

    def remove_cohort(self, name: str) -> bool:
        """Forget a Cohort's spec (its name stays an implicit cohort while CQs name it)."""
        if self._cohorts.pop(name, None) is None:
            return False
        self._dirty = True
        return True

    def nominal(self, name: str) -> FRValues:
        """ClusterQueue ``name``'s nominal quota per FR: pure."""
        return self._quotas[name].nominal

    # --- usage ---------------------------------------------------------------------

    def charge(self, cq: str, usage: FRValues) -> None:
        """Add ``usage`` to ``cq``'s node (what its quota cannot absorb goes up the tree)."""
        info = self._cluster_queues.get(cq)
        if info is not None and info.node is not None and not self._dirty:
            for fr, amount in usage.items():
                add_usage(info.node, fr, amount)

    def release(self, cq: str, usage: FRValues) -> None:
        """Take ``usage`` off ``cq``'s node; quota may have come free in ``cq``."""
        info = self._cluster_queues.get(cq)
        if info is not None and info.node is not None and not self._dirty:
            for fr, amount in usage.items():
                remove_usage(info.node, fr, amount)
        self._cq_generation[cq] = self._cq_generation.get(cq, 0) + 1

    # --- the forest ----------------------------------------------------------------

    @property
    def forest(self) -> Forest:
        """The cohort forest, rebuilt first if quotas or structure changed."""
        self.ensure_forest()
        return self._forest

    def ensure_forest(self) -> None:
        """Rebuild the cohort forest if quotas or structure changed (usage comes from ``usage``)."""
        if not self._dirty:
            return
        specs = {
            name: (info.cohort, self._quotas[name]) for name, info in self._cluster_queues.items()
        }
        self._forest = build_forest(cluster_queues=specs, cohorts=self._cohorts, usage=self._usage)
        for name, info in self._cluster_queues.items():
            info.node = self._forest.cluster_queues[name]
            info.node.weight = info.weight
        for name, weight in self._cohort_weights.items():
            node = self._forest.cohorts.get(name)
            if node is not None:
                node.weight = weight
        self._dirty = False
        self._quota_generation += 1

    def tree_members(self, name: str) -> list[str]:
        """Names of every CQ in the tree of CQ or cohort ``name`` (sorted): pure."""
        forest = self.forest
        node = forest.cluster_queues.get(name) or forest.cohorts.get(name)
        if node is None:
            return []
        return sorted(subtree_queues(node.root()))

    def allocatable_generation(self, cq: str) -> int:
        """Changes when quota may have been freed or changed for ``cq``: pure."""
        return self._quota_generation + self._cq_generation.get(cq, 0)


__all__ = ["QuotaTree"]
