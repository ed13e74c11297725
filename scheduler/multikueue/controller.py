"""The MultiKueue controller's adapter: reads the manager and the workers, writes decisions.

One pass (:meth:`Controller.run_once`) reads everything it decides from and
carries out what :mod:`scheduler.multikueue.decisions` says; :meth:`run`
repeats it every ``interval`` seconds.  Level-based on purpose: a pass never
depends on what an earlier one saw, so a restart, a lost write or a worker
that comes back are handled by the next pass.  In order:

1. **Clusters.**  Per MultiKueueCluster: its Secret (in kuota's namespace),
   the kubeconfig in it, a client for the worker (made again when the
   kubeconfig changes) and a probe: a list of the worker's Workloads, so
   "reachable and authorized to read what MultiKueue reads" is one answer.
   ``status.conditions[Active]`` is written when it changed.  A worker that
   fails is remembered with the time it was first lost (``workerLostTimeout``).
2. **AdmissionChecks** of controller ``kueue.x-k8s.io/multikueue``: ``Active``
   from their MultiKueueConfig and the clusters' fresh conditions.
3. **Workloads.**  Each reachable worker's Workloads and Jobs of this
   manager's origin are listed once; every manager Workload with a
   MultiKueue check gets :func:`~scheduler.multikueue.decisions.dispatch`.
4. **Garbage.**  A worker's Workload or Job of this origin whose manager
   Workload no longer exists is deleted (Kueue's ``gcInterval`` collector).

Writes to manager Workloads are JSON patches guarded by the resourceVersion
they were decided from: the scheduler owns the admission (server-side
apply), this controller only its check's entry, ``clusterName`` and
``nominatedClusterNames``; a conflict is decided again in the next pass.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from scheduler import logs
from scheduler.api import objects
from scheduler.api.refs import (
    ACTIVE,
    FINISHED,
    HUB_VERSION,
    KUEUE_GROUP,
    KUEUE_PLURALS,
    MULTIKUEUE_ORIGIN_LABEL,
    PREBUILT_WORKLOAD_KEY,
)
from scheduler.kube.client import ApiClient, api_client_from_kubeconfig
from scheduler.kube.rest import Conflict, NotFound, Resource, Rest, RestClient, RestError
from scheduler.multikueue import decisions
from scheduler.multikueue.decisions import (
    Action,
    ClearNomination,
    Condition,
    CreateRemoteJob,
    CreateRemoteWorkload,
    DeleteRemote,
    DispatchInput,
    FinishLocal,
    KubeconfigProblem,
    Nominate,
    Remote,
    SetCheck,
    SyncJobStatus,
)
from scheduler.status.conditions import set_condition, timestamp

log = logging.getLogger("kuota.multikueue")

WORKLOADS = Resource(KUEUE_GROUP, HUB_VERSION, KUEUE_PLURALS["Workload"])
CLUSTERS = Resource(KUEUE_GROUP, HUB_VERSION, KUEUE_PLURALS["MultiKueueCluster"])
CONFIGS = Resource(KUEUE_GROUP, HUB_VERSION, KUEUE_PLURALS["MultiKueueConfig"])
CHECKS = Resource(KUEUE_GROUP, HUB_VERSION, KUEUE_PLURALS["AdmissionCheck"])
JOBS = Resource("batch", "v1", "jobs")
SECRETS = Resource("", "v1", "secrets")


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Settings:
    """The Configuration's ``namespace`` and ``multiKueue`` block, and the pass interval."""

    namespace: str = "kueue-system"
    origin: str = decisions.DEFAULT_ORIGIN
    worker_lost_timeout: timedelta = decisions.DEFAULT_WORKER_LOST_TIMEOUT
    interval: float = 2.0
    probe_timeout: float = 5.0


class WorkerClient(Protocol):
    """What the controller needs of a connection to a worker: REST, and closing it."""

    rest: RestClient

    async def close(self) -> None: ...


@dataclass
class KubeWorker:
    """:class:`WorkerClient` over a kubernetes_asyncio client."""

    api: ApiClient
    rest: RestClient

    async def close(self) -> None:
        await self.api.close()


async def connect_worker(kubeconfig: Mapping[str, Any]) -> WorkerClient:
    """A client for a worker from its kubeconfig (as read from the Secret)."""
    api = await api_client_from_kubeconfig(kubeconfig)
    return KubeWorker(api=api, rest=Rest(api, timeout=30))


@dataclass
class Worker:
    """A connection to one worker cluster, and the kubeconfig it was made with."""

    kubeconfig: dict[str, Any]
    client: WorkerClient

    @property
    def rest(self) -> RestClient:
        return self.client.rest


