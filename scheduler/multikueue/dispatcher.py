"""Dispatching manager Workloads to the workers, and collecting what the workers keep too long.

For a manager Workload with a MultiKueue check,
:func:`~scheduler.multikueue.decisions.dispatch` decides from the workers'
stores (a worker whose informers have not listed yet counts as unreachable)
and the Workload's owner as read (a kind with a MultiKueue adapter: a batch
Job); this module performs each action: copies and deletions on the
workers, the rest on the manager (:class:`ManagerWrites`).  Garbage: a
worker's Workload or job of this origin whose manager Workload no longer
exists is deleted: the copies of a manager Workload seen deleted at once,
and every orphan at the sweeps of Kueue's ``gcInterval`` collector.

Which workers get a copy follows ``multiKueue.dispatcherName``
(:class:`~scheduler.multikueue.decisions.Dispatching`); the incremental
dispatcher's rounds are remembered here, in memory, as Kueue's are.
Each copy created and each admission on a worker counts in Kueue's
``multikueue_workloads_*_total`` (docs/metrics.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from scheduler.api import objects
from scheduler.api.operational import ALL_AT_ONCE_DISPATCHER
from scheduler.api.refs import MULTIKUEUE_INCREMENTAL_DISPATCHER, PREBUILT_WORKLOAD_KEY
from scheduler.kube.fence import Fence
from scheduler.kube.kueue_metrics import RECORDER
from scheduler.kube.rest import Conflict, NotFound, Resource, RestClient, RestError
from scheduler.kube.watches import kind_resource
from scheduler.multikueue import decisions
from scheduler.multikueue.decisions import (
    INCREMENTAL_ROUND,
    Action,
    AllAtOnce,
    CreateRemoteJob,
    CreateRemoteWorkload,
    DeleteRemote,
    Dispatching,
    DispatchInput,
    External,
    Incremental,
    Nominate,
    Remote,
    SetCheck,
)
from scheduler.multikueue.manager_writes import ManagerWrites
from scheduler.multikueue.workers import WORKLOADS, Inventory, WorkerPool, copied_kinds

log = logging.getLogger("kuota.multikueue")


class Dispatcher:
    """Decides and acts for manager Workloads; removes the workers' orphans."""

    def __init__(
        self,
        rest: RestClient,
        *,
        pool: WorkerPool,
        writes: ManagerWrites,
        origin: str,
        worker_lost_timeout: timedelta,
        clock: Callable[[], datetime],
        fence: Callable[[], Fence],
        dispatcher: str = ALL_AT_ONCE_DISPATCHER,
        step_size: int = 3,
        in_config_order: bool = True,
    ) -> None:
        self.rest = rest
        self.pool = pool
        self.writes = writes
        self.origin = origin
        self.worker_lost_timeout = worker_lost_timeout
        self.clock = clock
        self.fence = fence
        self.dispatcher = dispatcher
        self.step_size = step_size
        self.in_config_order = in_config_order
        self.rounds: dict[str, datetime] = {}
        """Manager Workload key -> when the incremental dispatcher last nominated workers."""

    def _dispatching(self, key: str, members: list[str]) -> Dispatching:
        if self.dispatcher == ALL_AT_ONCE_DISPATCHER:
            return AllAtOnce()
        if self.dispatcher == MULTIKUEUE_INCREMENTAL_DISPATCHER:
            return Incremental(
                step=self.step_size,
                members=tuple(members),
                round_started=self.rounds.get(key),
                in_config_order=self.in_config_order,
            )
        return External()

    def rounds_over(self, now: datetime) -> set[str]:
        """The Workloads whose incremental round has ended: due for more nominations."""
        return {key for key, started in self.rounds.items() if now - started > INCREMENTAL_ROUND}

    def next_round_end(self) -> datetime | None:
        return min(self.rounds.values()) + INCREMENTAL_ROUND if self.rounds else None

    def forget(self, key: str) -> None:
        """The Workload is gone (or lost its quota): its next dispatch starts a new round."""
        self.rounds.pop(key, None)

    @staticmethod
    def needs_a_look(workload: Mapping[str, Any], inventories: Mapping[str, Inventory]) -> bool:
        """False for a Workload done with MultiKueue: finished, or without quota and
        nomination, and no reachable worker holds anything of it (its job is not read)."""
        if not objects.is_finished(workload):
            status = objects.status(workload)
            if objects.has_quota_reservation(workload) or status.get("clusterName"):
                return True
            if status.get("nominatedClusterNames"):
                return True
        key = objects.key(workload)
        return any(key in inventory.workloads for inventory in inventories.values())

    async def dispatch(
        self,
        workload: dict[str, Any],
        check: str,
        members: list[str],
        inventories: Mapping[str, Inventory],
    ) -> bool:
        """Decide and act; False when an action failed (worth trying again later)."""
        namespace = objects.namespace(workload) or ""
        owner = decisions.dispatchable_owner(workload)
        job: dict[str, Any] | None = None
        resource: Resource | None = None
        kind = ""
        if owner is not None:
            integration, _, name = owner
            kind, resource = integration.kind, kind_resource(integration)
            try:
                job = await self.rest.get(resource.object_path(name, namespace=namespace))
            except NotFound:
                job = None
        key = objects.key(workload)
        if objects.is_finished(workload) or not objects.has_quota_reservation(workload):
            self.forget(key)
        job_key = f"{namespace}/{owner[2]}" if owner is not None else ""
        remotes = {
            name: Remote(
                workload=inventories[name].workloads.get(key),
                job=inventories[name].job(kind, job_key) if job_key else None,
            )
            for name in members
            if name in inventories
        }
        given = DispatchInput(
            workload=workload,
            check=check,
            job=job,
            adapter=owner[1] if owner is not None else None,
            remotes=remotes,
            unreachable=[name for name in members if name not in inventories],
            lost_since=dict(self.pool.lost_since),
            now=self.clock(),
            worker_lost_timeout=self.worker_lost_timeout,
            origin=self.origin,
            dispatching=self._dispatching(key, members),
        )
        for action in decisions.dispatch(given):
            log.info("multikueue action", extra={"action": _describe(action)})
            try:
                await self._perform(action, workload, check, resource, job)
                if isinstance(action, Nominate) and action.new_round:
                    self.rounds[key] = given.now or self.clock()
            except Conflict:
                return True  # decided from an old read: its newer version's event decides again
            except RestError as failure:
                log.warning(
                    "dispatch action failed",
                    extra={"action": type(action).__name__, "error": str(failure)},
                )
                return False
        return True

    async def _perform(
        self,
        action: Action,
        workload: dict[str, Any],
        check: str,
        resource: Resource | None,
        job: Mapping[str, Any] | None,
    ) -> None:
        namespace = objects.namespace(workload) or ""
        cluster_queue = objects.admitted_cluster_queue(workload)
        if isinstance(action, CreateRemoteWorkload):
            path = WORKLOADS.collection_path(namespace)
            if await self._create(action.cluster, path, action.body):
                RECORDER.multikueue_dispatched(cluster_queue=cluster_queue, cluster=action.cluster)
        elif isinstance(action, CreateRemoteJob):
            assert resource is not None
            await self._create(action.cluster, resource.collection_path(namespace), action.body)
        elif isinstance(action, DeleteRemote):
            owner = (resource, objects.name(job)) if resource is not None and job else None
            await self._delete_remote(action.cluster, namespace, objects.name(workload), owner)
        else:
            owned = (resource, job) if resource is not None and job is not None else None
            await self.writes.perform(action, workload, check, owned)
            if isinstance(action, SetCheck) and action.state == "Ready" and action.cluster_name:
                RECORDER.multikueue_admitted(
                    cluster_queue=cluster_queue, cluster=action.cluster_name
                )

    async def _create(self, cluster: str, path: str, body: Mapping[str, Any]) -> bool:
        """Create ``body`` on the worker; False when it was already there."""
        worker = self.pool.workers[cluster]
        try:
            await worker.rest.create(path, body, timeout=self.fence().write_timeout())
        except Conflict:
            return False  # already there (created by an earlier pass)
        return True

    async def _delete_remote(
        self, cluster: str, namespace: str, name: str, job: tuple[Resource, str] | None
    ) -> None:
        worker = self.pool.workers.get(cluster)
        if worker is None:
            return
        if job is not None:
            resource, job_name = job
            try:
                await worker.rest.delete(
                    resource.object_path(job_name, namespace=namespace),
                    propagation="Background",
                    timeout=self.fence().write_timeout(),
                )
            except NotFound:
                pass
        try:
            await worker.rest.delete(
                WORKLOADS.object_path(name, namespace=namespace),
                timeout=self.fence().write_timeout(),
            )
        except NotFound:
            pass

    async def collect_garbage(
        self,
        manager_workloads: set[str],
        inventories: Mapping[str, Inventory],
        only: set[str] | None = None,
    ) -> None:
        """Delete the workers' objects of this origin whose manager Workload is gone.

        ``only``: the manager Workloads seen deleted (their copies only); None: a sweep.
        """
        resources = {kind.kind: kind_resource(kind) for kind in copied_kinds()}

        def orphaned(key: str) -> bool:
            return key not in manager_workloads and (only is None or key in only)

        for cluster, inventory in inventories.items():
            orphans = [(WORKLOADS, key) for key in inventory.workloads if orphaned(key)]
            for kind, store in inventory.jobs.items():
                for job_key, job in store.items():
                    prebuilt = objects.label(job, PREBUILT_WORKLOAD_KEY) or ""
                    if orphaned(f"{objects.namespace(job) or ''}/{prebuilt}"):
                        orphans.append((resources[kind], job_key))
            worker = self.pool.workers.get(cluster)
            for resource, key in sorted(orphans, key=lambda item: (item[1], item[0].plural)):
                log.info(
                    "deleting an orphaned remote object", extra={"cluster": cluster, "key": key}
                )
                if worker is None:
                    continue
                namespace, _, name = key.partition("/")
                try:
                    await worker.rest.delete(
                        resource.object_path(name, namespace=namespace),
                        propagation=None if resource is WORKLOADS else "Background",
                        timeout=self.fence().write_timeout(),
                    )
                except NotFound:
                    pass
                except RestError as failure:
                    log.warning(
                        "could not delete an orphan", extra={"key": key, "error": str(failure)}
                    )


def _describe(action: Action) -> str:
    if isinstance(action, CreateRemoteWorkload | CreateRemoteJob | DeleteRemote):
        return f"{type(action).__name__} on {action.cluster}"
    if isinstance(action, SetCheck):
        return f"check {action.state}: {action.message}"
    return type(action).__name__
