"""The timed steps of admitted Workloads: waitForPodsReady and the maximum execution time.

The rules are pure (:mod:`scheduler.status.pods_ready`); this module keeps
the deadlines and writes the steps when they come due, on the loop's clock:

- every Workload the state marks (``workloads_to_time``: each stored
  version) gets its next deadline computed again from its conditions; the
  deadlines wait in a heap, so a turn looks only at those that are due;
- a due Workload gets its step: the ``PodsReadyTimeout`` eviction (the
  executor's eviction path, with ``requeueState`` in the same write), or
  ``DeactivationTarget`` (requeuing limit, maximum execution time) and
  then ``spec.active: false``; the deactivation eviction follows from the
  Job controller, as for a rejected admission check.

Restart-safe: nothing is kept that the Workloads do not record.  A rebuilt
state marks every Workload, and the deadlines come back from the
``Admitted`` and ``PodsReady`` transition times and the ``DeactivationTarget``
condition, so a timeout that passed while no scheduler led fires at once.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from scheduler import logs
from scheduler.api import objects
from scheduler.api.config import WaitForPodsReady
from scheduler.core.decisions import Evict
from scheduler.kube.rest import Conflict, NotFound, RestError
from scheduler.kube.state import ClusterState
from scheduler.kube.writer import Writer
from scheduler.status.pods_ready import (
    MAX_EXECUTION_EXCEEDED,
    TimerStep,
    next_deadline,
    timer_step,
    timer_target_status,
    with_timeout_requeue,
)

log = logging.getLogger("kuota.scheduler")
Raw = dict[str, Any]
Evictor = Callable[[Evict, Callable[[Raw, datetime], Raw] | None], Awaitable[None]]


class WorkloadTimers:
    """Deadlines of admitted Workloads, and the steps due (see the module docstring)."""

    def __init__(
        self,
        *,
        state: ClusterState,
        writer: Writer,
        clock: Callable[[], datetime],
        settings: WaitForPodsReady | None,
        evict: Evictor,
    ) -> None:
        self.state = state
        self.writer = writer
        self.clock = clock
        self.settings = settings
        """waitForPodsReady in force, None when off (the maximum execution time still runs)."""
        self._evict = evict
        self._due: dict[str, datetime] = {}
        self._heap: list[tuple[datetime, str]] = []

    def next_due(self) -> datetime | None:
        """The earliest deadline known (for how long the loop may sleep)."""
        while self._heap and self._due.get(self._heap[0][1]) != self._heap[0][0]:
            heapq.heappop(self._heap)  # replaced or gone
        return self._heap[0][0] if self._heap else None

    def _refresh(self) -> None:
        workloads = self.state.stored("Workload")
        for key in self.state.workloads_to_time.take():
            workload = workloads.get(key)
            deadline = next_deadline(workload, self.settings) if workload is not None else None
            if deadline is None:
                self._due.pop(key, None)
            elif self._due.get(key) != deadline:
                self._due[key] = deadline
                heapq.heappush(self._heap, (deadline, key))

    async def reconcile(self) -> bool:
        """Carry out every step due now; True when something was written."""
        self._refresh()
        now = self.clock()
        acted = False
        while (due := self.next_due()) is not None and due <= now:
            _, key = heapq.heappop(self._heap)
            del self._due[key]
            workload = self.state.stored("Workload").get(key)
            if workload is None:
                continue
            step = timer_step(workload, self.settings, now)
            if step is None:
                self.state.workloads_to_time.add(key)  # a later deadline, if any
                continue
            with logs.bind(object=key):
                try:
                    await self._perform(key, workload, step, now)
                    acted = True
                except (Conflict, NotFound):
                    self.state.workloads_to_time.add(key)  # decided again from the fresh one
                except RestError as failure:
                    self.state.workloads_to_time.add(key)
                    log.warning(
                        "timed workload step failed",
                        extra={"workload": key, "step": step.kind, "error": str(failure)},
                    )
        self._refresh()
        return acted

    async def _perform(self, key: str, workload: Raw, step: TimerStep, now: datetime) -> None:
        if step.kind == "evict":
            settings = self.settings
            assert settings is not None  # only a waitForPodsReady timeout evicts
            decision = Evict(
                victim=key,
                preemptor=None,
                reason=step.reason,
                message=step.message,
                cause=step.cause,
            )
            await self._evict(
                decision, lambda status, at: with_timeout_requeue(status, settings, at)
            )
            log.info(
                "evicted: pods not ready in time",
                extra={"workload": key, "cause": step.cause},
            )
            return
        stored = workload
        if step.kind == "target":
            # The target first, then spec.active: a crash in between is finished on restart.
            stored = await self.writer.write_workload_status(
                workload, timer_target_status(workload, step, now)
            )
            self.state.remember(stored)
            if step.reason == MAX_EXECUTION_EXCEEDED:
                limit = objects.spec(workload).get("maximumExecutionTimeSeconds")
                self.writer.event(
                    stored,
                    kind="Workload",
                    reason=MAX_EXECUTION_EXCEEDED,
                    message=f"The maximum execution time ({limit}s) exceeded",
                    event_type="Warning",
                )
        spec = {**dict(objects.spec(stored)), "active": False}
        updated = await self.writer.update_workload(stored, {**stored, "spec": spec})
        self.state.remember(updated)
        target = objects.condition(stored, "DeactivationTarget") or {}
        log.info("deactivated", extra={"workload": key, "why": target.get("reason")})
        job_key = self.state.job_key_of(updated)
        if job_key:
            self.state.jobs_to_decide.add(job_key)


__all__ = ["WorkloadTimers"]
