"""ClusterQueue, Cohort and LocalQueue status and the queue gauges, from the engine's state.

The engine knows counts and usage; :mod:`scheduler.status.queue_status`
shapes them into the ``status`` a user reads (docs/scheduling.md#queue-status) and
says None when the stored status already says the same.  This reporter
computes them for the queues a change marked since its last refresh
(:mod:`scheduler.kube.queue_changes`) and writes only the changed ones,
concurrently (the scheduler starts it in the background about once a second,
never waits for it, and never runs two at once; with nothing marked it does
nothing).  A conflict or a vanished queue is skipped: the watch brings the
fresh object, which marks it again; a refused write is marked again for the
next refresh; when the API server does not answer, the refresh stops there
(one warning, not one per queue) and the rest are marked again.  Kueue's per-queue gauges are
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
from scheduler.kube.queue_changes import Marked
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
_Write = tuple[str, str, dict[str, Any], dict[str, Any]]
"""(plural, key, the queue as stored, its new status)."""
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
        self.last_computed = 0
        """How many statuses the last refresh computed (benchmarks read it)."""

    async def refresh(self) -> None:
        """Write every ClusterQueue, Cohort and LocalQueue status that changed.

        Only the queues a change since the last refresh marked are computed
        (:mod:`scheduler.kube.queue_changes`); with admission fair sharing on, every
        LocalQueue is, since its consumed usage decays with time.  Every status is computed
        first, from one state of the engine; the writes then go out concurrently
        (:data:`CONCURRENT_WRITES` at a time), not one after another.
        """
        marked = self.state.queue_changes.take()
        fair_usage = self.engine.queues.fair_usage is not None
        self.last_computed = 0
        if not marked and not fair_usage:
            return
        now = self.clock()
        self.engine.sample_fair_usage(now)
        cluster_queues, local_queues = self._to_compute(marked, every_local_queue=fair_usage)
        states: dict[str, ClusterQueueStatus] = {}
        writes: list[_Write] = []
        stored_cluster_queues = self.state.stored("ClusterQueue")
        for name in cluster_queues:
            queue = stored_cluster_queues[name]
            try:
                states[name] = self.engine.view.cluster_queue_status(name)
            except KeyError:
                continue
            status = cluster_queue_status(queue, states[name], now)
            if status is not None:
                writes.append(("clusterqueues", name, queue, status))
            self._warn_ignored_mode(name, queue)
        cohorts = self.state.stored("Cohort") if marked.cohorts else {}
        for name, cohort in list(cohorts.items()):
            status = cohort_status(cohort, self.engine.view.cohort_share(name))
            if status is not None:
                writes.append(("cohorts", name, cohort, status))
        stored_local_queues = self.state.stored("LocalQueue")
        for key in local_queues:
            queue = stored_local_queues[key]
            cluster_queue = str(objects.spec(queue).get("clusterQueue", ""))
            if cluster_queue not in states and cluster_queue in stored_cluster_queues:
                try:
                    states[cluster_queue] = self.engine.view.cluster_queue_status(cluster_queue)
                except KeyError:
                    pass
            status = local_queue_status(
                queue,
                self.state.unfinished_in_local_queue(key),
                cluster_queue=states.get(cluster_queue),
                now=now,
                fair_usage=self.engine.view.local_queue_fair_usage(key),
            )
            if status is not None:
                writes.append(("localqueues", key, queue, status))
        self.last_computed = len(states) + len(cohorts) + len(local_queues)
        if writes:
            await self._write_all(writes)

    def _to_compute(
        self, marked: Marked, *, every_local_queue: bool
    ) -> tuple[list[str], list[str]]:
        """The ClusterQueues and LocalQueues (keys, as stored) whose status to compute: a
        marked ClusterQueue brings its LocalQueues, a marked LocalQueue its ClusterQueue."""
        cluster_queues = self.state.stored("ClusterQueue")
        local_queues = self.state.stored("LocalQueue")
        if marked.everything:
            return list(cluster_queues), list(local_queues)
        wanted_cqs = {name for name in marked.cluster_queues if name in cluster_queues}
        wanted_lqs = {key for key in marked.local_queues if key in local_queues}
        for key in wanted_lqs:
            target = str(objects.spec(local_queues[key]).get("clusterQueue", ""))
            if target in cluster_queues:
                wanted_cqs.add(target)
        if wanted_cqs or every_local_queue:
            wanted_lqs.update(
                key
                for key, queue in local_queues.items()
                if every_local_queue or objects.spec(queue).get("clusterQueue") in wanted_cqs
            )
        return sorted(wanted_cqs), sorted(wanted_lqs)

    async def _write_all(self, writes: list[_Write]) -> None:
        """The writes, :data:`CONCURRENT_WRITES` at a time; a queue not written is marked
        again for the next refresh (a conflict's fresh object comes back by the watch)."""
        slots = asyncio.Semaphore(CONCURRENT_WRITES)
        unreachable = asyncio.Event()

        async def one(plural: str, key: str, queue: dict[str, Any], status: dict[str, Any]) -> None:
            async with slots:
                if unreachable.is_set():
                    self._mark_again(plural, key)
                elif not await self._write(plural, key, queue, status):
                    unreachable.set()  # the API server does not answer: the rest wait

        results = await asyncio.gather(*(one(*write) for write in writes), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    def _mark_again(self, plural: str, key: str) -> None:
        changes = self.state.queue_changes
        if plural == "clusterqueues":
            changes.touch_cluster_queue(key)
        elif plural == "localqueues":
            changes.touch_local_queue(key)
        else:
            changes.touch_cohorts()

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
        """Write one queue's status; False when the API server did not answer (stop for now).
        A status not written is marked again, for the next refresh."""
        with logs.bind(object=key):
            try:
                self.state.remember(await self.writer.write_status(plural, queue, status))
            except (Conflict, NotFound):
                pass  # the watch brings the fresh object, which marks the queue again
            except Unreachable as failure:
                log.warning(
                    "could not write queue status; the rest wait for the next refresh",
                    extra={"queue": key, "error": str(failure)},
                )
                self._mark_again(plural, key)
                return False
            except RestError as failure:
                log.warning(
                    "could not write queue status", extra={"queue": key, "error": str(failure)}
                )
                self._mark_again(plural, key)
        return True
