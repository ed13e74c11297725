"""Topology-aware scheduling in the engine: quota and placement decided together.

See docs/concepts.md#topology-aware-scheduling.
"""

from __future__ import annotations

from scheduler.api.models import Taint, Toleration
from scheduler.api.topology_assignment import DomainAssignment
from scheduler.core.decisions import Evict
from scheduler.core.engine import Engine, NodeInfo, PodUsage
from scheduler.core.node_taints import failing_taint
from tests.builders import (
    T0,
    cluster_queue,
    engine_with,
    flavor_quotas,
    local_queue,
    resource_flavor,
    topology,
    workload,
)

HOST = "kubernetes.io/hostname"


def nodes(racks: int = 2, per_rack: int = 2, cpu: int = 4000) -> list[NodeInfo]:
    return [
        NodeInfo(
            name=f"r{rack}-n{index}",
            labels={"pool": "tas", "rack": f"r{rack}", HOST: f"r{rack}-n{index}"},
            allocatable={"cpu": cpu, "pods": 110},
        )
        for rack in range(racks)
        for index in range(per_rack)
    ]


def tas_engine(
    *workloads: object, with_topology: bool = True, within_queue: str = "Never"
) -> Engine:
    objects: list[object] = [
        resource_flavor("tas").node_labels(pool="tas").topology("default"),
        cluster_queue("cq")
        .resource_group(flavor_quotas("tas", cpu="64"))
        .preemption(withinClusterQueue=within_queue),
        local_queue("lq").cluster_queue("cq"),
    ]
    if with_topology:
        objects.append(topology("default", "rack", HOST))
    engine = engine_with(*objects)
    for node in nodes():
        engine.apply(node)
    for item in workloads:
        engine.apply(model_of(item))
    return engine


def model_of(item: object) -> object:
    from tests.builders import model

    return model(item)


def placed(engine: Engine, key: str) -> dict[str, int]:
    state = engine.view.workload_state(key)
    assert state.state == "Admitted", (state.reason, state.message)
    assignment = state.admission[0].topology_assignment
    assert assignment is not None
    assert assignment.levels == (HOST,)
    return {domain.values[0]: domain.count for domain in assignment.domains}


def test_a_required_rack_is_admitted_with_its_pods_in_one_rack() -> None:
    engine = tas_engine(
        workload("w").queue("lq").pod_set(count=6, cpu="1").topology_request(required="rack")
    )
    engine.run_until_steady(T0)
    hosts = placed(engine, "default/w")
    assert sum(hosts.values()) == 6
    assert len({name.split("-")[0] for name in hosts}) == 1


def test_quota_that_fits_but_no_rack_that_holds_the_pods_waits_with_kueues_reason() -> None:
    engine = tas_engine(
        workload("w").queue("lq").pod_set(count=9, cpu="1").topology_request(required="rack")
    )
    engine.run_until_steady(T0)
    state = engine.view.workload_state("default/w")
    assert (state.state, state.reason) == ("Pending", "TopologyPlacementFailed")
    assert state.message == (
        "couldn't assign flavors to pod set main: "
        'topology "default" allows to fit only 8 out of 9 pod(s)'
    )


def test_a_workload_that_asks_for_no_topology_in_a_tas_only_queue_is_placed_anyway() -> None:
    engine = tas_engine(workload("w").queue("lq").pod_set(count=3, cpu="1"))
    engine.run_until_steady(T0)
    assert sum(placed(engine, "default/w").values()) == 3


def test_pods_kuota_did_not_place_take_room_on_their_nodes() -> None:
    engine = tas_engine()
    for node in nodes():
        engine.apply(
            PodUsage(key=f"kube-system/{node.name}-daemon", node=node.name, requests={"cpu": 3000})
        )
    engine.apply(
        model_of(
            workload("w").queue("lq").pod_set(count=5, cpu="1").topology_request(required="rack")
        )
    )
    engine.run_until_steady(T0)
    state = engine.view.workload_state("default/w")
    assert state.reason == "TopologyPlacementFailed"
    engine.remove("Pod", "r0-n0-daemon", "kube-system")
    engine.remove("Pod", "r0-n1-daemon", "kube-system")
    engine.run_until_steady(T0)
    assert set(placed(engine, "default/w")) == {"r0-n0", "r0-n1"}


