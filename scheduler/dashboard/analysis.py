"""The engine's reading of one picture of the cluster, for every view of the dashboard (pure).

The dashboard answers "where is my job, and why is it waiting?" with the
scheduling engine itself, as ``kuota explain`` does (docs/dashboard.md): the
picture the dashboard mirrors is loaded into a local engine exactly as the
CLI loads it (:func:`scheduler.cli.live.new_live_engine`: admitted Workloads
count from their status).  Two engines serve one picture:

- ``engine`` holds the picture as it is, no cycle run: the ClusterQueues'
  counts, quota use, borrowing and the cohort tree are read from it, so they
  say what the cluster holds now;
- ``steady`` is run to its steady state with the same bound as ``kuota
  explain``: every pending Workload then has the position and the pending
  reason the live scheduler gives it (a Workload that would be admitted at
  once "fits now").

One :class:`Analysis` serves every view of one picture; the dashboard makes
a new one when the picture changes (at most once a second).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from scheduler.cli.explain import MAX_CYCLES
from scheduler.cli.live import ClusterObjects, key_of, new_live_engine
from scheduler.core.engine import ClusterQueueStatus, Engine, WorkloadState
from scheduler.core.fair_share import dominant_resource_share
from scheduler.core.resource_node import QuotaNode


@dataclass(frozen=True, slots=True)
class Placement:
    """A pending Workload's place: 1-based position among ``of`` pending in its ClusterQueue."""

    position: int
    of: int


@dataclass
class Analysis:
    """One engine, steady, over one picture; the read-outs every view uses."""

    objects: ClusterObjects
    engine: Engine
    steady: Engine
    now: datetime
    notes: list[str] = field(default_factory=list)
    reached: bool = True
    """Whether ``steady`` reached its steady state within the bound."""

    @classmethod
    def of(cls, objects: ClusterObjects, now: datetime) -> Analysis:
        """Load ``objects`` twice, and run one engine to its steady state (bounded): pure."""
        notes: list[str] = []
        engine, _, clock = new_live_engine(objects, now, notes)
        steady, _, _ = new_live_engine(objects, now, [])
        _, reached = steady.run_until_steady(clock, max_cycles=MAX_CYCLES)
        return cls(
            objects=objects, engine=engine, steady=steady, now=clock, notes=notes, reached=reached
        )

    def workload(self, key: str) -> WorkloadState | None:
        """What the steady engine says of a Workload (None: it could not load it)."""
        try:
            return self.steady.view.workload_state(key)
        except KeyError:
            return None

    def placement(self, key: str) -> Placement | None:
        found = self.steady.view.queue_position(key)
        return Placement(*found) if found is not None else None

    def cluster_queue(self, name: str) -> ClusterQueueStatus | None:
        try:
            return self.engine.view.cluster_queue_status(name)
        except KeyError:
            return None

    def node(self, name: str, *, cohort: bool = False) -> QuotaNode | None:
        """The quota-tree node of a ClusterQueue or a cohort."""
        forest = self.engine.cache.tree.forest
        return (forest.cohorts if cohort else forest.cluster_queues).get(name)

    def cohort_roots(self) -> list[QuotaNode]:
        """The roots of every tree with a cohort, by name."""
        forest = self.engine.cache.tree.forest
        roots = {node.root().name: node.root() for node in forest.cohorts.values()}
        return [roots[name] for name in sorted(roots)]

    def weighted_share(self, node: QuotaNode) -> float | None:
        """Dominant resource share over the weight (None for +inf: weight 0, borrowing)."""
        share = dominant_resource_share(node)
        return None if share.infinite else float(share.value)

    def workloads_by_key(self) -> Mapping[str, Mapping[str, Any]]:
        return {key_of(workload): workload for workload in self.objects.workloads}


__all__ = ["Analysis", "Placement"]
