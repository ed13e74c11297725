"""Workloads placed by topology on a node that failed: evicted and queued again.

See docs/concepts.md#topology-aware-scheduling.  A node fails when it is
deleted, or stays not ``Ready`` for 30 seconds (Kueue's delay).  Every
workload holding quota whose topology assignment put pods on it is evicted
with Kueue's reason ``NodeFailures`` and message, as Kueue does when it
finds no replacement for the node; the workload is then queued again and
placed anew, on the nodes that are left.  kuota does not look for a
replacement node first (docs/api-differences.md#topology-aware-scheduling).

Which nodes failed is the state's (from the Node watch); which workloads
sit on them is the engine's (their placements); this module only writes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any, Final

from scheduler.core.decisions import Evict
from scheduler.core.engine import Engine
from scheduler.kube.state import ClusterState

log = logging.getLogger("kuota.scheduler")
NODE_FAILURE_DELAY: Final = timedelta(seconds=30)
"""How long a node may be not Ready before its workloads are moved (Kueue's delay)."""
NODE_FAILURES: Final = "NodeFailures"
Evictor = Callable[
    [Evict, Callable[[dict[str, Any], datetime], dict[str, Any]] | None], Awaitable[None]
]


def node_failure_eviction(workload: str, nodes: list[str]) -> Evict:
    """The eviction of a workload whose nodes failed, in Kueue's words: pure."""
    return Evict(
        victim=workload,
        preemptor=None,
        reason=NODE_FAILURES,
        message=(
            "Workload was evicted as there was no replacement for unhealthy node(s): "
            + ",".join(sorted(nodes))
        ),
    )


class NodeFailures:
    """Evicts the workloads placed on failed nodes, once per failure (module docstring)."""

    def __init__(
        self,
        *,
        engine: Engine,
        state: ClusterState,
        clock: Callable[[], datetime],
        evict: Evictor,
    ) -> None:
        self.engine = engine
        self.state = state
        self.clock = clock
        self._evict = evict

    async def reconcile(self) -> bool:
        """Evict what sits on the nodes that failed since the last turn; True when any."""
        failed = self.state.failed_nodes(self.clock(), NODE_FAILURE_DELAY)
        if not failed:
            return False
        on_nodes: dict[str, list[str]] = {}
        for node in failed:
            for workload in self.engine.placed_on_node(node):
                on_nodes.setdefault(workload, []).append(node)
        for workload, nodes in sorted(on_nodes.items()):
            await self._evict(node_failure_eviction(workload, nodes), None)
            log.info(
                "evicted: a node of its topology placement failed",
                extra={"workload": workload, "nodes": ",".join(nodes)},
            )
        return bool(on_nodes)


__all__ = ["NODE_FAILURES", "NODE_FAILURE_DELAY", "NodeFailures", "node_failure_eviction"]
