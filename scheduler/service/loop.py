"""The live scheduler: informers in, engine in the middle, API writes out.

Order of work, kept by :class:`Scheduler`:

1. Informers list and watch every kind the engine needs; nothing is decided
   before all of them have listed once (``ready``).  The engine's usage is
   rebuilt from Workload status by those first lists, so a restarted or newly
   elected scheduler starts from what the cluster recorded.
2. Only the leader acts (``lead``).  Each turn it reconciles the Jobs that
   changed (create Workloads, start admitted Jobs, suspend stray ones, finish
   Workloads of finished Jobs), runs one engine cycle, and carries the
   decisions out.
3. An admission is written to the Workload's status first; the Job is started
   from that record (one patch: unsuspend plus the flavor's node labels).  A
   crash in between leaves an admitted Workload with a suspended Job, which
   step 2 finishes after the restart; the admission is never made twice.
4. A failed admission write makes the engine forget its assumption (the
   Workload is re-read from the mirror) so no quota stays counted for nothing.
5. Pending explanations (``QuotaReserved=False``) are written only when they
   change, at most ``status_writes_per_second``, newest first, so thousands of
   waiting workloads do not flood the API server.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from scheduler.api.config import Configuration
from scheduler.api.defaults import apply_schema_defaults
from scheduler.api.field import ParseError
from scheduler.api.parse import parse_object
from scheduler.core.decisions import Admit, Evict, Pending
from scheduler.core.engine import Engine
from scheduler.status.workload_status import (
    admitted_status,
    evicted_status,
    finished_status,
    pending_status,
    released_status,
)
from scheduler.kube.informer import Informer
from scheduler.jobs.controller import (
    CreateWorkload,
    DeactivateWorkload,
    FinishWorkload,
    ReleaseWorkload,
    RestoreJob,
    StartJob,
    SuspendJob,
    WaitForFlavor,
    next_action,
)
from scheduler.kube.mirror import KUEUE_KINDS, Mirror
from scheduler.status.queue_status import cluster_queue_status, local_queue_status
from scheduler.kube.source import KubeSource, Resource
from scheduler.kube.writer import Conflict, Gone, Writer
from scheduler.service import observability as metrics

log = logging.getLogger("kuota.scheduler")
KUEUE_PLURALS = {
    "ResourceFlavor": "resourceflavors",
    "ClusterQueue": "clusterqueues",
    "Cohort": "cohorts",
    "LocalQueue": "localqueues",
    "Workload": "workloads",
    "WorkloadPriorityClass": "workloadpriorityclasses",
    "AdmissionCheck": "admissionchecks",
}


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Settings:
    config: Configuration | None = None
    status_writes_per_second: float = 20.0
    idle_wait_seconds: float = 1.0
    concurrent_writes: int = 16
    queue_status_interval_seconds: float = 1.0


class Scheduler:
    def __init__(
        self, api: client.ApiClient, settings: Settings, *, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self.api = api
        self.settings = settings
        self.clock = clock
        self.engine = Engine(settings.config)
        self.mirror = Mirror(self.engine)
        self.writer = Writer(api)
        self.wakeup = asyncio.Event()
        self.role = "follower"
        self.pending_writes: dict[str, Pending] = {}
        self.alive = True
        self.next_queue_status = 0.0
        self.write_slots = asyncio.Semaphore(settings.concurrent_writes)
        self.informers = self._informers()

    # -- informers -------------------------------------------------------------------
    def _informers(self) -> list[Informer]:
        def woken(handler: Callable[[Any], None]) -> Callable[[Any], None]:
            def handle(event: Any) -> None:
                handler(event)
                self.wakeup.set()

            return handle

        informers = [
            Informer(
                kind,
                KubeSource(self.api, Resource("kueue.x-k8s.io", "v1beta2", KUEUE_PLURALS[kind])),
                woken(self.mirror.on_kueue),
            )
            for kind in KUEUE_KINDS
        ]
        informers += [
            Informer(
                "Job",
                KubeSource(self.api, Resource("batch", "v1", "jobs")),
                woken(self.mirror.on_job),
            ),
            Informer(
                "Namespace",
                KubeSource(self.api, Resource("", "v1", "namespaces")),
                woken(self.mirror.on_namespace),
            ),
            Informer(
                "PriorityClass",
                KubeSource(self.api, Resource("scheduling.k8s.io", "v1", "priorityclasses")),
                woken(self.mirror.on_priority_class),
            ),
        ]
        return informers

    def ready(self) -> bool:
        return all(informer.synced.is_set() for informer in self.informers)

    async def watch(self) -> None:
        """Run every informer until cancelled (all replicas do this)."""
        await asyncio.gather(*(informer.run() for informer in self.informers))

    # -- leading ---------------------------------------------------------------------
    async def lead(self) -> None:
        """The leader's loop: wait for every first list, then reconcile and schedule forever."""
        while not self.ready():
            await asyncio.sleep(0.05)
        self.role = "leader"
        log.info(
            "leading: informers synced, usage rebuilt from Workload status",
            extra={"workloads": len(self.mirror.workloads), "jobs": len(self.mirror.jobs)},
        )
        try:
            while True:
                progressed = await self.turn()
                if not progressed:
                    self.wakeup.clear()
                    try:
                        await asyncio.wait_for(
                            self.wakeup.wait(), timeout=self.settings.idle_wait_seconds
                        )
                    except TimeoutError:
                        pass
        finally:
            self.role = "follower"

    async def turn(self) -> bool:
        """One reconcile pass and one engine cycle; True when something was done."""
        acted = await self.reconcile_jobs()
        started = time.perf_counter()
        result = self.engine.cycle(self.clock())
        elapsed = time.perf_counter() - started
        outcome = "success" if result.admitted else "inadmissible"
        metrics.CYCLE_SECONDS.observe(elapsed)
        metrics.ADMISSION_ATTEMPTS.labels(outcome, self.role).inc()
        metrics.ADMISSION_ATTEMPT_SECONDS.labels(outcome, self.role).observe(elapsed)
        # Decisions about different Workloads are independent: carry them out
        # concurrently (the writer still serialises writes to one object).
        actions = []
        for decision in result.decisions:
            if isinstance(decision, Admit):
                actions.append(self.admit(decision))
            elif isinstance(decision, Pending):
                self.pending_writes[decision.workload] = decision
            elif isinstance(decision, Evict):
                actions.append(self.evict(decision))
        await self._bounded(actions)
        await self.flush_pending()
        self.publish_queue_metrics()
        if time.monotonic() >= self.next_queue_status:
            self.next_queue_status = time.monotonic() + self.settings.queue_status_interval_seconds
            await self.refresh_queue_status()
        return bool(result.admitted or result.evicted or acted or self.mirror.dirty_jobs)

    async def refresh_queue_status(self) -> None:
        """ClusterQueue and LocalQueue status (10.1, 10.2): computed each second, written when changed."""
        now = self.clock()
        states = {}
        for name, queue in list(self.mirror.cluster_queues.items()):
            try:
                states[name] = self.engine.cluster_queue_status(name)
            except KeyError:
                continue
            status = cluster_queue_status(queue, states[name], now)
            if status is not None:
                await self._write_queue_status(
                    "clusterqueues", name, queue, status, self.mirror.cluster_queues
                )
        by_queue: dict[str, list[dict[str, Any]]] = {}
        for workload in self.mirror.workloads.values():
            queue_name = (workload.get("spec") or {}).get("queueName")
            if queue_name:
                by_queue.setdefault(
                    f"{(workload.get('metadata') or {}).get('namespace')}/{queue_name}", []
                ).append(workload)
        for key, queue in list(self.mirror.local_queues.items()):
            cq = states.get(str((queue.get("spec") or {}).get("clusterQueue", "")))
            status = local_queue_status(queue, by_queue.get(key, []), cluster_queue=cq, now=now)
            if status is not None:
                await self._write_queue_status(
                    "localqueues", key, queue, status, self.mirror.local_queues
                )

    async def _write_queue_status(
        self,
        plural: str,
        key: str,
        queue: dict[str, Any],
        status: dict[str, Any],
        store: dict[str, dict[str, Any]],
    ) -> None:
        try:
            store[key] = await self.writer.write_status(plural, queue, status)
        except (Conflict, Gone):
            pass  # the watch brings the fresh object; the next refresh tries again
        except ApiException as failure:
            log.warning("could not write queue status", extra={"queue": key, "error": str(failure)})

    # -- decisions -------------------------------------------------------------------
    async def admit(self, decision: Admit) -> None:
        metrics.DECISIONS.labels("admit").inc()
        workload = self.mirror.workloads.get(decision.workload)
        if workload is None:  # deleted meanwhile
            self.engine.remove("Workload", *reversed(decision.workload.split("/", 1)))
            return
        now = self.clock()
        try:
            stored = await self.writer.write_workload_status(
                workload, admitted_status(workload, decision, now)
            )
        except (Conflict, Gone, ApiException) as failure:
            log.warning(
                "Could not admit Workload and assign flavors in apiserver",
                extra={"workload": decision.workload, "error": str(failure)},
            )
            self.forget(decision.workload)
            return
        self.mirror.workloads[decision.workload] = stored
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
        created = _created(workload)
        priority_class = str(
            ((workload.get("spec") or {}).get("priorityClassRef") or {}).get("name", "")
        )
        metrics.QUOTA_RESERVED.labels(decision.cluster_queue, priority_class, self.role).inc()
        metrics.ADMITTED.labels(decision.cluster_queue, priority_class, self.role).inc()
        if created is not None:
            metrics.ADMISSION_WAIT.labels(
                decision.cluster_queue, priority_class, self.role
            ).observe(max(0.0, (now - created).total_seconds()))
        job_uid = _owner_job_uid(stored)
        if job_uid:
            self.mirror.dirty_jobs.add(str(job_uid))
            await self.reconcile_job(
                str(job_uid)
            )  # start it now: no wait for the watch to come back
        wait = f"{(now - created).total_seconds():.0f}s" if created else "0s"
        await self.writer.event(
            stored,
            kind="Workload",
            reason="QuotaReserved",
            message=f"Quota reserved in ClusterQueue {decision.cluster_queue}, "
            f"wait time since queued was {wait}",
        )

    async def evict(self, decision: Evict) -> None:
        """Record the eviction on the victim; its Job is stopped by the reconciler, quota released after."""
        metrics.DECISIONS.labels("evict").inc()
        workload = self.mirror.workloads.get(decision.victim)
        if workload is None:
            return
        status = evicted_status(workload, decision, self.clock())
        if status is None:
            return
        try:
            stored = await self.writer.write_workload_status(workload, status)
        except (Conflict, Gone, ApiException) as failure:
            log.warning(
                "could not write the eviction",
                extra={"workload": decision.victim, "error": str(failure)},
            )
            return
        self.mirror.workloads[decision.victim] = stored
        cq = str(((workload.get("status") or {}).get("admission") or {}).get("clusterQueue", ""))
        metrics.EVICTED.labels(
            cq,
            "Preempted" if decision.preemptor else decision.reason,
            decision.reason,
            "",
            self.role,
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
        await self.writer.event(
            stored,
            kind="Workload",
            reason="Preempted" if decision.preemptor else "Evicted",
            message=decision.message,
        )
        job_uid = _owner_job_uid(stored)
        if job_uid:
            self.mirror.dirty_jobs.add(job_uid)

    async def release(self, key: str, workload: Mapping[str, Any]) -> None:
        """The evicted Job has no pods left: clear the admission, then give the quota back in the engine."""
        stored = await self.writer.write_workload_status(
            workload, released_status(workload, self.clock())
        )
        self.mirror.workloads[key] = stored
        self.engine.release(key)
        try:
            still_admitted = self.engine.workload_state(key).state == "Admitted"
        except KeyError:
            still_admitted = False
        if still_admitted:  # evicted by a previous leader: this engine never saw the Evict
            self.forget(key)
        log.info("eviction completed, quota released", extra={"workload": key})

    def forget(self, key: str) -> None:
        """Drop the engine's assumption about ``key`` and put back what the API server has."""
        namespace, name = key.split("/", 1)
        self.engine.remove("Workload", name, namespace)
        current = self.mirror.workloads.get(key)
        if current is not None:
            try:
                self.engine.apply(parse_object(apply_schema_defaults(current)))  # type: ignore[arg-type]
            except ParseError:
                pass

    async def flush_pending(self) -> None:
        """Write changed pending explanations, within the rate budget; the rest wait for the next turn."""
        budget = max(1, int(self.settings.status_writes_per_second))
        for key in list(self.pending_writes)[:budget]:
            decision = self.pending_writes.pop(key)
            workload = self.mirror.workloads.get(key)
            if workload is None:
                continue
            status = pending_status(workload, decision, self.clock())
            if status is None:
                continue
            metrics.DECISIONS.labels("pending").inc()
            try:
                self.mirror.workloads[key] = await self.writer.write_workload_status(
                    workload, status
                )
            except (Conflict, Gone):
                continue  # the watch brings the fresh object; the next cycle decides again
            except ApiException as failure:
                log.warning(
                    "could not write the pending status",
                    extra={"workload": key, "error": str(failure)},
                )
                continue
            log.info(
                "pending",
                extra={"workload": key, "reason": decision.reason, "why": decision.message},
            )

    # -- Jobs --------------------------------------------------------------------------
    async def reconcile_jobs(self) -> bool:
        dirty, self.mirror.dirty_jobs = self.mirror.dirty_jobs, set()
        return any(await self._bounded([self.reconcile_job(uid) for uid in sorted(dirty)]))

    async def _bounded(self, actions: list[Any]) -> list[Any]:
        """Run independent API actions with at most ``concurrent_writes`` in flight."""

        async def one(action: Any) -> Any:
            async with self.write_slots:
                return await action

        return list(await asyncio.gather(*(one(action) for action in actions)))

    async def reconcile_job(self, uid: str) -> bool:
        job = self.mirror.jobs.get(uid)
        if job is None:
            return False
        workload = self.mirror.workload_for(uid)
        action = next_action(
            job, workload, flavors=self.mirror.flavors, priority_classes=self.mirror.classes()
        )
        if action is None or isinstance(action, WaitForFlavor):
            return False
        key = f"{(job.get('metadata') or {}).get('namespace')}/{(job.get('metadata') or {}).get('name')}"
        try:
            if isinstance(action, CreateWorkload):
                if await self.writer.create_workload(action.workload):
                    await self.writer.event(
                        job,
                        kind="Job",
                        reason="CreatedWorkload",
                        message=f"Created Workload: {_key(action.workload)}",
                    )
            elif isinstance(action, StartJob):
                self.mirror.jobs[uid] = await self.writer.patch_job(job, action.job)
                log.info("started job", extra={"job": key, "cluster_queue": action.cluster_queue})
                await self.writer.event(
                    job,
                    kind="Job",
                    reason="Started",
                    message=f"Admitted by clusterQueue {action.cluster_queue}",
                )
            elif isinstance(action, RestoreJob):
                current = (
                    await self.writer.clear_job_start_time(job) if action.clear_start_time else job
                )
                restored = {
                    **action.job,
                    "metadata": current.get("metadata", action.job.get("metadata")),
                }
                self.mirror.jobs[uid] = await self.writer.patch_job(current, restored)
                log.info("stopped job, pod template restored", extra={"job": key})
                await self.writer.event(job, kind="Job", reason="Stopped", message=action.message)
            elif isinstance(action, DeactivateWorkload) and workload is not None:
                await self.evict(
                    Evict(
                        victim=_key(workload),
                        preemptor=None,
                        reason="Deactivated",
                        message=action.message,
                    )
                )
            elif isinstance(action, ReleaseWorkload) and workload is not None:
                await self.release(_key(workload), workload)
            elif isinstance(action, SuspendJob):
                self.mirror.jobs[uid] = await self.writer.patch_job(job, action.job)
                log.info("suspended job", extra={"job": key, "why": action.message})
                await self.writer.event(job, kind="Job", reason="Stopped", message=action.message)
            elif isinstance(action, FinishWorkload) and workload is not None:
                status = finished_status(
                    workload, reason=action.reason, message=action.message, now=self.clock()
                )
                if status is not None:
                    await self.writer.write_workload_status(workload, status)
                    cq = str(
                        ((workload.get("status") or {}).get("admission") or {}).get(
                            "clusterQueue", ""
                        )
                    )
                    metrics.FINISHED.labels(cq, "", self.role).inc()
                    await self.writer.event(
                        job,
                        kind="Job",
                        reason="FinishedWorkload",
                        message=f"Workload '{_key(workload)}' is declared finished",
                    )
        except (Conflict, Gone):
            self.mirror.dirty_jobs.add(uid)  # recompute from the fresh object the watch delivers
            return False
        except ApiException as failure:
            log.warning(
                "job action failed",
                extra={
                    "job": key,
                    "action": type(action).__name__,
                    "error": f"{failure.status} {failure.reason}",
                },
            )
            return False
        return True

    # -- metrics ---------------------------------------------------------------------
    def publish_queue_metrics(self) -> None:
        for name in self.engine.cluster_queue_names():
            status = self.engine.cluster_queue_status(name)
            metrics.PENDING.labels(name, "active", self.role).set(status.pending)
            metrics.RESERVING.labels(name, self.role).set(status.admitted)
            metrics.ADMITTED_ACTIVE.labels(name, self.role).set(status.admitted)
            for state in ("pending", "active", "terminating"):
                current = "active" if status.active else "pending"
                metrics.CQ_STATUS.labels(name, state, self.role).set(1 if state == current else 0)
            for flavor, resources in status.usage.items():
                for resource, quantity in resources.items():
                    value = float(quantity.milli_value()) / 1000
                    metrics.CQ_RESERVATION.labels("", name, flavor, resource, self.role).set(value)
                    metrics.CQ_USAGE.labels("", name, flavor, resource, self.role).set(value)


def _owner_job_uid(obj: Mapping[str, Any]) -> str | None:
    uid = next(
        (
            o.get("uid")
            for o in (obj.get("metadata") or {}).get("ownerReferences") or []
            if o.get("kind") == "Job"
        ),
        None,
    )
    return str(uid) if uid else None


def _key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


def _created(obj: Mapping[str, Any]) -> datetime | None:
    text = (obj.get("metadata") or {}).get("creationTimestamp")
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
