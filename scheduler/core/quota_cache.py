"""The quota cache: what ClusterQueues may use, and what admitted workloads use.

See docs/scheduling.md#the-quota-tree.

Kueue keeps quota in a cache apart from its queues; so does kuota.  The cache
holds the ResourceFlavors, every ClusterQueue reduced to a
``ClusterQueueInfo`` with its integer quota, the Cohort specs and fair-sharing
weights, the admitted workloads and their usage per ClusterQueue, the known
AdmissionChecks and the labels of Namespaces (for ``namespaceSelector``).
Its ``topology`` part (``tas.cache``) keeps nodes, Topologies and what
admitted placements hold (docs/concepts.md#topology-aware-scheduling);
``charge`` and ``release`` move quota and placement together.

The cohort forest (``hierarchy.build_forest``) is rebuilt lazily, only when a
quota or the tree's structure changed (``ensure_forest``); usage then moves
incrementally on ``charge`` and ``release``.  Every rebuild bumps the quota
generation and every release bumps the ClusterQueue's own generation, which
together tell the flavor-scan position that quota may have changed.

The cache knows nothing about queues.  Its mutations return what they
affected (the ClusterQueues whose admissibility may have changed), and the
engine turns that into the requeue events of the queue manager.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from fractions import Fraction

from scheduler.api.models import ClusterQueue, Cohort, ResourceFlavorSpec
from scheduler.api.quantity import Quantity
from scheduler.core.admission_checks import CheckInfo, inactive_fragments, uses_multikueue
from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.hierarchy import CohortSpecInfo, Forest, NodeQuota, build_forest, quota_of
from scheduler.core.node_matching import selector_matches
from scheduler.core.resource_node import add_usage, remove_usage
from scheduler.core.resources import FRValues, to_quantity
from scheduler.core.state import ADMITTED, WorkloadRecord
from scheduler.core.tas.cache import DomainCharge, TopologyCache

_EARLIEST = datetime.min.replace(tzinfo=UTC)
_METADATA_NAME = "kubernetes.io/metadata.name"

QuantitiesByFlavor = dict[str, dict[str, Quantity]]
"""Flavor -> resource -> quantity, as ``ClusterQueue.status`` reports usage."""


class QuotaCache:
    """Flavors, ClusterQueues, Cohorts, the cohort forest and admitted usage (module docstring)."""

    def __init__(self) -> None:
        self.flavors: dict[str, ResourceFlavorSpec] = {}
        self.cluster_queues: dict[str, ClusterQueueInfo] = {}
        """Every ClusterQueue applied and not yet dropped (terminating ones included)."""
        self.admitted: dict[str, set[str]] = {}
        """ClusterQueue -> keys of the workloads that hold quota in it."""
        self.usage: dict[str, FRValues] = {}
        """ClusterQueue -> usage per FR of its admitted workloads."""
        self._quotas: dict[str, NodeQuota] = {}
        self._terminating: set[str] = set()
        self._cohorts: dict[str, CohortSpecInfo] = {}
        self._cohort_weights: dict[str, Fraction] = {}
        self._admission_checks: dict[str, CheckInfo] = {}
        self._namespaces: dict[str, Mapping[str, str]] = {}
        self._forest = Forest()
        self._forest_dirty = True
        self._quota_generation = 0
        self._cq_generation: dict[str, int] = {}
        self._reservations = 0
        self.topology = TopologyCache()

    # --- ClusterQueues, Cohorts, flavors, checks, namespaces -----------------------

    def apply_cluster_queue(self, cq: ClusterQueue) -> bool:
        """Insert or replace a ClusterQueue; a terminating one of that name lives again.

        True when what preemption depends on changed (new, or another cohort,
        quota or preemption policy); a status update changes none of them.
        """
        old, info, quota = (
            self.cluster_queues.get(cq.name),
            ClusterQueueInfo(cq),
            quota_of(cq.spec.resource_groups),
        )
        old_quota = self._quotas.get(cq.name)
        changed = (
            old is None
            or (old.cohort, old.preemption) != (info.cohort, info.preemption)
            or old_quota != quota
        )
        self.cluster_queues[cq.name] = info
        self._quotas[cq.name] = quota
        self._terminating.discard(cq.name)
        if (
            old is not None
            and old.node is not None
            and not self._forest_dirty
            and (old.cohort, old.weight, old_quota) == (info.cohort, info.weight, quota)
        ):
            # A status update (kuota writes each queue's about once a second) or a change the
            # tree does not hold: keep the tree.  Rebuilding it for every such event meant,
            # at a thousand queues, a thousand-node rebuild per event.
            info.node = old.node
        else:
            self._forest_dirty = True
        return changed

    def remove_cluster_queue(self, name: str) -> bool:
        """Delete a ClusterQueue; False if unknown.

        One that still holds admitted workloads terminates: it admits nothing
        and is dropped when the last of them releases its quota.
        """
        if name not in self.cluster_queues:
            return False
        if self.admitted.get(name):
            self._terminating.add(name)
        else:
            self._drop_cluster_queue(name)
        return True

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
        self._forest_dirty = True
        return changed

    def remove_cohort(self, name: str) -> bool:
        """Forget a Cohort's spec (its name stays an implicit cohort while CQs name it)."""
        if self._cohorts.pop(name, None) is None:
            return False
        self._forest_dirty = True
        return True

    def apply_flavor(self, name: str, spec: ResourceFlavorSpec | None) -> list[str]:
        """Insert, replace or (``spec`` None) delete a flavor; the ClusterQueues it changed."""
        old = self.flavors.pop(name, None) if spec is None else self.flavors.get(name)
        if spec is not None:
            self.flavors[name] = spec
        if old == spec:
            return []
        self.topology.apply_flavor(name, spec)
        return self.using_flavors([name])

    def using_flavors(self, names: list[str]) -> list[str]:
        """The ClusterQueues that list any of the flavors ``names``: pure."""
        wanted = set(names)
        return [cq for cq, info in self.cluster_queues.items() if wanted & set(info.flavor_names)]

    def tas_cluster_queues(self) -> list[str]:
        """The ClusterQueues with a TAS flavor (whose room changes with nodes and pods): pure."""
        return [
            cq
            for cq, info in self.cluster_queues.items()
            if any(self.topology.flavor(name) is not None for name in info.flavor_names)
        ]

    def topology_delayed(self, cq: str) -> bool:
        """Whether TAS placement is left to a MultiKueue worker cluster: pure."""
        info = self.cluster_queues.get(cq)
        return info is not None and uses_multikueue(info.check_rules, self._admission_checks)

    def topology_levels(self, cq: str) -> dict[str, tuple[str, ...] | None]:
        """The levels of each TAS flavor of ``cq`` (None: its Topology is missing): pure."""
        info = self.cluster_queues.get(cq)
        if info is None:
            return {}
        return {
            name: self.topology.levels(name)
            for name in info.flavor_names
            if self.topology.flavor(name) is not None
        }

    def set_admission_check(self, name: str, check: CheckInfo | None) -> list[str]:
        """Record an AdmissionCheck (None: it is gone); the ClusterQueues that reference it."""
        if self._admission_checks.get(name) == check:
            return []
        if check is None:
            del self._admission_checks[name]
        else:
            self._admission_checks[name] = check
        return [cq for cq, info in self.cluster_queues.items() if name in info.admission_checks]

    def set_namespace_labels(self, namespace: str, labels: Mapping[str, str] | None) -> list[str]:
        """Replace (or, None, forget) a Namespace's labels; the ClusterQueues that now select it."""
        old = self.namespace_labels(namespace)
        if labels is None:
            self._namespaces.pop(namespace, None)
        else:
            self._namespaces[namespace] = dict(labels)
        new = self.namespace_labels(namespace)
        return [
            cq
            for cq, info in self.cluster_queues.items()
            if not selector_matches(info.namespace_selector, old)
            and selector_matches(info.namespace_selector, new)
        ]

    # --- admitted usage ----------------------------------------------------------

    def charge(
        self,
        record: WorkloadRecord,
        cq: str,
        usage: FRValues,
        reserved_at: datetime | None,
        placements: Sequence[DomainCharge] = (),
    ) -> None:
        """Count ``usage`` of the admitted ``record`` against ``cq`` (totals and quota tree).

        ``placements``: what its pods hold in TAS flavors' domains.
        """
        self.topology.charge(record.key, placements)
        self._reservations += 1
        record.reserved_at = (reserved_at or _EARLIEST, self._reservations)
        record.usage = {cq: usage}
        totals = self.usage.setdefault(cq, {})
        for fr, amount in usage.items():
            totals[fr] = totals.get(fr, 0) + amount
        self.admitted.setdefault(cq, set()).add(record.key)
        info = self.cluster_queues.get(cq)
        if info is not None and info.node is not None and not self._forest_dirty:
            for fr, amount in usage.items():
                add_usage(info.node, fr, amount)

    def release(self, record: WorkloadRecord) -> list[str]:
        """Give back the quota ``record`` holds; the ClusterQueues it held quota in.

        A terminating ClusterQueue whose last workload leaves is dropped here.
        """
        held = self.topology.charges(record.key)
        self.topology.release(record.key)
        sharing = self.using_flavors(sorted({charge.flavor for charge in held}))
        if record.state != ADMITTED or not record.usage:
            return sharing
        released = list(record.usage) + [cq for cq in sharing if cq not in record.usage]
        for cq, usage in record.usage.items():
            totals = self.usage.get(cq, {})
            for fr, amount in usage.items():
                totals[fr] = totals.get(fr, 0) - amount
            self.admitted.get(cq, set()).discard(record.key)
            info = self.cluster_queues.get(cq)
            if info is not None and info.node is not None and not self._forest_dirty:
                for fr, amount in usage.items():
                    remove_usage(info.node, fr, amount)
            self._cq_generation[cq] = self._cq_generation.get(cq, 0) + 1
            if cq in self._terminating and not self.admitted.get(cq):
                self._drop_cluster_queue(cq)
        record.usage = None
        return released

    # --- the quota tree ----------------------------------------------------------

    @property
    def forest(self) -> Forest:
        """The cohort forest, rebuilt first if quotas or structure changed."""
        self.ensure_forest()
        return self._forest

    def ensure_forest(self) -> None:
        """Rebuild the cohort forest if quotas or structure changed (usage comes from ``usage``)."""
        if not self._forest_dirty:
            return
        specs = {
            name: (info.cohort, self._quotas[name]) for name, info in self.cluster_queues.items()
        }
        self._forest = build_forest(cluster_queues=specs, cohorts=self._cohorts, usage=self.usage)
        for name, info in self.cluster_queues.items():
            info.node = self._forest.cluster_queues[name]
            info.node.weight = info.weight
        for name, weight in self._cohort_weights.items():
            node = self._forest.cohorts.get(name)
            if node is not None:
                node.weight = weight
        self._forest_dirty = False
        self._quota_generation += 1

    def tree_members(self, name: str) -> list[str]:
        """Names of every CQ in the tree of CQ or cohort ``name`` (sorted): pure."""
        forest = self.forest
        node = forest.cluster_queues.get(name) or forest.cohorts.get(name)
        if node is None:
            return []
        stack, members = [node.root()], []
        while stack:
            current = stack.pop()
            if current.is_cohort:
                stack.extend(current.children)
            else:
                members.append(current.name)
        return sorted(members)

    def allocatable_generation(self, cq: str) -> int:
        """Changes when quota may have been freed or changed for ``cq``: pure."""
        return self._quota_generation + self._cq_generation.get(cq, 0)

    # --- reading ---------------------------------------------------------------

    def exists(self, name: str) -> bool:
        """Known and not terminating (otherwise "ClusterQueue ... doesn't exist"): pure."""
        return name in self.cluster_queues and name not in self._terminating

    def is_active(self, name: str) -> bool:
        """Whether the ClusterQueue may admit: pure."""
        return not self.inactive_reasons(name)

    def can_schedule(self, name: str) -> bool:
        """Active, and its cohort tree has no parent cycle: a cycle may pop its head: pure."""
        return self.is_active(name) and name not in self.forest.in_cycle

    def inactive_reasons(self, name: str) -> list[tuple[str, str]]:
        """(reason, fragment) pairs that make the CQ inactive, in documented order: pure."""
        info = self.cluster_queues.get(name)
        if info is None:
            return [("ClusterQueueDoesNotExist", "does not exist")]
        if name in self._terminating:
            return [("Terminating", "is terminating")]
        fragments: list[tuple[str, str]] = []
        if info.stop_policy != "None":
            fragments.append(("Stopped", "is stopped"))
        missing = [
            flavor for flavor in dict.fromkeys(info.flavor_names) if flavor not in self.flavors
        ]
        if missing:
            fragments.append(
                ("FlavorNotFound", f"references missing ResourceFlavor(s): {','.join(missing)}")
            )
        fragments += inactive_fragments(info.check_rules, info.flavor_names, self._admission_checks)
        if not uses_multikueue(info.check_rules, self._admission_checks):
            for flavor in dict.fromkeys(info.flavor_names):
                topology = self.topology.missing_topology(flavor)
                if topology is not None:
                    fragments.append(
                        (
                            "TopologyNotFound",
                            f'there is no Topology "{topology}" for TAS flavor "{flavor}"',
                        )
                    )
        return fragments

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """A Namespace's labels; one never applied has just its automatic name label: pure."""
        labels = self._namespaces.get(namespace)
        return labels if labels is not None else {_METADATA_NAME: namespace}

    def namespace_matches(self, info: ClusterQueueInfo, namespace: str) -> bool:
        """Whether the CQ's ``namespaceSelector`` selects ``namespace``: pure."""
        return selector_matches(info.namespace_selector, self.namespace_labels(namespace))

    def usage_report(
        self, name: str, usage: FRValues | None = None
    ) -> tuple[QuantitiesByFlavor, QuantitiesByFlavor]:
        """(usage, borrowed) per flavor and covered resource, as ``status`` shows them.

        Borrowed is usage above nominal quota, for a CQ in a cohort.  ``usage``:
        another total than every reservation's (the admitted workloads' only).
        """
        info = self.cluster_queues[name]
        usage = self.usage.get(name, {}) if usage is None else usage
        nominal = self._quotas[name].nominal
        used: QuantitiesByFlavor = {}
        lent: QuantitiesByFlavor = {}
        for group in info.groups:
            for flavor in group.flavors:
                for resource in sorted(group.covered):
                    amount = usage.get((flavor, resource), 0)
                    over = max(0, amount - nominal.get((flavor, resource), 0)) if info.cohort else 0
                    used.setdefault(flavor, {})[resource] = to_quantity(resource, amount)
                    lent.setdefault(flavor, {})[resource] = to_quantity(resource, over)
        return used, lent

    def _drop_cluster_queue(self, name: str) -> None:
        self.cluster_queues.pop(name, None)
        self._quotas.pop(name, None)
        self._terminating.discard(name)
        self._forest_dirty = True


__all__ = ["QuantitiesByFlavor", "QuotaCache"]
