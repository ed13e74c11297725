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
from scheduler.kube.node_failures import NODE_FAILURE_DELAY, node_failure_eviction
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


def test_a_deleted_node_fails_at_once_and_is_reported_once() -> None:
    state = ClusterState(Engine())
    state.on_node(event("ADDED", node("n1")))
    assert state.failed_nodes(NOW, NODE_FAILURE_DELAY) == []
    state.on_node(event("DELETED", node("n1")))
    assert state.failed_nodes(NOW, NODE_FAILURE_DELAY) == ["n1"]
    assert state.failed_nodes(NOW + timedelta(minutes=5), NODE_FAILURE_DELAY) == []


def test_a_node_not_ready_fails_after_the_delay_once_until_ready_again() -> None:
    state = ClusterState(Engine())
    state.on_node(event("MODIFIED", node("n1", ready=False, since=NOW)))
    assert state.failed_nodes(NOW + timedelta(seconds=29), NODE_FAILURE_DELAY) == []
    assert state.failed_nodes(NOW + timedelta(seconds=30), NODE_FAILURE_DELAY) == ["n1"]
    state.on_node(event("MODIFIED", node("n1", ready=False, since=NOW)))
    assert state.failed_nodes(NOW + timedelta(minutes=5), NODE_FAILURE_DELAY) == []
    state.on_node(event("MODIFIED", node("n1", ready=True)))
    later = NOW + timedelta(minutes=10)
    state.on_node(event("MODIFIED", node("n1", ready=False, since=later)))
    assert state.failed_nodes(later + timedelta(seconds=31), NODE_FAILURE_DELAY) == ["n1"]


def test_a_node_ready_again_within_the_delay_does_not_fail() -> None:
    state = ClusterState(Engine())
    state.on_node(event("MODIFIED", node("n1", ready=False, since=NOW)))
    state.on_node(event("MODIFIED", node("n1", ready=True)))
    assert state.failed_nodes(NOW + timedelta(minutes=1), NODE_FAILURE_DELAY) == []


def test_the_eviction_has_kueues_reason_and_names_the_nodes() -> None:
    decision = node_failure_eviction("ns/w", ["n2", "n1"])
    assert (decision.reason, decision.preemptor) == ("NodeFailures", None)
    assert decision.message == (
        "Workload was evicted as there was no replacement for unhealthy node(s): n1,n2"
    )
