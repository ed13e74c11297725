"""Kueue's failure-recovery policy, the pure part.

See docs/concepts.md#pods-stuck-on-an-unreachable-node.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from scheduler.jobs.failure_recovery import (
    CONDITION,
    REASON,
    due_at,
    eligible,
    forced_status,
    message,
    unreachable,
)
from scheduler.kube.informer import Event
from scheduler.kube.stuck_pods import StuckPods

DELETED_AT = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def pod(*, safe: bool = True, deleting: bool = True, phase: str = "Running") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "p", "namespace": "ml", "uid": "u1"}
    if safe:
        metadata["annotations"] = {"kueue.x-k8s.io/safe-to-forcefully-delete": "true"}
    if deleting:
        metadata["deletionTimestamp"] = "2026-11-27T12:00:00Z"
        metadata["deletionGracePeriodSeconds"] = 30
    return {"metadata": metadata, "spec": {"nodeName": "n1"}, "status": {"phase": phase}}


def node(*, unreachable_taint: bool) -> dict[str, Any]:
    taints = [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]
    return {"metadata": {"name": "n1"}, "spec": {"taints": taints if unreachable_taint else []}}


def test_only_an_opted_in_pod_being_deleted_is_eligible() -> None:
    assert eligible(pod())
    assert not eligible(pod(safe=False))
    assert not eligible(pod(deleting=False))


def test_it_is_due_a_minute_after_its_deletion_began() -> None:
    assert due_at(pod()) == DELETED_AT + timedelta(minutes=1)


def test_the_forced_status_says_failed_with_kueues_condition_and_words() -> None:
    status = forced_status(pod(), DELETED_AT + timedelta(minutes=2))
    assert status["phase"] == "Failed"
    (condition,) = status["conditions"]
    assert (condition["type"], condition["reason"]) == (CONDITION, REASON)
    assert condition["message"] == message(pod())
    assert message(pod()) == (
        "Pod forcefully terminated after 1m30s grace period due to unreachable node `n1` "
        "(triggered by `kueue.x-k8s.io/safe-to-forcefully-delete` annotation)"
    )
    assert forced_status(pod(phase="Succeeded"), DELETED_AT)["phase"] == "Succeeded"


def test_stuck_pods_are_due_only_on_an_unreachable_node_and_only_with_the_gate() -> None:
    stuck = StuckPods(enabled=True)
    stuck.on_pod(Event("MODIFIED", pod(), "ml/p"))
    later = DELETED_AT + timedelta(minutes=2)
    assert stuck.due(later) == []
    stuck.on_node(Event("MODIFIED", node(unreachable_taint=True), "n1"))
    assert [p["metadata"]["name"] for p in stuck.due(later)] == ["p"]
    assert stuck.due(DELETED_AT + timedelta(seconds=30)) == [], "not before the minute"
    stuck.on_node(Event("MODIFIED", node(unreachable_taint=False), "n1"))
    assert stuck.due(later) == []
    assert unreachable(node(unreachable_taint=True)) and not unreachable(None)
    off = StuckPods(enabled=False)
    off.on_pod(Event("MODIFIED", pod(), "ml/p"))
    off.on_node(Event("MODIFIED", node(unreachable_taint=True), "n1"))
    assert off.due(later) == []
