"""The MultiKueue controller's adapter: watches the manager and the workers, writes decisions.

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
   Workload no longer exists is deleted (Kueue's ``gcInterval`` collector).

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
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
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
from scheduler.kube.fence import Fence, Unfenced
from scheduler.kube.informer import Event, Informer, Source, TransientError
from scheduler.kube.rest import Conflict, NotFound, Resource, Rest, RestClient, RestError
from scheduler.kube.source import KubeSource
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
    """The Configuration's ``namespace`` and ``multiKueue`` block, and the loop's timings."""

    namespace: str = "kueue-system"
    origin: str = decisions.DEFAULT_ORIGIN
    worker_lost_timeout: timedelta = decisions.DEFAULT_WORKER_LOST_TIMEOUT
    interval: float = 2.0
    """Seconds between two probes of an unreachable worker (and retries of failed writes)."""
    probe_timeout: float = 5.0
    resync: float = 30.0
    """Seconds between two full passes (every cluster probed, every Workload decided)."""
    min_interval: float = 0.2
    """Seconds at least between two passes: the events of a burst share one."""


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


def kube_source(rest: RestClient, resource: Resource, label_selector: str | None) -> Source:
    return KubeSource(rest, resource, label_selector=label_selector or "")


SourceFactory = Callable[[RestClient, Resource, "str | None"], Source]


class ReportingSource:
    """A worker's :class:`Source` that says when it listed and when it broke.

    A broken stream makes its informer list again (not resume): what the
    worker did meanwhile is only trusted once a fresh list says it, and until
    then the worker's store is not ``fresh`` (not decided from).
    """

    def __init__(
        self, inner: Source, on_listed: Callable[[], None], on_broken: Callable[[str], None]
    ) -> None:
        self.inner = inner
        self.on_listed = on_listed
        self.on_broken = on_broken
        self.informer: Informer | None = None
        self.fresh = False

    async def list(self) -> tuple[list[dict[str, Any]], str]:
        try:
            listed = await self.inner.list()
        except TransientError as failure:
            self._broken(str(failure))
            raise
        self.fresh = True
        self.on_listed()
        return listed

    async def watch(self, resource_version: str) -> AsyncIterator[dict[str, Any]]:
        try:
            async for event in self.inner.watch(resource_version):
                yield event
        except TransientError as failure:
            self._broken(str(failure))
            raise

    def _broken(self, why: str) -> None:
        self.fresh = False
        if self.informer is not None:
            self.informer.version = None  # list again after the back-off
        self.on_broken(why)


@dataclass
class Worker:
    """A connection to one worker cluster, the kubeconfig it was made with, its informers."""

    kubeconfig: dict[str, Any]
    client: WorkerClient
    workloads: Informer | None = None
    jobs: Informer | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def rest(self) -> RestClient:
        return self.client.rest

    @property
    def informers(self) -> list[Informer]:
        return [i for i in (self.workloads, self.jobs) if i is not None]

    @property
    def synced(self) -> bool:
        """Both informers listed, and listed again since their watch last broke."""
        return bool(self.informers) and all(
            i.synced.is_set() and (not isinstance(i.source, ReportingSource) or i.source.fresh)
            for i in self.informers
        )


@dataclass
class Inventory:
    """A reachable worker's objects of this origin, by ``namespace/name``."""

    workloads: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    jobs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


Connect = Callable[[Mapping[str, Any]], Awaitable[WorkerClient]]


