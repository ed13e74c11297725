"""Workloads placed by topology on a node that failed: their pods moved, or the workload evicted.

See docs/concepts.md#topology-aware-scheduling.  As Kueue's defaults have
it, a node fails for a workload placed on it when the node is deleted (or
has no ``Ready`` condition), or when it is not ``Ready`` and none of the
workload's pods still runs there (they ended, or are being deleted: the
node's pods are evicted after its taint's toleration); with the feature
gate ``TASReplaceNodeDueToNotReadyOverFixedTime``, also when it has been
not ``Ready`` for 30 seconds, whatever its pods do; with
``TASReplaceNodeOnNodeTaints`` (on by default), also when it has a
``NoSchedule`` or ``NoExecute`` taint one of the workload's pod sets there
does not tolerate for good and none of the workload's pods still runs
there.  The Workload of a single Pod is left as it is (its pod cannot
move; gate ``SkipReassignmentForPodOwnedWorkloads``).  For every other such
workload holding quota, the engine looks for a
replacement (the node's pods placed again inside the domain the request
requires): found, the admission's topology assignment
is rewritten and the workload keeps running (the job's controller
recreates the lost pods, which then go to their new domain); not found,
the workload is evicted with Kueue's reason ``NodeFailures`` and message,
queued again and placed anew.

Which nodes failed is the state's (from the Node watch); which workloads
sit on them and where their pods can go is the engine's; this module only
writes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection
from datetime import datetime, timedelta
from typing import Any, Final

from scheduler import logs
from scheduler.api import objects
from scheduler.core.decisions import Evict
from scheduler.core.engine import Engine
from scheduler.core.node_matching import describe_taint
from scheduler.jobs.pod.group import owned_by_single_pod
from scheduler.jobs.stray_pods import EVENT_REASON, MESSAGE, assigned_hosts, terminated_status
from scheduler.kube.rest import Conflict, NotFound, RestError
from scheduler.kube.state import ClusterState
from scheduler.kube.writer import Writer
from scheduler.status.topology_status import with_topology_assignments

log = logging.getLogger("kuota.scheduler")
NODE_FAILURE_DELAY: Final = timedelta(seconds=30)
"""How long a node may be not Ready before its workloads are moved (Kueue's delay)."""
NODE_FAILURES: Final = "NodeFailures"
Evictor = Callable[
    [Evict, Callable[[dict[str, Any], datetime], dict[str, Any]] | None], Awaitable[None]
]


def node_failure_eviction(workload: str, nodes: list[str]) -> Evict:
    """The eviction of a workload whose nodes failed, in Kueue's words: pure."""
    return Evict(
        victim=workload,
        preemptor=None,
        reason=NODE_FAILURES,
        message=(
            "Workload was evicted as there was no replacement for unhealthy node(s): "
            + ",".join(sorted(nodes))
        ),
    )


class NodeFailures:
    """Evicts the workloads placed on failed nodes, once per failure (module docstring)."""

    def __init__(
        self,
        *,
        engine: Engine,
        state: ClusterState,
        clock: Callable[[], datetime],
        writer: Writer,
        evict: Evictor,
        fixed_delay: bool = False,
        taints: bool = True,
        single_pods_stay: bool = True,
    ) -> None:
        self.engine = engine
        self.state = state
        self.clock = clock
        self.writer = writer
        self._evict = evict
        self.fixed_delay = fixed_delay
        """Feature gate TASReplaceNodeDueToNotReadyOverFixedTime: a node not Ready for
        :data:`NODE_FAILURE_DELAY` fails whatever its pods do."""
        self.single_pods_stay = single_pods_stay
        """Feature gate SkipReassignmentForPodOwnedWorkloads: the Workload of a single Pod is
        neither moved nor evicted when its node fails."""
        self.taints = taints
        """Feature gate TASReplaceNodeOnNodeTaints: a node tainted ``NoSchedule`` or
        ``NoExecute`` fails for a workload that does not tolerate it for good, once the
        workload's pods there have ended (:mod:`scheduler.core.node_taints`)."""

    async def reconcile(self) -> bool:
        """Move or evict what sits on the nodes that failed; True when anything was."""
        now = self.clock()
        failed: dict[str, list[str]] = {}
        for node in self.state.topology.gone_nodes():
            for workload in self.engine.placements.placed_on_node(node):
                failed.setdefault(workload, []).append(node)
        for node, since in self.state.topology.not_ready_nodes().items():
            timed_out = self.fixed_delay and since + NODE_FAILURE_DELAY <= now
            for workload in self.engine.placements.placed_on_node(node):
                if timed_out or self.state.topology.live_pods_on(workload, node) == 0:
                    failed.setdefault(workload, []).append(node)
        for node in self.state.topology.tainted_nodes() if self.taints else ():
            for workload in self.engine.placements.placed_on_node(node):
                if node in failed.get(workload, ()):
                    continue
                if self.state.topology.live_pods_on(workload, node) > 0:
                    continue
                taint = self.engine.placements.failing_taint(workload, node)
                if taint is not None:
                    log.info(
                        "node tainted under a workload whose pods there have ended",
                        extra={"workload": workload, "node": node, "taint": describe_taint(taint)},
                    )
                    failed.setdefault(workload, []).append(node)
        for workload, nodes in sorted(failed.items()):
            if self._keeps_its_node(workload):
                continue
            with logs.bind(object=workload):
                await self._handle(workload, nodes)
        return bool(failed) | await self._fail_stray_pods(now)

    def _keeps_its_node(self, workload: str) -> bool:
        """A single Pod's Workload keeps its assignment: its pod cannot move (gate
        ``SkipReassignmentForPodOwnedWorkloads``, on by default as in Kueue)."""
        stored = self.state.stored("Workload").get(workload)
        return self.single_pods_stay and stored is not None and owned_by_single_pod(stored)

    def _node_failed_for(self, workload: str, node: str, not_ready: Collection[str]) -> bool:
        """Whether ``node`` can take no pod of ``workload``: gone, not Ready, or tainted so."""
        if not self.state.topology.has_node(node) or node in not_ready:
            return True
        return self.taints and self.engine.placements.failing_taint(workload, node) is not None

    async def _fail_stray_pods(self, now: datetime) -> bool:
        """Fail the pods steered to a node that can never take them (:mod:`~scheduler.jobs.
        stray_pods`), of Workloads that hold quota and are not being evicted."""
        acted = False
        not_ready = self.state.topology.not_ready_nodes()
        for workload, node, pod in self.state.topology.steered_pods():
            stored = self.state.stored("Workload").get(workload)
            if stored is None or not objects.has_quota_reservation(stored):
                continue
            if objects.is_evicting(stored):
                continue  # its job is being stopped: its pods go anyway
            stray = node not in assigned_hosts(stored)
            if not stray and not self._node_failed_for(workload, node, not_ready):
                continue
            try:
                await self.writer.fail_pod(pod, terminated_status(pod, now))
            except (Conflict, NotFound):
                continue  # gone, or another pod of that name: the watch tells
            except RestError as failure:
                log.warning("could not fail a stray pod", extra={"error": str(failure)})
                continue
            self.state.topology.pod_failed(pod)
            self.writer.event(pod, kind="Pod", reason=EVENT_REASON, message=MESSAGE)
            log.info(
                "failed a pod steered to a node that cannot take it",
                extra={"workload": workload, "pod": objects.key(pod), "node": node},
            )
            acted = True
        return acted

    async def _handle(self, workload: str, nodes: list[str]) -> None:
        replaced = self.engine.placements.replacement_admission(workload, nodes)
        if replaced is None:
            return  # no longer holds quota
        stored = self.state.stored("Workload").get(workload)
        status = (
            with_topology_assignments(stored, replaced)
            if stored is not None and not isinstance(replaced, str)
            else None
        )
        if status is not None and stored is not None:
            try:
                self.state.remember(await self.writer.write_workload_status(stored, status))
            except RestError as failure:
                log.warning(
                    "could not record the replacement of failed nodes; evicting instead",
                    extra={"workload": workload, "error": str(failure)},
                )
            else:
                log.info(
                    "pods of failed nodes placed elsewhere in the topology",
                    extra={"workload": workload, "nodes": ",".join(nodes)},
                )
                return
        elif isinstance(replaced, str):
            log.info(
                "no replacement for failed nodes", extra={"workload": workload, "why": replaced}
            )
        await self._evict(node_failure_eviction(workload, nodes), None)
        log.info(
            "evicted: a node of its topology placement failed",
            extra={"workload": workload, "nodes": ",".join(nodes)},
        )


__all__ = ["NODE_FAILURES", "NODE_FAILURE_DELAY", "NodeFailures", "node_failure_eviction"]
