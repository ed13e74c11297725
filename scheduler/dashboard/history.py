"""Usage over time: what the dashboard plots (docs/dashboard.md#usage-over-time).

Every ``--history-interval`` seconds the dashboard takes one sample of every
ClusterQueue from the current :class:`~scheduler.dashboard.analysis.Analysis`:
pending, reserving and admitted Workloads, and per flavor and resource the
quota reserved against the nominal quota.  The last ``--history-samples``
samples are kept in memory (a restart starts afresh: for longer ranges,
Prometheus has the same figures in Kueue's series).  Pure apart from the
clock the caller passes.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime
from typing import Any

from scheduler.dashboard.analysis import Analysis
from scheduler.metrics.gauges import amount


def sample(analysis: Analysis, at: datetime) -> dict[str, Any]:
    """One sample of every ClusterQueue: pure."""
    queues: dict[str, Any] = {}
    engine = analysis.engine
    for name in engine.view.cluster_queue_names():
        status = engine.view.cluster_queue_status(name)
        node = analysis.node(name)
        reserved = engine.cache.usage.get(name, {})
        usage = {}
        if node is not None:
            for fr, nominal in sorted(node.nominal.items()):
                flavor, resource = fr
                usage[f"{flavor}/{resource}"] = {
                    "reserved": amount(resource, reserved.get(fr, 0)),
                    "nominal": amount(resource, nominal),
                }
        queues[name] = {
            "pending": status.pending,
            "reserving": status.reserving,
            "admitted": status.admitted,
            "usage": usage,
        }
    return {"time": at.isoformat(), "clusterQueues": queues}


class History:
    """The last ``size`` samples, oldest first."""

    def __init__(self, size: int) -> None:
        self.samples: deque[dict[str, Any]] = deque(maxlen=size)

    def add(self, analysis: Analysis, at: datetime) -> None:
        self.samples.append(sample(analysis, at))

    def view(self, cluster_queues: set[str] | None = None) -> list[dict[str, Any]]:
        """The samples, with only ``cluster_queues`` (None: all): pure."""
        if cluster_queues is None:
            return list(self.samples)
        return [
            {
                "time": item["time"],
                "clusterQueues": {
                    name: value
                    for name, value in item["clusterQueues"].items()
                    if name in cluster_queues
                },
            }
            for item in self.samples
        ]


__all__ = ["History", "sample"]
