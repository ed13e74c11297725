"""The quota cache: what ClusterQueues may use, and what admitted workloads use.

See docs/scheduling.md#the-quota-tree.

Kueue keeps quota in a cache apart from its queues; so does kuota.  The cache
holds the ResourceFlavors, every ClusterQueue reduced to a
``ClusterQueueInfo``, the admitted workloads and their usage per ClusterQueue,
the known AdmissionChecks and the labels of Namespaces (for
``namespaceSelector``).
Its ``topology`` part (``tas.cache``) keeps nodes, Topologies and what
admitted placements hold (docs/concepts.md#topology-aware-scheduling);
``charge`` and ``release`` move quota and placement together.

Its ``tree`` part (``quota_tree``) keeps the integer quotas, the Cohort specs
and the cohort forest built from them (rebuilt lazily); ``charge`` and
``release`` move usage in it too.

The cache knows nothing about queues.  Its mutations return what they
affected (the ClusterQueues whose admissibility may have changed), and the
engine turns that into the requeue events of the queue manager.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from scheduler.api.models import ClusterQueue, ResourceFlavorSpec
from scheduler.core.admission_checks import CheckInfo, inactive_fragments, uses_multikueue
from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.hierarchy import quota_of
from scheduler.core.node_matching import selector_matches
from scheduler.core.quota_tree import QuotaTree
from scheduler.core.resources import FRValues
from scheduler.core.state import ADMITTED, WorkloadRecord
from scheduler.core.tas.cache import TopologyCache
from scheduler.core.tas.held import DomainCharge

_EARLIEST = datetime.min.replace(tzinfo=UTC)
_METADATA_NAME = "kubernetes.io/metadata.name"


class QuotaCache:
    """Flavors, ClusterQueues, their quota tree and admitted usage (module docstring)."""

    def __init__(self) -> None:
        self.flavors: dict[str, ResourceFlavorSpec] = {}
        self.cluster_queues: dict[str, ClusterQueueInfo] = {}
        """Every ClusterQueue applied and not yet dropped (terminating ones included)."""
        self.admitted: dict[str, set[str]] = {}
        """ClusterQueue -> keys of the workloads that hold quota in it."""
        self.usage: dict[str, FRValues] = {}
        """ClusterQueue -> usage per FR of its admitted workloads."""
        self._terminating: set[str] = set()
        self._admission_checks: dict[str, CheckInfo] = {}
        self._namespaces: dict[str, Mapping[str, str]] = {}
        self._reservations = 0
        self.tree = QuotaTree(self.cluster_queues, self.usage)
        """Quotas, Cohorts and the cohort forest (``quota_tree``)."""
        self.topology = TopologyCache()

    # --- ClusterQueues, flavors, checks, namespaces ---------------------------------

    def apply_cluster_queue(self, cq: ClusterQueue) -> bool:
        """Insert or replace a ClusterQueue; a terminating one of that name lives again.

        True when what preemption depends on changed (new, or another cohort,
        quota or preemption policy); a status update changes none of them.
        """
        old, info = self.cluster_queues.get(cq.name), ClusterQueueInfo(cq)
        quota_changed = self.tree.place(old, info, quota_of(cq.spec.resource_groups))
        self.cluster_queues[cq.name] = info
        self._terminating.discard(cq.name)
        return (
            old is None
            or (old.cohort, old.preemption) != (info.cohort, info.preemption)
            or quota_changed
        )

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
        self.topology.held.charge(record.key, placements)
        self._reservations += 1
        record.reserved_at = (reserved_at or _EARLIEST, self._reservations)
        record.usage = {cq: usage}
        totals = self.usage.setdefault(cq, {})
        for fr, amount in usage.items():
            totals[fr] = totals.get(fr, 0) + amount
        self.admitted.setdefault(cq, set()).add(record.key)
        self.tree.charge(cq, usage)

    def release(self, record: WorkloadRecord, *, recharging: bool = False) -> list[str]:
        """Give back the quota ``record`` holds; the ClusterQueues it held quota in.

        A terminating ClusterQueue whose last workload leaves is dropped here,
        unless ``recharging``: the same workload is charged again at once (its
        admission was re-read), and the caller ends with ``drop_finished``.
        """
        held = self.topology.held.charges(record.key)
        self.topology.held.release(record.key)
        sharing = self.using_flavors(sorted({charge.flavor for charge in held}))
        if record.state != ADMITTED or not record.usage:
            return sharing
        released = list(record.usage) + [cq for cq in sharing if cq not in record.usage]
        for cq, usage in record.usage.items():
            totals = self.usage.get(cq, {})
            for fr, amount in usage.items():
                totals[fr] = totals.get(fr, 0) - amount
            self.admitted.get(cq, set()).discard(record.key)
            self.tree.release(cq, usage)
            if not recharging:
                self.drop_finished(cq)
        record.usage = None
        return released

    def drop_finished(self, cq: str) -> None:
        """Drop ``cq`` if it is terminating and no workload holds quota in it any more."""
        if cq in self._terminating and not self.admitted.get(cq):
            self._drop_cluster_queue(cq)

    # --- reading ---------------------------------------------------------------

    def exists(self, name: str) -> bool:
        """Known and not terminating (otherwise "ClusterQueue ... doesn't exist"): pure."""
        return name in self.cluster_queues and name not in self._terminating

    def is_active(self, name: str) -> bool:
        """Whether the ClusterQueue may admit: pure."""
        return not self.inactive_reasons(name)

    def can_schedule(self, name: str) -> bool:
        """Active, and its cohort tree has no parent cycle: a cycle may pop its head: pure."""
        return self.is_active(name) and name not in self.tree.forest.in_cycle

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

    def _drop_cluster_queue(self, name: str) -> None:
        self.cluster_queues.pop(name, None)
        self.tree.drop(name)
        self._terminating.discard(name)


__all__ = ["QuotaCache"]
