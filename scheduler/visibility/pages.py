"""Pages of pending workloads, read from the engine's queues: pure.

See docs/visibility.md#positions.  A ClusterQueue's pending workloads are
its queue's members, active and inadmissible, in queue order (the order the
scheduler pops them: priority, then age, the sticky preemptor first; under
admission fair sharing the usage of their LocalQueue before all that); their
places come from the queue's ranking (:class:`scheduler.core.queues.Ranking`),
so a page costs O(limit × log n) however deep it is, never a sort.

- ``clusterqueues/NAME/pendingworkloads``: places ``offset`` to
  ``offset + limit`` of the whole queue; each item's place in its LocalQueue
  counts the members of that LocalQueue ahead of it in the whole queue.
- ``namespaces/NS/localqueues/NAME/pendingworkloads``: places ``offset`` to
  ``offset + limit`` among the members submitted to that LocalQueue; each
  item's place in the ClusterQueue is its place in the whole queue.

An unknown ClusterQueue or LocalQueue is ``None`` (the API's NotFound); a
LocalQueue whose ClusterQueue does not exist has no pending workloads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from scheduler.core.queues import ClusterQueueQueue
from scheduler.visibility.wire import Page, PendingWorkload


@dataclass(slots=True)  # not frozen: a page makes a thousand, and frozen init is slow
class WorkloadFacts:
    """What the API shows of a Workload beside its places."""

    name: str
    namespace: str
    creation_timestamp: str | None
    owner_references: tuple[Mapping[str, Any], ...]
    priority: int
    local_queue: str


class PendingSource(Protocol):
    """Where the pending workloads are read (the live scheduler, a test, the benchmark)."""

    def pending_queue(self, cluster_queue: str) -> ClusterQueueQueue | None:
        """The queue of a known ClusterQueue; None if there is no such ClusterQueue."""
        ...

    def local_queue_target(self, namespace: str, name: str) -> str | None:
        """The ClusterQueue a known LocalQueue points at; None if there is no such LocalQueue."""
        ...

    def facts(self, key: str) -> WorkloadFacts | None:
        """The Workload ``namespace/name`` as the API shows it; None if it is unknown."""
        ...


def _item(facts: WorkloadFacts, in_cluster_queue: int, in_local_queue: int) -> PendingWorkload:
    return PendingWorkload(
        name=facts.name,
        namespace=facts.namespace,
        creation_timestamp=facts.creation_timestamp,
        owner_references=facts.owner_references,
        priority=facts.priority,
        local_queue=facts.local_queue,
        position_in_cluster_queue=in_cluster_queue,
        position_in_local_queue=in_local_queue,
    )


def cluster_queue_page(
    source: PendingSource, name: str, page: Page
) -> list[PendingWorkload] | None:
    """The page of ClusterQueue ``name``'s pending workloads; None if it is unknown: pure."""
    queue = source.pending_queue(name)
    if queue is None:
        return None
    ranking, first = queue.ranking, queue.first
    items = []
    keys = ranking.keys(page.offset, page.offset + page.limit, first)
    for index, key in enumerate(keys):
        facts = source.facts(key)
        in_local_queue = ranking.group_position(key, first)
        if facts is None or in_local_queue is None:
            continue
        items.append(_item(facts, page.offset + index, in_local_queue))
    return items


def local_queue_page(
    source: PendingSource, namespace: str, name: str, page: Page
) -> list[PendingWorkload] | None:
    """The page of LocalQueue ``namespace/name``'s pending workloads; None if it is unknown:
    pure."""
    cluster_queue = source.local_queue_target(namespace, name)
    if cluster_queue is None:
        return None
    queue = source.pending_queue(cluster_queue)
    if queue is None:
        return []
    ranking, first = queue.ranking, queue.first
    items = []
    keys = ranking.group_keys(f"{namespace}/{name}", page.offset, page.offset + page.limit, first)
    for index, key in enumerate(keys):
        facts = source.facts(key)
        in_cluster_queue = ranking.position(key, first)
        if facts is None or in_cluster_queue is None:
            continue
        items.append(_item(facts, in_cluster_queue, page.offset + index))
    return items


__all__ = ["PendingSource", "WorkloadFacts", "cluster_queue_page", "local_queue_page"]