@dataclass
class Inventory:
    """A reachable worker's objects of this origin, by ``namespace/name``."""

    workloads: dict[str, dict[str, Any]] = field(default_factory=dict)
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)


Connect = Callable[[Mapping[str, Any]], Awaitable[WorkerClient]]


class Controller:
    def __init__(
        self,
        rest: RestClient,
        settings: Settings,
        *,
        clock: Callable[[], datetime] = utc_now,
        connect: Connect = connect_worker,
    ) -> None:
        self.rest = rest
        self.settings = settings
        self.clock = clock
        self.connect = connect
        self.workers: dict[str, Worker] = {}
        self.reachable: set[str] = set()
        self.lost_since: dict[str, datetime] = {}

    async def close(self) -> None:
        for name in list(self.workers):
            await self._drop(name)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.run_once()
            except RestError as failure:
                log.warning("pass failed; trying again", extra={"error": str(failure)})
            try:
                await asyncio.wait_for(stop.wait(), timeout=self.settings.interval)
            except TimeoutError:
                pass

    async def run_once(self) -> None:
        clusters = await self._items(CLUSTERS.path)
        await self._sync_clusters(clusters)
        by_name = {objects.name(c): c for c in clusters}
        configs = {objects.name(c): c for c in await self._items(CONFIGS.path)}
        checks = {objects.name(c): c for c in await self._items(CHECKS.path)}
        for check in checks.values():
            if decisions.is_multikueue_check(check):
                await self._sync_check(check, configs, by_name)
        inventories = await self._inventories()
        workloads = await self._items(WORKLOADS.path)
        for workload in workloads:
            name = decisions.multikueue_check_of(workload, checks)
            if name is None or not self._needs_a_look(workload, inventories):
                continue
            config = configs.get(decisions.config_name(checks[name]))
            members = decisions.config_clusters(config) if config is not None else []
            with logs.bind(object=objects.key(workload)):
                await self._dispatch(workload, name, members, inventories)
        await self._collect_garbage({objects.key(w) for w in workloads}, inventories)

    async def _items(self, path: str) -> list[dict[str, Any]]:
        answer = await self.rest.list(path)
        return [item for item in answer.get("items") or [] if isinstance(item, dict)]

    # -- 1. clusters ------------------------------------------------------------------------

    async def _sync_clusters(self, clusters: list[dict[str, Any]]) -> None:
        names = {objects.name(c) for c in clusters}
        for gone in [name for name in self.workers if name not in names]:
            await self._drop(gone)
        # Probed at once: a worker that times out delays the pass by one probe timeout,
        # not by one per worker.
        conditions = await asyncio.gather(*(self._connect(cluster) for cluster in clusters))
        for cluster, condition in zip(clusters, conditions, strict=True):
            name = objects.name(cluster)
            if condition.status:
                self.reachable.add(name)
                self.lost_since.pop(name, None)
            else:
                self.reachable.discard(name)
                self.lost_since.setdefault(name, self.clock())
            stored = await self._write_condition(CLUSTERS, cluster, condition)
            cluster["status"] = objects.status(stored) if stored else objects.status(cluster)

    async def _connect(self, cluster: Mapping[str, Any]) -> Condition:
        """Read the kubeconfig, (re)make the worker's client and probe it."""
        name = objects.name(cluster)
        secret_name = decisions.secret_name(cluster)
        secret: dict[str, Any] | None = None
        if isinstance(secret_name, str):
            try:
                secret = await self.rest.get(
                    SECRETS.object_path(secret_name, namespace=self.settings.namespace)
                )
            except NotFound:
                secret = None
        found = decisions.kubeconfig_of(cluster, secret)
        if isinstance(found, KubeconfigProblem):
            await self._drop(name)
            return decisions.cluster_condition(found, None)
        worker = self.workers.get(name)
        if worker is None or worker.kubeconfig != found:
            await self._drop(name)
            try:
                client = await self.connect(found)
            except Exception as bad:  # noqa: BLE001 - the loader raises anything on bad input
                problem = KubeconfigProblem(
                    decisions.BAD_KUBECONFIG, f"load client config failed: {bad}"
                )
                return decisions.cluster_condition(problem, None)
            worker = Worker(kubeconfig=found, client=client)
            self.workers[name] = worker
        probe: str | None = None
        try:
            await worker.rest.list(
                WORKLOADS.path, query=[("limit", 1)], timeout=self.settings.probe_timeout
            )
        except RestError as failure:
            probe = str(failure)
        return decisions.cluster_condition(found, probe)

    async def _drop(self, name: str) -> None:
        worker = self.workers.pop(name, None)
        if worker is not None:
            await worker.client.close()

    async def _write_condition(
        self, resource: Resource, obj: Mapping[str, Any], condition: Condition
    ) -> dict[str, Any] | None:
        """Write ``Active`` on a cluster-scoped object's status when it changed."""
        current = objects.condition(obj, ACTIVE)
        generation = objects.generation(obj)
        if (
            current is not None
            and current.get("status") == ("True" if condition.status else "False")
            and current.get("reason") == condition.reason
            and current.get("message") == condition.message
            and current.get("observedGeneration") == generation
        ):
            return None
        conditions = set_condition(
            objects.conditions(obj),
            kind=ACTIVE,
            status=condition.status,
            reason=condition.reason,
            message=condition.message,
            now=self.clock(),
            generation=generation,
        )
        path = resource.object_path(objects.name(obj), subresource="status")
        try:
            stored = await self.rest.merge_patch(path, {"status": {"conditions": conditions}})
        except RestError as failure:
            log.warning(
                "could not write the Active condition",
                extra={"object": objects.name(obj), "error": str(failure)},
            )
            return None
        log.info(
            "active condition",
            extra={
                "object": f"{resource.plural}/{objects.name(obj)}",
                "active": condition.status,
                "reason": condition.reason,
                "why": condition.message,
            },
        )
        return stored

    # -- 2. admission checks ------------------------------------------------------------------

    async def _sync_check(
        self,
        check: Mapping[str, Any],
        configs: Mapping[str, Mapping[str, Any]],
        clusters: Mapping[str, Mapping[str, Any]],
    ) -> None:
        condition = decisions.admission_check_condition(check, configs, clusters)
        await self._write_condition(CHECKS, check, condition)

    # -- 3. workloads ----------------------------------------------------------------------------

    async def _inventories(self) -> dict[str, Inventory]:
        selector = [("labelSelector", f"{MULTIKUEUE_ORIGIN_LABEL}={self.settings.origin}")]
        found: dict[str, Inventory] = {}
        for name in sorted(self.reachable):
            worker = self.workers.get(name)
            if worker is None:
                continue
            try:
                remote_workloads = await worker.rest.list(WORKLOADS.path, query=selector)
                remote_jobs = await worker.rest.list(JOBS.path, query=selector)
            except RestError as failure:
                log.warning("worker did not answer", extra={"cluster": name, "error": str(failure)})
                self.reachable.discard(name)
                self.lost_since.setdefault(name, self.clock())
                continue
            found[name] = Inventory(
                workloads={objects.key(w): w for w in remote_workloads.get("items") or [] if w},
                jobs={objects.key(j): j for j in remote_jobs.get("items") or [] if j},
            )
        return found

    @staticmethod
    def _needs_a_look(workload: Mapping[str, Any], inventories: Mapping[str, Inventory]) -> bool:
        """False for a Workload done with MultiKueue: finished, or without quota and
        nomination, and no reachable worker holds anything of it (its Job is not read)."""
        if not objects.is_finished(workload):
            status = objects.status(workload)
            if objects.has_quota_reservation(workload) or status.get("clusterName"):
                return True
            if status.get("nominatedClusterNames"):
                return True
        key = objects.key(workload)
        return any(key in inventory.workloads for inventory in inventories.values())

    async def _dispatch(
        self,
        workload: dict[str, Any],
        check: str,
        members: list[str],
        inventories: Mapping[str, Inventory],
    ) -> None:
        namespace = objects.namespace(workload) or ""
        job_name = decisions.owner_job_name(workload)
        job: dict[str, Any] | None = None
        if job_name:
            try:
                job = await self.rest.get(JOBS.object_path(job_name, namespace=namespace))
            except NotFound:
                job = None
        key = objects.key(workload)
        job_key = f"{namespace}/{job_name}" if job_name else ""
        remotes = {
            name: Remote(
                workload=inventories[name].workloads.get(key),
                job=inventories[name].jobs.get(job_key) if job_key else None,
            )
            for name in members
            if name in inventories
        }
        given = DispatchInput(
            workload=workload,
            check=check,
            job=job,
            remotes=remotes,
            unreachable=[name for name in members if name not in inventories],
            lost_since=dict(self.lost_since),
            now=self.clock(),
            worker_lost_timeout=self.settings.worker_lost_timeout,
            origin=self.settings.origin,
        )
        for action in decisions.dispatch(given):
            try:
                await self._perform(action, workload, check, job, job_name)
            except Conflict:
                return  # decided from an old read: the next pass decides again
            except RestError as failure:
                log.warning(
                    "dispatch action failed",
                    extra={"action": type(action).__name__, "error": str(failure)},
                )
                return

    async def _perform(
        self,
        action: Action,
        workload: dict[str, Any],
        check: str,
        job: Mapping[str, Any] | None,
        job_name: str | None,
    ) -> None:
        namespace = objects.namespace(workload) or ""
        name = objects.name(workload)
        workload_status = WORKLOADS.object_path(name, namespace=namespace, subresource="status")
        guard = {"op": "test", "path": "/metadata/resourceVersion"}
        guard["value"] = objects.resource_version(workload)
        log.info("multikueue action", extra={"action": _describe(action)})
        if isinstance(action, CreateRemoteWorkload):
            await self._create(action.cluster, WORKLOADS.collection_path(namespace), action.body)
        elif isinstance(action, CreateRemoteJob):
            await self._create(action.cluster, JOBS.collection_path(namespace), action.body)
        elif isinstance(action, DeleteRemote):
            await self._delete_remote(action.cluster, namespace, name, job_name)
        elif isinstance(action, SyncJobStatus):
            assert job is not None and job_name
            await self.rest.json_patch(
                JOBS.object_path(job_name, namespace=namespace, subresource="status"),
                [
                    {
                        "op": "test",
                        "path": "/metadata/resourceVersion",
                        "value": objects.resource_version(job),
                    },
                    {"op": "replace", "path": "/status", "value": action.status},
                ],
            )
        elif isinstance(action, SetCheck):
            now = timestamp(self.clock())
            operations: list[dict[str, Any]] = [
                guard,
                {
                    "op": "add",
                    "path": "/status/admissionChecks",
                    "value": decisions.check_entries(workload, check, action, now),
                },
            ]
            if action.cluster_name:
                operations.append(
                    {"op": "add", "path": "/status/clusterName", "value": action.cluster_name}
                )
                if "nominatedClusterNames" in objects.status(workload):
                    operations.append({"op": "remove", "path": "/status/nominatedClusterNames"})
            await self.rest.json_patch(workload_status, operations)
        elif isinstance(action, Nominate):
            await self.rest.json_patch(
                workload_status,
                [
                    guard,
                    {
                        "op": "add",
                        "path": "/status/nominatedClusterNames",
                        "value": list(action.clusters),
                    },
                ],
            )
        elif isinstance(action, ClearNomination):
            status = objects.status(workload)
            removals = [
                {"op": "remove", "path": f"/status/{field_}"}
                for field_ in ("clusterName", "nominatedClusterNames")
                if field_ in status
            ]
            await self.rest.json_patch(workload_status, [guard, *removals])
        elif isinstance(action, FinishLocal):
            conditions = set_condition(
                objects.conditions(workload),
                kind=FINISHED,
                status=True,
                reason=action.reason,
                message=action.message,
                now=self.clock(),
                generation=objects.generation(workload),
            )
            await self.rest.json_patch(
                workload_status,
                [guard, {"op": "add", "path": "/status/conditions", "value": conditions}],
            )

    async def _create(self, cluster: str, path: str, body: Mapping[str, Any]) -> None:
        worker = self.workers[cluster]
        try:
            await worker.rest.create(path, body)
        except Conflict:
            pass  # already there (created by an earlier pass)

    async def _delete_remote(
        self, cluster: str, namespace: str, name: str, job_name: str | None
    ) -> None:
        worker = self.workers.get(cluster)
        if worker is None:
            return
        if job_name:
            try:
                await worker.rest.delete(
                    JOBS.object_path(job_name, namespace=namespace), propagation="Background"
                )
            except NotFound:
                pass
        try:
            await worker.rest.delete(WORKLOADS.object_path(name, namespace=namespace))
        except NotFound:
            pass

    # -- 4. garbage ----------------------------------------------------------------------------

    async def _collect_garbage(
        self, manager_workloads: set[str], inventories: Mapping[str, Inventory]
    ) -> None:
        for cluster, inventory in inventories.items():
            orphans = [key for key in inventory.workloads if key not in manager_workloads]
            for job_key, job in inventory.jobs.items():
                prebuilt = objects.label(job, PREBUILT_WORKLOAD_KEY) or ""
                namespace = objects.namespace(job) or ""
                if f"{namespace}/{prebuilt}" not in manager_workloads:
                    orphans.append(job_key)
            for key in sorted(set(orphans)):
                namespace, _, name = key.partition("/")
                log.info(
                    "deleting an orphaned remote object", extra={"cluster": cluster, "key": key}
                )
                worker = self.workers.get(cluster)
                if worker is None:
                    continue
                try:
                    if key in inventory.workloads:
                        await worker.rest.delete(WORKLOADS.object_path(name, namespace=namespace))
                    if key in inventory.jobs:
                        await worker.rest.delete(
                            JOBS.object_path(name, namespace=namespace), propagation="Background"
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
