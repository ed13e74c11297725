"""A small engine with pending workloads, as the visibility tests read it."""

from __future__ import annotations

from typing import Any

from scheduler.core.engine import Engine
from scheduler.visibility.source import SchedulerSource
from tests.builders import (
    T0,
    cluster_queue,
    engine_with,
    flavor_quotas,
    local_queue,
    resource_flavor,
    workload,
)


class Cluster:
    """An engine that has admitted a blocker, then some pending workloads, and their raw dicts."""

    def __init__(self, *local_queues: Any, config: Any = None, queue: Any = None) -> None:
        blocker = workload("blocker", "ns-a").queue("a").created(0).pod_set(cpu="1")
        self.engine: Engine = engine_with(
            resource_flavor("f"),
            queue or cluster_queue("cq").resource_group(flavor_quotas("f", cpu="1")),
            *local_queues,
            blocker,
            config=config,
        )
        self.engine.run_until_steady(T0)
        self.stored: dict[str, dict[str, Any]] = {"ns-a/blocker": blocker.build()}
        self.source = SchedulerSource(lambda: self.engine, lambda: self.stored)

    def submit(self, *builders: Any) -> None:
        for builder in builders:
            raw = builder.build()
            self.stored[f"{raw['metadata']['namespace']}/{raw['metadata']['name']}"] = raw
            self.engine.apply(builder.model())
        self.engine.run_until_steady(T0)


def three_priorities() -> Cluster:
    cluster = Cluster(
        local_queue("a", "ns-a").cluster_queue("cq"),
        local_queue("b", "ns-a").cluster_queue("cq"),
        local_queue("b", "ns-b").cluster_queue("cq"),
    )
    cluster.submit(
        workload("lq-b-low", "ns-b").queue("b").priority(50).created(1).pod_set(cpu="1"),
        workload("lq-b-mid", "ns-b").queue("b").priority(75).created(2).pod_set(cpu="1"),
        workload("lq-a-high", "ns-a")
        .queue("a")
        .priority(100)
        .created(3)
        .owned_by_job("lq-a-high", "uid-1")
        .pod_set(cpu="1"),
    )
    return cluster
