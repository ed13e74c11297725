"""ClusterQueue, Cohort and LocalQueue status and the queue gauges, from the engine's state.

The engine knows counts and usage; :mod:`scheduler.status.queue_status`
shapes them into the ``status`` a user reads (docs/scheduling.md#queue-status) and
says None when the stored status already says the same.  This reporter
computes them for every queue the state holds and writes only the changed
ones, concurrently (the scheduler starts it in the background about once a second,
never waits for it, and never runs two at once).  A
conflict or a vanished queue is skipped: the watch brings the fresh object
and the next refresh tries again; when the API server does not answer, the
refresh stops there (one warning, not one per queue).  It also publishes Kueue's per-queue
gauges (``kueue_pending_workloads``, ``kueue_cluster_queue_resource_usage``...).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

from scheduler import logs
from scheduler.api import objects
from scheduler.core.engine import ClusterQueueStatus, Engine
from scheduler.kube import metrics
from scheduler.kube.rest import Conflict, NotFound, RestError, Unreachable
from scheduler.kube.state import ClusterState
from scheduler.kube.writer import Writer
from scheduler.status.queue_status import (
    cluster_queue_status,
    cohort_status,
    local_queue_status,
)

log = logging.getLogger("kuota.scheduler")
CONCURRENT_WRITES = 8
"""Queue status writes in flight at once during one refresh."""


class QueueReporter:
    def __init__(
        self,
        *,
        engine: Engine,
        state: ClusterState,
        writer: Writer,
        clock: Callable[[], datetime],
        resource_gauges: bool = True,
    ) -> None:
        self.engine = engine
        self.state = state
        self.writer = writer
        self.clock = clock
        self.resource_gauges = resource_gauges
        """Publish the per-flavor quota gauges (Kueue's ``metrics.enableClusterQueueResources``)."""

    async def refresh(self) -> None:
        """Write every ClusterQueue, Cohort and LocalQueue status that changed.

        Every status is computed first, from one state of the engine; the writes then
        go out concurrently (:data:`CONCURRENT_WRITES` at a time), not one after another.
        """
        now = self.clock()
        self.engine.sample_fair_usage(now)
        states: dict[str, ClusterQueueStatus] = {}
        writes: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = []
        for name, queue in list(self.state.stored("ClusterQueue").items()):
            try:
                states[name] = self.engine.cluster_queue_status(name)
            except KeyError:
                continue
            status = cluster_queue_status(queue, states[name], now)
            if status is not None:
                writes.append(("clusterqueues", name, queue, status))
        for name, cohort in list(self.state.stored("Cohort").items()):
            status = cohort_status(cohort, self.engine.cohort_share(name))
            if status is not None:
                writes.append(("cohorts", name, cohort, status))
        by_queue: dict[str, list[dict[str, Any]]] = {}
        for workload in self.state.unfinished_workloads():
            queue_name = objects.workload_queue_name(workload)
            if queue_name:
                local_queue = f"{objects.namespace(workload)}/{queue_name}"
                by_queue.setdefault(local_queue, []).append(workload)
        for key, queue in list(self.state.stored("LocalQueue").items()):
            cluster_queue = str(objects.spec(queue).get("clusterQueue", ""))
            status = local_queue_status(
                queue,
                by_queue.get(key, []),
                cluster_queue=states.get(cluster_queue),
                now=now,
                fair_usage=self.engine.local_queue_fair_usage(key),
            )
            if status is not None:
                writes.append(("localqueues", key, queue, status))
        if not writes:
            return
        slots = asyncio.Semaphore(CONCURRENT_WRITES)
        unreachable = asyncio.Event()

        async def one(plural: str, key: str, queue: dict[str, Any], status: dict[str, Any]) -> None:
            async with slots:
                if not unreachable.is_set() and not await self._write(plural, key, queue, status):
                    unreachable.set()  # the API server does not answer: the rest wait

        results = await asyncio.gather(*(one(*write) for write in writes), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _write(
        self, plural: str, key: str, queue: dict[str, Any], status: dict[str, Any]
    ) -> bool:
        """Write one queue's status; False when the API server did not answer (stop for now)."""
        with logs.bind(object=key):
            try:
                self.state.remember(await self.writer.write_status(plural, queue, status))
            except (Conflict, NotFound):
                pass  # the watch brings the fresh object; the next refresh tries again
            except Unreachable as failure:
                log.warning(
                    "could not write queue status; the rest wait for the next refresh",
                    extra={"queue": key, "error": str(failure)},
                )
                return False
            except RestError as failure:
                log.warning(
                    "could not write queue status", extra={"queue": key, "error": str(failure)}
                )
        return True

    def publish_metrics(self, role: str) -> None:
        """Kueue's per-ClusterQueue and per-Cohort gauges, labelled with this replica's role."""
        for cohort in list(self.state.stored("Cohort")):
            cohort_share = self.engine.cohort_share(cohort)
            if cohort_share is not None:
                metrics.COHORT_WEIGHTED_SHARE.labels(cohort, role).set(cohort_share.precise())
        for name in self.engine.cluster_queue_names():
            status = self.engine.cluster_queue_status(name)
            metrics.PENDING.labels(name, "active", role).set(status.pending)
            reserving = status.reserving if status.reserving >= 0 else status.admitted
            metrics.RESERVING.labels(name, role).set(reserving)
            metrics.ADMITTED_ACTIVE.labels(name, role).set(status.admitted)
            if status.share is not None and self.resource_gauges:
                # Kueue's gauge: NaN for an infinite share (weight 0 and borrowing).
                share = status.share.precise()
                queue = self.state.stored("ClusterQueue").get(name) or {}
                cohort = str(objects.spec(queue).get("cohortName") or "")
                metrics.CQ_WEIGHTED_SHARE.labels(name, cohort, role).set(
                    math.nan if math.isinf(share) else share
                )
            current = "active" if status.active else "pending"
            for state in ("pending", "active", "terminating"):
                metrics.CQ_STATUS.labels(name, state, role).set(1 if state == current else 0)
            if not self.resource_gauges:
                continue
            admitted = status.admitted_usage if status.admitted_usage is not None else {}
            for flavor, resources in status.usage.items():
                for resource, quantity in resources.items():
                    value = float(quantity.milli_value()) / 1000
                    metrics.CQ_RESERVATION.labels("", name, flavor, resource, role).set(value)
                    used = admitted.get(flavor, {}).get(resource, quantity)
                    metrics.CQ_USAGE.labels("", name, flavor, resource, role).set(
                        float(used.milli_value()) / 1000
                    )