def test_admitted_placements_keep_their_domains_from_the_next_workload() -> None:
    engine = tas_engine(
        workload("a")
        .queue("lq")
        .created(0)
        .pod_set(count=8, cpu="1")
        .topology_request(required="rack"),
        workload("b")
        .queue("lq")
        .created(1)
        .pod_set(count=8, cpu="1")
        .topology_request(required="rack"),
        workload("c")
        .queue("lq")
        .created(2)
        .pod_set(count=1, cpu="1")
        .topology_request(required="rack"),
    )
    engine.run_until_steady(T0)
    racks = {
        key: {name.split("-")[0] for name in placed(engine, f"default/{key}")} for key in ("a", "b")
    }
    assert racks["a"] != racks["b"]
    state = engine.view.workload_state("default/c")
    assert state.state == "Pending"
    engine.finish("default/a")
    engine.run_until_steady(T0)
    assert {name.split("-")[0] for name in placed(engine, "default/c")} == racks["a"]


def test_a_higher_priority_workload_preempts_to_get_a_rack() -> None:
    engine = tas_engine(
        workload("low-a")
        .queue("lq")
        .created(0)
        .pod_set(count=5, cpu="1")
        .topology_request(required="rack"),
        workload("low-b")
        .queue("lq")
        .created(1)
        .pod_set(count=5, cpu="1")
        .topology_request(required="rack"),
        within_queue="LowerPriority",
    )
    engine.run_until_steady(T0)
    high = workload("high").queue("lq").priority(10).created(2)
    engine.apply(model_of(high.pod_set(count=6, cpu="1").topology_request(required="rack")))
    result = engine.cycle(T0)
    evicted = [d for d in result.decisions if isinstance(d, Evict)]
    assert len(evicted) == 1  # one rack's worth is enough, though the quota never ran out
    state = engine.view.workload_state("default/high")
    assert state.reason == "WaitingForPreemptedWorkloads"
    engine.release(evicted[0].victim)
    engine.run_until_steady(T0)
    assert sum(placed(engine, "default/high").values()) == 6


def test_a_missing_topology_makes_the_queue_inactive_with_kueues_reason() -> None:
    engine = tas_engine(with_topology=False)
    status = engine.view.cluster_queue_status("cq")
    assert not status.active
    assert status.active_reason == "TopologyNotFound"
    assert 'there is no Topology "default" for TAS flavor "tas"' in status.active_message


def test_a_restart_counts_the_placement_the_status_records() -> None:
    engine = tas_engine(
        workload("a").queue("lq").pod_set(count=8, cpu="1").topology_request(required="rack")
    )
    engine.run_until_steady(T0)
    hosts = placed(engine, "default/a")
    admission = engine.view.workload_state("default/a").admission[0]
    assert admission.topology_assignment is not None
    encoded = admission.topology_assignment.encoded()

    restarted = tas_engine()
    recorded = (
        workload("a")
        .queue("lq")
        .pod_set(count=8, cpu="1")
        .topology_request(required="rack")
        .reserve_quota("cq", flavor="tas")
    )
    recorded.raw["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"] = encoded
    restarted.apply(model_of(recorded))
    restarted.apply(
        model_of(
            workload("b")
            .queue("lq")
            .created(1)
            .pod_set(count=8, cpu="1")
            .topology_request(required="rack")
        )
    )
    restarted.run_until_steady(T0)
    taken = {name.split("-")[0] for name in hosts}
    assert {name.split("-")[0] for name in placed(restarted, "default/b")} != taken
    assert restarted.view.workload_state("default/a").admission[0].topology_assignment == (
        admission.topology_assignment
    )
    assert all(isinstance(d, DomainAssignment) for d in admission.topology_assignment.domains)


def test_a_pod_set_that_asks_for_topology_never_gets_a_flavor_without_one() -> None:
    engine = engine_with(
        resource_flavor("plain"),
        resource_flavor("tas").node_labels(pool="tas").topology("default"),
        topology("default", "rack", HOST),
        cluster_queue("cq").resource_group(
            flavor_quotas("plain", cpu="64"), flavor_quotas("tas", cpu="64")
        ),
        local_queue("lq").cluster_queue("cq"),
        workload("tas-job").queue("lq").pod_set(count=2, cpu="1").topology_request(required="rack"),
        workload("plain-job").queue("lq").pod_set(count=2, cpu="1"),
    )
    for node in nodes():
        engine.apply(node)
    engine.run_until_steady(T0)
    assert engine.view.workload_state("default/tas-job").admission[0].flavors == {"cpu": "tas"}
    assert engine.view.workload_state("default/plain-job").admission[0].flavors == {"cpu": "plain"}


