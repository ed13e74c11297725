"""Plain Pods and pod groups placed by topology: the request, the start, the domain per pod."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from scheduler.api.quantity import Quantity
from scheduler.api.topology_assignment import DomainAssignment, TopologyAssignment
from scheduler.core.decisions import Admit, PodSetAdmission
from scheduler.jobs.actions import CreateWorkload, StartJob, StartPods
from scheduler.jobs.pod import gate
from scheduler.jobs.pod.controller import next_pod_action
from scheduler.jobs.pod.group import next_group_action
from scheduler.jobs.start_placement import FlavorPlacement
from scheduler.jobs.topology_rules import check_topology_on_pod
from scheduler.jobs.topology_ungate import pods_to_ungate, ungated_copy
from scheduler.status.workload_status import admitted_status
from tests.builders import pod

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
FLAVORS = {"tas": FlavorPlacement({"instance-type": "on-demand"})}
HOST = "kubernetes.io/hostname"
BLOCK = "cloud.provider.com/topology-block"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
INDEX = "kueue.x-k8s.io/pod-group-pod-index"
ADMISSION_GATE = {"name": "kueue.x-k8s.io/admission"}
TOPOLOGY_GATE = {"name": "kueue.x-k8s.io/topology"}


def single(**annotations: str) -> dict[str, Any]:
    built = pod("p", "ml").uid("uid-p").queue("q").image("i").requests(cpu="1")
    return gate(built.annotations(annotations).build())


def member(index: int, total: int = 4) -> dict[str, Any]:
    built = (
        pod(f"g-{index}", "ml")
        .uid(f"uid-{index}")
        .queue("q")
        .group("g", total)
        .labels({INDEX: str(index)})
        .annotations({REQUIRED: BLOCK})
        .image("i")
        .requests(cpu="1")
    )
    return gate(built.build())


def admit(workload: dict[str, Any], placed: TopologyAssignment | None) -> dict[str, Any]:
    pod_sets = tuple(
        PodSetAdmission(
            p["name"],
            p["count"],
            {"cpu": "tas"},
            {"cpu": Quantity.parse(str(p["count"]))},
            topology_assignment=placed,
        )
        for p in workload["spec"]["podSets"]
    )
    decision = Admit(workload="ml/w", cluster_queue="cq", pod_sets=pod_sets, message="")
    return {**workload, "status": admitted_status(workload, decision, NOW)}


def created(action: object) -> dict[str, Any]:
    assert isinstance(action, CreateWorkload)
    return action.workload


def test_every_queued_pod_asks_for_topology_as_kueue_builds_it() -> None:
    with_annotation = created(next_pod_action(single(**{REQUIRED: HOST}), None, flavors=FLAVORS))
    assert with_annotation["spec"]["podSets"][0]["topologyRequest"] == {
        "required": HOST,
        "podIndexLabel": INDEX,
    }
    plain = created(next_pod_action(single(), None, flavors=FLAVORS))
    assert plain["spec"]["podSets"][0]["topologyRequest"] == {"podIndexLabel": INDEX}, (
        "numbered only: placed by topology in a ClusterQueue of topology flavors only"
    )


def test_a_pod_placed_by_topology_keeps_its_topology_gate_until_it_has_its_domain() -> None:
    p = single(**{REQUIRED: HOST})
    placed = TopologyAssignment((HOST,), (DomainAssignment(("kind-worker",), 1),))
    workload = admit(created(next_pod_action(p, None, flavors=FLAVORS)), placed)
    action = next_pod_action(p, workload, flavors=FLAVORS)
    assert isinstance(action, StartJob)
    started = action.job
    assert started["spec"]["schedulingGates"] == [TOPOLOGY_GATE]
    assert started["spec"]["nodeSelector"] == {"instance-type": "on-demand"}
    assert started["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "main"
    annotations = started["metadata"]["annotations"]
    assert annotations["kueue.x-k8s.io/workload"] == workload["metadata"]["name"]
    [ungate] = pods_to_ungate(workload, [started])
    assert ungate.node_selector == {HOST: "kind-worker"}
    steered = ungated_copy(started, ungate.node_selector)
    assert "schedulingGates" not in steered["spec"]
    assert steered["spec"]["nodeSelector"] == {"instance-type": "on-demand", HOST: "kind-worker"}


def test_a_pod_admitted_without_topology_loses_both_gates() -> None:
    p = single()
    workload = admit(created(next_pod_action(p, None, flavors=FLAVORS)), None)
    action = next_pod_action(p, workload, flavors=FLAVORS)
    assert isinstance(action, StartJob)
    assert "schedulingGates" not in action.job["spec"]


def test_a_pod_created_without_the_topology_gate_is_not_given_one() -> None:
    p = single(**{REQUIRED: HOST})
    p["spec"]["schedulingGates"] = [ADMISSION_GATE]
    placed = TopologyAssignment((HOST,), (DomainAssignment(("kind-worker",), 1),))
    workload = admit(created(next_pod_action(p, None, flavors=FLAVORS)), placed)
    action = next_pod_action(p, workload, flavors=FLAVORS)
    assert isinstance(action, StartJob)
    assert "schedulingGates" not in action.job["spec"], "the API server allows no new gate"


def test_a_pod_group_gets_its_domains_in_rank_order() -> None:
    pods = [member(i) for i in (3, 1, 0, 2)]
    workload = created(next_group_action(pods, None, flavors=FLAVORS))
    [pod_set] = workload["spec"]["podSets"]
    assert pod_set["count"] == 4
    assert pod_set["topologyRequest"] == {"required": BLOCK, "podIndexLabel": INDEX}
    placed = TopologyAssignment(
        (BLOCK, HOST),
        (
            DomainAssignment(("b1", "n1"), 1),
            DomainAssignment(("b1", "n2"), 1),
            DomainAssignment(("b1", "n3"), 1),
            DomainAssignment(("b1", "n4"), 1),
        ),
    )
    workload = admit(workload, placed)
    action = next_group_action(pods, workload, flavors=FLAVORS)
    assert isinstance(action, StartPods)
    started = [after for _, after in action.pods]
    assert all(p["spec"]["schedulingGates"] == [TOPOLOGY_GATE] for p in started)
    where = {
        item.pod["metadata"]["labels"][INDEX]: item.node_selector[HOST]
        for item in pods_to_ungate(workload, started)
    }
    assert where == {"0": "n1", "1": "n2", "2": "n3", "3": "n4"}


def test_a_pods_own_topology_annotations_are_checked_as_a_templates() -> None:
    assert check_topology_on_pod(single(**{REQUIRED: HOST})) == []
    [refused] = check_topology_on_pod(single(**{REQUIRED: "not a label!"}))
    assert refused.rule == "TAS-2"
    assert refused.field == f"metadata.annotations[{REQUIRED}]"
