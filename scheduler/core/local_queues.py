"""The LocalQueues routing reads, and the workloads indexed by LocalQueue and priority class.

See docs/scheduling.md#queues.  Each LocalQueue ``namespace/name`` points at a
ClusterQueue and has a stop policy; the queue manager routes a workload by
its LocalQueue's entry here.  The indexes keep routing O(affected): the
workloads submitted to a LocalQueue are routed again when it changes, and
those whose priority comes from a priority class are re-keyed when its value
changes.  An index follows a workload's spec (``index`` after each apply,
``unindex`` before), not its state.
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler.core.priorities import PriorityRef
from scheduler.core.state import WorkloadRecord


class LocalQueues:
    """LocalQueue -> (ClusterQueue, stopPolicy), and the workload indexes (module docstring)."""

    def __init__(self, records: Mapping[str, WorkloadRecord]) -> None:
        self._records = records
        self._targets: dict[str, tuple[str, str]] = {}
        """``namespace/name`` -> (ClusterQueue name, stopPolicy)."""
        self._draining: set[str] = set()
        """LocalQueues whose stopPolicy is ``HoldAndDrain``."""
        self._by_local_queue: dict[str, set[str]] = {}
        self._by_priority_ref: dict[PriorityRef, set[str]] = {}

    # --- LocalQueues ---------------------------------------------------------------

    def apply(self, key: str, cluster_queue: str, stop_policy: str) -> bool:
        """Insert or update LocalQueue ``namespace/name``; whether its ClusterQueue or stop
        policy changed (a status update changes neither)."""
        before = self._targets.get(key)
        self._targets[key] = (cluster_queue, stop_policy)
        if stop_policy == "HoldAndDrain":
            self._draining.add(key)
        else:
            self._draining.discard(key)
        return before != (cluster_queue, stop_policy)

    def remove(self, key: str) -> bool:
        """Forget LocalQueue ``namespace/name``; False when it was unknown."""
        self._draining.discard(key)
        return self._targets.pop(key, None) is not None

    def get(self, key: str) -> tuple[str, str] | None:
        """(ClusterQueue, stopPolicy) of LocalQueue ``namespace/name``; None if unknown: pure."""
        return self._targets.get(key)

    def items(self) -> list[tuple[str, tuple[str, str]]]:
        """Every LocalQueue with its (ClusterQueue, stopPolicy), by key: pure."""
        return sorted(self._targets.items())

    def pointing_at(self, cluster_queue: str) -> list[str]:
        """The LocalQueues that point at ``cluster_queue``, by key: pure."""
        return [key for key, (target, _) in self.items() if target == cluster_queue]

    def draining(self) -> dict[str, set[str]]:
        """LocalQueues set to ``HoldAndDrain`` -> keys of the workloads submitted to them: pure."""
        return {key: self._by_local_queue.get(key, set()) for key in self._draining}

    # --- indexes -------------------------------------------------------------------

    def index(self, record: WorkloadRecord) -> None:
        """Add ``record`` to the LocalQueue and priority-class indexes (by its current spec)."""
        if record.queue_name:
            self._by_local_queue.setdefault(record.local_queue_key(), set()).add(record.key)
        if record.priority_ref is not None:
            self._by_priority_ref.setdefault(record.priority_ref, set()).add(record.key)

    def unindex(self, record: WorkloadRecord) -> None:
        """Take ``record`` out of the indexes (before its spec changes)."""
        if record.queue_name:
            self._by_local_queue.get(record.local_queue_key(), set()).discard(record.key)
        if record.priority_ref is not None:
            self._by_priority_ref.get(record.priority_ref, set()).discard(record.key)

    def members(self, key: str) -> list[WorkloadRecord]:
        """The workloads submitted to LocalQueue ``namespace/name``, by key: pure."""
        return [self._records[k] for k in sorted(self._by_local_queue.get(key, ()))]

    def with_priority_ref(self, ref: PriorityRef) -> list[WorkloadRecord]:
        """Workloads whose priority comes from ``ref``, by key: pure."""
        return [self._records[key] for key in sorted(self._by_priority_ref.get(ref, ()))]


__all__ = ["LocalQueues"]
