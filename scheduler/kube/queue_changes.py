"""Which queue statuses may have changed since the last refresh.

A queue status refresh (docs/architecture.md#queue-statuses) computes only what a change
since the previous refresh may have moved, so its cost follows the change, not the number
of queues.  The state marks, as
events arrive (pure bookkeeping, no I/O):

- a Workload, before and after the change: its LocalQueue and the ClusterQueue it holds
  quota in (the LocalQueue's ClusterQueue is found at refresh time);
- a status-only change of a ClusterQueue or LocalQueue (say, another writer's): that queue;
- a change of anything else a status is made from: a queue's or Cohort's spec, a queue
  created or deleted, any change of a ResourceFlavor, AdmissionCheck or Topology (an
  AdmissionCheck's status says whether it is active), the LimitRanges and RuntimeClasses
  that requeue pending Workloads: *everything*;
- a decision of the engine: the ClusterQueue it admitted into, the Workload it evicted.

A ClusterQueue marked carries its LocalQueues along (their status shows its usage and
whether it is active); Cohort statuses are all recomputed whenever anything is marked
(there are few).  What starts marked: everything, so a new term writes every status once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler.api import objects
from scheduler.core.decisions import Admit, Decision, Evict

QUEUE_KINDS = frozenset({"ClusterQueue", "LocalQueue", "Cohort"})


@dataclass(frozen=True)
class Marked:
    """What one refresh is to compute (a snapshot of :class:`QueueChanges`)."""

    everything: bool
    cluster_queues: frozenset[str] = frozenset()
    local_queues: frozenset[str] = frozenset()
    """``namespace/name`` keys."""
    cohorts: bool = False
    """Whether to compute the Cohort statuses (always, when anything else is marked)."""

    def __bool__(self) -> bool:
        return self.everything or self.cohorts


@dataclass
class QueueChanges:
    """The marks since the last refresh (module docstring); :meth:`take` hands them over."""

    everything: bool = True
    cluster_queues: set[str] = field(default_factory=set)
    local_queues: set[str] = field(default_factory=set)
    cohorts: bool = False
    """A Cohort's status changed alone (its own write coming back, or another writer's)."""

    def touch_everything(self) -> None:
        self.everything = True

    def touch_workload(self, workload: Mapping[str, Any] | None) -> None:
        """A version of a Workload (the one before a change, or after it) counts no longer or
        counts now: its queues."""
        if workload is None:
            return
        queue_name = objects.workload_queue_name(workload)
        if queue_name:
            self.local_queues.add(f"{objects.namespace(workload)}/{queue_name}")
        cluster_queue = objects.admitted_cluster_queue(workload)
        if cluster_queue:
            self.cluster_queues.add(cluster_queue)

    def touch_cluster_queue(self, name: str) -> None:
        self.cluster_queues.add(name)

    def touch_local_queue(self, key: str) -> None:
        """LocalQueue ``namespace/name``."""
        self.local_queues.add(key)

    def touch_cohorts(self) -> None:
        self.cohorts = True

    def touch_decisions(
        self, decisions: Iterable[Decision], workloads: Mapping[str, Mapping[str, Any]]
    ) -> None:
        """An engine cycle's admissions and evictions count in the engine before any write
        (a pending explanation changes no status)."""
        for decision in decisions:
            if isinstance(decision, Admit):
                self.touch_cluster_queue(decision.cluster_queue)
            elif isinstance(decision, Evict):
                self.touch_workload(workloads.get(decision.victim))

    def touch_queue_object(
        self, event_type: str, known: Mapping[str, Any] | None, incoming: Mapping[str, Any]
    ) -> None:
        """A ClusterQueue, LocalQueue or Cohort event (``known``: the version held before)."""
        kind = str(incoming.get("kind", ""))
        if event_type != "MODIFIED" or known is None or _structural(known, incoming):
            self.touch_everything()
        elif kind == "ClusterQueue":
            self.touch_cluster_queue(objects.name(incoming))
        elif kind == "LocalQueue":
            self.touch_local_queue(objects.key(incoming))
        else:
            self.touch_cohorts()

    def touch_other_kind(self) -> None:
        """A ResourceFlavor, AdmissionCheck, Topology or WorkloadPriorityClass event: even a
        status write (an AdmissionCheck becoming active) changes what queues show."""
        self.touch_everything()

    def take(self) -> Marked:
        """What was marked since the last take; marks nothing from now on: pure bookkeeping."""
        marked = Marked(
            everything=self.everything,
            cluster_queues=frozenset(self.cluster_queues),
            local_queues=frozenset(self.local_queues),
            cohorts=bool(
                self.everything or self.cohorts or self.cluster_queues or self.local_queues
            ),
        )
        self.everything, self.cohorts = False, False
        self.cluster_queues, self.local_queues = set(), set()
        return marked


def _structural(known: Mapping[str, Any], incoming: Mapping[str, Any]) -> bool:
    """A new generation, or the start of a deletion: more than a status write: pure."""
    return objects.generation(known) != objects.generation(incoming) or (
        objects.is_being_deleted(known) != objects.is_being_deleted(incoming)
    )
