"""Topology-aware placement: where a pod set's pods go (docs/concepts.md#topology-aware-scheduling).

The algorithm follows Kueue's step by step; these cases pin what a user sees.
(A differential test against Kueue's own implementation, built from its Go
module, is ``make test-tas-oracle``.)
"""

from __future__ import annotations

from scheduler.api.models import Taint, Toleration
from scheduler.api.topology_assignment import DomainAssignment
from scheduler.core.tas.fit import count_in
from scheduler.core.tas.placement import (
    PodSetPlacementRequest,
    has_levels,
    place,
    place_pod_sets,
)
from scheduler.core.tas.request import read_topology_request
from scheduler.core.tas.tree import NodeInfo, TopologyTree

HOST = "kubernetes.io/hostname"
LEVELS = ("block", "rack", HOST)


def node(name: str, block: str, rack: str, cpu: int = 4000, **extra: object) -> NodeInfo:
    return NodeInfo(
        name=name,
        labels={"block": block, "rack": rack, HOST: name},
        allocatable={"cpu": cpu, "pods": 110},
        **extra,  # type: ignore[arg-type]
    )


def cluster() -> TopologyTree:
    """Two blocks of two racks of two 4-CPU nodes."""
    nodes = [
        node(f"{block}-{rack}-{index}", block, f"{block}-{rack}")
        for block in ("b1", "b2")
        for rack in ("r1", "r2")
        for index in (1, 2)
    ]
    return TopologyTree(LEVELS, nodes)


def free_of(tree: TopologyTree) -> dict[str, dict[str, int]]:
    return {leaf: dict(domain.capacity or {}) for leaf, domain in tree.leaves.items()}


def pods(count: int, cpu: int = 1000, **topology: object) -> PodSetPlacementRequest:
    return PodSetPlacementRequest(
        name="main", count=count, per_pod={"cpu": cpu}, request=read_topology_request(topology)
    )


def hosts(result: object) -> dict[str, int]:
    assert isinstance(result, dict), result
    return {domain.values[-1]: domain.count for domain in result["main"].domains}


def test_a_required_rack_keeps_every_pod_in_one_rack() -> None:
    tree = cluster()
    result = place(tree, "default", free_of(tree), pods(6, required="rack"))
    placed = hosts(result)
    assert sum(placed.values()) == 6
    assert len({name.rsplit("-", 1)[0] for name in placed}) == 1


def test_the_assignment_names_only_the_hostname_level_when_it_is_the_lowest() -> None:
    tree = cluster()
    result = place(tree, "default", free_of(tree), pods(2, required="rack"))
    assert isinstance(result, dict)
    assert result["main"].levels == (HOST,)


def test_a_required_rack_that_no_rack_holds_fails_with_kueues_message() -> None:
    tree = cluster()
    result = place(tree, "default", free_of(tree), pods(9, required="rack"))
    assert result == 'topology "default" allows to fit only 8 out of 9 pod(s)'


def test_nothing_fits_says_so_and_names_what_excluded_the_nodes() -> None:
    tree = TopologyTree(
        LEVELS,
        [
            node("a", "b1", "r1", taints=(Taint(key="gpu", effect="NoSchedule"),)),
            node("b", "b1", "r1", cpu=500),
        ],
    )
    result = place(tree, "default", free_of(tree), pods(1, required="rack"))
    assert result == (
        'topology "default" doesn\'t allow to fit any of 1 pod(s). '
        'Total nodes: 2; excluded: resource "cpu": 1, taint "gpu:NoSchedule": 1'
    )


def test_a_tolerated_taint_does_not_exclude_the_node() -> None:
    tree = TopologyTree(
        LEVELS, [node("a", "b1", "r1", taints=(Taint(key="gpu", effect="NoSchedule"),))]
    )
    request = PodSetPlacementRequest(
        name="main",
        count=1,
        per_pod={"cpu": 1000},
        request=read_topology_request({"required": "rack"}),
        tolerations=(Toleration(key="gpu", operator="Exists"),),
    )
    assert hosts(place(tree, "default", free_of(tree), request)) == {"a": 1}


def test_a_preferred_rack_spreads_within_one_block_when_no_rack_holds_the_pods() -> None:
    tree = cluster()
    placed = hosts(place(tree, "default", free_of(tree), pods(12, preferred="rack")))
    assert sum(placed.values()) == 12
    assert {name.split("-")[0] for name in placed} == {"b1"}
    assert {name.rsplit("-", 1)[0] for name in placed} == {"b1-r1", "b1-r2"}


