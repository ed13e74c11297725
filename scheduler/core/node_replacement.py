"""A new home for the pods a failed node held, inside their workload's placement (pure).

See docs/concepts.md#topology-aware-scheduling.  When a node under an
admitted workload fails, Kueue first looks for a replacement: the pods the
node held (the count its topology assignment gave it) are placed again on
the nodes that are left, inside the domain the request requires (the
domain, at the required level, of the pod set's other pods), and the
assignment keeps every other domain as it was.  Only when no such room
exists is the workload evicted (``NodeFailures``).

When the lost pods leave a slice incomplete, they go back to the domain
(at that slice's level) holding the rest of it, as Kueue's search for the
incomplete slice's domain does.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from scheduler.api.topology_assignment import DomainAssignment, TopologyAssignment
from scheduler.core.decisions import PodSetAdmission
from scheduler.core.tas.cache import TopologyCache
from scheduler.core.tas.placement import PodSetPlacementRequest, place
from scheduler.core.tas.tree import TopologyTree
from scheduler.core.workload import PodSetInfo


def _lost(
    assignment: TopologyAssignment, failed: Collection[str]
) -> tuple[int, list[DomainAssignment]]:
    """(pods on failed nodes, the domains left) of a hostname-level assignment: pure."""
    lost = sum(d.count for d in assignment.domains if d.values[-1] in failed)
    kept = [d for d in assignment.domains if d.values[-1] not in failed]
    return lost, kept


def _merged(kept: Sequence[DomainAssignment], added: TopologyAssignment) -> TopologyAssignment:
    counts: dict[tuple[str, ...], int] = {d.values: d.count for d in kept}
    for domain in added.domains:
        counts[domain.values] = counts.get(domain.values, 0) + domain.count
    return TopologyAssignment(
        levels=added.levels,
        domains=tuple(DomainAssignment(values, count) for values, count in sorted(counts.items())),
    )


def _without(tree: TopologyTree, failed: Collection[str]) -> TopologyTree:
    """``tree`` less the failed nodes still in it (a tainted node stays in the cache): pure."""
    if not any(name in tree.node_leaf for name in failed):
        return tree
    nodes = [
        leaf.node
        for leaf in tree.leaves.values()
        if leaf.node is not None and leaf.node.name not in failed
    ]
    return TopologyTree(tree.levels, nodes)


def _within(tree: TopologyTree, kept: Sequence[DomainAssignment], level: int) -> TopologyTree | str:
    """The part of ``tree`` inside the level-``level`` domain of the pods kept: pure."""
    anchor = tree.leaves.get(kept[0].values[-1]) if kept else None
    if anchor is None:
        return f"the node {kept[0].values[-1]} of the assignment is gone too" if kept else tree
    prefix = anchor.values[: level + 1]
    nodes = [
        leaf.node
        for leaf in tree.leaves.values()
        if leaf.node is not None and leaf.values[: level + 1] == prefix
    ]
    return TopologyTree(tree.levels, nodes)


def _incomplete_slice(
    tree: TopologyTree, kept: Sequence[DomainAssignment], lost: int, level_name: str, size: int
) -> TopologyTree | str:
    """The part of ``tree`` inside the slice-level domain whose kept pods the lost ones
    complete to whole slices (Kueue's incomplete-slice domain): pure."""
    level = tree.level_index(level_name)
    if level is None:
        return f"the topology has no level {level_name}"
    counts: dict[tuple[str, ...], int] = {}
    for domain in kept:
        leaf = tree.leaves.get(domain.values[-1])
        if leaf is not None:
            key = leaf.values[: level + 1]
            counts[key] = counts.get(key, 0) + domain.count
    fitting = [p for p, count in sorted(counts.items()) if (count + lost) % size == 0]
    prefix = fitting[0] if fitting else None
    if prefix is None:
        return f"no {level_name} holds the incomplete slice of {size} the lost pods belong to"
    nodes = [
        leaf.node
        for leaf in tree.leaves.values()
        if leaf.node is not None and leaf.values[: level + 1] == prefix
    ]
    return TopologyTree(tree.levels, nodes)


def _replace_one(
    admission: PodSetAdmission,
    pod_set: PodSetInfo,
    failed: Collection[str],
    cache: TopologyCache,
) -> PodSetAdmission | str:
    placed = admission.topology_assignment
    if placed is None:
        return admission
    lost, kept = _lost(placed, failed)
    if lost == 0:
        return admission
    names = sorted({n for n in admission.flavors.values() if cache.flavor(n) is not None})
    flavor = names[0] if len(names) == 1 else None
    tree = cache.tree(flavor) if flavor is not None else None
    info = cache.flavor(flavor) if flavor is not None else None
    if flavor is None or tree is None or info is None or not tree.by_hostname:
        return "no single TAS flavor at hostname level to place the pods again"
    tree = _without(tree, failed)
    request = pod_set.topology
    scope: TopologyTree | str = tree
    layers = request.layers if request is not None else ()
    broken = next((layer for layer in reversed(layers) if lost % layer.size), None)
    if request is not None and broken is not None:
        # The lost pods leave a slice incomplete: they go back to the domain of that slice
        # (the innermost layer they break), in slices of the innermost layer they fill.
        scope = _incomplete_slice(tree, kept, lost, broken.level, broken.size)
        whole = next((layer for layer in reversed(layers) if lost % layer.size == 0), None)
        request = replace(
            request,
            slice_level=whole.level if whole is not None else None,
            slice_size=whole.size if whole is not None else None,
            slice_layers=(),
        )
    else:
        required = tree.level_index(request.required) if request and request.required else None
        if required is not None:
            scope = _within(tree, kept, required)
    if isinstance(scope, str):
        return scope
    wanted = PodSetPlacementRequest(
        name=pod_set.name,
        count=lost,
        per_pod=pod_set.tas_per_pod,
        request=request,
        implied=request is None,
        tolerations=(*pod_set.tolerations, *info.tolerations),
        node_selector=pod_set.node_selector,
        affinity=pod_set.affinity,
    )
    found = place(scope, info.topology, cache.free(flavor), wanted)
    if isinstance(found, str):
        return found
    return replace(admission, topology_assignment=_merged(kept, found[pod_set.name]))


def replacement_admission(
    admissions: Sequence[PodSetAdmission],
    pod_sets: Sequence[PodSetInfo],
    failed: Collection[str],
    cache: TopologyCache,
) -> tuple[PodSetAdmission, ...] | str:
    """The admission with the failed nodes' pods placed elsewhere, or why they cannot be: pure.

    The failed nodes are left out (deleted or not ``Ready`` ones are out of
    the cache's trees already; a tainted one is not); the workload's own
    placements still count where they are.
    """
    by_name = {pod_set.name: pod_set for pod_set in pod_sets}
    result: list[PodSetAdmission] = []
    for admission in admissions:
        pod_set = by_name.get(admission.name)
        if pod_set is None:
            result.append(admission)
            continue
        done = _replace_one(admission, pod_set, failed, cache)
        if isinstance(done, str):
            nodes = ",".join(sorted(failed))
            return f"cannot find replacement assignment for unhealthy node(s) {nodes}: {done}"
        result.append(done)
    return tuple(result)


__all__ = ["replacement_admission"]
