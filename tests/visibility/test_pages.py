"""Pages of pending workloads from the engine's queues, with Kueue's positions.

The scenarios are those of Kueue's visibility end-to-end specs (one
ClusterQueue of 1 CPU held by a running workload; pending workloads of
three priorities in two LocalQueues, across namespaces) plus the paging rules.
"""

from __future__ import annotations

from typing import Any

from scheduler.visibility.pages import cluster_queue_page, local_queue_page
from scheduler.visibility.wire import Page
from tests.builders import (
    T0,
    cluster_queue,
    configuration,
    flavor_quotas,
    local_queue,
    workload,
)
from tests.visibility.cluster import Cluster, three_priorities

WHOLE = Page(offset=0, limit=1000)


def places(items: list[Any] | None) -> list[tuple[str, str, int, int, int]]:
    assert items is not None
    return [
        (
            f"{i.namespace}/{i.name}",
            i.local_queue,
            i.priority,
            i.position_in_cluster_queue,
            i.position_in_local_queue,
        )
        for i in items
    ]


def test_a_cluster_queue_lists_every_pending_workload_with_both_positions() -> None:
    cluster = three_priorities()
    assert places(cluster_queue_page(cluster.source, "cq", WHOLE)) == [
        ("ns-a/lq-a-high", "a", 100, 0, 0),
        ("ns-b/lq-b-mid", "b", 75, 1, 0),
        ("ns-b/lq-b-low", "b", 50, 2, 1),
    ]
    (first, *_) = cluster_queue_page(cluster.source, "cq", WHOLE) or []
    assert first.owner_references[0]["name"] == "lq-a-high"
    assert first.creation_timestamp == "2024-01-01T00:00:03Z"


def test_a_local_queue_lists_its_own_with_their_place_in_the_cluster_queue() -> None:
    cluster = three_priorities()
    assert places(local_queue_page(cluster.source, "ns-b", "b", WHOLE)) == [
        ("ns-b/lq-b-mid", "b", 75, 1, 0),
        ("ns-b/lq-b-low", "b", 50, 2, 1),
    ]
    # Same name, another namespace: a LocalQueue of its own, empty.
    assert local_queue_page(cluster.source, "ns-a", "b", WHOLE) == []
    assert places(local_queue_page(cluster.source, "ns-a", "a", WHOLE)) == [
        ("ns-a/lq-a-high", "a", 100, 0, 0)
    ]


def test_limit_and_offset_keep_positions_counted_from_the_head() -> None:
    cluster = three_priorities()
    assert places(cluster_queue_page(cluster.source, "cq", Page(offset=1, limit=1))) == [
        ("ns-b/lq-b-mid", "b", 75, 1, 0)
    ]
    assert places(cluster_queue_page(cluster.source, "cq", Page(offset=2, limit=5))) == [
        ("ns-b/lq-b-low", "b", 50, 2, 1)
    ]
    assert cluster_queue_page(cluster.source, "cq", Page(offset=0, limit=0)) == []
    assert places(local_queue_page(cluster.source, "ns-b", "b", Page(offset=1, limit=1))) == [
        ("ns-b/lq-b-low", "b", 50, 2, 1)
    ]


def test_unknown_queues_are_none_and_a_local_queue_without_its_cluster_queue_is_empty() -> None:
    cluster = three_priorities()
    assert cluster_queue_page(cluster.source, "nope", WHOLE) is None
    assert local_queue_page(cluster.source, "ns-a", "nope", WHOLE) is None
    cluster.engine.apply(local_queue("orphan", "ns-a").cluster_queue("missing").model())
    assert local_queue_page(cluster.source, "ns-a", "orphan", WHOLE) == []


def test_admitted_workloads_leave_the_pages() -> None:
    cluster = three_priorities()
    cluster.engine.remove("Workload", "blocker", "ns-a")  # its quota is free again
    cluster.engine.run_until_steady(T0)
    assert places(cluster_queue_page(cluster.source, "cq", WHOLE)) == [
        ("ns-b/lq-b-mid", "b", 75, 0, 0),
        ("ns-b/lq-b-low", "b", 50, 1, 1),
    ]


def test_inadmissible_workloads_are_listed_too() -> None:
    """Too big for the ClusterQueue ever: still pending, still in line (as with Kueue)."""
    cluster = Cluster(local_queue("a", "ns-a").cluster_queue("cq"))
    cluster.submit(workload("huge", "ns-a").queue("a").created(1).pod_set(cpu="2"))
    assert places(cluster_queue_page(cluster.source, "cq", WHOLE)) == [("ns-a/huge", "a", 0, 0, 0)]


def test_under_admission_fair_sharing_the_local_queue_that_used_least_comes_first() -> None:
    """docs/visibility.md#positions: LocalQueue usage before priority, as the scheduler pops."""
    cluster = Cluster(
        local_queue("a", "ns-a").cluster_queue("cq").consumed(0, cpu="100"),
        local_queue("b", "ns-b").cluster_queue("cq").consumed(0, cpu="1"),
        config=configuration().admission_fair_sharing(),
        queue=cluster_queue("cq")
        .usage_based_admission()
        .resource_group(flavor_quotas("f", cpu="1")),
    )
    cluster.submit(
        workload("a-high", "ns-a").queue("a").priority(100).created(1).pod_set(cpu="1"),
        workload("b-low", "ns-b").queue("b").priority(1).created(2).pod_set(cpu="1"),
        workload("b-mid", "ns-b").queue("b").priority(50).created(3).pod_set(cpu="1"),
    )
    assert places(cluster_queue_page(cluster.source, "cq", WHOLE)) == [
        ("ns-b/b-mid", "b", 50, 0, 0),
        ("ns-b/b-low", "b", 1, 1, 1),
        ("ns-a/a-high", "a", 100, 2, 0),
    ]
    assert places(local_queue_page(cluster.source, "ns-a", "a", WHOLE)) == [
        ("ns-a/a-high", "a", 100, 2, 0),
    ]
    assert places(cluster_queue_page(cluster.source, "cq", Page(offset=1, limit=5))) == [
        ("ns-b/b-low", "b", 1, 1, 1),
        ("ns-a/a-high", "a", 100, 2, 0),
    ]