def test_a_preferred_rack_spans_blocks_only_when_no_block_holds_the_pods() -> None:
    tree = cluster()
    placed = hosts(place(tree, "default", free_of(tree), pods(20, preferred="rack")))
    blocks: dict[str, int] = {}
    for name, count in placed.items():
        blocks[name.split("-")[0]] = blocks.get(name.split("-")[0], 0) + count
    assert blocks == {"b1": 16, "b2": 4}


def test_best_fit_chooses_the_fullest_rack_that_still_holds_the_pods() -> None:
    tree = cluster()
    free = free_of(tree)
    free["b2-r2-1"]["cpu"] = 1000  # rack b2-r2 has room for 5 pods, the others for 8
    placed = hosts(place(tree, "default", free, pods(5, required="rack")))
    assert set(placed) == {"b2-r2-1", "b2-r2-2"}


def test_an_unconstrained_request_fills_the_least_free_nodes_first() -> None:
    tree = cluster()
    free = free_of(tree)
    free["b1-r1-1"]["cpu"] = 1000
    placed = hosts(place(tree, "default", free, pods(1, unconstrained=True)))
    assert placed == {"b1-r1-1": 1}


def test_slices_put_each_group_of_pods_in_one_host() -> None:
    tree = cluster()
    request = pods(8, cpu=2000, podSetSliceRequiredTopology=HOST, podSetSliceSize=2)
    placed = hosts(place(tree, "default", free_of(tree), request))
    assert sum(placed.values()) == 8
    assert all(count % 2 == 0 for count in placed.values())


def test_a_slice_that_no_domain_holds_is_reported_in_slices() -> None:
    tree = cluster()
    request = pods(
        2, cpu=3000, required="rack", podSetSliceRequiredTopology=HOST, podSetSliceSize=2
    )
    assert place(tree, "default", free_of(tree), request) == (
        'topology "default" doesn\'t allow to fit any of 1 slice(s)'
    )


def test_a_leader_and_its_workers_land_in_the_same_rack() -> None:
    tree = cluster()
    workers = PodSetPlacementRequest(
        name="workers",
        count=7,
        per_pod={"cpu": 1000},
        request=read_topology_request({"required": "rack", "podSetGroupName": "g"}),
    )
    leader = PodSetPlacementRequest(
        name="leader",
        count=1,
        per_pod={"cpu": 1000},
        request=read_topology_request({"required": "rack", "podSetGroupName": "g"}),
    )
    result = place_pod_sets(tree, "default", free_of(tree), [leader, workers])
    assert isinstance(result, dict)
    racks = {
        domain.values[-1].rsplit("-", 1)[0]
        for placement in result.values()
        for domain in placement.domains
    }
    assert len(racks) == 1
    assert sum(d.count for d in result["leader"].domains) == 1
    assert sum(d.count for d in result["workers"].domains) == 7


def test_pod_sets_of_one_workload_see_the_room_the_earlier_ones_took() -> None:
    tree = TopologyTree(LEVELS, [node("a", "b1", "r1", cpu=2000)])
    first = PodSetPlacementRequest(
        name="first",
        count=2,
        per_pod={"cpu": 1000},
        request=read_topology_request({"required": "rack"}),
    )
    second = PodSetPlacementRequest(
        name="second",
        count=1,
        per_pod={"cpu": 1000},
        request=read_topology_request({"required": "rack"}),
    )
    assert place_pod_sets(tree, "default", free_of(tree), [first, second]) == (
        "second",
        'topology "default" doesn\'t allow to fit any of 1 pod(s). '
        'Total nodes: 1; excluded: resource "cpu": 1',
    )


def test_a_request_for_a_level_the_topology_lacks_is_refused() -> None:
    tree = cluster()
    assert place(tree, "default", free_of(tree), pods(1, required="zone")) == (
        "no requested topology level: zone"
    )
    assert not has_levels(LEVELS, read_topology_request({"required": "zone"}))
    assert has_levels(LEVELS, read_topology_request({"preferred": "rack"}))


def test_without_hostname_level_leaves_sum_their_nodes() -> None:
    nodes = [node(f"n{i}", "b1", "r1", cpu=1000) for i in range(3)]
    tree = TopologyTree(("block", "rack"), nodes)
    result = place(tree, "default", free_of(tree), pods(3, required="rack"))
    assert isinstance(result, dict)
    assert result["main"].levels == ("block", "rack")
    assert result["main"].domains == (DomainAssignment(values=("b1", "r1"), count=3),)


def test_count_in_names_the_resource_that_limits() -> None:
    assert count_in({"cpu": 1000, "pods": 1}, {"cpu": 2500, "pods": 5}) == (2, "cpu")
    assert count_in({"cpu": 1000, "pods": 1}, {"cpu": 2500}) == (0, "pods")
    assert count_in({"cpu": 0, "pods": 1}, {"pods": 3}) == (3, "pods")