def test_the_engine_names_the_workloads_placed_on_a_node() -> None:
    engine = tas_engine(
        workload("a")
        .queue("lq")
        .created(0)
        .pod_set(count=6, cpu="1")
        .topology_request(required="rack"),
        workload("plain").queue("lq").created(1).pod_set(count=1, cpu="1"),
    )
    engine.run_until_steady(T0)
    hosts = placed(engine, "default/a")
    plain = placed(engine, "default/plain")  # a TAS-only queue places it too
    for node in nodes():
        expected = [
            key for key, on in (("default/a", hosts), ("default/plain", plain)) if node.name in on
        ]
        assert engine.placements.placed_on_node(node.name) == expected, node.name
    engine.finish("default/a")
    assert all(engine.placements.placed_on_node(name) == [] for name in set(hosts) - set(plain))


def _replaced_hosts(engine: Engine, lost: str) -> dict[str, int]:
    """Pods per node of workload ``w``'s admission once ``lost`` failed: it must be found."""
    replaced = engine.placements.replacement_admission("default/w", [lost])
    assert isinstance(replaced, tuple), replaced
    assignment = replaced[0].topology_assignment
    assert assignment is not None
    return {domain.values[0]: domain.count for domain in assignment.domains}


def test_a_failed_nodes_pods_are_placed_again_inside_the_required_rack() -> None:
    engine = tas_engine(
        workload("w").queue("lq").pod_set(count=3, cpu="1").topology_request(required="rack")
    )
    engine.run_until_steady(T0)
    before = placed(engine, "default/w")
    (lost,) = before  # three pods fit one node of 4 CPUs: best fit
    engine.remove("Node", lost)
    after = _replaced_hosts(engine, lost)
    assert lost not in after and sum(after.values()) == 3
    assert {name.split("-")[0] for name in after} == {lost.split("-")[0]}, "the same rack"


def test_no_room_in_the_required_rack_means_no_replacement() -> None:
    engine = tas_engine(
        workload("w").queue("lq").pod_set(count=8, cpu="1").topology_request(required="rack")
    )
    engine.run_until_steady(T0)
    lost = sorted(placed(engine, "default/w"))[0]
    engine.remove("Node", lost)
    replaced = engine.placements.replacement_admission("default/w", [lost])
    assert isinstance(replaced, str)
    assert replaced.startswith(f"cannot find replacement assignment for unhealthy node(s) {lost}")


def test_pods_kept_on_healthy_nodes_keep_their_place() -> None:
    engine = tas_engine(
        workload("w").queue("lq").pod_set(count=6, cpu="1").topology_request(preferred="rack")
    )
    engine.run_until_steady(T0)
    before = placed(engine, "default/w")
    lost = min(before, key=lambda name: before[name])
    engine.remove("Node", lost)
    replaced = engine.placements.replacement_admission("default/w", [lost])
    assert isinstance(replaced, tuple), replaced
    assignment = replaced[0].topology_assignment
    assert assignment is not None
    after = {domain.values[0]: domain.count for domain in assignment.domains}
    for name, count in before.items():
        if name != lost:
            assert after.get(name, 0) >= count, (before, after)
    assert sum(after.values()) == 6 and lost not in after


def test_a_lost_pod_of_a_slice_goes_back_to_that_slices_rack() -> None:
    engine = tas_engine(
        workload("w")
        .queue("lq")
        .pod_set(count=4, cpu="3")
        .topology_request(preferred="rack", podSetSliceRequiredTopology="rack", podSetSliceSize=2)
    )
    engine.apply(
        NodeInfo(
            name="r0-n2",
            labels={"pool": "tas", "rack": "r0", HOST: "r0-n2"},
            allocatable={"cpu": 4000, "pods": 110},
        )
    )
    engine.run_until_steady(T0)
    before = placed(engine, "default/w")
    assert sum(before.values()) == 4
    lost = next(name for name in sorted(before) if name.startswith("r1-"))
    engine.remove("Node", lost)
    replaced = engine.placements.replacement_admission("default/w", [lost])
    # r1 keeps one pod: the lost one completes that slice, so it must stay in r1, where no
    # node has room for 3 CPUs beside what is there: no replacement.
    assert isinstance(replaced, str), replaced
    kept_in_r0 = next(name for name in sorted(before) if name.startswith("r0-"))
    engine.remove("Node", kept_in_r0)
    engine2 = engine.placements.replacement_admission("default/w", [kept_in_r0])
    assert isinstance(engine2, tuple), engine2
    assignment = engine2[0].topology_assignment
    assert assignment is not None
    after = {domain.values[0]: domain.count for domain in assignment.domains}
    assert kept_in_r0 not in after and sum(after.values()) == 4
    r0 = sum(count for name, count in after.items() if name.startswith("r0-"))
    assert r0 == 2, ("the slice of rack r0 is whole again, in r0", after)


