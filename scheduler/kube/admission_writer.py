"""Admissions and evictions, as the engine decided them, written to the Workloads.

The rules of docs/architecture.md, "Writes":

- **Assume, write, confirm or forget.**  A cycle that admits a Workload has
  already counted its quota in the engine (the assumption).  The admission is
  then written; the write's answer confirms it
  (:meth:`~scheduler.core.engine.Engine.admission_recorded`), and from then on
  the Workload's own status decides: a later version without the reservation
  (another writer finished the eviction, a former leader cleared it) releases
  the quota.  Versions older than the answer are dropped by the state.  If
  the write fails, the assumption is dropped and the Workload re-applied
  exactly as the state holds it (:meth:`ClusterState.forget`), so no quota
  stays counted for nothing.
- **Crash-safe order.**  The admission is recorded in the Workload's status
  first; only then is its job started, from that record (``start_job``).
  Nothing is started when the status write fails, and a crash in between
  leaves an admitted Workload with a suspended job that the controller
  finishes after the restart; the admission is never made twice.
- **Eviction.**  The victim gets ``Evicted`` (and ``Preempted``) while it
  still holds its admission; its job is then stopped by the Job controller
  and its quota is released (status first, then the engine) only once the job
  has nothing running (:meth:`AdmissionWriter.release`).  A Workload no job
  owns keeps its quota until whoever runs it ends the eviction (clears the
  reservation in its status), as with Kueue: the engine releases the quota
  when it sees that.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from scheduler import logs
from scheduler.api import objects
from scheduler.api.pods_ready import wait_for_pods_ready
from scheduler.core.decisions import Admit, Evict
from scheduler.core.engine import Engine
from scheduler.kube import metrics
from scheduler.kube.kueue_metrics import (
    RECORDER,
    cohorts_above,
    evicted_before,
    pods_ready_to_evicted,
    queue_ref,
    queued_since,
    seconds_since,
)
from scheduler.kube.rest import RestError
from scheduler.kube.state import ClusterState
from scheduler.kube.writer import Writer
from scheduler.status.workload_status import admitted_status, evicted_status, released_status

log = logging.getLogger("kuota.scheduler")
Prepare = Callable[[dict[str, Any], datetime], dict[str, Any]]
"""More status an eviction's write carries: (status, now) -> status."""
EVICTIONS_REMEMBERED = 100_000
"""(workload, reason, cause) evictions remembered for ``kueue_evicted_workloads_once_total``
when the Workload's ``schedulingStats`` do not say (then forgotten all at once)."""


