"""The engine's own input kinds and its read-outs, as plain frozen data.

Two inputs that are not kuota API objects (``PriorityClassInfo`` for a
``scheduling.k8s.io/v1`` PriorityClass, ``NamespaceInfo`` for a Namespace's
labels), the union of everything ``Engine.apply`` takes, and what the engine
answers when asked about a workload (``WorkloadState``) or a ClusterQueue
(``ClusterQueueStatus``).  ``scheduler.core.engine`` re-exports them all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from scheduler.api.models import (
    AdmissionCheck,
    ClusterQueue,
    Cohort,
    LocalQueue,
    ResourceFlavor,
    Topology,
    Workload,
    WorkloadPriorityClass,
)
from scheduler.api.quantity import Quantity
from scheduler.core.decisions import PodSetAdmission, WorkloadKey
from scheduler.core.fair_share import Share
from scheduler.core.pending_reasons import Blocker, Shortage
from scheduler.core.tas.tree import NodeInfo, PodUsage


@dataclass(frozen=True, slots=True)
class PriorityClassInfo:
    """A ``scheduling.k8s.io/v1`` PriorityClass."""

    name: str
    value: int
    global_default: bool = False


@dataclass(frozen=True, slots=True)
class NamespaceInfo:
    """A v1 Namespace; its labels feed ``namespaceSelector``."""

    name: str
    labels: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class WorkloadState:
    """A workload as its conditions show it (``EngineView.workload_state``)."""

    key: WorkloadKey
    state: Literal["Admitted", "Pending", "Finished"]
    cluster_queue: str | None
    admission: tuple[PodSetAdmission, ...]
    reason: str | None
    message: str
    evictions: int
    shortages: tuple[Shortage, ...] = ()
    """Pending: what would have to free up, per flavor and resource (as in ``Pending``)."""
    blockers: tuple[Blocker, ...] = ()
    """Pending: what no release of quota cures (as in ``Pending``)."""
    local_queue: str | None = None
    """The LocalQueue it was submitted to (``spec.queueName``)."""


@dataclass(frozen=True, slots=True)
class ClusterQueueStatus:
    """A ClusterQueue's status as the scheduler reports it (docs/scheduling.md#queue-status)."""

    name: str
    pending: int
    admitted: int
    """Workloads ``Admitted`` here (quota reserved and every admission check Ready)."""
    usage: Mapping[str, Mapping[str, Quantity]]
    """Quota reserved (``flavorsReservation``): admitted or waiting for admission checks."""
    borrowed: Mapping[str, Mapping[str, Quantity]]
    active: bool
    active_reason: str
    active_message: str
    reserving: int = -1
    """Workloads holding quota here, admitted or not (-1: same as ``admitted``)."""
    admitted_usage: Mapping[str, Mapping[str, Quantity]] | None = None
    """Quota of the admitted workloads only (``flavorsUsage``; None: same as ``usage``)."""
    admitted_borrowed: Mapping[str, Mapping[str, Quantity]] | None = None
    share: Share | None = None
    """Its dominant resource share (None: fair sharing is off, no ``fairSharing``)."""

    @property
    def weighted_share(self) -> int | None:
        """``status.fairSharing.weightedShare``; None with fair sharing off: pure."""
        return None if self.share is None else self.share.weighted_share()


EngineObject = (
    ResourceFlavor
    | ClusterQueue
    | Cohort
    | LocalQueue
    | Workload
    | WorkloadPriorityClass
    | AdmissionCheck
    | PriorityClassInfo
    | NamespaceInfo
    | Topology
    | NodeInfo
    | PodUsage
)


__all__ = [
    "ClusterQueueStatus",
    "EngineObject",
    "NamespaceInfo",
    "NodeInfo",
    "PodUsage",
    "PriorityClassInfo",
    "WorkloadState",
]