class Controller:
    def __init__(
        self,
        rest: RestClient,
        settings: Settings,
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
        self.connect = connect
        self.fence: Fence = fence or Unfenced()
        self.source = source
        self.watch_workers = watch_workers
        """Run each worker's informers as tasks (tests drive them by hand instead)."""
        self.workers: dict[str, Worker] = {}
        self.reachable: set[str] = set()
        self.lost_since: dict[str, datetime] = {}
        self.wakeup = asyncio.Event()
        self.dirty: set[str] = set()
        """``namespace/name`` of the manager Workloads to decide about in the next pass."""
        self.everything = True
        """The next pass decides about every Workload (a config, check or cluster changed)."""
        self.probe_due: set[str] = set()
        """Clusters to probe in the next pass (a broken watch)."""
        self.probed: dict[str, tuple[str, int | None, float]] = {}
        """Cluster -> (uid, generation, loop time) of its last probe."""
        self.retry: set[str] = set()
        """Workloads whose actions failed: decided again at the next timed pass."""
        self.clusters = Informer(
            "MultiKueueCluster", source(rest, CLUSTERS, None), self._on_cluster
        )
        self.configs = Informer("MultiKueueConfig", source(rest, CONFIGS, None), self._on_config)
        self.checks = Informer("AdmissionCheck", source(rest, CHECKS, None), self._on_config)
        self.workloads = Informer("Workload", source(rest, WORKLOADS, None), self._on_workload)

    @property
    def informers(self) -> list[Informer]:
        """The manager's informers (every replica runs them: a standby is warm)."""
        return [self.clusters, self.configs, self.checks, self.workloads]

    async def watch(self) -> None:
        """Run the manager's informers until cancelled."""
        await asyncio.gather(*(informer.run() for informer in self.informers))

    # -- events ---------------------------------------------------------------------------------

    def wake(self) -> None:
        self.wakeup.set()

    def _on_cluster(self, event: Event) -> None:
        self.everything = True
        self.wake()

    def _on_config(self, event: Event) -> None:
        self.everything = True
        self.wake()

    def _on_workload(self, event: Event) -> None:
        self.dirty.add(event.key)
        self.wake()

    def _on_remote_workload(self, event: Event) -> None:
        self.dirty.add(event.key)
        self.wake()

    def _on_remote_job(self, event: Event) -> None:
        prebuilt = objects.label(event.object, PREBUILT_WORKLOAD_KEY)
        if prebuilt:
            self.dirty.add(f"{objects.namespace(event.object) or ''}/{prebuilt}")
        self.wake()

    def _worker_listed(self) -> None:
        self.everything = True
        self.wake()

    def _worker_broken(self, name: str, why: str) -> None:
        if name in self.reachable:
            log.warning("worker watch broken", extra={"cluster": name, "error": why})
        self._lost(name)
        self.probe_due.add(name)
        self.wake()

    def _lost(self, name: str) -> None:
        if name in self.reachable:
            self.everything = True
        self.reachable.discard(name)
        self.lost_since.setdefault(name, self.clock())

    # -- the loop -------------------------------------------------------------------------------

    async def close(self) -> None:
        for name in list(self.workers):
            await self._drop(name)

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
                if self.retry or set(self.workers) != self.reachable or self._unreachable():
                    timeout = min(timeout, self.settings.interval)
                try:
                    await asyncio.wait_for(self.wakeup.wait(), timeout=max(timeout, 0))
                except TimeoutError:
                    pass
                await asyncio.sleep(self.settings.min_interval)
        finally:  # the next term connects and probes afresh
            await self.close()
            self.reachable.clear()
            self.probed.clear()
            self.everything = True

    def _unreachable(self) -> bool:
        return any(name not in self.reachable for name in self.clusters.store)

    async def run_once(self, *, resync: bool = False) -> None:
        """One pass over the informers' stores (``resync``: probe and decide everything)."""
        everything = self.everything or resync
        dirty = self.dirty | self.retry
        self.everything, self.dirty, self.retry = False, set(), set()
        clusters = [dict(c) for c in self.clusters.store.values()]
        await self._sync_clusters(clusters, resync)
        by_name = {objects.name(c): c for c in clusters}
        configs = {objects.name(c): c for c in self.configs.store.values()}
        checks = {objects.name(c): dict(c) for c in self.checks.store.values()}
        for check in checks.values():
            if decisions.is_multikueue_check(check):
                await self._sync_check(check, configs, by_name)
        inventories = self._inventories()
        workloads = self.workloads.store
        keys = sorted(workloads) if everything else sorted(k for k in dirty if k in workloads)
        for key in keys:
            stored = workloads.get(key)
            if stored is None:  # deleted while an earlier one was acted on
                continue
            workload = dict(stored)
            name = decisions.multikueue_check_of(workload, checks)
            if name is None or not self._needs_a_look(workload, inventories):
                continue
            config = configs.get(decisions.config_name(checks[name]))
            members = decisions.config_clusters(config) if config is not None else []
            with logs.bind(object=key):
                if not await self._dispatch(workload, name, members, inventories):
                    self.retry.add(key)
        await self._collect_garbage(set(workloads), inventories)

    # -- 1. clusters ------------------------------------------------------------------------

    def _probe_is_due(self, cluster: Mapping[str, Any], resync: bool) -> bool:
        name = objects.name(cluster)
        last = self.probed.get(name)
        if resync or last is None or name in self.probe_due:
            return True
        uid = str(objects.metadata(cluster).get("uid", ""))
        if (last[0], last[1]) != (uid, objects.generation(cluster)):
            return True
        if name not in self.reachable:
            return asyncio.get_running_loop().time() - last[2] >= self.settings.interval
        return False

    async def _sync_clusters(self, clusters: list[dict[str, Any]], resync: bool) -> None:
        names = {objects.name(c) for c in clusters}
        for gone in [name for name in self.workers if name not in names]:
            await self._drop(gone)
        for gone in [name for name in self.probed if name not in names]:
            del self.probed[gone]
            self.reachable.discard(gone)
            self.lost_since.pop(gone, None)
        due = [c for c in clusters if self._probe_is_due(c, resync)]
        self.probe_due -= {objects.name(c) for c in due}
        # Probed at once: a worker that times out delays the pass by one probe timeout,
        # not by one per worker.
        conditions = await asyncio.gather(*(self._connect(cluster) for cluster in due))
        now = asyncio.get_running_loop().time()
        for cluster, condition in zip(due, conditions, strict=True):
            name = objects.name(cluster)
            uid = str(objects.metadata(cluster).get("uid", ""))
            self.probed[name] = (uid, objects.generation(cluster), now)
            if condition.status:
                if name not in self.reachable:
                    self.everything = True
                self.reachable.add(name)
                self.lost_since.pop(name, None)
            else:
                self._lost(name)
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
            self._start_informers(name, worker)
            self.workers[name] = worker
        probe: str | None = None
        try:
            await worker.rest.list(
                WORKLOADS.path, query=[("limit", 1)], timeout=self.settings.probe_timeout
            )
        except RestError as failure:
            probe = str(failure)
        return decisions.cluster_condition(found, probe)

    def _start_informers(self, name: str, worker: Worker) -> None:
        selector = f"{MULTIKUEUE_ORIGIN_LABEL}={self.settings.origin}"

        def informer(resource: Resource, handler: Callable[[Event], None]) -> Informer:
            source = ReportingSource(
                self.source(worker.rest, resource, selector),
                self._worker_listed,
                lambda why: self._worker_broken(name, why),
            )
            source.informer = Informer(f"{name}/{resource.plural}", source, handler)
            return source.informer

        worker.workloads = informer(WORKLOADS, self._on_remote_workload)
        worker.jobs = informer(JOBS, self._on_remote_job)
        if self.watch_workers:
            worker.tasks = [
                asyncio.create_task(informer.run(), name=f"informer {informer.name}")
                for informer in worker.informers
            ]

    async def _drop(self, name: str) -> None:
        worker = self.workers.pop(name, None)
        if worker is not None:
            for task in worker.tasks:
                task.cancel()
            await asyncio.gather(*worker.tasks, return_exceptions=True)
            await worker.client.close()
            self.everything = True

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
            stored = await self.rest.merge_patch(
                path, {"status": {"conditions": conditions}}, timeout=self.fence.write_timeout()
            )
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

    def _inventories(self) -> dict[str, Inventory]:
        """The stores of every reachable worker whose informers have listed."""
        found: dict[str, Inventory] = {}
        for name in sorted(self.reachable):
            worker = self.workers.get(name)
            if worker is None or not worker.synced:
                continue
            assert worker.workloads is not None and worker.jobs is not None
            found[name] = Inventory(workloads=worker.workloads.store, jobs=worker.jobs.store)
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
    ) -> bool:
        """Decide and act; False when an action failed (worth trying again later)."""
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
                timeout=self.fence.write_timeout(),
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
            await self.rest.json_patch(
                workload_status, operations, timeout=self.fence.write_timeout()
            )
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
                timeout=self.fence.write_timeout(),
            )
        elif isinstance(action, ClearNomination):
            status = objects.status(workload)
            removals = [
                {"op": "remove", "path": f"/status/{field_}"}
                for field_ in ("clusterName", "nominatedClusterNames")
                if field_ in status
            ]
            await self.rest.json_patch(
                workload_status, [guard, *removals], timeout=self.fence.write_timeout()
            )
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
                timeout=self.fence.write_timeout(),
            )

    async def _create(self, cluster: str, path: str, body: Mapping[str, Any]) -> None:
        worker = self.workers[cluster]
        try:
            await worker.rest.create(path, body, timeout=self.fence.write_timeout())
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
                    JOBS.object_path(job_name, namespace=namespace),
                    propagation="Background",
                    timeout=self.fence.write_timeout(),
                )
            except NotFound:
                pass
        try:
            await worker.rest.delete(
                WORKLOADS.object_path(name, namespace=namespace),
                timeout=self.fence.write_timeout(),
            )
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
                        await worker.rest.delete(
                            WORKLOADS.object_path(name, namespace=namespace),
                            timeout=self.fence.write_timeout(),
                        )
                    if key in inventory.jobs:
                        await worker.rest.delete(
                            JOBS.object_path(name, namespace=namespace),
                            propagation="Background",
                            timeout=self.fence.write_timeout(),
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
