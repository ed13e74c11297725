"""The live scheduler as the visibility API's source of pending workloads.

The engine holds the queues (the order, the places); the scheduler's state
holds each Workload as the API server stored it (its creation time and
owners, which the engine does not keep).  Both are read through callables,
because a replica that steps down replaces its engine and state with fresh
ones (``scheduler.service.loop``).  Pure reading, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from scheduler.core.engine import Engine
from scheduler.core.queues import ClusterQueueQueue
from scheduler.visibility.pages import WorkloadFacts

StoredWorkloads = Mapping[str, Mapping[str, Any]]


class SchedulerSource:
    """Answers :class:`scheduler.visibility.pages.PendingSource` from an engine and its state."""

    def __init__(
        self, engine: Callable[[], Engine], workloads: Callable[[], StoredWorkloads]
    ) -> None:
        self._engine = engine
        self._workloads = workloads

    def pending_queue(self, cluster_queue: str) -> ClusterQueueQueue | None:
        return self._engine().view.pending_queue(cluster_queue)

    def local_queue_target(self, namespace: str, name: str) -> str | None:
        return self._engine().view.local_queue_target(namespace, name)

    def facts(self, key: str) -> WorkloadFacts | None:
        record = self._engine().view.records.get(key)
        if record is None:
            return None
        stored = self._workloads().get(key)
        # Plain dict checks, not objects.metadata: a page reads a thousand of these and the
        # abstract Mapping check costs more than the rest of the item.
        metadata = stored.get("metadata") if isinstance(stored, dict) else None
        if not isinstance(metadata, dict):
            metadata = {}
        namespace, _, name = key.partition("/")
        owners = metadata.get("ownerReferences")
        return WorkloadFacts(
            name=name,
            namespace=namespace,
            creation_timestamp=metadata.get("creationTimestamp"),
            owner_references=tuple(o for o in owners if isinstance(o, dict))
            if isinstance(owners, list)
            else (),
            priority=record.priority,
            local_queue=record.queue_name or "",
        )


__all__ = ["SchedulerSource", "StoredWorkloads"]
