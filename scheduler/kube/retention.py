"""Deletes ended Workloads, or their jobs, when the retention policies say so.

The Configuration's ``objectRetentionPolicies.workloads`` (docs/configuration.md):
when a Workload or its job is due is decided by
:func:`scheduler.jobs.retention.expiry` from the Workload's condition
timestamps, so a restarted or newly elected scheduler keeps the schedule the
cluster recorded.  The cluster state lists the Workloads that changed
(``workloads_to_expire``); this keeps their due times in a heap and, each
turn, carries out those that came:

- a finished Workload is deleted (preconditions: its UID and resourceVersion;
  Kueue's ``resource-in-use`` finalizer, on a Workload Kueue made, is taken
  off first), Event ``Deleted`` on it;
- the job of a Workload kuota deactivated is deleted with background
  propagation (precondition: its UID), Event ``Deleted`` on the job; a
  Workload of a pod group, or whose job is gone, is left to the garbage
  collector.

A write that fails is tried again on the next turn after the watch brought
the object back (a conflict), or after :data:`RETRY_SECONDS`.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Final

from scheduler import logs
from scheduler.api import objects
from scheduler.api.config import ObjectRetentionPolicies
from scheduler.api.refs import RESOURCE_IN_USE_FINALIZER
from scheduler.jobs.retention import Expiry, expiry
from scheduler.kube.rest import Conflict, NotFound, RestError
from scheduler.kube.state import ClusterState
from scheduler.kube.writer import Writer, job_kind

log = logging.getLogger("kuota.scheduler")
RETRY_SECONDS: Final = 10.0
FINISHED_MESSAGE: Final = "Deleted finished workload due to elapsed retention"
DEACTIVATED_MESSAGE: Final = "Deleted job: deactivation retention period expired"


class RetentionCollector:
    """Deletes what the retention policies say is due (see the module docstring)."""

    def __init__(
        self,
        *,
        state: ClusterState,
        writer: Writer,
        clock: Callable[[], datetime],
        policies: ObjectRetentionPolicies | None,
    ) -> None:
        self.state = state
        self.writer = writer
        self.clock = clock
        self.after_finished = policies.after_finished if policies else None
        self.after_deactivated = policies.after_deactivated_by_kueue if policies else None
        self._due: dict[str, Expiry] = {}
        self._heap: list[tuple[datetime, str]] = []

    @property
    def enabled(self) -> bool:
        return self.after_finished is not None or self.after_deactivated is not None

    async def collect(self) -> bool:
        """Index what changed, then delete what is due now; True when it deleted anything."""
        keys = self.state.workloads_to_expire.take()
        if not self.enabled:
            return False
        for key in keys:
            self._index(key)
        now, acted = self.clock(), False
        while self._heap and self._heap[0][0] <= now:
            at, key = heapq.heappop(self._heap)
            due = self._due.get(key)
            if due is None or due.at != at:
                continue  # superseded by a later look at the Workload
            del self._due[key]
            with logs.bind(object=key):
                acted = await self._expire(key, due, now) or acted
        return acted

    def _index(self, key: str) -> None:
        workload = self.state.stored("Workload").get(key)
        found = None
        if workload is not None:
            found = expiry(
                workload,
                after_finished=self.after_finished,
                after_deactivated=self.after_deactivated,
            )
        if found is None:
            self._due.pop(key, None)
        elif self._due.get(key) != found:
            self._schedule(key, found)

    def _schedule(self, key: str, due: Expiry) -> None:
        self._due[key] = due
        heapq.heappush(self._heap, (due.at, key))

    async def _expire(self, key: str, due: Expiry, now: datetime) -> bool:
        workload = self.state.stored("Workload").get(key)
        if workload is None:
            return False
        try:
            if due.what == "workload":
                return await self._delete_workload(workload)
            return await self._delete_job(workload)
        except (Conflict, NotFound):
            return False  # moved or gone: the watch brings it back to be looked at again
        except RestError as failure:
            log.warning(
                "retention: could not delete; will retry",
                extra={"workload": key, "what": due.what, "error": str(failure)},
            )
            self._schedule(key, Expiry(now + timedelta(seconds=RETRY_SECONDS), due.what))
            return False

    async def _delete_workload(self, workload: dict[str, Any]) -> bool:
        finalizers = objects.metadata(workload).get("finalizers") or []
        if RESOURCE_IN_USE_FINALIZER in finalizers:
            metadata = dict(objects.metadata(workload))
            metadata["finalizers"] = [f for f in finalizers if f != RESOURCE_IN_USE_FINALIZER]
            workload = await self.writer.update_workload(
                workload, {**workload, "metadata": metadata}
            )
        await self.writer.delete_workload(workload)
        log.info("deleted a finished workload: its retention period elapsed")
        self.writer.event(workload, kind="Workload", reason="Deleted", message=FINISHED_MESSAGE)
        return True

    async def _delete_job(self, workload: dict[str, Any]) -> bool:
        job_key = self.state.job_key_of(workload)
        job = self.state.job(job_key) if job_key else None
        if job is None or objects.uid(job) != job_key:
            return False  # no job of its own (a pod group's, or gone): nothing kuota deletes
        await self.writer.delete_job(job)
        log.info(
            "deleted the job of a deactivated workload: its retention period elapsed",
            extra={"job": objects.key(job)},
        )
        self.writer.event(job, kind=job_kind(job), reason="Deleted", message=DEACTIVATED_MESSAGE)
        return True