class AdmissionWriter:
    """Writes the engine's admissions and evictions (see the module docstring)."""

    def __init__(
        self,
        *,
        engine: Engine,
        state: ClusterState,
        writer: Writer,
        clock: Callable[[], datetime],
        start_job: Callable[[str], Awaitable[object]],
        admitted: Callable[[str], None],
    ) -> None:
        self.engine = engine
        self.state = state
        self.writer = writer
        self.clock = clock
        self.start_job = start_job
        """Decide the admitted Workload's job again now: start it without waiting for the watch."""
        self.admitted = admitted
        """Told the key of each Workload whose admission was written."""
        self.pods_ready = wait_for_pods_ready(engine.config) is not None
        """waitForPodsReady is on: an admission also says the pods are not ready yet."""
        self._evicted: set[tuple[str, str, str]] = set()

    async def admit(self, decision: Admit) -> None:
        """Record the admission in the Workload's status, then start its job from that record."""
        with logs.bind(object=decision.workload):
            await self._admit(decision)

    async def _admit(self, decision: Admit) -> None:
        metrics.DECISIONS.labels("admit").inc()
        workload = self.state.stored("Workload").get(decision.workload)
        if workload is None:  # deleted meanwhile: nothing to write, nothing to hold
            namespace, name = decision.workload.split("/", 1)
            self.engine.remove("Workload", name, namespace)
            return
        now = self.clock()
        try:
            stored = await self.writer.write_workload_status(
                workload, admitted_status(workload, decision, now, pods_ready=self.pods_ready)
            )
        except RestError as failure:
            log.warning(
                "Could not admit Workload and assign flavors in apiserver",
                extra={"workload": decision.workload, "error": str(failure)},
            )
            self.state.forget(decision.workload)
            if decision.replaces:
                # Not taken over after all: the old slice holds its quota as the API says.
                self.state.forget(decision.replaces)
            return
        self.state.remember(stored)
        self.engine.admission_recorded(decision.workload)
        self.admitted(decision.workload)
        flavors = sorted({f for pod_set in decision.pod_sets for f in pod_set.flavors.values()})
        log.info(
            "admitted",
            extra={
                "workload": decision.workload,
                "cluster_queue": decision.cluster_queue,
                "flavors": flavors,
            },
        )
        created = objects.creation_time(workload)
        self._count_admission(decision, workload, now)
        job_key = self.state.job_key_of(stored)
        if job_key:
            self.state.jobs_to_decide.add(job_key)
            await self.start_job(job_key)  # start it now: no wait for the watch to come back
        wait = f"{(now - created).total_seconds():.0f}s" if created else "0s"
        self.writer.event(
            stored,
            kind="Workload",
            reason="QuotaReserved",
            message=f"Quota reserved in ClusterQueue {decision.cluster_queue}, "
            f"wait time since queued was {wait}",
        )

    def _count_admission(self, decision: Admit, workload: dict[str, Any], now: datetime) -> None:
        queue = queue_ref(self.state, workload, decision.cluster_queue)
        waited = seconds_since(queued_since(workload), now)
        RECORDER.quota_reserved(queue, waited=waited)
        if not decision.admission_checks:  # else admitted when every check is Ready
            RECORDER.admitted(
                queue,
                waited=waited,
                checks_waited=None,
                cohorts=cohorts_above(self.engine, decision.cluster_queue),
            )

    async def evict(self, decision: Evict, prepare: Prepare | None = None) -> None:
        """Record the eviction; the controller then stops its job, and the quota goes after.

        ``prepare``: more status the same write carries (a PodsReady timeout's
        ``requeueState``), given the eviction's status and the time.
        """
        with logs.bind(object=decision.victim):
            await self._evict(decision, prepare)

    async def _evict(self, decision: Evict, prepare: Prepare | None = None) -> None:
        metrics.DECISIONS.labels("evict").inc()
        workload = self.state.stored("Workload").get(decision.victim)
        if workload is None:
            return
        now = self.clock()
        status = evicted_status(workload, decision, now)
        if status is None:
            return
        if prepare is not None:
            status = prepare(status, now)
        try:
            stored = await self.writer.write_workload_status(workload, status)
        except RestError as failure:
            log.warning(
                "could not write the eviction",
                extra={"workload": decision.victim, "error": str(failure)},
            )
            # Not evicted after all: a later cycle decides again.
            self.engine.eviction_not_recorded(decision.victim, decision.preemptor)
            self.state.forget(decision.victim)
            return
        self.state.remember(stored)
        reason = "Preempted" if decision.preemptor else decision.reason
        cause = decision.reason if decision.preemptor else decision.cause  # InClusterQueue, ...
        if reason.startswith("DeactivatedDueTo"):  # Deactivated, cause AdmissionCheck, ...
            reason, cause = "Deactivated", reason.removeprefix("DeactivatedDueTo")
        self._count_eviction(decision, workload, reason, cause, stored)
        log.info(
            "evicted",
            extra={
                "workload": decision.victim,
                "preemptor": decision.preemptor,
                "reason": decision.reason,
                "why": decision.message,
            },
        )
        self.writer.event(
            stored,
            kind="Workload",
            reason="Preempted" if decision.preemptor else f"EvictedDueTo{reason}",
            message=decision.message,
        )
        job_key = self.state.job_key_of(stored)
        if job_key:
            self.state.jobs_to_decide.add(job_key)

    def _count_eviction(
        self,
        decision: Evict,
        workload: dict[str, Any],
        reason: str,
        cause: str,
        stored: dict[str, Any],
    ) -> None:
        """Kueue's eviction series (and the preemption behind it) for one written eviction
        (``workload`` as it was, ``stored`` as the write left it)."""
        queue = queue_ref(self.state, workload, objects.admitted_cluster_queue(workload))
        ready_for = pods_ready_to_evicted(stored)
        if ready_for is not None:
            RECORDER.pods_ready_to_evicted(queue, reason=reason, cause=cause, seconds=ready_for)
        once = (objects.uid(workload) or decision.victim, reason, cause)
        first = not evicted_before(workload, reason, cause) and once not in self._evicted
        if len(self._evicted) >= EVICTIONS_REMEMBERED:
            self._evicted.clear()
        self._evicted.add(once)
        RECORDER.evicted(queue, reason=reason, cause=cause, first_time=first)
        preemptor = self.engine.view.records.get(decision.preemptor) if decision.preemptor else None
        if preemptor is not None and preemptor.cluster_queue:
            RECORDER.preempted(
                preempting_cluster_queue=preemptor.cluster_queue, reason=decision.reason
            )

    async def release(self, key: str, workload: dict[str, Any]) -> None:
        """The evicted job runs nothing any more: clear the admission, then give the quota back."""
        now = self.clock()
        stored = await self.writer.write_workload_status(workload, released_status(workload, now))
        evicted = objects.condition(workload, "Evicted")
        if evicted is not None and evicted.get("status") == "True":
            RECORDER.eviction_completed(
                cluster_queue=objects.admitted_cluster_queue(workload),
                reason=str(evicted.get("reason") or ""),
                seconds=seconds_since(objects.parse_time(evicted.get("lastTransitionTime")), now),
            )
        self.state.remember(stored)
        self.engine.release(key)
        if self.is_admitted(key):  # evicted by a previous leader: this engine never saw it
            self.state.forget(key)
        log.info("eviction completed, quota released", extra={"workload": key})

    def is_admitted(self, key: str) -> bool:
        """Whether the engine counts ``key`` as admitted (assumed or recorded)."""
        try:
            return self.engine.view.workload_state(key).state == "Admitted"
        except KeyError:
            return False
