"""Carrying out the engine's decisions and the Job controller's actions as API writes.

The engine (``scheduler.core``) decides and the Job controller
(``scheduler.jobs.controller``) says what a Job needs next; both answer with
data.  This module turns that data into writes, by the rules of DESIGN.md:

- **Assume, write, confirm or forget.**  A cycle that admits a Workload has
  already counted its quota in the engine (the assumption).  The admission is
  then written; the write's answer confirms it
  (:meth:`~scheduler.core.engine.Engine.admission_recorded`), and from then on
  the Workload's own status decides: a later version without the reservation
  (another writer finished the eviction, a former leader cleared it) releases
  the quota.  Versions older than the answer are dropped by the mirror.
  If the write fails, :meth:`Executor.forget` drops the assumption and
  re-applies the Workload exactly as the mirror holds it, so no quota stays
  counted for nothing.
- **Crash-safe order.**  The admission is recorded in the Workload's status
  first; only then is the Job started, from that record (one patch:
  unsuspend plus the flavor's node labels).  Nothing is started when the
  status write fails, and a crash in between leaves an admitted Workload with
  a suspended Job that the controller finishes after the restart; the
  admission is never made twice.
- **Eviction.**  The victim gets ``Evicted`` (and ``Preempted``) while it
  still holds its admission; its Job is then stopped and its pod template
  restored; its quota is released (status first, then the engine) only once
  the Job has no active pods.  A Workload no Job owns keeps its quota until
  whoever runs it ends the eviction (clears the reservation in its status), as
  with Kueue: the engine releases the quota when it sees that.
- **Conflicts recompute.**  A 409 (or a failed resourceVersion test) means
  the object moved: the Job is marked dirty and decided again from the fresh
  object the watch delivers; a stale decision is never forced through.
- **Fenced writes** (:class:`~scheduler.kube.fence.Fenced`: this replica may
  no longer hold the Lease) are not API errors: nothing here catches them,
  no write is retried, and the term of leadership ends; the service then
  rebuilds the engine from the informers' stores, so an assumption whose
  write was fenced is not kept.
- **Pending explanations** (``QuotaReserved=False``) are written only when
  they change, at most ``status_writes_per_second`` per turn, newest
  decision per Workload, so thousands of waiting Workloads do not flood the
  API server.

Dispatch is by ``match`` over the closed unions (``Decision`` and
``Action``) ending in ``assert_never``, so the type checker fails the build
when a new kind of decision or action has no handler.  Independent writes
run concurrently (at most ``concurrent_writes`` in flight); the writer still
serialises writes to one object.  Every line logged while acting on an
object carries its key (``object``) through :func:`scheduler.logs.bind`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from typing import Any, TypeVar, assert_never, cast

from scheduler import logs
from scheduler.api import objects
from scheduler.api.defaults import apply_schema_defaults
from scheduler.api.field import ParseError
from scheduler.api.parse import parse_object
from scheduler.core.decisions import Admit, Decision, Evict, Pending
from scheduler.core.engine import Engine
from scheduler.jobs.controller import (
    Action,
    CreateWorkload,
    DeactivateWorkload,
    DeleteWorkload,
    FinalizePod,
    FinishWorkload,
    ReleaseWorkload,
    RestoreJob,
    StartJob,
    StopPod,
    SuspendJob,
    UpdateWorkload,
    WaitForFlavor,
    next_action,
)
from scheduler.jobs.pod import POD, next_pod_action, without_finalizer
from scheduler.jobs.pod.group import (
    GROUP_KEY_PREFIX,
    FinalizePods,
    GroupAction,
    StartPods,
    StopPods,
    next_group_action,
)
from scheduler.kube import metrics
from scheduler.kube.informer import Event
from scheduler.kube.mirror import Mirror
from scheduler.kube.rest import Conflict, NotFound, RestError, Unreachable
from scheduler.kube.writer import Writer, job_kind
from scheduler.status.check_status import deactivation
from scheduler.status.conditions import timestamp
from scheduler.status.workload_status import (
    admitted_status,
    evicted_status,
    finished_status,
    pending_status,
    released_status,
)

log = logging.getLogger("kuota.scheduler")
T = TypeVar("T")
Workload = dict[str, Any]


class Executor:
    """Decisions and Job actions in, API writes out (see the module docstring)."""

    def __init__(
        self,
        *,
        engine: Engine,
        mirror: Mirror,
        writer: Writer,
        clock: Callable[[], datetime],
        role: Callable[[], str] = lambda: "leader",
        concurrent_writes: int = 16,
        status_writes_per_second: float = 20.0,
    ) -> None:
        self.engine = engine
        self.mirror = mirror
        self.writer = writer
        self.clock = clock
        self.role = role
        """The ``replica_role`` label of the metrics recorded."""
        self.status_writes_per_second = status_writes_per_second
        self.pending_writes: dict[str, Pending] = {}
        """Pending explanations not written yet, newest per Workload."""
        self._write_slots = asyncio.Semaphore(concurrent_writes)
        self._in_flight: set[asyncio.Task[None]] = set()
        """Admissions and evictions being written in the background (:meth:`dispatch`)."""
        self._failures: list[BaseException] = []
        self._pending_writer: asyncio.Task[None] | None = None

    async def bounded(self, actions: Iterable[Awaitable[T]]) -> list[T]:
        """Run independent API actions with at most ``concurrent_writes`` in flight."""

        async def one(action: Awaitable[T]) -> T:
            async with self._write_slots:
                return await action

        # Every action ends before this returns, even when one fails (say, fenced):
        # no write of this turn may still be running when the term ends.
        results = await asyncio.gather(*(one(action) for action in actions), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return cast(list[T], results)

    # -- engine decisions ---------------------------------------------------------------

    async def carry_out(self, decisions: Iterable[Decision]) -> None:
        """Admissions and evictions (concurrently), then pending explanations within budget,
        all written before this returns."""
        self.dispatch(decisions)
        await self.settle()
        await self.flush_pending()

    def dispatch(self, decisions: Iterable[Decision]) -> None:
        """Start admissions and evictions as background writes; queue pending explanations.

        The cycle does not wait for them: the engine already counts each decision
        (the assumption), so the next cycle can run while they are written, at most
        ``concurrent_writes`` at a time.  A write that fails is handled in its task
        (forget, decide again); one that raises (say, fenced) is kept for
        :meth:`raise_failures`, which ends the term.
        """
        for decision in decisions:
            match decision:
                case Admit():
                    self._start(functools.partial(self.admit, decision))
                case Evict():
                    self._start(functools.partial(self.evict, decision))
                case Pending():
                    self.pending_writes[decision.workload] = decision
                case _:
                    assert_never(decision)

    def _start(self, write: Callable[[], Awaitable[None]]) -> None:
        async def one() -> None:
            async with self._write_slots:
                await write()

        task = asyncio.get_running_loop().create_task(one())
        self._in_flight.add(task)
        task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self._in_flight.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._failures.append(cast(BaseException, task.exception()))

    @property
    def writes_in_flight(self) -> int:
        return len(self._in_flight)

    def raise_failures(self) -> None:
        """Raise the first exception a background write ended with (once)."""
        if self._failures:
            failure = self._failures[0]
            self._failures.clear()
            raise failure

    async def settle(self) -> None:
        """Wait until every background admission and eviction is written; raise the first
        failure."""
        while self._in_flight:
            await asyncio.gather(*list(self._in_flight), return_exceptions=True)
        self.raise_failures()

    def write_pending_soon(self) -> None:
        """Write the queued pending explanations in the background, ``status_writes_per_second``
        at most, unless that writer already runs (the cycle never waits for them)."""
        if not self.pending_writes:
            return
        if self._pending_writer is not None and not self._pending_writer.done():
            return
        if self._pending_writer is not None and not self._pending_writer.cancelled():
            failure = self._pending_writer.exception()
            if failure is not None:
                raise failure
        self._pending_writer = asyncio.get_running_loop().create_task(self._write_pending_paced())

    async def _write_pending_paced(self) -> None:
        loop = asyncio.get_running_loop()
        while self.pending_writes:
            started = loop.time()
            await self.flush_pending()
            if self.pending_writes:
                await asyncio.sleep(max(0.0, 1.0 - (loop.time() - started)))

    async def stop_background(self) -> None:
        """End of a term: wait for the admissions and evictions in flight (each bounded by
        the fence's timeout), drop the pending explanations' writer; raise nothing."""
        while self._in_flight:
            await asyncio.gather(*list(self._in_flight), return_exceptions=True)
        self._failures.clear()
        if self._pending_writer is not None:
            self._pending_writer.cancel()
            await asyncio.gather(self._pending_writer, return_exceptions=True)
            # What it ended with (say, fenced) belongs to this term: the next term's first
            # write_pending_soon must not raise it again and end that term too.
            self._pending_writer = None

    async def admit(self, decision: Admit) -> None:
        """Record the admission in the Workload's status, then start its Job from that record."""
        with logs.bind(object=decision.workload):
            await self._admit(decision)

    async def _admit(self, decision: Admit) -> None:
        metrics.DECISIONS.labels("admit").inc()
        workload = self.mirror.workloads.get(decision.workload)
        if workload is None:  # deleted meanwhile: nothing to write, nothing to hold
            namespace, name = decision.workload.split("/", 1)
            self.engine.remove("Workload", name, namespace)
            return
        now = self.clock()
        try:
            stored = await self.writer.write_workload_status(
                workload, admitted_status(workload, decision, now)
            )
        except RestError as failure:
            log.warning(
                "Could not admit Workload and assign flavors in apiserver",
                extra={"workload": decision.workload, "error": str(failure)},
            )
            self.forget(decision.workload)
            return
        self.mirror.remember_workload(decision.workload, stored)
        self.engine.admission_recorded(decision.workload)
        self.pending_writes.pop(decision.workload, None)
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
        priority_class = objects.priority_class_name(workload)
        role = self.role()
        metrics.QUOTA_RESERVED.labels(decision.cluster_queue, priority_class, role).inc()
        if not decision.admission_checks:  # else admitted when every check is Ready
            metrics.ADMITTED.labels(decision.cluster_queue, priority_class, role).inc()
        if created is not None:
            metrics.ADMISSION_WAIT.labels(decision.cluster_queue, priority_class, role).observe(
                max(0.0, (now - created).total_seconds())
            )
        job_uid = self.mirror.job_uid_of(stored)
        if job_uid:
            self.mirror.dirty_jobs.add(job_uid)
            await self.reconcile_job(job_uid)  # start it now: no wait for the watch to come back
        wait = f"{(now - created).total_seconds():.0f}s" if created else "0s"
        self.writer.event(
            stored,
            kind="Workload",
            reason="QuotaReserved",
            message=f"Quota reserved in ClusterQueue {decision.cluster_queue}, "
            f"wait time since queued was {wait}",
        )

    async def evict(self, decision: Evict) -> None:
        """Record the eviction; the controller then stops its Job, and the quota goes after."""
        with logs.bind(object=decision.victim):
            await self._evict(decision)

    async def _evict(self, decision: Evict) -> None:
        metrics.DECISIONS.labels("evict").inc()
        workload = self.mirror.workloads.get(decision.victim)
        if workload is None:
            return
        status = evicted_status(workload, decision, self.clock())
        if status is None:
            return
        try:
            stored = await self.writer.write_workload_status(workload, status)
        except RestError as failure:
            log.warning(
                "could not write the eviction",
                extra={"workload": decision.victim, "error": str(failure)},
            )
            # Not evicted after all: a later cycle decides again.
            self.engine.eviction_not_recorded(decision.victim, decision.preemptor)
            self.forget(decision.victim)
            return
        self.mirror.remember_workload(decision.victim, stored)
        reason = "Preempted" if decision.preemptor else decision.reason
        cause = decision.reason if decision.preemptor else ""  # InClusterQueue, ...
        if reason.startswith("DeactivatedDueTo"):  # Deactivated, cause AdmissionCheck, ...
            reason, cause = "Deactivated", reason.removeprefix("DeactivatedDueTo")
        metrics.EVICTED.labels(
            objects.admitted_cluster_queue(workload), reason, cause, "", self.role()
        ).inc()
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
        job_uid = self.mirror.job_uid_of(stored)
        if job_uid:
            self.mirror.dirty_jobs.add(job_uid)

    async def release(self, key: str, workload: Workload) -> None:
        """The evicted Job has no pods left: clear the admission, then give the quota back."""
        stored = await self.writer.write_workload_status(
            workload, released_status(workload, self.clock())
        )
        self.mirror.remember_workload(key, stored)
        self.engine.release(key)
        try:
            still_admitted = self.engine.workload_state(key).state == "Admitted"
        except KeyError:
            still_admitted = False
        if still_admitted:  # evicted by a previous leader: this engine never saw the Evict
            self.forget(key)
        log.info("eviction completed, quota released", extra={"workload": key})

    def _admitted(self, key: str) -> bool:
        try:
            return self.engine.workload_state(key).state == "Admitted"
        except KeyError:
            return False

    def forget(self, key: str) -> None:
        """Drop the engine's assumption about ``key`` and put back what the API server has."""
        namespace, name = key.split("/", 1)
        self.engine.remove("Workload", name, namespace)
        current = self.mirror.workloads.get(key)
        if current is None:
            return
        try:
            model = parse_object(apply_schema_defaults(current))
        except ParseError:
            return
        self.engine.apply(model)  # type: ignore[arg-type]

    async def flush_pending(self) -> None:
        """Write changed pending explanations within the budget; the rest wait for the next turn."""
        budget = max(1, int(self.status_writes_per_second))
        batch = [(key, self.pending_writes.pop(key)) for key in list(self.pending_writes)[:budget]]
        await self.bounded(self._write_pending_bound(key, decision) for key, decision in batch)

    async def _write_pending_bound(self, key: str, decision: Pending) -> None:
        with logs.bind(object=key):
            await self._write_pending(key, decision)

    async def _write_pending(self, key: str, decision: Pending) -> None:
        workload = self.mirror.workloads.get(key)
        if workload is None:
            return
        if self._admitted(key):
            # Admitted since the explanation was queued (the writes run in the background):
            # explaining a wait now would take the admission back.
            return
        status = pending_status(workload, decision, self.clock())
        if status is None:
            return
        metrics.DECISIONS.labels("pending").inc()
        try:
            stored = await self.writer.write_workload_status(workload, status)
            self.mirror.remember_workload(key, stored)
        except (Conflict, NotFound):
            return  # the watch brings the fresh object; the next cycle decides again
        except RestError as failure:
            log.warning(
                "could not write the pending status", extra={"workload": key, "error": str(failure)}
            )
            return
        log.info(
            "pending", extra={"workload": key, "reason": decision.reason, "why": decision.message}
        )

    # -- Jobs ---------------------------------------------------------------------------

    async def reconcile_jobs(self) -> bool:
        """Decide again for every Job that changed; True when any action was carried out."""
        dirty, self.mirror.dirty_jobs = self.mirror.dirty_jobs, set()
        return any(await self.bounded(self.reconcile_job(uid) for uid in sorted(dirty)))

    async def reconcile_job(self, uid: str) -> bool:
        """The controller's next action for one Job, carried out; True when it wrote something."""
        if uid.startswith(GROUP_KEY_PREFIX):
            return await self.reconcile_group(uid)
        job = self.mirror.jobs.get(uid)
        if job is None:
            return False
        workload = self.mirror.workload_for(uid)
        decide = next_pod_action if job.get("kind") == POD.kind else next_action
        action = decide(
            job,
            workload,
            flavors=self.mirror.flavor_placements(),
            priority_classes=self.mirror.classes(),
        )
        if action is None or isinstance(action, WaitForFlavor):
            return False
        return await self._carry_out(
            self._perform(uid, job, workload, action),
            dirty=uid,
            what="job",
            subject={"job": objects.key(job)},
            action=type(action).__name__,
        )

    async def _carry_out(
        self,
        performing: Awaitable[bool],
        *,
        dirty: str,
        what: str,
        subject: dict[str, str],
        action: str,
    ) -> bool:
        """Await one job or pod-group action; a failed one is decided again later, never raised."""
        with logs.bind(object=next(iter(subject.values()))):
            try:
                return await performing
            except (Conflict, NotFound):
                # Recompute from the fresh object the watch delivers.
                self.mirror.dirty_jobs.add(dirty)
                return False
            except Unreachable as failure:
                # No answer: try again next turn (the loop backs off meanwhile).
                self.mirror.dirty_jobs.add(dirty)
                log.warning(
                    f"{what} action got no answer; will retry",
                    extra={**subject, "action": action, "error": str(failure)},
                )
                return False
            except RestError as failure:
                log.warning(
                    f"{what} action failed",
                    extra={**subject, "action": action, "error": str(failure)},
                )
                return False

    async def reconcile_group(self, key: str) -> bool:
        """The next action for one pod group (its pods and its Workload), carried out."""
        pods = list(self.mirror.pod_groups.get(key, {}).values())
        if not pods:
            return False
        workload = self.mirror.workload_for(key)
        action = next_group_action(
            pods,
            workload,
            flavors=self.mirror.flavor_placements(),
            priority_classes=self.mirror.classes(),
        )
        if action is None or isinstance(action, WaitForFlavor):
            return False
        return await self._carry_out(
            self._perform_group(key, pods[0], workload, action),
            dirty=key,
            what="pod group",
            subject={"group": key},
            action=type(action).__name__,
        )

    async def _perform_group(
        self, key: str, first: Workload, workload: Workload | None, action: GroupAction
    ) -> bool:
        """A pod group's own actions here; the rest as for any job (``first`` stands for it)."""
        match action:
            case StartPods():
                for old, new in action.pods:
                    self.mirror.remember_pod(await self.writer.patch_job(old, new))
                    self.writer.event(
                        old,
                        kind="Pod",
                        reason="Started",
                        message=f"Admitted by clusterQueue {action.cluster_queue}",
                    )
                log.info("started pod group", extra={"group": key, "pods": len(action.pods)})
            case StopPods():
                for pod in action.pods:
                    await self._stop_pod(pod, StopPod(action.reason, action.message))
            case FinalizePods():
                for pod in action.pods:
                    self.mirror.remember_pod(
                        await self.writer.patch_job(pod, without_finalizer(pod))
                    )
            case _:
                return await self._perform(key, first, workload, action)
        return True

    async def _perform(
        self, uid: str, job: Workload, workload: Workload | None, action: Action
    ) -> bool:
        """One handler per action type; ``assert_never`` keeps the dispatch exhaustive."""
        match action:
            case CreateWorkload():
                await self._create_workload(job, action)
            case UpdateWorkload():
                if workload is None:
                    return False
                await self._update_workload(job, workload, action)
            case DeleteWorkload():
                if workload is None:
                    return False
                await self._delete_workload(uid, job, workload, action)
            case StartJob():
                await self._start_job(uid, job, action)
            case RestoreJob():
                await self._restore_job(uid, job, action)
            case SuspendJob():
                await self._suspend_job(uid, job, action)
            case DeactivateWorkload():
                if workload is None:  # the controller asks this only of a Workload
                    return False
                reason, message = deactivation(workload)  # DeactivatedDueTo<cause> when known
                await self.evict(
                    Evict(
                        victim=objects.key(workload), preemptor=None, reason=reason, message=message
                    )
                )
            case ReleaseWorkload():
                if workload is None:
                    return False
                await self.release(objects.key(workload), workload)
            case FinishWorkload():
                if workload is None:
                    return False
                await self._finish_workload(job, workload, action)
            case StopPod():
                await self._stop_pod(job, action)
            case FinalizePod():
                self.mirror.remember_job(
                    uid, await self.writer.patch_job(job, without_finalizer(job))
                )
            case WaitForFlavor():
                return False
            case _:
                assert_never(action)
        return True

    async def _create_workload(self, job: Workload, action: CreateWorkload) -> None:
        if await self.writer.create_workload(action.workload):
            self.writer.event(
                job,
                kind=job_kind(job),
                reason="CreatedWorkload",
                message=f"Created Workload: {objects.key(action.workload)}",
            )

    async def _update_workload(
        self, job: Workload, workload: Workload, action: UpdateWorkload
    ) -> None:
        key = objects.key(workload)
        stored = await self.writer.update_workload(workload, action.workload)
        self.mirror.remember_workload(key, stored)
        self.forget(key)  # the engine queues it with the new pod sets at once
        log.info("rebuilt the workload of a changed job", extra={"why": action.difference})
        self.writer.event(
            job,
            kind=job_kind(job),
            reason="UpdatedWorkload",
            message=f"Updated not matching Workload for suspended job: {key} ({action.difference})",
        )

    async def _delete_workload(
        self, uid: str, job: Workload, workload: Workload, action: DeleteWorkload
    ) -> None:
        key = objects.key(workload)
        await self.writer.delete_workload(workload)
        # As the watch will say: the quota goes back now (the Job has no pods), and
        # the Job gets a new Workload built from it on its next turn.
        self.mirror.on_kueue(Event("DELETED", workload, key))
        self.mirror.dirty_jobs.add(uid)
        log.info("deleted the workload of a changed job", extra={"why": action.difference})
        self.writer.event(
            job,
            kind=job_kind(job),
            reason="DeletedWorkload",
            message=f"Deleted not matching Workload: {key} ({action.difference})",
        )

    async def _start_job(self, uid: str, job: Workload, action: StartJob) -> None:
        self.mirror.remember_job(uid, await self.writer.patch_job(job, action.job))
        log.info(
            "started job", extra={"job": objects.key(job), "cluster_queue": action.cluster_queue}
        )
        self.writer.event(
            job,
            kind=job_kind(job),
            reason="Started",
            message=f"Admitted by clusterQueue {action.cluster_queue}",
        )

    async def _restore_job(self, uid: str, job: Workload, action: RestoreJob) -> None:
        current = await self.writer.clear_job_start_time(job) if action.clear_start_time else job
        restored = {**action.job, "metadata": current.get("metadata", action.job.get("metadata"))}
        self.mirror.remember_job(uid, await self.writer.patch_job(current, restored))
        log.info("stopped job, pod template restored", extra={"job": objects.key(job)})
        self.writer.event(job, kind=job_kind(job), reason="Stopped", message=action.message)

    async def _suspend_job(self, uid: str, job: Workload, action: SuspendJob) -> None:
        self.mirror.remember_job(uid, await self.writer.patch_job(job, action.job))
        log.info("suspended job", extra={"job": objects.key(job), "why": action.message})
        self.writer.event(job, kind=job_kind(job), reason="Stopped", message=action.message)

    async def _stop_pod(self, pod: Workload, action: StopPod) -> None:
        now = timestamp(self.clock())
        await self.writer.stop_pod(pod, reason=action.reason, message=action.message, now=now)
        log.info("stopped pod (deleted)", extra={"pod": objects.key(pod), "why": action.message})
        self.writer.event(pod, kind="Pod", reason="Stopped", message=action.message)

    async def _finish_workload(
        self, job: Workload, workload: Workload, action: FinishWorkload
    ) -> None:
        status = finished_status(
            workload, reason=action.reason, message=action.message, now=self.clock()
        )
        if status is None:
            return
        await self.writer.write_workload_status(workload, status)
        cluster_queue = objects.admitted_cluster_queue(workload)
        metrics.FINISHED.labels(cluster_queue, "", self.role()).inc()
        self.writer.event(
            job,
            kind=job_kind(job),
            reason="FinishedWorkload",
            message=f"Workload '{objects.key(workload)}' is declared finished",
        )
