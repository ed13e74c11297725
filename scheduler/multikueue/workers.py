"""The connections to the worker clusters: kubeconfigs, clients, probes and informers.

Per MultiKueueCluster that is new, changed, due for its probe (a resync;
every ``interval`` while unreachable) or whose watch broke: its Secret (in
kuota's namespace), the kubeconfig in it, a client for the worker (made again
when the kubeconfig changes) and a probe, a list of the worker's Workloads,
so "reachable and authorized to read what MultiKueue reads" is one answer.
A worker that fails is remembered with the time it was first lost
(``workerLostTimeout``).  A connected worker runs informers on its Workloads
and on the objects of every kind MultiKueue copies
(:class:`~scheduler.jobs.MultiKueueAdapter`; a kind whose CRD the worker
lacks is an empty list there, looked at again later), of this manager's
origin only;
a broken watch marks the worker unreachable and probes it at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from scheduler.api import objects
from scheduler.api.refs import HUB_VERSION, KUEUE_GROUP, KUEUE_PLURALS, MULTIKUEUE_ORIGIN_LABEL
from scheduler.jobs import Integration, MultiKueueAdapter, kinds_with
from scheduler.kube.client import ApiClient, api_client_from_kubeconfig
from scheduler.kube.informer import Event, Informer, Source, TransientError
from scheduler.kube.rest import NotFound, Resource, Rest, RestClient, RestError
from scheduler.kube.source import KubeSource, OptionalKindSource
from scheduler.kube.watches import kind_resource
from scheduler.multikueue import decisions
from scheduler.multikueue.decisions import ActiveCondition, KubeconfigProblem

log = logging.getLogger("kuota.multikueue")

WORKLOADS = Resource(KUEUE_GROUP, HUB_VERSION, KUEUE_PLURALS["Workload"])
SECRETS = Resource("", "v1", "secrets")


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
    """A worker's source; the kinds MultiKueue copies may be missing there (no CRD).

    A worker without, say, the Ray CRDs stays connected for the kinds it
    serves: its list of RayJobs is empty and looked at again later, and a
    RayJob admitted there fails to be created, with a warning per attempt.
    """
    source = KubeSource(rest, resource, label_selector=label_selector or "")
    if resource == WORKLOADS:
        return source
    return OptionalKindSource(source, what=f"{resource.plural} on a MultiKueue worker")


SourceFactory = Callable[[RestClient, Resource, "str | None"], Source]
Connect = Callable[[Mapping[str, Any]], Awaitable[WorkerClient]]


def copied_kinds() -> tuple[Integration, ...]:
    """The kinds MultiKueue copies to workers (their objects are watched there)."""
    return kinds_with(MultiKueueAdapter)


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
    jobs: dict[str, Informer] = field(default_factory=dict)
    """Per kind MultiKueue copies (by kind name): its informer."""
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def rest(self) -> RestClient:
        return self.client.rest

    @property
    def informers(self) -> list[Informer]:
        return [i for i in (self.workloads, *self.jobs.values()) if i is not None]

    @property
    def synced(self) -> bool:
        """Every informer listed, and listed again since its watch last broke."""
        return bool(self.informers) and all(
            i.synced.is_set() and (not isinstance(i.source, ReportingSource) or i.source.fresh)
            for i in self.informers
        )


@dataclass
class Inventory:
    """A reachable worker's objects of this origin, by ``namespace/name``."""

    workloads: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    jobs: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    """Per copied kind (by kind name): its objects."""

    def job(self, kind: str, key: str) -> Mapping[str, Any] | None:
        return self.jobs.get(kind, {}).get(key)


