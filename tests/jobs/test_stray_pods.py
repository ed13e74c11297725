"""Pods steered to a node that can never take them (docs/concepts.md#topology-aware-scheduling)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from scheduler.api.topology_assignment import DomainAssignment, TopologyAssignment
from scheduler.jobs.stray_pods import assigned_hosts, steered_host, terminated_status

HOST = "kubernetes.io/hostname"
NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def pod(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u1"},
        "spec": {"nodeSelector": {HOST: "n1", "pool": "tas"}, **spec},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled"}]},
    }


def test_a_pending_pod_with_a_hostname_selector_is_steered_there() -> None:
    assert steered_host(pod()) == "n1"


def test_a_bound_gated_ended_or_deleting_pod_is_not_steered() -> None:
    assert steered_host(pod(nodeName="n1")) is None, "bound: kube-scheduler took it"
    assert steered_host(pod(schedulingGates=[{"name": "kueue.x-k8s.io/topology"}])) is None
    ended = pod()
    ended["status"]["phase"] = "Failed"
    assert steered_host(ended) is None
    deleting = pod()
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert steered_host(deleting) is None
    assert steered_host(pod(nodeSelector={"pool": "tas"})) is None, "no hostname"


def test_the_nodes_of_an_admission_are_its_hostname_level_domains() -> None:
    by_host = TopologyAssignment(
        (HOST,), (DomainAssignment(("n1",), 2), DomainAssignment(("n2",), 1))
    )
    by_rack = TopologyAssignment(("rack",), (DomainAssignment(("r1",), 3),))
    workload = {
        "status": {
            "admission": {
                "podSetAssignments": [
                    {"name": "a", "topologyAssignment": by_host.encoded()},
                    {"name": "b", "topologyAssignment": by_rack.encoded()},
                    {"name": "c"},
                ]
            }
        }
    }
    assert assigned_hosts(workload) == {"n1", "n2"}
    assert assigned_hosts({"status": {}}) == set()


def test_a_failed_pod_says_why_in_kueues_words_and_keeps_its_conditions() -> None:
    status = terminated_status(pod(), NOW)
    assert status["phase"] == "Failed"
    assert status["conditions"] == [
        {"type": "PodScheduled"},
        {
            "type": "TerminatedByKueue",
            "status": "True",
            "reason": "UnschedulableOnAssignedNode",
            "message": "Pod terminated by Kueue NodeController due to node taint",
            "lastTransitionTime": "2026-01-01T12:00:00Z",
        },
    ]
