"""Where a pod set's pods go in one flavor's topology (pure).

See docs/concepts.md#topology-aware-scheduling.  :func:`place` reads a pod
set's request into the algorithm's parameters and runs the steps of
``fit`` (counts, the level that fits, the descent); :func:`place_pod_sets`
places every pod set of a workload that uses one flavor, a leader with its
workers, each group seeing the room the earlier ones took.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scheduler.api.topology_assignment import DomainAssignment, TopologyAssignment
from scheduler.core.tas.fit import Params, Placer, PodSetPlacementRequest, Usage
from scheduler.core.tas.request import TopologyRequest
from scheduler.core.tas.tree import Domain, TopologyTree


def _slice_sizes(
    tree: TopologyTree, request: TopologyRequest | None, slice_size: int, slice_level: int
) -> dict[int, int] | str:
    """Slice size per level below the outermost slice layer (multi-layer requests): pure."""
    sizes: dict[int, int] = {}
    if request is None:
        return sizes
    previous_size, previous_level = slice_size, slice_level
    for layer in request.layers[1:]:
        level = tree.level_index(layer.level)
        if level is None:
            return f"no requested topology level for additional slice layer: {layer.level}"
        if level <= previous_level:
            return (
                f"additional slice layer topology {layer.level} must be at a lower level than "
                f"{tree.levels[previous_level]}"
            )
        if layer.size <= 0 or previous_size % layer.size != 0:
            return (
                f"additional slice layer size {layer.size} must evenly divide parent layer "
                f"size {previous_size}"
            )
        for between in range(previous_level + 1, level + 1):
            sizes[between] = layer.size
        previous_size, previous_level = layer.size, level
    return sizes


def requested_level(tree: TopologyTree, request: TopologyRequest | None) -> str | None:
    """The level a request names (Kueue's ``levelKey``), ``None`` when it names none: pure."""
    if request is None:
        return None
    if request.required is not None:
        return request.required
    if request.preferred is not None:
        return request.preferred
    if request.slice_only:
        return tree.levels[0]
    if request.unconstrained:
        return tree.levels[-1]
    return None


def has_levels(tree_levels: Sequence[str], request: TopologyRequest | None) -> bool:
    """Whether a topology with ``tree_levels`` has every level ``request`` names: pure."""
    if not tree_levels:
        return False
    if request is None:
        return False
    if request.required is not None:
        main: str | None = request.required
    elif request.preferred is not None:
        main = request.preferred
    elif request.slice_only:
        main = tree_levels[0]
    elif request.unconstrained:
        main = tree_levels[-1]
    else:
        return False
    layers = request.layers
    slice_level = layers[0].level if layers else tree_levels[-1]
    wanted = [main, slice_level, *(layer.level for layer in layers)]
    return all(level in tree_levels for level in wanted)


def _parameters(
    tree: TopologyTree, workers: PodSetPlacementRequest, leader_count: int
) -> Params | str:
    request = workers.request
    layers = request.layers if request is not None else ()
    slice_size = 1
    if layers:
        slice_size = layers[0].size
        if slice_size <= 0:
            return "slice topology requested, but slice size not provided"
    level_key = requested_level(tree, request)
    if level_key is None and workers.implied:
        level_key = tree.levels[-1]
    if level_key is None:
        return "topology level not specified"
    level = tree.level_index(level_key)
    if level is None:
        return f"no requested topology level: {level_key}"
    slice_key = layers[0].level if layers else tree.levels[-1]
    slice_level = tree.level_index(slice_key)
    if slice_level is None:
        return f"no requested topology level for slices: {slice_key}"
    if level > slice_level:
        return f"podset slice topology {slice_key} is above the podset topology {level_key}"
    sizes = _slice_sizes(tree, request, slice_size, slice_level)
    if isinstance(sizes, str):
        return sizes
    unconstrained = workers.implied or (
        request is not None and (request.unconstrained is True or request.slice_only)
    )
    return Params(
        count=workers.count,
        leader_count=leader_count,
        slice_size=slice_size,
        requested_level=level,
        slice_level=slice_level,
        required=request is not None and request.required is not None,
        unconstrained=unconstrained,
        size_at_level=sizes,
        layers=layers if sizes else (),
    )


def _with_pod(requests: Mapping[str, int]) -> dict[str, int]:
    return {**requests, "pods": requests.get("pods", 0) + 1}


def place(
    tree: TopologyTree,
    topology: str,
    free: Usage,
    workers: PodSetPlacementRequest,
    leader: PodSetPlacementRequest | None = None,
) -> dict[str, TopologyAssignment] | str:
    """Place ``workers`` (and a one-pod ``leader`` placed with them) in ``tree``: pure.

    ``free``: what is left of each leaf.  Returns the placement per pod-set
    name, or the reason it cannot be placed.
    """
    params = _parameters(tree, workers, 1 if leader is not None else 0)
    if isinstance(params, str):
        return params
    placer = Placer(tree, topology)
    selector = workers.node_selector if tree.by_hostname else {}
    scoped = PodSetPlacementRequest(
        name=workers.name,
        count=workers.count,
        per_pod=workers.per_pod,
        request=workers.request,
        implied=workers.implied,
        tolerations=workers.tolerations,
        node_selector=selector,
        affinity=workers.affinity,
    )
    placer.fill_counts(
        free,
        _with_pod(workers.per_pod),
        _with_pod(leader.per_pod) if leader is not None else None,
        scoped,
        params,
    )
    found = placer.fit_level(params.requested_level, params)
    if isinstance(found, str):
        return found
    level, domains = found
    domains = placer.hand_down(
        domains, params.count, params.leader_count, params.slice_size, params.unconstrained, True
    )
    last = len(tree.levels) - 1
    while level < min(last, params.slice_level):
        lower = placer.sorted_domains(
            [c for d in domains for c in d.children], params.unconstrained
        )
        domains = placer.hand_down(
            lower, params.count, params.leader_count, params.slice_size, params.unconstrained, True
        )
        level += 1
    state = placer.state
    while level < last:
        size = params.size_at_level.get(level + 1, 1)
        lower_domains: list[Domain] = []
        for domain in domains:
            children = placer.sorted_domains(domain.children, params.unconstrained)
            if size > 1:
                for child in children:
                    state.slices[child.index] = state.pods[child.index] // size
                    state.slices_wl[child.index] = state.pods_wl[child.index] // size
            lower_domains += placer.hand_down(
                children,
                state.pods[domain.index],
                state.leaders[domain.index],
                size,
                params.unconstrained,
                size > 1,
            )
        domains = lower_domains
        level += 1
    result: dict[str, TopologyAssignment] = {}
    if leader is not None:
        leaders = [(d, state.leaders[d.index]) for d in domains if state.leaders[d.index] > 0]
        result[leader.name] = _assignment(tree, leaders)
        domains = [d for d in domains if state.pods[d.index] > 0]
    result[workers.name] = _assignment(tree, [(d, state.pods[d.index]) for d in domains])
    return result


def place_pod_sets(
    tree: TopologyTree,
    topology: str,
    free: Usage,
    requests: Sequence[PodSetPlacementRequest],
) -> dict[str, TopologyAssignment] | tuple[str, str]:
    """Place every pod set of a workload that uses this flavor, in order: pure.

    Pod sets naming the same ``podSetGroupName`` are placed together, the
    smaller one as the leader; each group sees the room the earlier groups
    took.  Returns every placement, or (pod set, reason) for the first group
    that does not fit.
    """
    groups: dict[str, list[PodSetPlacementRequest]] = {}
    for index, request in enumerate(requests):
        key = (request.request.group if request.request else None) or str(index)
        groups.setdefault(key, []).append(request)
    taken: dict[str, dict[str, int]] = {}
    result: dict[str, TopologyAssignment] = {}
    for members in groups.values():
        workers, leader = members[0], None
        if len(members) > 1:
            leader = members[1]
            if leader.count > workers.count:
                workers, leader = leader, workers
        found = place(tree, topology, _minus(free, taken), workers, leader)
        if isinstance(found, str):
            return members[0].name, found
        result.update(found)
        for member in members:
            placed = found.get(member.name)
            if placed is None:
                continue
            per_pod = _with_pod(member.per_pod)
            for domain in placed.domains:
                leaf = taken.setdefault(",".join(domain.values), {})
                for resource, amount in per_pod.items():
                    leaf[resource] = leaf.get(resource, 0) + amount * domain.count
    return result


def _minus(free: Usage, taken: Mapping[str, Mapping[str, int]]) -> Usage:
    if not taken:
        return free
    left = {leaf: dict(amounts) for leaf, amounts in free.items()}
    for leaf, amounts in taken.items():
        if leaf in left:
            for resource, amount in amounts.items():
                left[leaf][resource] = left[leaf].get(resource, 0) - amount
    return left


def _assignment(tree: TopologyTree, counted: list[tuple[Domain, int]]) -> TopologyAssignment:
    first = len(tree.levels) - 1 if tree.by_hostname else 0
    ordered = sorted(counted, key=lambda item: item[0].values)
    return TopologyAssignment(
        levels=tree.levels[first:],
        domains=tuple(
            DomainAssignment(values=domain.values[first:], count=count)
            for domain, count in ordered
            if count > 0
        ),
    )


__all__ = [
    "PodSetPlacementRequest",
    "Usage",
    "has_levels",
    "place",
    "place_pod_sets",
    "requested_level",
]
