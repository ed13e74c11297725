"""The topology tree of one TAS flavor: domains per level, leaves with capacity (pure).

See docs/concepts.md#topology-aware-scheduling.  A node belongs to a TAS
flavor when it carries every ``nodeLabels`` entry of the flavor and a label
for every level of the flavor's Topology, is Ready and is not cordoned.  Its
level labels, highest first, name its domain at each level; the lowest level
holds the leaves.  When the lowest level is ``kubernetes.io/hostname`` each
leaf is one node (kept, so a pod set's node selector, required affinity and
the taints it does not tolerate can exclude it); otherwise a leaf sums the
allocatable capacity of the nodes in it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from scheduler.api.models import Taint
from scheduler.api.topology_assignment import HOSTNAME_LABEL


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """A Node as topology-aware scheduling reads it."""

    name: str
    labels: Mapping[str, str]
    allocatable: Mapping[str, int]
    """Integer amounts (``scheduler.core.resources.to_int``)."""
    taints: tuple[Taint, ...] = ()
    schedulable: bool = True
    """Ready and not ``spec.unschedulable``."""


@dataclass(frozen=True, slots=True)
class PodUsage:
    """A pod kuota did not place by topology; bound to a running node, it takes room there.

    See docs/concepts.md#topology-aware-scheduling.  ``node`` is None once the
    pod is not bound, or has finished: it no longer counts.
    """

    key: str
    """``<namespace>/<name>``."""
    node: str | None
    requests: Mapping[str, int]
    """Integer amounts (``scheduler.core.resources.to_int``)."""


def domain_id(values: Sequence[str]) -> str:
    """The identifier of a domain: its level values joined by commas: pure."""
    return ",".join(values)


@dataclass(eq=False, slots=True)
class Domain:
    """One topology domain; identity is the object (ids repeat across levels)."""

    id: str
    values: tuple[str, ...]
    index: int
    """Dense index in its tree, for per-placement state."""
    parent: Domain | None = None
    children: list[Domain] = field(default_factory=list)
    capacity: dict[str, int] | None = None
    """Leaves only: the summed allocatable of their nodes."""
    node: NodeInfo | None = None
    """Leaves of a hostname-level topology: the node."""

    @property
    def level(self) -> int:
        return len(self.values) - 1


class TopologyTree:
    """The domains of a flavor's nodes, level by level (immutable once built)."""

    __slots__ = ("levels", "per_level", "leaves", "roots", "by_hostname", "node_leaf", "size")

    def __init__(self, levels: Sequence[str], nodes: Iterable[NodeInfo]) -> None:
        self.levels = tuple(levels)
        self.by_hostname = bool(self.levels) and self.levels[-1] == HOSTNAME_LABEL
        self.per_level: list[dict[str, Domain]] = [{} for _ in self.levels]
        self.leaves: dict[str, Domain] = {}
        """Leaf id (the hostname for a hostname-level topology) -> leaf."""
        self.roots: list[Domain] = []
        self.node_leaf: dict[str, str] = {}
        """Node name -> its leaf id."""
        self.size = 0
        for node in sorted(nodes, key=lambda item: item.name):
            self._add(node)

    def _domain(self, values: tuple[str, ...], leaf_id: str | None = None) -> Domain:
        level = len(values) - 1
        key = leaf_id if leaf_id is not None else domain_id(values)
        found = self.per_level[level].get(key)
        if found is not None:
            return found
        created = Domain(id=key, values=values, index=self.size)
        self.size += 1
        self.per_level[level][key] = created
        if level == 0:
            self.roots.append(created)
        else:
            parent = self._domain(values[:-1])
            created.parent = parent
            parent.children.append(created)
        return created

    def _add(self, node: NodeInfo) -> None:
        values = tuple(node.labels[level] for level in self.levels)
        leaf_id = values[-1] if self.by_hostname else domain_id(values)
        leaf = self._domain(values, leaf_id)
        if leaf.capacity is None:
            leaf.capacity = {}
            self.leaves[leaf_id] = leaf
            if self.by_hostname:
                leaf.node = node
        for resource, amount in node.allocatable.items():
            leaf.capacity[resource] = leaf.capacity.get(resource, 0) + amount
        self.node_leaf[node.name] = leaf_id

    def level_index(self, level: str) -> int | None:
        """The index of ``level`` (0: highest), or None when the topology lacks it: pure."""
        try:
            return self.levels.index(level)
        except ValueError:
            return None


def flavor_nodes(
    nodes: Iterable[NodeInfo], node_labels: Mapping[str, str], levels: Sequence[str]
) -> list[NodeInfo]:
    """The schedulable nodes of a flavor with every level label (module docstring): pure."""
    return [
        node
        for node in nodes
        if node.schedulable
        and all(node.labels.get(key) == value for key, value in node_labels.items())
        and all(level in node.labels for level in levels)
    ]


__all__ = ["Domain", "NodeInfo", "PodUsage", "TopologyTree", "domain_id", "flavor_nodes"]
