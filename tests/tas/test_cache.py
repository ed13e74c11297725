"""What topology-aware scheduling knows of the cluster.

See docs/concepts.md#topology-aware-scheduling.
"""

from __future__ import annotations

from scheduler.api.models import ResourceFlavorSpec
from scheduler.core.tas.cache import TopologyCache
from scheduler.core.tas.held import DomainCharge
from scheduler.core.tas.tree import NodeInfo

HOST = "kubernetes.io/hostname"


def node(name: str, rack: str, *, pool: str = "gpu", schedulable: bool = True) -> NodeInfo:
    return NodeInfo(
        name=name,
        labels={"pool": pool, "rack": rack, HOST: name},
        allocatable={"cpu": 4000, "pods": 10},
        schedulable=schedulable,
    )


def cache_with(*nodes: NodeInfo) -> TopologyCache:
    cache = TopologyCache()
    for item in nodes:
        cache.apply_node(item)
    cache.apply_topology("default", ("rack", HOST))
    cache.apply_flavor(
        "gpu", ResourceFlavorSpec(node_labels={"pool": "gpu"}, topology_name="default")
    )
    return cache


def test_a_flavor_is_ready_only_once_its_topology_exists() -> None:
    cache = TopologyCache()
    cache.apply_flavor(
        "gpu", ResourceFlavorSpec(node_labels={"pool": "gpu"}, topology_name="default")
    )
    assert cache.missing_topology("gpu") == "default"
    assert cache.levels("gpu") is None
    assert cache.apply_topology("default", ("rack", HOST)) == ["gpu"]
    assert cache.missing_topology("gpu") is None
    assert cache.levels("gpu") == ("rack", HOST)


def test_only_ready_schedulable_nodes_of_the_flavor_with_every_level_label_are_leaves() -> None:
    cache = cache_with(
        node("a", "r1"),
        node("b", "r1", pool="cpu"),
        node("c", "r1", schedulable=False),
        NodeInfo(name="d", labels={"pool": "gpu", HOST: "d"}, allocatable={"cpu": 1}),
    )
    tree = cache.tree("gpu")
    assert tree is not None
    assert sorted(tree.leaves) == ["a"]


def test_pods_kuota_did_not_place_take_room_on_their_node() -> None:
    cache = cache_with(node("a", "r1"))
    cache.apply_pod("ns/daemon", "a", {"cpu": 500})
    assert cache.free("gpu")["a"] == {"cpu": 3500, "pods": 9}
    assert cache.apply_pod("ns/daemon", None, None) is True
    assert cache.free("gpu")["a"] == {"cpu": 4000, "pods": 10}


def test_admitted_placements_hold_room_until_released_and_victims_can_be_left_out() -> None:
    cache = cache_with(node("a", "r1"), node("b", "r1"))
    charge = DomainCharge(flavor="gpu", leaf="a", per_pod={"cpu": 1000}, count=3, by_hostname=True)
    cache.held.charge("ns/wl", [charge])
    assert cache.free("gpu")["a"] == {"cpu": 1000, "pods": 7}
    assert cache.free("gpu", without=["ns/wl"])["a"] == {"cpu": 4000, "pods": 10}
    assert cache.free("gpu", empty=True)["a"] == {"cpu": 4000, "pods": 10}
    assert cache.held.release("ns/wl") is True
    assert cache.free("gpu")["a"] == {"cpu": 4000, "pods": 10}
    assert cache.held.release("ns/wl") is False


def test_two_hostname_level_flavors_on_the_same_nodes_share_their_room() -> None:
    cache = cache_with(node("a", "r1"))
    cache.apply_flavor(
        "gpu-spot", ResourceFlavorSpec(node_labels={"pool": "gpu"}, topology_name="default")
    )
    cache.held.charge(
        "ns/wl",
        [DomainCharge(flavor="gpu", leaf="a", per_pod={"cpu": 1000}, count=2, by_hostname=True)],
    )
    assert cache.free("gpu-spot")["a"]["cpu"] == 2000


def test_the_tree_follows_node_changes() -> None:
    cache = cache_with(node("a", "r1"))
    first = cache.tree("gpu")
    assert cache.tree("gpu") is first
    cache.apply_node(node("b", "r2"))
    second = cache.tree("gpu")
    assert second is not first and second is not None
    assert sorted(second.leaves) == ["a", "b"]
    cache.remove_node("a")
    third = cache.tree("gpu")
    assert third is not None and sorted(third.leaves) == ["b"]
