"""Carrying out the engine's decisions and the Job controller's actions as API writes.

The engine (``scheduler.core``) decides and the Job controller says what a
job needs next; both answer with data.  The executor composes the parts that
turn that data into writes, each with one job (docs/architecture.md,
"Writes"):

- :class:`~scheduler.kube.admission_writer.AdmissionWriter`: admissions and
  evictions (assume, write, confirm or forget; crash-safe order);
- :class:`~scheduler.kube.pending_writer.PendingWriter`: why a Workload
  waits, written when it changes, at a bounded rate;
- :class:`~scheduler.kube.job_reconciler.JobReconciler` and
  :class:`~scheduler.kube.job_actions.JobActions`: each changed job's next
  action;
- :class:`~scheduler.kube.topology_ungater.TopologyUngater`: the gated pods
  of Workloads placed by topology, each sent to its domain;
- :class:`~scheduler.kube.background.BackgroundWrites`: admissions and
  evictions run in the background, ``concurrent_writes`` at a time, while
  the next cycle runs.

**Fenced writes** (:class:`~scheduler.kube.fence.Fenced`: this replica may no
longer hold the Lease) are not API errors: nothing here catches them, no
write is retried, and the term of leadership ends; the service then
rebuilds the engine from the informers' stores, so an assumption whose write
was fenced is not kept.  Every line logged while acting on an object
carries its key (``object``) through :func:`scheduler.logs.bind`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import assert_never

from scheduler.core.decisions import Admit, Decision, Evict, Pending
from scheduler.core.engine import Engine
from scheduler.kube.admission_writer import AdmissionWriter
from scheduler.kube.background import BackgroundWrites
from scheduler.kube.job_actions import JobActions
from scheduler.kube.job_reconciler import JobReconciler
from scheduler.kube.pending_writer import PendingWriter
from scheduler.kube.state import ClusterState
from scheduler.kube.topology_ungater import TopologyUngater
from scheduler.kube.writer import Writer


class Executor:
    """Decisions and job actions in, API writes out (see the module docstring)."""

    def __init__(
        self,
        *,
        engine: Engine,
        state: ClusterState,
        writer: Writer,
        clock: Callable[[], datetime],
        concurrent_writes: int = 16,
        status_writes_per_second: float = 20.0,
    ) -> None:
        self.background = BackgroundWrites(concurrent_writes)
        self.admissions = AdmissionWriter(
            engine=engine,
            state=state,
            writer=writer,
            clock=clock,
            start_job=self._start_job,
            admitted=self._admitted,
        )
        self.pending = PendingWriter(
            state=state,
            writer=writer,
            clock=clock,
            background=self.background,
            is_admitted=self.admissions.is_admitted,
            status_writes_per_second=status_writes_per_second,
            pods_ready=self.admissions.pods_ready,
        )
        actions = JobActions(state=state, writer=writer, admissions=self.admissions, clock=clock)
        self.jobs = JobReconciler(
            state=state,
            actions=actions,
            background=self.background,
            pods_ready=self.admissions.pods_ready,
        )
        self.ungater = TopologyUngater(state=state, writer=writer)

    async def _start_job(self, key: str) -> bool:
        return await self.jobs.reconcile_job(key)

    def _admitted(self, key: str) -> None:
        self.pending.discard(key)

    def dispatch(self, decisions: Iterable[Decision]) -> None:
        """Start admissions and evictions as background writes; queue pending explanations.

        The cycle does not wait for them: the engine already counts each decision
        (the assumption), so the next cycle can run while they are written.
        """
        for decision in decisions:
            match decision:
                case Admit():
                    self.background.start(functools.partial(self.admissions.admit, decision))
                case Evict():
                    self.background.start(functools.partial(self.admissions.evict, decision))
                case Pending():
                    self.pending.queue([decision])
                case _:
                    assert_never(decision)

    async def carry_out(self, decisions: Iterable[Decision]) -> None:
        """Admissions and evictions (concurrently), then pending explanations within budget,
        all written before this returns."""
        self.dispatch(decisions)
        await self.background.settle()
        await self.pending.flush()

    async def stop_background(self) -> None:
        """End of a term: the writes in flight end; the pending explanations' writer stops."""
        await self.background.stop()
        await self.pending.stop()
