"""ClusterQueue, Cohort and LocalQueue status and the queue gauges, from the engine's state.

The engine knows counts and usage; :mod:`scheduler.status.queue_status`
shapes them into the ``status`` a user reads (docs/scheduling.md#queue-status) and
says None when the stored status already says the same.  This reporter
computes them for every queue the state holds and writes only the changed
ones, concurrently (the scheduler starts it in the background about once a second,
never waits for it, and never runs two at once).  A
conflict or a vanished queue is skipped: the watch brings the fresh object
and the next refresh tries again; when the API server does not answer, the
refresh stops there (one warning, not one per queue).  Kueue's per-queue gauges are
read from the same state at scrape time (:mod:`scheduler.kube.kueue_metrics`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from scheduler import logs
from scheduler.api import objects
from scheduler.core.engine import ClusterQueueStatus, Engine
from scheduler.kube.rest import Conflict, NotFound, RestError, Unreachable
from scheduler.kube.state import ClusterState
from scheduler.kube.writer import Writer
from scheduler.status.queue_status import (
    cluster_queue_status,
    cohort_status,
    ignored_admission_mode,
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
    ) -> None:
        self.engine = engine
        self.state = state
        self.writer = writer
        self.clock = clock
        self._warned: dict[str, tuple[str, int | None]] = {}
        """ClusterQueue -> (uid, generation) its ignored admission mode was reported for."""

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
                states[name] = self.engine.view.cluster_queue_status(name)
            except KeyError:
                continue
            status = cluster_queue_status(queue, states[name], now)
            if status is not None:
                writes.append(("clusterqueues", name, queue, status))
            self._warn_ignored_mode(name, queue)
        for name, cohort in list(self.state.stored("Cohort").items()):
            status = cohort_status(cohort, self.engine.view.cohort_share(name))
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
                fair_usage=self.engine.view.local_queue_fair_usage(key),
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

    def _warn_ignored_mode(self, name: str, queue: dict[str, Any]) -> None:
        """A Warning Event and a log line, once per generation, for a mode that does nothing."""
        configured = self.engine.queues.fair_usage is not None  # section present, gate on
        note = ignored_admission_mode(queue, configured=configured)
        seen = (objects.uid(queue) or "", objects.generation(queue))
        if note is None or self._warned.get(name) == seen:
            return
        self._warned[name] = seen
        log.warning(note, extra={"cluster_queue": name})
        self.writer.event(
            queue,
            kind="ClusterQueue",
            reason="AdmissionFairSharingNotConfigured",
            message=note,
            event_type="Warning",
        )

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
