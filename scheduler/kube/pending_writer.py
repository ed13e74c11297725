"""Why a Workload waits, written to its status: only when it changes, at a bounded rate.

Each cycle explains every Workload it could not admit (``Pending``: reason
and message, docs/concepts.md).  The explanations are written as
``QuotaReserved=False`` only when they change, newest per Workload, at most
``status_writes_per_second`` a second, by one paced writer in the background,
so thousands of waiting Workloads do not flood the API server and the cycle
never waits for them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from datetime import datetime

from scheduler import logs
from scheduler.core.decisions import Pending
from scheduler.kube import metrics
from scheduler.kube.background import BackgroundWrites
from scheduler.kube.rest import Conflict, NotFound, RestError
from scheduler.kube.state import ClusterState
from scheduler.kube.writer import Writer
from scheduler.status.workload_status import pending_status

log = logging.getLogger("kuota.scheduler")


class PendingWriter:
    """The queued pending explanations and their paced writer."""

    def __init__(
        self,
        *,
        state: ClusterState,
        writer: Writer,
        clock: Callable[[], datetime],
        background: BackgroundWrites,
        is_admitted: Callable[[str], bool],
        status_writes_per_second: float = 20.0,
        pods_ready: bool = False,
    ) -> None:
        self.pods_ready = pods_ready
        """waitForPodsReady is on: an explanation also says the pods are not ready yet."""
        self.state = state
        self.writer = writer
        self.clock = clock
        self.background = background
        self.is_admitted = is_admitted
        self.status_writes_per_second = status_writes_per_second
        self.queued: dict[str, Pending] = {}
        """Pending explanations not written yet, newest per Workload."""
        self._paced: asyncio.Task[None] | None = None

    def queue(self, decisions: Iterable[Pending]) -> None:
        for decision in decisions:
            self.queued[decision.workload] = decision

    def discard(self, key: str) -> None:
        """``key`` was admitted: its last explanation is moot."""
        self.queued.pop(key, None)

    def write_soon(self) -> None:
        """Write the queued explanations in the background, ``status_writes_per_second`` at
        most, unless that writer already runs (the cycle never waits for them)."""
        if not self.queued:
            return
        if self._paced is not None and not self._paced.done():
            return
        if self._paced is not None and not self._paced.cancelled():
            failure = self._paced.exception()
            if failure is not None:
                raise failure
        self._paced = asyncio.get_running_loop().create_task(self._write_paced())

    async def _write_paced(self) -> None:
        loop = asyncio.get_running_loop()
        while self.queued:
            started = loop.time()
            await self.flush()
            if self.queued:
                await asyncio.sleep(max(0.0, 1.0 - (loop.time() - started)))

    async def flush(self) -> None:
        """Write changed explanations within the budget; the rest wait for the next turn."""
        budget = max(1, int(self.status_writes_per_second))
        batch = [(key, self.queued.pop(key)) for key in list(self.queued)[:budget]]
        await self.background.bounded(self._write(key, decision) for key, decision in batch)

    async def _write(self, key: str, decision: Pending) -> None:
        with logs.bind(object=key):
            workload = self.state.stored("Workload").get(key)
            if workload is None:
                return
            if self.is_admitted(key):
                # Admitted since the explanation was queued (the writes run in the
                # background): explaining a wait now would take the admission back.
                return
            status = pending_status(workload, decision, self.clock(), pods_ready=self.pods_ready)
            if status is None:
                return
            metrics.DECISIONS.labels("pending").inc()
            try:
                self.state.remember(await self.writer.write_workload_status(workload, status))
            except (Conflict, NotFound):
                return  # the watch brings the fresh object; the next cycle decides again
            except RestError as failure:
                log.warning(
                    "could not write the pending status",
                    extra={"workload": key, "error": str(failure)},
                )
                return
            log.info(
                "pending",
                extra={"workload": key, "reason": decision.reason, "why": decision.message},
            )

    async def stop(self) -> None:
        """End of a term: drop the paced writer; what it ended with (say, fenced) belongs to
        this term, so the next term's first :meth:`write_soon` must not raise it again."""
        if self._paced is not None:
            self._paced.cancel()
            await asyncio.gather(self._paced, return_exceptions=True)
            self._paced = None
