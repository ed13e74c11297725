"""Nodes that fail under workloads placed by topology (docs/concepts.md#topology-aware-scheduling).

Which nodes count as failed, and when, is the state's (from Node events);
the eviction is Kueue's ``NodeFailures`` with Kueue's message.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from scheduler.api import objects
from scheduler.core.engine import Engine
from scheduler.kube.informer import Event
from scheduler.kube.node_failures import node_failure_eviction
from scheduler.kube.state import ClusterState

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def node(name: str, ready: bool = True, since: datetime = NOW) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {
            "allocatable": {"cpu": "4", "pods": "110"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "lastTransitionTime": since.strftime("%Y-%m-%dT%H:%M:%SZ"),
                }
            ],
        },
    }


def event(kind: str, obj: dict[str, Any]) -> Event:
    return Event(kind, obj, objects.key(obj))  # type: ignore[arg-type]


def test_a_deleted_node_is_reported_once() -> None:
    state = ClusterState(Engine())
    state.topology.on_node(event("ADDED", node("n1")))
    assert state.topology.gone_nodes() == []
    state.topology.on_node(event("DELETED", node("n1")))
    assert state.topology.gone_nodes() == ["n1"]
    assert state.topology.gone_nodes() == []


def test_a_node_without_a_ready_condition_is_gone_at_once() -> None:
    state = ClusterState(Engine())
    bare = node("n1")
    bare["status"]["conditions"] = []
    state.topology.on_node(event("ADDED", bare))
    assert state.topology.gone_nodes() == ["n1"]


def test_not_ready_nodes_are_known_with_the_time_until_ready_again() -> None:
    state = ClusterState(Engine())
    state.topology.on_node(event("MODIFIED", node("n1", ready=False, since=NOW)))
    state.topology.on_node(
        event("MODIFIED", node("n1", ready=False, since=NOW + timedelta(minutes=1)))
    )
    assert state.topology.not_ready_nodes() == {"n1": NOW}, "the first time it was seen not Ready"
    state.topology.on_node(event("MODIFIED", node("n1", ready=True)))
    assert state.topology.not_ready_nodes() == {}
    assert state.topology.gone_nodes() == [], "not Ready is not gone"


def pod(name: str, node_name: str, **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "resourceVersion": "1",
            "annotations": {
                "kueue.x-k8s.io/workload": "w",
                "kueue.x-k8s.io/podset-required-topology": "rack",
            },
            **metadata,
        },
        "spec": {"nodeName": node_name, "containers": [{"name": "c"}]},
        "status": {"phase": "Running"},
    }


def test_live_pods_on_a_node_leave_out_finished_and_deleting_ones() -> None:
    state = ClusterState(Engine())
    state.topology.on_pod(event("ADDED", pod("a", "n1")))
    state.topology.on_pod(event("ADDED", pod("b", "n1", deletionTimestamp="2026-01-01T00:00:00Z")))
    state.topology.on_pod(event("ADDED", pod("c", "n2")))
    assert state.topology.live_pods_on("ns/w", "n1") == 1
    assert state.topology.live_pods_on("ns/w", "n2") == 1
    state.topology.on_pod(event("DELETED", pod("a", "n1")))
    assert state.topology.live_pods_on("ns/w", "n1") == 0


def test_the_eviction_has_kueues_reason_and_names_the_nodes() -> None:
    decision = node_failure_eviction("ns/w", ["n2", "n1"])
    assert (decision.reason, decision.preemptor) == ("NodeFailures", None)
    assert decision.message == (
        "Workload was evicted as there was no replacement for unhealthy node(s): n1,n2"
    )


def test_the_status_keeps_everything_but_the_new_assignment() -> None:
    from scheduler.api.quantity import Quantity
    from scheduler.api.topology_assignment import DomainAssignment, TopologyAssignment
    from scheduler.core.decisions import PodSetAdmission
    from scheduler.status.topology_status import with_topology_assignments

    old = TopologyAssignment(("kubernetes.io/hostname",), (DomainAssignment(("n1",), 2),))
    new = TopologyAssignment(("kubernetes.io/hostname",), (DomainAssignment(("n2",), 2),))
    workload = {
        "status": {
            "admission": {
                "clusterQueue": "cq",
                "podSetAssignments": [
                    {"name": "main", "count": 2, "topologyAssignment": old.encoded()}
                ],
            },
            "conditions": [{"type": "Admitted", "status": "True"}],
        }
    }
    admission = PodSetAdmission("main", 2, {"cpu": "f"}, {"cpu": Quantity.parse("2")}, new)
    status = with_topology_assignments(workload, [admission])
    assert status is not None
    assert status["conditions"] == workload["status"]["conditions"]
    (item,) = status["admission"]["podSetAssignments"]
    assert TopologyAssignment.decoded(item["topologyAssignment"]) == new
    assert workload["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"] == (
        old.encoded()
    ), "the stored object is not changed"
    unchanged = PodSetAdmission("main", 2, {"cpu": "f"}, {"cpu": Quantity.parse("2")}, old)
    assert with_topology_assignments(workload, [unchanged]) is None


def test_tainted_nodes_are_known_while_a_blocking_taint_is_on_them() -> None:
    state = ClusterState(Engine())
    tainted = node("n1")
    tainted["spec"] = {"taints": [{"key": "k", "effect": "PreferNoSchedule"}]}
    state.topology.on_node(event("ADDED", tainted))
    assert state.topology.tainted_nodes() == [], "PreferNoSchedule never blocks"
    tainted["spec"]["taints"].append({"key": "k", "value": "v", "effect": "NoExecute"})
    state.topology.on_node(event("MODIFIED", tainted))
    assert state.topology.tainted_nodes() == ["n1"]
    assert state.topology.gone_nodes() == [], "a tainted node is not gone"
    state.topology.on_node(event("DELETED", tainted))
    assert state.topology.tainted_nodes() == []


def test_pods_steered_to_a_node_are_known_until_bound_or_failed() -> None:
    state = ClusterState(Engine())
    steered = pod("a", "")
    del steered["spec"]["nodeName"]
    steered["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "n1"}
    steered["status"] = {"phase": "Pending"}
    state.topology.on_pod(event("ADDED", steered))
    state.topology.on_pod(event("ADDED", pod("b", "n2")))
    assert [(w, n, objects.name(p)) for w, n, p in state.topology.steered_pods()] == [
        ("ns/w", "n1", "a")
    ]
    state.topology.pod_failed(steered)
    assert state.topology.steered_pods() == [], "failed by kuota: not steered any more"
    bound = {**steered, "spec": {**steered["spec"], "nodeName": "n1"}}
    bound["metadata"] = {**steered["metadata"], "resourceVersion": "2"}
    state.topology.on_pod(event("MODIFIED", bound))
    assert state.topology.steered_pods() == [], "bound by kube-scheduler"


def test_nodes_are_known_from_their_watch() -> None:
    state = ClusterState(Engine())
    assert not state.topology.has_node("n1")
    state.topology.on_node(event("ADDED", node("n1")))
    assert state.topology.has_node("n1")
    state.topology.on_node(event("DELETED", node("n1")))
    assert not state.topology.has_node("n1")


class RecordingWriter:
    """What NodeFailures writes: pods failed and Events."""

    def __init__(self) -> None:
        self.failed: list[tuple[str, dict[str, Any]]] = []
        self.events: list[tuple[str, str]] = []

    async def fail_pod(self, pod: dict[str, Any], status: dict[str, Any]) -> None:
        self.failed.append((objects.name(pod), status))

    def event(self, involved: dict[str, Any], *, kind: str, reason: str, message: str) -> None:
        self.events.append((objects.name(involved), reason))


def _admitted_workload(hosts: list[str], *, evicted: bool = False) -> dict[str, Any]:
    from scheduler.api.topology_assignment import DomainAssignment, TopologyAssignment

    assignment = TopologyAssignment(
        ("kubernetes.io/hostname",), tuple(DomainAssignment((h,), 1) for h in hosts)
    )
    conditions = [{"type": "QuotaReserved", "status": "True"}]
    if evicted:
        conditions.append({"type": "Evicted", "status": "True"})
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns", "resourceVersion": "5"},
        "status": {
            "admission": {
                "clusterQueue": "cq",
                "podSetAssignments": [
                    {
                        "name": "main",
                        "count": len(hosts),
                        "topologyAssignment": assignment.encoded(),
                    }
                ],
            },
            "conditions": conditions,
        },
    }


def _steered_pod(name: str, host: str) -> dict[str, Any]:
    steered = pod(name, "")
    del steered["spec"]["nodeName"]
    steered["spec"]["nodeSelector"] = {"kubernetes.io/hostname": host}
    steered["status"] = {"phase": "Pending"}
    return steered


async def _reconcile(state: ClusterState) -> RecordingWriter:
    from scheduler.kube.node_failures import NodeFailures

    writer = RecordingWriter()

    async def evict(*_: object) -> None:
        raise AssertionError("nothing is evicted here")

    failures = NodeFailures(
        engine=state.engine,
        state=state,
        clock=lambda: NOW,
        writer=writer,  # type: ignore[arg-type]
        evict=evict,
    )
    await failures.reconcile()
    return writer


async def test_a_pod_steered_to_a_node_outside_the_assignment_or_gone_is_failed() -> None:
    state = ClusterState(Engine())
    for name in ("n1", "n2"):
        state.topology.on_node(event("ADDED", node(name)))
    state.remember(_admitted_workload(["n1", "n2"]))
    state.topology.on_pod(event("ADDED", _steered_pod("kept", "n1")))
    state.topology.on_pod(event("ADDED", _steered_pod("moved-away", "n3")))
    writer = await _reconcile(state)
    assert [name for name, _ in writer.failed] == ["moved-away"], "n3 is not in the assignment"
    assert writer.failed[0][1]["conditions"][-1]["reason"] == "UnschedulableOnAssignedNode"
    assert writer.events == [("moved-away", "PodTerminatedByKueue")]
    assert (await _reconcile(state)).failed == [], "failed once"
    state.topology.on_node(event("DELETED", node("n1")))
    assert [name for name, _ in (await _reconcile(state)).failed] == ["kept"], "n1 is gone"


async def test_the_pods_of_an_evicted_workload_are_left_to_its_stop() -> None:
    state = ClusterState(Engine())
    state.topology.on_node(event("ADDED", node("n1")))
    state.remember(_admitted_workload(["n1"], evicted=True))
    state.topology.on_pod(event("ADDED", _steered_pod("p", "n2")))
    assert (await _reconcile(state)).failed == []


async def test_a_single_pods_workload_keeps_its_node_when_it_fails() -> None:
    from scheduler.jobs.pod.group import owned_by_single_pod

    workload = _admitted_workload(["n1"])
    workload["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u1", "controller": True}
    ]
    assert owned_by_single_pod(workload)
    group = {**workload, "metadata": {**workload["metadata"]}}
    group["metadata"]["annotations"] = {"kueue.x-k8s.io/is-group-workload": "true"}
    assert not owned_by_single_pod(group), "a pod group's Workload is not a single pod's"
    job_owned = {**workload, "metadata": {**workload["metadata"]}}
    job_owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u2"}
    ]
    assert not owned_by_single_pod(job_owned)


async def test_node_failures_leave_a_single_pods_workload_where_it_is() -> None:
    from tests.builders import T0, workload
    from tests.tas.test_engine import placed, tas_engine

    engine = tas_engine(
        workload("w").queue("lq").pod_set(count=3, cpu="1").topology_request(required="rack")
    )
    engine.run_until_steady(T0)
    (lost,) = placed(engine, "default/w")
    state = ClusterState(engine)
    stored = _admitted_workload([lost])
    stored["metadata"].update(
        namespace="default",
        ownerReferences=[{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u1"}],
    )
    state.remember(stored)
    state.topology.on_node(event("ADDED", node(lost)))
    state.topology.on_node(event("DELETED", node(lost)))
    writer = await _reconcile(state)  # evicting or writing a replacement would raise
    assert writer.failed == [] and engine.placements.placed_on_node(lost) == ["default/w"]