class WorkerPool:
    """The connected workers, which of them answer, and since when the others do not."""

    def __init__(
        self,
        *,
        manager: RestClient,
        namespace: str,
        origin: str,
        interval: float,
        probe_timeout: float,
        clock: Callable[[], datetime],
        connect: Connect,
        source: SourceFactory,
        watch_workers: bool,
        on_change: Callable[[bool], None],
        on_remote_workload: Callable[[Event], None],
        on_remote_job: Callable[[Event], None],
    ) -> None:
        self.manager = manager
        """The manager's REST client: the workers' Secrets live there."""
        self.namespace = namespace
        self.origin = origin
        self.interval = interval
        self.probe_timeout = probe_timeout
        self.clock = clock
        self.connect = connect
        self.source = source
        self.watch_workers = watch_workers
        """Run each worker's informers as tasks (tests drive them by hand instead)."""
        self.on_change = on_change
        """Wake the controller; True: decide about every Workload."""
        self.on_remote_workload = on_remote_workload
        self.on_remote_job = on_remote_job
        self.workers: dict[str, Worker] = {}
        self.reachable: set[str] = set()
        self.lost_since: dict[str, datetime] = {}
        self.probe_due: set[str] = set()
        """Clusters to probe in the next pass (a broken watch)."""
        self.probed: dict[str, tuple[str, int | None, float]] = {}
        """Cluster -> (uid, generation, loop time) of its last probe."""

    async def sync(
        self,
        clusters: list[dict[str, Any]],
        resync: bool,
        write_condition: Callable[
            [dict[str, Any], ActiveCondition], Awaitable[dict[str, Any] | None]
        ],
    ) -> None:
        """Drop the workers whose cluster went, probe those due and record their condition."""
        names = {objects.name(c) for c in clusters}
        for gone in [name for name in self.workers if name not in names]:
            await self.drop(gone)
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
                    self.on_change(True)
                self.reachable.add(name)
                self.lost_since.pop(name, None)
            else:
                self.lost(name)
            stored = await write_condition(cluster, condition)
            cluster["status"] = objects.status(stored) if stored else objects.status(cluster)

    def _probe_is_due(self, cluster: Mapping[str, Any], resync: bool) -> bool:
        name = objects.name(cluster)
        last = self.probed.get(name)
        if resync or last is None or name in self.probe_due:
            return True
        uid = str(objects.metadata(cluster).get("uid", ""))
        if (last[0], last[1]) != (uid, objects.generation(cluster)):
            return True
        if name not in self.reachable:
            return asyncio.get_running_loop().time() - last[2] >= self.interval
        return False

    async def _connect(self, cluster: Mapping[str, Any]) -> ActiveCondition:
        """Read the kubeconfig, (re)make the worker's client and probe it."""
        name = objects.name(cluster)
        found = await self._kubeconfig(cluster)
        if isinstance(found, KubeconfigProblem):
            await self.drop(name)
            return decisions.cluster_condition(found, None)
        worker = self.workers.get(name)
        if worker is None or worker.kubeconfig != found:
            await self.drop(name)
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
            await worker.rest.list(WORKLOADS.path, query=[("limit", 1)], timeout=self.probe_timeout)
        except RestError as failure:
            probe = str(failure)
        return decisions.cluster_condition(found, probe)

    async def _kubeconfig(self, cluster: Mapping[str, Any]) -> dict[str, Any] | KubeconfigProblem:
        secret_name = decisions.secret_name(cluster)
        secret: dict[str, Any] | None = None
        if isinstance(secret_name, str):
            try:
                path = SECRETS.object_path(secret_name, namespace=self.namespace)
                secret = await self.manager.get(path)
            except NotFound:
                secret = None
        return decisions.kubeconfig_of(cluster, secret)

    def _start_informers(self, name: str, worker: Worker) -> None:
        selector = f"{MULTIKUEUE_ORIGIN_LABEL}={self.origin}"

        def informer(resource: Resource, handler: Callable[[Event], None]) -> Informer:
            source = ReportingSource(
                self.source(worker.rest, resource, selector),
                lambda: self.on_change(True),
                lambda why: self.broken(name, why),
            )
            source.informer = Informer(f"{name}/{resource.plural}", source, handler)
            return source.informer

        worker.workloads = informer(WORKLOADS, self.on_remote_workload)
        worker.jobs = {
            kind.kind: informer(kind_resource(kind), self.on_remote_job) for kind in copied_kinds()
        }
        if self.watch_workers:
            worker.tasks = [
                asyncio.create_task(informer.run(), name=f"informer {informer.name}")
                for informer in worker.informers
            ]

    def broken(self, name: str, why: str) -> None:
        """A worker's watch broke: unreachable until a probe says otherwise."""
        if name in self.reachable:
            log.warning("worker watch broken", extra={"cluster": name, "error": why})
        self.lost(name)
        self.probe_due.add(name)
        self.on_change(False)

    def lost(self, name: str) -> None:
        if name in self.reachable:
            self.on_change(True)
        self.reachable.discard(name)
        self.lost_since.setdefault(name, self.clock())

    async def drop(self, name: str) -> None:
        worker = self.workers.pop(name, None)
        if worker is not None:
            for task in worker.tasks:
                task.cancel()
            await asyncio.gather(*worker.tasks, return_exceptions=True)
            await worker.client.close()
            self.on_change(True)

    async def close(self) -> None:
        """The term ended: drop every worker; the next term connects and probes afresh."""
        for name in list(self.workers):
            await self.drop(name)
        self.reachable.clear()
        self.probed.clear()

    def inventories(self) -> dict[str, Inventory]:
        """The stores of every reachable worker whose informers have listed."""
        found: dict[str, Inventory] = {}
        for name in sorted(self.reachable):
            worker = self.workers.get(name)
            if worker is None or not worker.synced or worker.workloads is None:
                continue
            jobs = {kind: informer.store for kind, informer in worker.jobs.items()}
            found[name] = Inventory(workloads=worker.workloads.store, jobs=jobs)
        return found

    def waiting(self, clusters: Mapping[str, Any]) -> bool:
        """Something to try again soon: a cluster not reachable, or a worker not connected."""
        return set(self.workers) != self.reachable or any(
            name not in self.reachable for name in clusters
        )