def _tainted(name: str, effect: str) -> NodeInfo:
    (node,) = [n for n in nodes() if n.name == name]
    return NodeInfo(
        name=node.name,
        labels=node.labels,
        allocatable=node.allocatable,
        taints=(Taint(key="key1", value="value1", effect=effect),),
    )


def test_a_taint_its_pods_do_not_tolerate_fails_the_node_for_the_workload() -> None:
    engine = tas_engine(
        workload("w").queue("lq").pod_set(count=3, cpu="1").topology_request(required="rack")
    )
    engine.run_until_steady(T0)
    (node,) = placed(engine, "default/w")
    assert engine.placements.failing_taint("default/w", node) is None, "no taint yet"
    engine.apply(_tainted(node, "PreferNoSchedule"))
    assert engine.placements.failing_taint("default/w", node) is None, (
        "PreferNoSchedule never fails a node"
    )
    engine.apply(_tainted(node, "NoSchedule"))
    assert engine.placements.failing_taint("default/w", node) == Taint(
        key="key1", value="value1", effect="NoSchedule"
    )
    other = next(n.name for n in nodes() if n.name != node)
    engine.apply(_tainted(other, "NoExecute"))
    assert engine.placements.failing_taint("default/w", other) is None, (
        "nothing of w is placed there"
    )


def _tolerating_on_one_node(**toleration: str) -> tuple[Engine, str]:
    """An engine with workload ``w`` (3 pods, one rack, ``toleration``) placed on one node."""
    engine = tas_engine(
        workload("w")
        .queue("lq")
        .pod_set(count=3, cpu="1")
        .topology_request(required="rack")
        .toleration(**toleration)
    )
    engine.run_until_steady(T0)
    (node,) = placed(engine, "default/w")
    return engine, node


def test_a_taint_the_pod_set_or_its_flavor_tolerates_leaves_the_node_healthy() -> None:
    engine, node = _tolerating_on_one_node(key="key1", value="value1", effect="NoSchedule")
    engine.apply(_tainted(node, "NoSchedule"))
    assert engine.placements.failing_taint("default/w", node) is None
    engine.apply(_tainted(node, "NoExecute"))
    assert engine.placements.failing_taint("default/w", node) is not None, (
        "the toleration is NoSchedule's"
    )
    engine.apply(
        model_of(
            resource_flavor("tas")
            .node_labels(pool="tas")
            .topology("default")
            .toleration("key1", operator="Exists")
        )
    )
    assert engine.placements.failing_taint("default/w", node) is None, (
        "the flavor's toleration counts"
    )


def test_a_failed_node_is_never_its_own_replacement_though_still_in_the_tree() -> None:
    engine, lost = _tolerating_on_one_node(key="key1", operator="Exists")
    engine.apply(_tainted(lost, "NoExecute"))  # tolerated: the node stays placeable
    after = _replaced_hosts(engine, lost)
    assert lost not in after and sum(after.values()) == 3


def test_only_a_toleration_without_time_limit_keeps_a_node_healthy() -> None:
    taint = Taint(key="key1", value="value1", effect="NoExecute")
    for_a_while = Toleration(key="key1", value="value1", effect="NoExecute", toleration_seconds=0)
    for_good = Toleration(key="key1", operator="Exists")
    assert failing_taint([taint], [[for_a_while]]) == taint, "evicted after tolerationSeconds"
    assert failing_taint([taint], [[for_good]]) is None
    assert failing_taint([taint], [[for_good], []]) == taint, "every pod set on the node counts"
    assert failing_taint([taint], []) is None, "no pod set there"
