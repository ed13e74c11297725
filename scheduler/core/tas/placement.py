"""Where a pod set's pods go in one flavor's topology: Kueue's placement algorithm (pure).

See docs/concepts.md#topology-aware-scheduling for what users see; this
module follows the algorithm of Kueue v0.19 step by step, so that a
workload placed by kuota lands in the same domains Kueue would choose:

1. *Counts*: every leaf (a node, or the lowest-level domain) says how many
   pods of the pod set fit in what is left of it, and how many once a
   leader pod is placed there first; every parent sums its children.  At the
   slice level (``podset-slice-required-topology``, else the lowest level)
   the pod counts become slice counts, which parents sum.
2. *Fit level*: starting at the requested level, the domains are sorted
   (most slices first for a required or preferred request, "BestFit"; fewest
   first for an unconstrained one, "LeastFreeCapacity") and the smallest
   single domain that holds every slice is chosen.  A required request fails
   there; a preferred one moves up a level; at the top (or for an
   unconstrained request) the pods are spread greedily over several domains.
3. *Descent*: level by level, the pods of each chosen domain are handed to
   its children in the same order, the last child being the best fit.

Counts are computed once per call into ``_State``; nothing in the tree is
changed.  A failure is returned as the message Kueue writes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from scheduler.api.models import NodeSelectorTerm, Taint, Toleration
from scheduler.core.node_matching import first_untolerated_taint, requirement_matches
from scheduler.core.tas.request import SliceLayer, TopologyRequest
from scheduler.core.tas.tree import Domain, NodeInfo, TopologyTree

MAX_COUNT = 2**31 - 1
Usage = Mapping[str, Mapping[str, int]]
"""Leaf id -> resource -> integer amount."""


@dataclass(frozen=True, slots=True)
class PodSetPlacementRequest:
    """One pod set to place: its pods, what each asks for, and where it may go."""

    name: str
    count: int
    per_pod: Mapping[str, int]
    """Per-pod requests (integers), without the pod itself."""
    request: TopologyRequest | None
    implied: bool = False
    """Placed at the lowest level without asking: the ClusterQueue has only TAS flavors."""
    tolerations: tuple[Toleration, ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    affinity: tuple[NodeSelectorTerm, ...] | None = None


@dataclass(frozen=True, slots=True)
class PlacedDomain:
    """``count`` pods in the domain named by ``values`` (the assignment's levels only)."""

    values: tuple[str, ...]
    count: int


@dataclass(frozen=True, slots=True)
class Placement:
    """The assignment of one pod set: the levels it names and its domains in order."""

    levels: tuple[str, ...]
    domains: tuple[PlacedDomain, ...]


def taint_text(taint: Taint) -> str:
    """Kubernetes' ``Taint.ToString``: ``key=value:effect``: pure."""
    if not taint.effect:
        return taint.key if not taint.value else f"{taint.key}={taint.value}:"
    return (
        f"{taint.key}:{taint.effect}"
        if not taint.value
        else (f"{taint.key}={taint.value}:{taint.effect}")
    )


@dataclass(slots=True)
class Exclusions:
    """Why leaves were left out, for the message of a placement that fails."""

    total_nodes: int = 0
    node_selector: int = 0
    affinity: int = 0
    topology_domain: int = 0
    taints: dict[str, int] = field(default_factory=dict)
    resources: dict[str, int] = field(default_factory=dict)

    def any(self) -> bool:
        return bool(
            self.node_selector
            or self.affinity
            or self.taints
            or self.topology_domain
            or self.resources
        )

    def text(self) -> str:
        reasons = []
        if self.node_selector:
            reasons.append(f"nodeSelector: {self.node_selector}")
        if self.affinity:
            reasons.append(f"affinity: {self.affinity}")
        if self.topology_domain:
            reasons.append(f"topologyDomain: {self.topology_domain}")
        reasons += [f'taint "{key}": {count}' for key, count in sorted(self.taints.items())]
        reasons += [f'resource "{key}": {count}' for key, count in sorted(self.resources.items())]
        return ", ".join(sorted(reasons))


def count_in(requests: Mapping[str, int], capacity: Mapping[str, int]) -> tuple[int, str]:
    """How many times ``requests`` fit in ``capacity``, and the resource that limits it: pure.

    Ties go to the alphabetically first resource; a zero request never limits.
    """
    best: int | None = None
    limiting = ""
    for resource in sorted(requests):
        amount = requests[resource]
        if amount == 0:
            count = MAX_COUNT
        else:
            count = max(0, min(capacity.get(resource, 0) // amount, MAX_COUNT))
        if best is None or count < best:
            best, limiting = count, resource
    return (best or 0), limiting


def _node_matches(
    node: NodeInfo, selector: Mapping[str, str], affinity: tuple[NodeSelectorTerm, ...] | None
) -> tuple[bool, bool]:
    """(selector matches, required affinity matches) for one node: pure."""
    if any(node.labels.get(key) != value for key, value in selector.items()):
        return False, True
    if not affinity:
        return True, True
    for term in affinity:
        if not term.match_expressions and not term.match_fields:
            continue
        if all(requirement_matches(expr, node.labels) for expr in term.match_expressions) and all(
            requirement_matches(expr, {"metadata.name": node.name}) for expr in term.match_fields
        ):
            return True, True
    return True, False


class _State:
    """Per-domain counts of one placement run (indexed by ``Domain.index``)."""

    __slots__ = ("pods", "slices", "pods_wl", "slices_wl", "leaders")

    def __init__(self, size: int) -> None:
        self.pods = [0] * size
        self.slices = [0] * size
        self.pods_wl = [0] * size
        """Pods that fit once a leader is placed in the domain too."""
        self.slices_wl = [0] * size
        self.leaders = [0] * size


@dataclass(slots=True)
class _Params:
    count: int
    leader_count: int
    slice_size: int
    requested_level: int
    slice_level: int
    required: bool
    unconstrained: bool
    size_at_level: dict[int, int]
    layers: tuple[SliceLayer, ...]


class _Placer:
    """One run of the algorithm over one flavor's tree (module docstring)."""

    def __init__(self, tree: TopologyTree, topology: str) -> None:
        self.tree = tree
        self.topology = topology
        self.state = _State(tree.size)
        self.stats = Exclusions()

    # --- ordering ----------------------------------------------------------------------

    def _sorted(self, domains: Sequence[Domain], unconstrained: bool) -> list[Domain]:
        state = self.state
        sign = 1 if unconstrained else -1
        return sorted(
            domains,
            key=lambda d: (sign * state.slices[d.index], state.pods[d.index], d.values),
        )

    def _sorted_with_leader(self, domains: Sequence[Domain], unconstrained: bool) -> list[Domain]:
        state = self.state
        sign = 1 if unconstrained else -1
        return sorted(
            domains,
            key=lambda d: (
                -state.leaders[d.index],
                sign * state.slices_wl[d.index],
                state.pods_wl[d.index],
                d.values,
            ),
        )

    def _best_fit_by(
        self,
        domains: Sequence[Domain],
        needed: int,
        count_of: Callable[[Domain], int],
        leader_count: int,
    ) -> Domain:
        best, best_count = domains[0], MAX_COUNT + 1
        for domain in domains:
            if self.state.leaders[domain.index] < leader_count:
                continue
            count = count_of(domain)
            if needed <= count < best_count:
                best, best_count = domain, count
        return best

    def _best_fit(self, domains: Sequence[Domain], count: int, leader_count: int) -> Domain:
        values = self.state.pods_wl if leader_count > 0 else self.state.pods
        return self._best_fit_by(domains, count, lambda d: values[d.index], leader_count)

    def _best_fit_slices(self, domains: Sequence[Domain], count: int, leader_count: int) -> Domain:
        values = self.state.slices_wl if leader_count > 0 else self.state.slices
        return self._best_fit_by(domains, count, lambda d: values[d.index], leader_count)

    # --- phase 1: counts ---------------------------------------------------------------

    def fill_counts(
        self,
        free: Usage,
        requests: Mapping[str, int],
        leader_requests: Mapping[str, int] | None,
        workers: PodSetPlacementRequest,
        params: _Params,
    ) -> None:
        state, stats = self.state, self.stats
        for leaf_id, leaf in self.tree.leaves.items():
            stats.total_nodes += 1
            node = leaf.node
            if node is not None:
                taint = first_untolerated_taint(node.taints, workers.tolerations)
                if taint is not None:
                    key = taint_text(taint)
                    stats.taints[key] = stats.taints.get(key, 0) + 1
                    continue
                selector_ok, affinity_ok = _node_matches(
                    node, workers.node_selector, workers.affinity
                )
                if not selector_ok:
                    stats.node_selector += 1
                    continue
                if not affinity_ok:
                    stats.affinity += 1
                    continue
            remaining = dict(free.get(leaf_id, {}))
            index = leaf.index
            state.pods[index], limiting = count_in(requests, remaining)
            if state.pods[index] == 0 and limiting:
                stats.resources[limiting] = stats.resources.get(limiting, 0) + 1
            state.leaders[index] = 0
            if leader_requests is not None and count_in(leader_requests, remaining)[0] > 0:
                state.leaders[index] = 1
                for resource, amount in leader_requests.items():
                    remaining[resource] = remaining.get(resource, 0) - amount
            state.pods_wl[index] = count_in(requests, remaining)[0]
        for root in self.tree.roots:
            self._fill_parent(root, params, 0)

    def _fill_parent(self, domain: Domain, params: _Params, level: int) -> None:
        state, index = self.state, domain.index
        slice_size, slice_level = params.slice_size, params.slice_level
        if not domain.children:
            if level == slice_level:
                state.slices[index] = state.pods[index] // slice_size
                state.slices_wl[index] = state.pods_wl[index] // slice_size
            return
        pods = slices = leaders = 0
        contributes = False
        pod_gap = slice_gap = MAX_COUNT
        inner = params.size_at_level.get(level + 1)
        leader_required = params.leader_count > 0
        for child in domain.children:
            self._fill_parent(child, params, level + 1)
            c = child.index
            child_pods, child_pods_wl = state.pods[c], state.pods_wl[c]
            if inner:
                child_pods = child_pods // inner * inner
                child_pods_wl = child_pods_wl // inner * inner
            pods += child_pods
            slices += state.slices[c]
            if not leader_required or state.leaders[c] > 0:
                contributes = True
                pod_gap = min(child_pods - child_pods_wl, pod_gap)
                slice_gap = min(state.slices[c] - state.slices_wl[c], slice_gap)
            leaders = max(state.leaders[c], leaders)
        state.pods[index] = pods
        slices_wl = 0
        if contributes:
            state.pods_wl[index] = pods - pod_gap
            slices_wl = slices - slice_gap
        else:
            state.pods_wl[index] = 0
        state.leaders[index] = leaders
        if level == slice_level:
            slices = state.pods[index] // slice_size
            slices_wl = state.pods_wl[index] // slice_size
        state.slices[index] = slices
        state.slices_wl[index] = slices_wl

    # --- failure messages --------------------------------------------------------------

    def not_fit(self, fit: int, total: int, slice_size: int) -> str:
        unit = "pod" if slice_size == 1 else "slice"
        if fit == 0:
            text = f'topology "{self.topology}" doesn\'t allow to fit any of {total} {unit}(s)'
        else:
            text = f'topology "{self.topology}" allows to fit only {fit} out of {total} {unit}(s)'
        return text + self._exclusions()

    def _exclusions(self) -> str:
        if not self.stats.any():
            return ""
        return f". Total nodes: {self.stats.total_nodes}; excluded: {self.stats.text()}"

    def multi_layer_not_fit(self, level: int, count: int, layers: Sequence[SliceLayer]) -> str:
        text = f'topology "{self.topology}" doesn\'t allow to fit'
        slices = self.state.slices
        domains = list(self.tree.per_level[level].values())
        if not domains:
            return text
        best = min(domains, key=lambda d: (-slices[d.index], d.id))
        for layer in layers:
            target = self.tree.level_index(layer.level)
            if target is None:
                continue
            fit = self._slices_below(best, level, target, layer.size)
            text += f"; {fit}/{count // layer.size} slice(s) fit on level {layer.level}"
        return text + self._exclusions()

    def _slices_below(self, domain: Domain, level: int, target: int, size: int) -> int:
        if level == target:
            return self.state.pods[domain.index] // size
        return sum(self._slices_below(child, level + 1, target, size) for child in domain.children)

    # --- phase 2a: the level that fits -------------------------------------------------

    def fit_level(self, search: int, p: _Params) -> tuple[int, list[Domain]] | str:
        state = self.state
        domains = list(self.tree.per_level[search].values())
        if not domains:
            return f"no topology domains at level: {self.tree.levels[search]}"
        ordered = self._sorted_with_leader(domains, p.unconstrained)
        top = ordered[0]
        slice_count = p.count // p.slice_size
        best_fit = not p.unconstrained

        def failure(fit: int, total: int) -> str:
            if p.layers and p.size_at_level:
                return self.multi_layer_not_fit(search, p.count, p.layers)
            return self.not_fit(fit, total, p.slice_size)

        if (
            best_fit
            and state.slices_wl[top.index] >= slice_count
            and state.leaders[top.index] >= p.leader_count
        ):
            top = self._best_fit_slices(ordered, slice_count, p.leader_count)
        if not best_fit:
            for candidate in ordered:
                capacity = state.slices[candidate.index]
                if p.leader_count > 0:
                    if state.leaders[candidate.index] < p.leader_count:
                        continue
                    capacity = state.slices_wl[candidate.index]
                if capacity >= slice_count:
                    return search, [candidate]
            if p.required:
                return failure(state.pods[ordered[-1].index], slice_count)
        if state.slices_wl[top.index] >= slice_count and state.leaders[top.index] >= p.leader_count:
            return search, [top]
        if p.required:
            return failure(state.slices[top.index], slice_count)
        if search > 0 and not p.unconstrained:
            return self.fit_level(search - 1, p)
        return self._spread(search, ordered, p, slice_count, failure)

    def _spread(
        self,
        search: int,
        ordered: list[Domain],
        p: _Params,
        slice_count: int,
        failure: Callable[[int, int], str],
    ) -> tuple[int, list[Domain]] | str:
        """Several domains of the top level (or of an unconstrained request), greedily."""
        state = self.state
        best_fit = not p.unconstrained
        chosen: list[Domain] = []
        remaining, leaders_left = slice_count, p.leader_count
        ordered = self._leader_first(ordered, p.count, p.leader_count, p.slice_size, True)
        index = 0
        while leaders_left > 0 and index < len(ordered) and state.leaders[ordered[index].index] > 0:
            domain = ordered[index]
            if best_fit and state.slices_wl[domain.index] >= remaining:
                domain = self._best_fit_slices(ordered[index:], remaining, leaders_left)
            chosen.append(domain)
            leaders_left -= state.leaders[domain.index]
            remaining -= state.slices_wl[domain.index]
            index += 1
        if leaders_left > 0:
            return failure(p.leader_count - leaders_left, slice_count)
        rest = self._sorted(ordered[index:], p.unconstrained)
        for position, domain in enumerate(rest):
            if remaining <= 0:
                break
            if best_fit and state.slices[domain.index] >= remaining:
                domain = self._best_fit_slices(rest[position:], remaining, 0)
            chosen.append(domain)
            remaining -= state.slices[domain.index]
        if remaining > 0:
            return failure(slice_count - remaining, slice_count)
        return search, chosen

    # --- phase 2b: handing pods down ---------------------------------------------------

    def _leader_first(
        self, domains: list[Domain], count: int, leader_count: int, slice_size: int, slices: bool
    ) -> list[Domain]:
        """A leader-capable domain whose leader still leaves room for every worker, first."""
        if leader_count == 0 or len(domains) < 2:
            return domains
        state = self.state
        needed = count // slice_size if slices else count
        counts = state.slices if slices else state.pods
        with_leader = state.slices_wl if slices else state.pods_wl
        available = sum(counts[d.index] for d in domains)
        for position, domain in enumerate(domains):
            if state.leaders[domain.index] < leader_count:
                continue
            penalty = counts[domain.index] - with_leader[domain.index]
            if available - penalty < needed:
                continue
            if position == 0:
                return domains
            return [domain, *domains[:position], *domains[position + 1 :]]
        return domains

    def hand_down(
        self,
        domains: list[Domain],
        count: int,
        leader_count: int,
        slice_size: int,
        unconstrained: bool,
        slices: bool,
    ) -> list[Domain]:
        """Give ``count`` pods to ``domains`` in order; the domains that got some: pure."""
        state = self.state
        domains = self._leader_first(domains, count, leader_count, slice_size, slices)
        best_fit = not unconstrained
        primary = state.slices if slices else state.pods
        with_leader = state.slices_wl if slices else state.pods_wl
        unit = slice_size if slices else 1
        remaining = count // slice_size if slices else count
        leaders_left = leader_count
        chosen: list[Domain] = []
        for position, domain in enumerate(domains):
            if leaders_left > 0:
                if (
                    best_fit
                    and with_leader[domain.index] >= remaining
                    and state.leaders[domain.index] >= leaders_left
                ):
                    domain = (
                        self._best_fit_slices(domains[position:], remaining, leaders_left)
                        if slices
                        else self._best_fit(domains[position:], remaining, leaders_left)
                    )
                i = domain.index
                chosen.append(domain)
                if with_leader[i] >= remaining and state.leaders[i] >= leaders_left:
                    primary[i] = remaining
                    state.leaders[i] = leaders_left
                    state.pods[i] = remaining * unit
                    return chosen
                with_leader[i] = min(with_leader[i], remaining)
                state.leaders[i] = min(state.leaders[i], leaders_left)
                primary[i] = with_leader[i]
                state.pods[i] = with_leader[i] * unit
                leaders_left -= state.leaders[i]
                remaining -= with_leader[i]
                continue
            if best_fit and primary[domain.index] >= remaining:
                domain = (
                    self._best_fit_slices(domains[position:], remaining, 0)
                    if slices
                    else self._best_fit(domains[position:], remaining, 0)
                )
            i = domain.index
            state.leaders[i] = 0
            chosen.append(domain)
            if primary[i] >= remaining:
                primary[i] = remaining
                state.pods[i] = remaining * unit
                return chosen
            state.pods[i] = primary[i] * unit
            remaining -= primary[i]
        return []


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
) -> _Params | str:
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
    return _Params(
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
) -> dict[str, Placement] | str:
    """Place ``workers`` (and a one-pod ``leader`` placed with them) in ``tree``: pure.

    ``free``: what is left of each leaf.  Returns the placement per pod-set
    name, or the reason it cannot be placed.
    """
    params = _parameters(tree, workers, 1 if leader is not None else 0)
    if isinstance(params, str):
        return params
    placer = _Placer(tree, topology)
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
        lower = placer._sorted([c for d in domains for c in d.children], params.unconstrained)
        domains = placer.hand_down(
            lower, params.count, params.leader_count, params.slice_size, params.unconstrained, True
        )
        level += 1
    state = placer.state
    while level < last:
        size = params.size_at_level.get(level + 1, 1)
        lower_domains: list[Domain] = []
        for domain in domains:
            children = placer._sorted(domain.children, params.unconstrained)
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
    result: dict[str, Placement] = {}
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
) -> dict[str, Placement] | tuple[str, str]:
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
    result: dict[str, Placement] = {}
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


def _assignment(tree: TopologyTree, counted: list[tuple[Domain, int]]) -> Placement:
    first = len(tree.levels) - 1 if tree.by_hostname else 0
    ordered = sorted(counted, key=lambda item: item[0].values)
    return Placement(
        levels=tree.levels[first:],
        domains=tuple(
            PlacedDomain(values=domain.values[first:], count=count)
            for domain, count in ordered
            if count > 0
        ),
    )


__all__ = [
    "Exclusions",
    "PlacedDomain",
    "Placement",
    "PodSetPlacementRequest",
    "count_in",
    "has_levels",
    "place",
    "place_pod_sets",
    "requested_level",
    "taint_text",
]
