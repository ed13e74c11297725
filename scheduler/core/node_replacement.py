"""A new home for the pods a failed node held, inside their workload's placement (pure).

See docs/concepts.md#topology-aware-scheduling.  When a node under an
admitted workload fails, Kueue first looks for a replacement: the pods the
node held (the count its topology assignment gave it) are placed again on
the nodes that are left, inside the domain the request requires (the
domain, at the required level, of the pod set's other pods), and the
assignment keeps every other domain as it was.  Only when no such room
exists is the workload evicted (``NodeFailures``).

Slices are kept whole: when the lost pods are not a whole number of
slices, no replacement is tried (the workload is evicted and placed
anew), which is stricter than Kueue's search for the incomplete slice's
domain.
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
    request = pod_set.topology
    if request is not None and request.slice_size and lost % request.slice_size:
        return f"{lost} pods are not a whole number of slices of {request.slice_size}"
    scope: TopologyTree | str = tree
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

    The failed nodes are no longer in the cache's trees (deleted, or not
    ``Ready``); the workload's own placements still count where they are.
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
