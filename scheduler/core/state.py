"""Per-workload records and the texts of the workload controller.

See docs/scheduling.md#queues and docs/scheduling.md#inactive-clusterqueues.
A ``WorkloadRecord`` is the engine's own, compact view of a Workload: no API
object, shared ``PodSetInfo``s, one record per key.  ``inactive_message``
builds the ``Active`` condition texts of a ClusterQueue.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from scheduler.core.decisions import PodSetAdmission
from scheduler.core.pending_reasons import NO_DETAILS, Details
from scheduler.core.resources import FRValues
from scheduler.core.workload import PodSetInfo

PENDING = "Pending"
ADMITTED = "Admitted"
FINISHED = "Finished"


@dataclass(frozen=True, slots=True)
class ScanPosition:
    """Per (pod set, resource group): the index of the last flavor examined.

    See docs/scheduling.md#flavor-scan-position.

    -1 when the scan reached the end of the group's flavors.
    """

    last_tried: Mapping[tuple[str, int], int]
    cycle: int
    """The cycle number of the attempt that recorded it."""
    generation: int
    """The CQ's allocatable generation at that attempt."""

    @property
    def untried_remain(self) -> bool:
        """Whether some scan stopped before its last flavor: pure."""
        return any(index >= 0 for index in self.last_tried.values())


class WorkloadRecord:
    """Everything the engine remembers about one workload."""

    __slots__ = (
        "key",
        "namespace",
        "uid",
        "queue_name",
        "priority",
        "boost",
        "priority_ref",
        "timestamp",
        "pod_sets",
        "active",
        "on_hold",
        "gate",
        "checks_failed",
        "requeue_at",
        "state",
        "cluster_queue",
        "queued_in",
        "admission",
        "usage",
        "reason",
        "message",
        "details",
        "evictions",
        "job_uid",
        "evicted",
        "assumed",
        "eviction_message",
        "eviction_reason",
        "reserved_at",
        "scan",
        "claims_freed",
        "awaiting_checks",
        "pods_ready",
        "replaces",
    )

    def __init__(self, key: str) -> None:
        self.key = key
        self.namespace = ""
        self.uid = ""
        self.queue_name: str | None = None
        self.priority = 0
        """The effective priority: the Workload's, plus ``boost``."""
        self.boost = 0
        """``kueue.x-k8s.io/priority-boost`` (feature gate PriorityBoost; else 0)."""
        self.priority_ref: tuple[str, str] | None = None
        self.timestamp: datetime = datetime.min
        self.pod_sets: tuple[PodSetInfo, ...] = ()
        self.active = True
        self.on_hold: str | None = None
        """``QuotaReserved=False`` reason ``OnHold``: its message; not queued while set."""
        self.gate: str | None = None
        self.checks_failed = False
        self.requeue_at: datetime | None = None
        self.state = PENDING
        self.cluster_queue: str | None = None
        """The CQ it is queued in or holds quota in."""
        self.queued_in: str | None = None
        """The CQ whose queue currently holds it (None when not queued)."""
        self.admission: tuple[PodSetAdmission, ...] = ()
        self.usage: dict[str, FRValues] | None = None
        """Admitted: CQ name -> usage per FR (one entry)."""
        self.reason: str | None = None
        """The last attempt's ``QuotaReserved`` reason; None: nothing to show (never tried)."""
        self.message = ""
        self.details: Details = NO_DETAILS
        """(shortages, blockers) ``message`` was rendered from, when flavor assignment made it."""
        self.evictions = 0
        self.job_uid: str | None = None
        """The ``kueue.x-k8s.io/job-uid`` label, quoted in preemption messages."""
        self.evicted = False
        """A preemption was issued and its quota is not released yet (``Engine.release``)."""
        self.assumed = False
        """Admitted by this engine and not yet seen recorded in the Workload's status.

        Until the status shows the reservation, a view of the object without
        one is older than the admission and releases nothing."""
        self.eviction_message = ""
        self.eviction_reason = ""
        """The ``Evicted`` reason written: ``Preempted``, ``ClusterQueueStopped``, ..."""
        self.reserved_at: tuple[datetime, int] = (datetime.min.replace(tzinfo=UTC), 0)
        """When quota was reserved (``QuotaReserved`` time, then a sequence): candidate order."""
        self.scan: ScanPosition | None = None
        """The flavor-scan position of the last attempt (see ``ScanPosition``)."""
        self.claims_freed = False
        """It issued preemptions and waits for them: what they free is its own (``cycle``)."""
        self.awaiting_checks = False
        """It holds quota but is not ``Admitted``: admission checks apply and are not all Ready.

        Its quota counts in ``flavorsReservation``, not in ``flavorsUsage``."""
        self.pods_ready = False
        """Its ``PodsReady`` condition is True (waitForPodsReady ``blockAdmission``)."""
        self.replaces: str | None = None
        """An elastic job's new workload slice: the key of the slice it replaces once admitted.

        See docs/concepts.md#elastic-jobs."""

    def set_status(self, reason: str, message: str, details: Details = NO_DETAILS) -> None:
        """Record the outcome of an attempt: ``QuotaReserved`` reason, message, structure."""
        self.reason, self.message, self.details = reason, message, details

    def forget_status(self) -> None:
        """Nothing to show until the next attempt (routed anew, or finished)."""
        self.reason, self.message, self.details = None, "", NO_DETAILS

    def queue_signature(self) -> tuple[object, ...]:
        """What, when an update changes it, re-keys the workload in its heap: pure.

        Pod sets first (a new shape also resets the flavor scan).
        """
        return (self.pod_sets, self.priority, self.queue_name, self.active, self.timestamp)

    def queue_order(self) -> tuple[int, datetime, str, str]:
        return (-self.priority, self.timestamp, self.uid, self.key)

    def local_queue_key(self) -> str:
        """``namespace/name`` of the LocalQueue it was submitted to (name empty if none): pure."""
        return f"{self.namespace}/{self.queue_name or ''}"


READY_MESSAGE = "Can admit new workloads"


def inactive_message(fragments: list[tuple[str, str]]) -> tuple[str, str]:
    """(reason, message) of the Active condition for these (reason, fragment) pairs: pure."""
    if not fragments:
        return "Ready", READY_MESSAGE
    if fragments[0][0] == "Terminating":
        return "Terminating", "Can't admit new workloads; clusterQueue is terminating"
    return fragments[0][0], "Can't admit new workloads: " + ", ".join(
        text for _, text in fragments
    ) + "."


__all__ = [
    "ADMITTED",
    "FINISHED",
    "PENDING",
    "READY_MESSAGE",
    "ScanPosition",
    "WorkloadRecord",
    "inactive_message",
]
