"""The pods a failure-recovery pass may force, kept from the Pod and Node watches.

See docs/concepts.md#pods-stuck-on-an-unreachable-node and
:mod:`scheduler.kube.failure_recovery`, which forces them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from scheduler.api import objects
from scheduler.jobs.failure_recovery import due_at, eligible, unreachable
from scheduler.kube.informer import Event


class StuckPods:
    """The opted-in pods being deleted, and the unreachable nodes (module docstring)."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self._pods: dict[str, dict[str, Any]] = {}
        self._unreachable: set[str] = set()

    def on_pod(self, event: Event) -> None:
        if not self.enabled:
            return
        key = objects.key(event.object)
        if event.type != "DELETED" and eligible(event.object):
            self._pods[key] = dict(event.object)
        else:
            self._pods.pop(key, None)

    def on_node(self, event: Event) -> None:
        if not self.enabled:
            return
        name = objects.name(event.object)
        if event.type != "DELETED" and unreachable(event.object):
            self._unreachable.add(name)
        else:
            self._unreachable.discard(name)

    def due(self, now: datetime) -> list[dict[str, Any]]:
        """The pods to force now: due, on a node tainted unreachable."""
        found = []
        for pod in self._pods.values():
            at = due_at(pod)
            node = objects.spec(pod).get("nodeName")
            if at is not None and at <= now and node in self._unreachable:
                found.append(pod)
        return sorted(found, key=objects.key)

    def forget(self, pod: Mapping[str, Any]) -> None:
        self._pods.pop(objects.key(pod), None)


__all__ = ["StuckPods"]
