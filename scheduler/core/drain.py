"""Draining stopped queues (docs/scheduling.md#stop-policies).

A ClusterQueue or LocalQueue whose ``stopPolicy`` is not ``None`` admits
nothing: the ClusterQueue is inactive and the LocalQueue's workloads
leave every queue, so their pending workloads stay pending with the
``Suspended`` reason (docs/scheduling.md#queues).  ``HoldAndDrain`` also evicts what is
already admitted, the way Kueue's workload controller does: every admitted
workload of the queue gets ``Evicted`` with reason ``LocalQueueStopped``
(``"The LocalQueue is stopped"``) or ``ClusterQueueStopped`` (``"The
ClusterQueue is stopped"``), the LocalQueue checked first.  Like a victim of
preemption it keeps its quota until its pods are gone (``Engine.release``)
and is then queued again, where the stopped queue keeps it waiting until
``stopPolicy`` returns to ``None``.  ``Hold`` evicts nothing: admitted
workloads run to completion.

Under ``Hold``, a workload that holds quota while its admission checks are
still pending keeps its reservation (Kueue cancels it; see
docs/concepts.md#stop-policies).

The work is proportional to what is drained: only admitted workloads of
queues set to ``HoldAndDrain`` are looked at, and each is evicted once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.decisions import Evict
from scheduler.core.state import ADMITTED, WorkloadRecord

HOLD_AND_DRAIN = "HoldAndDrain"
CLUSTER_QUEUE_STOPPED = ("ClusterQueueStopped", "The ClusterQueue is stopped")
"""(Evicted reason, message) of a workload drained from its stopped ClusterQueue."""
LOCAL_QUEUE_STOPPED = ("LocalQueueStopped", "The LocalQueue is stopped")
"""(Evicted reason, message) of a workload drained from its stopped LocalQueue."""


def _drain_reason(
    record: WorkloadRecord,
    cluster_queues: Mapping[str, ClusterQueueInfo],
    draining_local_queues: set[str],
) -> tuple[str, str] | None:
    """Why an admitted workload must be drained, or None (LocalQueue first, as Kueue): pure."""
    if f"{record.namespace}/{record.queue_name or ''}" in draining_local_queues:
        return LOCAL_QUEUE_STOPPED
    info = cluster_queues.get(record.cluster_queue or "")
    if info is not None and info.stop_policy == HOLD_AND_DRAIN:
        return CLUSTER_QUEUE_STOPPED
    return None


def drain(
    *,
    cluster_queues: Mapping[str, ClusterQueueInfo],
    admitted: Mapping[str, set[str]],
    draining_local_queues: Mapping[str, Iterable[str]],
    records: Mapping[str, WorkloadRecord],
) -> list[Evict]:
    """Evict every admitted workload of a ``HoldAndDrain`` queue not already being evicted.

    ``draining_local_queues`` maps each LocalQueue (``namespace/name``) set to
    ``HoldAndDrain`` to the keys of the workloads submitted to it.  The
    records of the victims are marked evicted (their quota stays counted
    until ``Engine.release``); the decisions come out sorted by key.
    """
    candidates: set[str] = set()
    for name, info in cluster_queues.items():
        if info.stop_policy == HOLD_AND_DRAIN:
            candidates.update(admitted.get(name, ()))
    for keys in draining_local_queues.values():
        candidates.update(keys)
    lq_keys = set(draining_local_queues)
    decisions: list[Evict] = []
    for key in sorted(candidates):
        record = records.get(key)
        if record is None or record.state != ADMITTED or record.evicted:
            continue
        why = _drain_reason(record, cluster_queues, lq_keys)
        if why is None:
            continue
        reason, message = why
        record.evicted = True
        record.evictions += 1
        record.eviction_reason, record.eviction_message = reason, message
        decisions.append(Evict(victim=key, preemptor=None, reason=reason, message=message))
    return decisions


__all__ = ["CLUSTER_QUEUE_STOPPED", "HOLD_AND_DRAIN", "LOCAL_QUEUE_STOPPED", "drain"]
