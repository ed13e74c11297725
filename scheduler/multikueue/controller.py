"""The MultiKueue controller: watches the manager and the workers; one pass at a time.

Inputs arrive through informers (:mod:`scheduler.kube.informer`: list, then
watch, resume on expiry): on the manager MultiKueueClusters,
MultiKueueConfigs, AdmissionChecks and Workloads; on every connected worker
its Workloads and Jobs of this manager's origin (label selector).  A worker's
informers start when it connects and stop when it is dropped; a broken watch
on a worker marks it unreachable and probes it at once, as a failed probe
would.  Every event marks what it touches and wakes the loop
(:meth:`Controller.lead`), which runs a pass (:meth:`Controller.run_once`)
at most every ``min_interval`` seconds, plus a slow resync every ``resync``
seconds (the connection probe, the ``workerLostTimeout`` clock, anything a
failed write left).  A pass reads only the informers' stores (and the
workers' Secrets and a Workload's Job when it decides about it); it is
level-based: it never depends on what an earlier one saw.  In order:

1. **Clusters.**  Per MultiKueueCluster that is new, changed, due for its
   probe (resync; every ``interval`` while unreachable) or whose watch broke:
   its Secret (in kuota's namespace), the kubeconfig in it, a client for the
   worker (made again when the kubeconfig changes) and a probe: a list of the
   worker's Workloads, so "reachable and authorized to read what MultiKueue
   reads" is one answer.  ``status.conditions[Active]`` is written when it
   changed.  A worker that fails is remembered with the time it was first
   lost (``workerLostTimeout``).
2. **AdmissionChecks** of controller ``kueue.x-k8s.io/multikueue``: ``Active``
   from their MultiKueueConfig and the clusters' fresh conditions.
3. **Workloads.**  Every manager Workload with a MultiKueue check that
   changed (or whose remote objects changed, or all at a resync) gets
   :func:`~scheduler.multikueue.decisions.dispatch`, from the workers'
   stores; a worker whose informers have not listed yet counts as unreachable.
4. **Garbage.**  A worker's Workload or Job of this origin whose manager
   Workload no longer exists is deleted: at once for a manager Workload
   seen deleted, and by a sweep of every worker every ``gcInterval`` (Kueue's
   collector; ``0s``: no sweep).

Only the holder of the Lease runs passes (the app), and every write asks the
fence first (:mod:`scheduler.kube.fence`): a write refused raises
:class:`~scheduler.kube.fence.Fenced`, which ends the term.  Writes to
manager Workloads are JSON patches guarded by the resourceVersion they were
decided from: the scheduler owns the admission (server-side apply), this
controller only its check's entry, ``clusterName`` and
``nominatedClusterNames``; a conflict is decided again on the next event.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from scheduler import logs
from scheduler.api import objects
from scheduler.api.operational import (
    ALL_AT_ONCE_DISPATCHER,
    DEFAULT_GC_INTERVAL,
    DEFAULT_STEP_SIZE,
)
from scheduler.api.refs import HUB_VERSION, KUEUE_GROUP, KUEUE_PLURALS, PREBUILT_WORKLOAD_KEY
from scheduler.kube.fence import Fence, Unfenced
from scheduler.kube.informer import Event, Informer
from scheduler.kube.rest import Resource, RestClient, RestError
from scheduler.multikueue import decisions
from scheduler.multikueue.dispatcher import Dispatcher
from scheduler.multikueue.manager_writes import ManagerWrites
from scheduler.multikueue.workers import (
    WORKLOADS,
    Connect,
    SourceFactory,
    WorkerPool,
    connect_worker,
    kube_source,
)

log = logging.getLogger("kuota.multikueue")

CLUSTERS = Resource(KUEUE_GROUP, HUB_VERSION, KUEUE_PLURALS["MultiKueueCluster"])
CONFIGS = Resource(KUEUE_GROUP, HUB_VERSION, KUEUE_PLURALS["MultiKueueConfig"])
CHECKS = Resource(KUEUE_GROUP, HUB_VERSION, KUEUE_PLURALS["AdmissionCheck"])


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class MultiKueueSettings:
    """The Configuration's ``namespace`` and ``multiKueue`` block, and the loop's timings."""

    namespace: str = "kueue-system"
    origin: str = decisions.DEFAULT_ORIGIN
    worker_lost_timeout: timedelta = decisions.DEFAULT_WORKER_LOST_TIMEOUT
    gc_interval: timedelta = DEFAULT_GC_INTERVAL
    """Between two sweeps of the workers for orphans (zero: none; a deleted manager
    Workload's copies are removed at once either way)."""
    dispatcher: str = ALL_AT_ONCE_DISPATCHER
    """``multiKueue.dispatcherName``: all at once, incremental, or another controller's."""
    step_size: int = DEFAULT_STEP_SIZE
    respect_config_order: bool = True
    interval: float = 2.0
    """Seconds between two probes of an unreachable worker (and retries of failed writes)."""
    probe_timeout: float = 5.0
    resync: float = 30.0
    """Seconds between two full passes (every cluster probed, every Workload decided)."""
    min_interval: float = 0.2
    """Seconds at least between two passes: the events of a burst share one."""


class Controller:
    """The manager's informers and the pass loop; the work is the pool's and the dispatcher's."""

    def __init__(
        self,
        rest: RestClient,
        settings: MultiKueueSettings,
        *,
        clock: Callable[[], datetime] = utc_now,
        connect: Connect = connect_worker,
        fence: Fence | None = None,
        source: SourceFactory = kube_source,
        watch_workers: bool = True,
    ) -> None:
        self.rest = rest
        self.settings = settings
        self.clock = clock
        self.fence: Fence = fence or Unfenced()
        self.wakeup = asyncio.Event()
        self.dirty: set[str] = set()
        """``namespace/name`` of the manager Workloads to decide about in the next pass."""
        self.everything = True
        """The next pass decides about every Workload (a config, check or cluster changed)."""
        self.retry: set[str] = set()
        """Workloads whose actions failed: decided again at the next timed pass."""
        self.pool = WorkerPool(
            manager=rest,
            namespace=settings.namespace,
            origin=settings.origin,
            interval=settings.interval,
            probe_timeout=settings.probe_timeout,
            clock=clock,
            connect=connect,
            source=source,
            watch_workers=watch_workers,
            on_change=self._changed,
            on_remote_workload=self._on_workload,
            on_remote_job=self._on_remote_job,
        )
        self.writes = ManagerWrites(rest, clock=clock, fence=lambda: self.fence)
        self.dispatcher = Dispatcher(
            rest,
            pool=self.pool,
            writes=self.writes,
            origin=settings.origin,
            worker_lost_timeout=settings.worker_lost_timeout,
            clock=clock,
            fence=lambda: self.fence,
            dispatcher=settings.dispatcher,
            step_size=settings.step_size,
            in_config_order=settings.respect_config_order,
        )
        self.last_sweep: datetime | None = None
        """When the workers were last swept for orphans (``gcInterval``)."""
        self.clusters = Informer("MultiKueueCluster", source(rest, CLUSTERS, None), self._on_any)
        self.configs = Informer("MultiKueueConfig", source(rest, CONFIGS, None), self._on_any)
        self.checks = Informer("AdmissionCheck", source(rest, CHECKS, None), self._on_any)
        self.workloads = Informer(
            "Workload", source(rest, WORKLOADS, None), self._on_manager_workload
        )
        self.deleted: set[str] = set()
        """Manager Workloads seen deleted: their copies are removed at the next pass."""

    @property
    def informers(self) -> list[Informer]:
        """The manager's informers (every replica runs them: a standby is warm)."""
        return [self.clusters, self.configs, self.checks, self.workloads]

    async def watch(self) -> None:
        """Run the manager's informers until cancelled."""
        await asyncio.gather(*(informer.run() for informer in self.informers))

    # -- events ---------------------------------------------------------------------------------

    def _changed(self, everything: bool) -> None:
        self.everything = self.everything or everything
        self.wakeup.set()

    def _on_any(self, event: Event) -> None:
        """A cluster, config or check changed: every Workload is decided again."""
        self._changed(True)

    def _on_workload(self, event: Event) -> None:
        """A manager Workload, or a worker's copy (its key is the manager's)."""
        self.dirty.add(event.key)
        self.wakeup.set()

    def _on_manager_workload(self, event: Event) -> None:
        if event.type == "DELETED":
            self.deleted.add(event.key)
        self._on_workload(event)

    def _on_remote_job(self, event: Event) -> None:
        """A worker's job names the manager Workload it runs for."""
        prebuilt = objects.label(event.object, PREBUILT_WORKLOAD_KEY)
        if prebuilt:
            self.dirty.add(f"{objects.namespace(event.object) or ''}/{prebuilt}")
        self.wakeup.set()

    # -- the loop -------------------------------------------------------------------------------

    async def close(self) -> None:
        await self.pool.close()

    async def lead(self) -> None:
        """Passes while leading: on events (coalesced), every ``interval`` while something is
        unreachable or failed, and a full one every ``resync``; the workers are dropped at the end.
        """
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(informer.synced.wait() for informer in self.informers))
        last_resync = float("-inf")
        try:
            while True:
                full = loop.time() - last_resync >= self.settings.resync
                if full:
                    last_resync = loop.time()
                self.wakeup.clear()
                try:
                    await self.run_once(resync=full)
                except RestError as failure:
                    log.warning("pass failed; trying again", extra={"error": str(failure)})
                    self.everything = True
                timeout = last_resync + self.settings.resync - loop.time()
                if self.retry or self.pool.waiting(self.clusters.store):
                    timeout = min(timeout, self.settings.interval)
                timeout = min(timeout, self._until_due())
                try:
                    await asyncio.wait_for(self.wakeup.wait(), timeout=max(timeout, 0))
                except TimeoutError:
                    pass
                await asyncio.sleep(self.settings.min_interval)
        finally:  # the next term connects and probes afresh
            await self.close()
            self.everything = True

    def _until_due(self) -> float:
        """Seconds until the next garbage sweep or the end of an incremental round."""
        now, due = self.clock(), []
        if self.settings.gc_interval > timedelta(0):
            due.append(
                now if self.last_sweep is None else self.last_sweep + self.settings.gc_interval
            )
        round_end = self.dispatcher.next_round_end()
        if round_end is not None:
            due.append(round_end)
        return min(((when - now).total_seconds() for when in due), default=float("inf"))

    def _sweep_due(self, now: datetime) -> bool:
        interval = self.settings.gc_interval
        if interval <= timedelta(0):
            return False
        return self.last_sweep is None or now - self.last_sweep >= interval

    async def run_once(self, *, resync: bool = False) -> None:
        """One pass over the informers' stores (``resync``: probe and decide everything)."""
        everything = self.everything or resync
        now = self.clock()
        dirty = self.dirty | self.retry | self.dispatcher.rounds_over(now)
        self.everything, self.dirty, self.retry = False, set(), set()
        clusters = [dict(c) for c in self.clusters.store.values()]
        await self.pool.sync(clusters, resync, self._write_cluster_condition)
        by_name = {objects.name(c): c for c in clusters}
        configs = {objects.name(c): c for c in self.configs.store.values()}
        checks = {objects.name(c): dict(c) for c in self.checks.store.values()}
        for check in checks.values():
            if decisions.is_multikueue_check(check):
                condition = decisions.admission_check_condition(check, configs, by_name)
                await self.writes.active_condition(CHECKS, check, condition)
        inventories = self.pool.inventories()
        workloads = self.workloads.store
        gone, self.deleted = {key for key in self.deleted if key not in workloads}, set()
        for key in gone | {key for key in dirty if key not in workloads}:
            self.dispatcher.forget(key)
        keys = sorted(workloads) if everything else sorted(k for k in dirty if k in workloads)
        for key in keys:
            stored = workloads.get(key)
            if stored is None:  # deleted while an earlier one was acted on
                continue
            workload = dict(stored)
            name = decisions.multikueue_check_of(workload, checks)
            if name is None or not self.dispatcher.needs_a_look(workload, inventories):
                continue
            config = configs.get(decisions.config_name(checks[name]))
            members = decisions.config_clusters(config) if config is not None else []
            with logs.bind(object=key):
                if not await self.dispatcher.dispatch(workload, name, members, inventories):
                    self.retry.add(key)
        if self._sweep_due(now):
            self.last_sweep = now
            await self.dispatcher.collect_garbage(set(workloads), inventories)
        elif gone:
            await self.dispatcher.collect_garbage(set(workloads), inventories, only=gone)

    async def _write_cluster_condition(
        self, cluster: dict[str, Any], condition: decisions.ActiveCondition
    ) -> dict[str, Any] | None:
        return await self.writes.active_condition(CLUSTERS, cluster, condition)
