"""The live scheduler's turn loop: informers in, engine in the middle, the executor out.

This module only composes and keeps time; the rules live elsewhere (the
engine decides, :mod:`scheduler.kube.executor` writes, the informers and
the state feed the engine).  Order of work, kept by :class:`SchedulerLoop`:

1. Informers list and watch every kind the engine needs; nothing is decided
   before all of them have listed once (``ready``).  The engine's usage is
   rebuilt from Workload status by those first lists, so a restarted or newly
   elected scheduler starts from what the cluster recorded.
2. Only the leader acts (``lead``).  Each *turn* it reconciles the Jobs that
   changed, runs one engine cycle and starts carrying the decisions out; it
   never waits for those writes: admissions and evictions are written in the
   background (``concurrent_writes`` at a time), pending explanations by a
   paced writer, and about once a second a background refresh writes the
   ClusterQueue and LocalQueue statuses that changed, concurrently.  Every
   write is fenced (:mod:`scheduler.kube.fence`); a fenced write ends the term.
3. When a turn did nothing, the loop sleeps until an informer event wakes it
   (or ``idle_wait_seconds`` pass); turns start at most every
   ``turn_interval_seconds``, and after a long engine cycle the loop rests
   as long again (``cycle_share``), so a slow cycle never starves the
   informers, the writes or the Lease; when writes found the API server
   unreachable, it backs off.  Kueue's per-queue gauges are read from the
   engine when they are scraped (:mod:`scheduler.kube.kueue_metrics`).  Ended
   Workloads (or their jobs) the retention policies make due are deleted at the end of a turn
   (:mod:`scheduler.kube.retention`); an idle loop still turns every
   ``idle_wait_seconds``, so they are deleted at most that late.
4. When a term ends (:mod:`scheduler.kube.leader`), ``rebuild`` throws the
   engine away and rebuilds it from the informers' stores (the informers
   keep running on every replica), so the next term starts from what the
   cluster recorded, exactly like a fresh process.

Every line logged during a turn carries ``"cycle": N`` (the turn's number),
so a decision's log line can be found with everything that led to it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, cast

from scheduler import logs
from scheduler.api.config import Configuration
from scheduler.api.custom_labels import CustomLabels
from scheduler.api.feature_gates import enabled
from scheduler.api.pods_ready import wait_for_pods_ready
from scheduler.core.engine import Engine
from scheduler.jobs.managed_namespaces import ManagedNamespaces
from scheduler.jobs.unmanaged_kinds import (
    NOT_MANAGED_REASON,
    ToldObjects,
    UnmanagedKind,
    not_managed_message,
)
from scheduler.kube import metrics
from scheduler.kube.checks import CheckController
from scheduler.kube.executor import Executor
from scheduler.kube.failure_recovery import FailureRecovery
from scheduler.kube.fence import Fence
from scheduler.kube.finalizers import FinalizerReleaser
from scheduler.kube.informer import Backoff, Event
from scheduler.kube.kueue_metrics import COLLECTOR, RECORDER, LiveGauges, use_custom_labels
from scheduler.kube.node_failures import NodeFailures
from scheduler.kube.orphans import OrphanedWorkloads
from scheduler.kube.queue_reporter import QueueReporter
from scheduler.kube.rest import RestClient
from scheduler.kube.retention import RetentionCollector
from scheduler.kube.source import WhenNeededSource
from scheduler.kube.state import ClusterState
from scheduler.kube.watches import WATCHED_KUEUE_PLURALS, scheduler_informers
from scheduler.kube.workload_timers import WorkloadTimers
from scheduler.kube.writer import Writer
from scheduler.metrics.options import MetricOptions

log = logging.getLogger("kuota.scheduler")
KUEUE_PLURALS: Final = dict(WATCHED_KUEUE_PLURALS)
"""Kind -> resource of every kuota kind the scheduler watches (the chart's RBAC follows it)."""


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class LoopSettings:
    config: Configuration | None = None
    status_writes_per_second: float = 20.0
    idle_wait_seconds: float = 1.0
    turn_interval_seconds: float = 0.1
    """Least time from the start of one turn to the start of the next."""
    cycle_share: float = 0.5
    """Most of the loop's time engine cycles may take: after a cycle of C seconds the next
    turn waits C * (1 - share) / share, so informers, writes and the Lease renewal get the
    rest (at a thousand queues a cycle can take a second; back to back they starve them)."""
    concurrent_writes: int = 16
    queue_status_interval_seconds: float = 1.0
    event_flush_seconds: float = 2.0
    leader_elect: bool = True
    """Whether replicas elect a leader: Kueue's ``replica_role`` is then ``leader`` or
    ``follower``, else ``standalone``."""


class SchedulerLoop:
    """Engine, state, informers, executor and queue reporter, wired for one process."""

    def __init__(
        self,
        rest: RestClient,
        settings: LoopSettings,
        *,
        clock: Callable[[], datetime] = utc_now,
        fence: Fence | None = None,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.role = "follower" if settings.leader_elect else "standalone"
        self.alive = True
        self.turns = 0
        self.rebuilds = 0
        self.wakeup = asyncio.Event()
        self.next_queue_status = 0.0
        self.last_cycle_seconds = 0.0
        self.queue_refresh: asyncio.Task[None] | None = None
        """The queue status refresh running in the background, if any."""
        self.writer = Writer(rest, fence=fence)
        self.told_unmanaged = ToldObjects()
        self._build()
        config = self.settings.config
        RECORDER.options = MetricOptions.from_configuration(config)
        use_custom_labels(CustomLabels.from_configuration(config), lambda: self.state)
        RECORDER.role = self.role
        COLLECTOR.gauges = LiveGauges(lambda: (self.engine, self.state))
        self.informers = scheduler_informers(
            rest,
            lambda: self.state,
            on_change=self.wakeup.set,
            frameworks=config.integrations.frameworks if config else ("batch/job",),
            never_managed=ManagedNamespaces.from_configuration(config).never_managed
            if config
            else ManagedNamespaces().never_managed,
            on_unmanaged=self._tell_unmanaged,
            without_queue_name=config.manage_jobs_without_queue_name if config else False,
        )

    def _tell_unmanaged(self, kind: UnmanagedKind, event: Event) -> None:
        """One Warning Event on each queued object of a kind kuota does not manage."""
        if self.told_unmanaged.to_tell(event.type, event.object):
            self.writer.event(
                event.object,
                kind=kind.kind,
                reason=NOT_MANAGED_REASON,
                message=not_managed_message(kind),
                event_type="Warning",
            )

    def _build(self) -> None:
        """A fresh engine and everything that holds it (nothing assumed, nothing pending)."""
        self.engine = Engine(self.settings.config)
        self.state = ClusterState(self.engine)
        self.executor = Executor(
            engine=self.engine,
            state=self.state,
            writer=self.writer,
            clock=self.clock,
            concurrent_writes=self.settings.concurrent_writes,
            status_writes_per_second=self.settings.status_writes_per_second,
        )
        self.checks = CheckController(
            engine=self.engine,
            state=self.state,
            writer=self.writer,
            clock=self.clock,
            evict=self.executor.admissions.evict,
            reconcile_job=self.executor.jobs.reconcile_job,
        )
        self.queues = QueueReporter(
            engine=self.engine,
            state=self.state,
            writer=self.writer,
            clock=self.clock,
        )
        self.finalizers = FinalizerReleaser(
            engine=self.engine, state=self.state, writer=self.writer
        )
        self.timers = WorkloadTimers(
            state=self.state,
            writer=self.writer,
            clock=self.clock,
            settings=wait_for_pods_ready(self.engine.config),
            evict=self.executor.admissions.evict,
        )
        gates = self.engine.config.feature_gates if self.engine.config else {}
        self.node_failures = NodeFailures(
            engine=self.engine,
            state=self.state,
            clock=self.clock,
            writer=self.writer,
            evict=self.executor.admissions.evict,
            fixed_delay=enabled(gates, "TASReplaceNodeDueToNotReadyOverFixedTime"),
            taints=enabled(gates, "TASReplaceNodeOnNodeTaints"),
            single_pods_stay=enabled(gates, "SkipReassignmentForPodOwnedWorkloads"),
        )
        self.orphans = OrphanedWorkloads(state=self.state, writer=self.writer, clock=self.clock)
        self.failure_recovery = FailureRecovery(
            stuck=self.state.stuck_pods, writer=self.writer, clock=self.clock
        )
        config = self.settings.config
        self.retention = RetentionCollector(
            state=self.state,
            writer=self.writer,
            clock=self.clock,
            policies=config.object_retention_policies if config else None,
        )

    def rebuild(self) -> None:
        """Forget everything this replica decided and rebuild it from the informers' stores.

        Called when a term of leadership ends: assumptions whose writes were
        fenced or never confirmed, queued pending explanations, objects the
        executor stored from its own writes, all go; what remains is what
        the API server sent, exactly as after the first lists.  Synchronous,
        so no informer event falls in between.
        """
        if self.queue_refresh is not None:  # stop_background() has normally ended it
            self.queue_refresh.cancel()
            if self.queue_refresh.done() and not self.queue_refresh.cancelled():
                self.queue_refresh.exception()  # seen: the term it failed in is over
            self.queue_refresh = None
        self._build()
        self.rebuilds += 1
        for informer in self.informers:
            if isinstance(informer.source, WhenNeededSource) and informer.source.listing:
                self.state.topology.pods_listed()  # its store holds every Pod already
            for key, obj in list(informer.store.items()):
                informer.handler(Event("ADDED", obj, key))
        log.info(
            "state rebuilt from the informers",
            extra=self.state.counts(),
        )

    def ready(self) -> bool:
        return all(informer.synced.is_set() for informer in self.informers)

    async def watch(self) -> None:
        """Run every informer until cancelled (all replicas do this)."""
        await asyncio.gather(*(informer.run() for informer in self.informers))

    async def lead(self) -> None:
        """The leader's loop: wait for every first list, then reconcile and schedule forever.

        When writes find the API server unreachable the loop backs off
        (0.5 s doubling to 30 s) instead of deciding and failing again at once.
        A :class:`~scheduler.kube.fence.Fenced` write ends the loop (the term).
        """
        while not self.ready():
            await asyncio.sleep(0.05)
        self._set_role("leader" if self.settings.leader_elect else "standalone")
        metrics.LEADING.set(1)
        log.info(
            "leading: informers synced, usage rebuilt from Workload status",
            extra=self.state.counts(),
        )
        backoff = Backoff()
        self.writer.take_unreachable()
        try:
            loop = asyncio.get_running_loop()
            while True:
                started = loop.time()
                self.wakeup.clear()  # before the turn: a change during it wakes the next one
                acted = await self.turn()
                unreachable = self.writer.take_unreachable()
                if unreachable:
                    delay = backoff.delay()
                    log.warning(
                        "the API server did not answer; backing off",
                        extra={"writes": unreachable, "retry_in_s": round(delay, 2)},
                    )
                    await asyncio.sleep(delay)
                    continue
                backoff.reset()
                if not acted:
                    try:
                        await asyncio.wait_for(
                            self.wakeup.wait(), timeout=self.settings.idle_wait_seconds
                        )
                    except TimeoutError:
                        pass
                # Turns no closer than turn_interval_seconds: under a stream of events the
                # changes of that interval are decided together, and the Lease renewal, the
                # informers and the writes in flight get the process in between.
                gap = max(
                    self.settings.turn_interval_seconds - (loop.time() - started),
                    self.cycle_rest(),
                )
                if gap > 0:
                    await asyncio.sleep(gap)
        finally:
            await self.stop_background()
            self._set_role("follower")
            metrics.LEADING.set(0)
            try:  # the Events already queued explain what was done: write them, briefly
                await asyncio.wait_for(
                    self.writer.events_sent(), timeout=self.settings.event_flush_seconds
                )
            except TimeoutError:
                pass

    async def turn(self) -> bool:
        """Reconcile Jobs, run one engine cycle, carry it out; True when it did something."""
        self.turns += 1
        self.executor.background.raise_failures()  # a write was fenced: the term ends
        with logs.bind(cycle=self.turns):
            acted = await self.checks.reconcile()
            acted = await self.timers.reconcile() or acted
            acted = await self.node_failures.reconcile() or acted
            acted = await self.failure_recovery.reconcile() or acted
            acted = await self.orphans.finish() or acted
            acted = await self.executor.jobs.reconcile_jobs() or acted
            acted = await self.executor.ungater.ungate() or acted
            started = time.perf_counter()
            result = self.engine.cycle(self.clock())
            elapsed = time.perf_counter() - started
            self.last_cycle_seconds = elapsed
            metrics.CYCLE_SECONDS.observe(elapsed)
            RECORDER.cycle(admitted=bool(result.admitted), seconds=elapsed)
            RECORDER.preemption_skips(result.preemption_skips)
            self.state.queue_changes.touch_decisions(
                result.decisions, self.state.stored("Workload")
            )
            self.executor.dispatch(result.decisions)
            self.executor.pending.write_soon()
            await self.finalizers.release()
            acted = await self.retention.collect() or acted
            if time.monotonic() >= self.next_queue_status and self._queue_refresh_idle():
                interval = self.settings.queue_status_interval_seconds
                self.next_queue_status = time.monotonic() + interval
                self.queue_refresh = asyncio.get_running_loop().create_task(self.queues.refresh())
        await asyncio.sleep(0)  # the writes just started get going before the next turn
        return bool(
            result.admitted
            or result.evicted
            or acted
            or self.state.jobs_to_decide
            or self.state.workloads_to_place
        )

    def _set_role(self, role: str) -> None:
        """This replica's ``replica_role`` now (its metrics are labelled with it)."""
        self.role = RECORDER.role = role

    def cycle_rest(self) -> float:
        """Seconds to leave the loop to everything else after the last cycle: pure."""
        share = self.settings.cycle_share
        return self.last_cycle_seconds * (1 - share) / share

    def _queue_refresh_idle(self) -> bool:
        """No queue status refresh runs (one at a time: requests in between coalesce into the
        next); raises what the last one ended with (say, fenced)."""
        if self.queue_refresh is None:
            return True
        if not self.queue_refresh.done():
            return False
        refresh, self.queue_refresh = self.queue_refresh, None
        if not refresh.cancelled() and refresh.exception() is not None:
            raise cast(BaseException, refresh.exception())
        return True

    async def settle(self) -> None:
        """Wait for the background writes of the turns so far (tests; the end of a term)."""
        await self.executor.background.settle()
        if self.queue_refresh is not None:
            await self.queue_refresh
            self.queue_refresh = None

    async def stop_background(self) -> None:
        """The term ended: let the writes in flight end, stop the queue and pending writers."""
        await self.executor.stop_background()
        if self.queue_refresh is not None:
            self.queue_refresh.cancel()
            await asyncio.gather(self.queue_refresh, return_exceptions=True)
            self.queue_refresh = None
