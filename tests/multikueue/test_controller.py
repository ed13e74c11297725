"""The MultiKueue controller's passes against in-memory API servers (a manager, two workers).

Most tests drive the informers by hand (:func:`step`: every informer lists
again, delivering what changed, then one pass); the last ones run the real
loop with watches fed event by event.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml

from scheduler.kube.fence import Fenced
from scheduler.kube.informer import Backoff, Informer, Source, TransientError
from scheduler.kube.rest import Query, Resource, RestClient, Unreachable
from scheduler.multikueue.controller import Controller, MultiKueueSettings
from tests.builders import (
    admission_check,
    job,
    multikueue_cluster,
    multikueue_config,
    secret,
    workload,
)
from tests.clock import FakeClock
from tests.kube.fake_api import FakeApi

V1B2 = "/apis/kueue.x-k8s.io/v1beta2"
START = datetime(2026, 11, 25, 21, 0, tzinfo=UTC)


class Api(FakeApi):
    """FakeApi that also lists a namespaced kind across namespaces (``/apis/g/v/plural``)."""

    async def list(
        self, path: str, *, query: Query = (), timeout: float | None = None
    ) -> dict[str, Any]:
        answer = await super().list(path, query=query, timeout=timeout)
        if answer["items"] or "/namespaces/" in path:
            return answer
        prefix, _, plural = path.rpartition("/")
        answer["items"] = [
            o
            for p, o in self.store.items()
            if p.startswith(f"{prefix}/namespaces/") and p.split("/")[-2] == plural
        ]
        return answer


class Worker:
    def __init__(self, api: Api) -> None:
        self.rest: RestClient = api
        self.closed = False

    async def close(self) -> None:
        self.closed = True


def kubeconfig(server: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "w", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "w", "context": {"cluster": "w", "user": "u"}}],
    }


class Feed:
    """A :class:`Source` over a fake API: lists it, watches what the test pushes."""

    def __init__(self, api: RestClient, resource: Resource) -> None:
        self.api = api
        self.resource = resource
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def list(self) -> tuple[list[dict[str, Any]], str]:
        answer = await self.api.list(self.resource.path)
        return list(answer["items"]), str(answer["metadata"]["resourceVersion"])

    async def watch(self, resource_version: str) -> AsyncIterator[dict[str, Any]]:
        while True:
            event = await self.events.get()
            if event.get("type") == "BROKEN":
                raise TransientError("connection reset")
            yield event


class Feeds:
    """The source factory of a controller: one :class:`Feed` per (API, resource), kept."""

    def __init__(self) -> None:
        self.feeds: list[Feed] = []

    def __call__(self, api: RestClient, resource: Resource, selector: str | None) -> Source:
        feed = Feed(api, resource)
        self.feeds.append(feed)
        return feed

    def of(self, api: RestClient, plural: str) -> Feed:
        (feed,) = [f for f in self.feeds if f.api is api and f.resource.plural == plural]
        return feed


async def step(controller: Controller, *, resync: bool = False, workers: bool = True) -> None:
    """Every informer (the manager's, the workers' unless not ``workers``) lists again; then
    one pass."""
    informers: list[Informer] = list(controller.informers)
    if workers:
        informers += [i for worker in controller.pool.workers.values() for i in worker.informers]
    for informer in informers:
        try:
            await informer._relist()
        except TransientError:
            pass  # the worker's watch broke: the controller was told
    await controller.run_once(resync=resync)


def setup(
    *, settings: MultiKueueSettings | None = None, feeds: Feeds | None = None
) -> tuple[Api, dict[str, Api], Controller, FakeClock]:
    manager = Api()
    workers = {"https://onprem": Api(), "https://cloud": Api()}
    for name in ("onprem-worker", "cloud-worker"):
        manager.put(
            f"{V1B2}/multikueueclusters/{name}",
            multikueue_cluster(name).generation(1).kubeconfig_secret(f"{name}-secret").listed(),
        )
    manager.put(
        f"{V1B2}/multikueueconfigs/multikueue-config",
        multikueue_config("multikueue-config", "onprem-worker", "cloud-worker").listed(),
    )
    manager.put(
        f"{V1B2}/admissionchecks/multikueue-check",
        admission_check("multikueue-check").generation(1).multikueue("multikueue-config").listed(),
    )

    async def connect(config: Mapping[str, Any]) -> Worker:
        return Worker(workers[config["clusters"][0]["cluster"]["server"]])

    clock = FakeClock(START)
    controller = Controller(
        manager,
        settings or MultiKueueSettings(worker_lost_timeout=timedelta(minutes=15)),
        clock=clock,
        connect=connect,
        **({"source": feeds} if feeds else {"watch_workers": False}),
    )
    return manager, workers, controller, clock


def add_secrets(manager: Api) -> None:
    for name, server in (("onprem-worker", "https://onprem"), ("cloud-worker", "https://cloud")):
        text = yaml.safe_dump(kubeconfig(server)).encode()
        manager.put(
            f"/api/v1/namespaces/kueue-system/secrets/{name}-secret",
            secret(f"{name}-secret").data(kubeconfig=base64.b64encode(text).decode()).listed(),
        )


def active(api: Api, path: str) -> tuple[str, str, str]:
    (condition,) = api.store[path]["status"]["conditions"]
    return condition["status"], condition["reason"], condition["message"]


async def test_clusters_without_secrets_then_connected_and_the_check_follows() -> None:
    manager, _, controller, _ = setup()
    await step(controller, resync=True)
    assert active(manager, f"{V1B2}/multikueueclusters/onprem-worker") == (
        "False",
        "BadKubeConfig",
        'load client config failed: secrets "onprem-worker-secret" not found',
    )
    assert active(manager, f"{V1B2}/admissionchecks/multikueue-check")[:2] == (
        "False",
        "NoUsableClusters",
    )
    add_secrets(manager)
    await step(controller, resync=True)  # Secrets are read at a resync (or a cluster's change)
    assert active(manager, f"{V1B2}/multikueueclusters/cloud-worker") == (
        "True",
        "Active",
        "Connected",
    )
    assert active(manager, f"{V1B2}/admissionchecks/multikueue-check") == (
        "True",
        "Active",
        "The admission check is active",
    )
    writes = len(manager.calls)
    await step(controller, resync=True)
    assert not [c for c in manager.calls[writes:] if c.verb != "LIST" and c.verb != "GET"], (
        "an unchanged condition is not written again"
    )


def manager_workload() -> workload:
    """The manager's Workload of Job ``sample``, reserved in ``cluster-queue``, check pending."""
    return (
        workload("job-sample-1")
        .as_written()
        .owned_by_job("sample", "u1")
        .queue("user-queue")
        .pod_sets({"name": "main", "count": 1})
        .status(admission={"clusterQueue": "cluster-queue"})
        .condition("QuotaReserved", reason=None, message=None, at=None)
        .admission_check("multikueue-check")
    )


WL = "/namespaces/default/workloads/job-sample-1"


async def dispatched() -> tuple[Api, dict[str, Api], Controller, FakeClock]:
    manager, workers, controller, clock = setup()
    add_secrets(manager)
    manager.put(f"{V1B2}{WL}", manager_workload().build())
    manager.put(
        "/apis/batch/v1/namespaces/default/jobs/sample",
        job("sample")
        .uid("u1")
        .parallelism(None)
        .completions(None)
        .spec(managedBy="kueue.x-k8s.io/multikueue", template={})
        .listed(),
    )
    await step(controller, resync=True)  # connects the workers, whose informers then list
    await step(controller)
    return manager, workers, controller, clock


def counted(series: str, cluster: str) -> float:
    from scheduler.kube.kueue_metrics import RECORDER, STORE

    labels = {"cluster_queue": "cluster-queue", "cluster": cluster, "replica_role": RECORDER.role}
    found = STORE.value(series, labels)
    assert found is None or isinstance(found, float)
    return found or 0.0


async def test_a_pending_workload_is_copied_to_both_workers_and_lands_where_admitted() -> None:
    dispatched_before = counted("multikueue_workloads_dispatched_total", "cloud-worker")
    admitted_before = counted("multikueue_workloads_admitted_total", "cloud-worker")
    elsewhere = counted("multikueue_workloads_admitted_total", "onprem-worker")
    manager, workers, controller, _ = await dispatched()
    assert counted("multikueue_workloads_dispatched_total", "cloud-worker") == dispatched_before + 1
    onprem, cloud = workers["https://onprem"], workers["https://cloud"]
    for worker in (onprem, cloud):
        copy_ = worker.store[f"{V1B2}{WL}"]
        assert copy_["metadata"]["labels"] == {"kueue.x-k8s.io/multikueue-origin": "multikueue"}
    assert manager.store[f"{V1B2}{WL}"]["status"]["nominatedClusterNames"] == [
        "cloud-worker",
        "onprem-worker",
    ]
    admitted = dict(cloud.store[f"{V1B2}{WL}"])
    admitted["status"] = {"conditions": [{"type": "Admitted", "status": "True"}]}
    cloud.put(f"{V1B2}{WL}", admitted)
    await step(controller)
    assert f"{V1B2}{WL}" not in onprem.store, "the other copy is deleted"
    job = cloud.store["/apis/batch/v1/namespaces/default/jobs/sample"]
    assert job["metadata"]["labels"]["kueue.x-k8s.io/prebuilt-workload-name"] == "job-sample-1"
    status = manager.store[f"{V1B2}{WL}"]["status"]
    assert status["clusterName"] == "cloud-worker" and "nominatedClusterNames" not in status
    (check,) = status["admissionChecks"]
    assert (check["state"], check["message"]) == (
        "Ready",
        'The workload was admitted on "cloud-worker"',
    )
    assert counted("multikueue_workloads_admitted_total", "cloud-worker") == admitted_before + 1
    assert counted("multikueue_workloads_admitted_total", "onprem-worker") == elsewhere


async def test_a_lost_worker_is_given_its_timeout_then_the_check_retries() -> None:
    manager, workers, controller, clock = await dispatched()
    cloud = workers["https://cloud"]
    admitted = dict(cloud.store[f"{V1B2}{WL}"])
    admitted["status"] = {"conditions": [{"type": "Admitted", "status": "True"}]}
    cloud.put(f"{V1B2}{WL}", admitted)
    await step(controller)
    for minutes in (1, 14):
        clock.set(START + timedelta(minutes=minutes))
        cloud.fail("LIST", "/workloads", Unreachable("connection refused"))
        await step(controller, resync=True, workers=False)  # the probe fails
        (check,) = manager.store[f"{V1B2}{WL}"]["status"]["admissionChecks"]
        assert check["state"] == "Ready", minutes
    assert active(manager, f"{V1B2}/multikueueclusters/cloud-worker")[:2] == (
        "False",
        "ClientConnectionFailed",
    )
    clock.set(START + timedelta(minutes=16))
    cloud.fail("LIST", "/workloads", Unreachable("connection refused"))
    await step(controller, resync=True, workers=False)
    (check,) = manager.store[f"{V1B2}{WL}"]["status"]["admissionChecks"]
    assert (check["state"], check["message"]) == (
        "Retry",
        'Admitting remote lost, Previously: "Ready"',
    )


async def test_remote_objects_of_a_deleted_manager_workload_are_collected() -> None:
    manager, workers, controller, _ = await dispatched()
    del manager.store[f"{V1B2}{WL}"]
    await step(controller)
    assert all(f"{V1B2}{WL}" not in worker.store for worker in workers.values())


async def test_a_finished_workload_with_nothing_left_on_the_workers_costs_no_reads() -> None:
    manager, workers, controller, _ = await dispatched()
    done = manager.store[f"{V1B2}{WL}"]
    done["status"]["conditions"].append({"type": "Finished", "status": "True"})
    manager.put(f"{V1B2}{WL}", done)
    await step(controller)
    assert all(f"{V1B2}{WL}" not in worker.store for worker in workers.values())
    before = len(manager.calls)
    await step(controller, resync=True)
    assert not [c for c in manager.calls[before:] if "/jobs/" in c.path], "its Job is not read"


async def test_nothing_changed_no_pass_reads_or_writes_anything() -> None:
    manager, workers, controller, _ = await dispatched()
    before = {name: len(api.calls) for name, api in {"manager": manager, **workers}.items()}
    await controller.run_once()
    after = {name: len(api.calls) for name, api in {"manager": manager, **workers}.items()}
    assert after == before, "a pass reads the informers' stores, not the API servers"


async def test_a_fenced_replica_writes_nothing() -> None:
    class Closed:
        def write_timeout(self) -> float:
            raise Fenced("not leading")

    manager, _, controller, _ = setup()
    controller.fence = Closed()
    add_secrets(manager)
    with pytest.raises(Fenced):
        await step(controller, resync=True)
    assert not [c for c in manager.calls if c.verb not in ("LIST", "GET")]


async def until(predicate: Any, what: str, timeout: float = 3.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


async def test_a_workload_event_is_dispatched_at_once_not_at_the_next_resync(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The informers' first back-off is 1.2 s here, so "probed at once" is told apart from
    # "probed when the informer lists again" by a margin a loaded machine keeps.
    monkeypatch.setattr(Backoff, "__post_init__", lambda self: setattr(self, "_next", 1.2))
    feeds = Feeds()
    slow = MultiKueueSettings(resync=3600, interval=3600, min_interval=0.01)
    manager, workers, controller, _ = setup(settings=slow, feeds=feeds)
    add_secrets(manager)
    watching = asyncio.create_task(controller.watch())
    leading = asyncio.create_task(controller.lead())
    try:
        await until(
            lambda: (
                len(controller.pool.workers) == 2
                and all(w.synced for w in controller.pool.workers.values())
            ),
            "both workers connected and listed",
        )
        await asyncio.sleep(0.05)  # the pass their lists woke has run
        workload = manager.put(f"{V1B2}{WL}", manager_workload().build())
        feeds.of(manager, "workloads").events.put_nowait({"type": "ADDED", "object": workload})
        await until(
            lambda: all(f"{V1B2}{WL}" in w.store for w in workers.values()),
            "the Workload copied to both workers",
            timeout=2.0,
        )
        cloud = workers["https://cloud"]
        cloud.fail("LIST", "/workloads", Unreachable("connection refused"))
        feeds.of(cloud, "workloads").events.put_nowait({"type": "BROKEN"})
        cluster = f"{V1B2}/multikueueclusters/cloud-worker"
        await until(
            lambda: active(manager, cluster)[0] == "False",
            "a broken watch: the worker probed at once, and found unreachable",
            timeout=1.0,  # its informer's back-off alone is 1.2 s
        )
        assert "cloud-worker" not in controller.pool.reachable
        assert not controller.pool.workers["cloud-worker"].synced, "not decided from until listed"
        await until(
            lambda: controller.pool.workers["cloud-worker"].synced,
            "listed again after the back-off (not resumed from a stale version)",
            timeout=6.0,
        )
    finally:
        for task in (leading, watching):
            task.cancel()
        await asyncio.gather(leading, watching, return_exceptions=True)
    assert not controller.pool.workers, "the workers are dropped when the term ends"


def orphan(name: str) -> dict[str, Any]:
    """A worker's Workload of this manager's origin whose manager Workload never existed."""
    return (
        workload(name)
        .as_written()
        .labels({"kueue.x-k8s.io/multikueue-origin": "multikueue"})
        .queue("user-queue")
        .pod_sets({"name": "main", "count": 1})
        .build()
    )


async def test_orphans_are_swept_every_gc_interval() -> None:
    settings = MultiKueueSettings(gc_interval=timedelta(minutes=1))
    manager, workers, controller, clock = setup(settings=settings)
    add_secrets(manager)
    cloud = workers["https://cloud"]
    stray = f"{V1B2}/namespaces/default/workloads/stray"
    cloud.put(stray, orphan("stray"))
    await step(controller, resync=True)  # connects the workers (and sweeps, finding nothing)
    await step(controller)
    assert stray in cloud.store, "no manager Workload was seen deleted: it waits for a sweep"
    clock.set(START + timedelta(seconds=59))
    await step(controller)
    assert stray in cloud.store, "not before the interval"
    clock.set(START + timedelta(seconds=61))
    await step(controller)
    assert stray not in cloud.store, "swept"


async def test_without_gc_interval_only_a_deleted_manager_workloads_copies_go() -> None:
    manager, workers, controller, clock = setup(
        settings=MultiKueueSettings(gc_interval=timedelta(0))
    )
    add_secrets(manager)
    manager.put(f"{V1B2}{WL}", manager_workload().build())
    cloud = workers["https://cloud"]
    cloud.put(f"{V1B2}/namespaces/default/workloads/stray", orphan("stray"))
    await step(controller, resync=True)
    await step(controller)
    assert f"{V1B2}{WL}" in cloud.store
    del manager.store[f"{V1B2}{WL}"]
    clock.set(START + timedelta(hours=1))
    await step(controller)
    assert f"{V1B2}{WL}" not in cloud.store, "its manager Workload was seen deleted"
    assert f"{V1B2}/namespaces/default/workloads/stray" in cloud.store, "no sweep: gcInterval 0s"


async def test_the_incremental_dispatcher_adds_workers_after_a_round() -> None:
    settings = MultiKueueSettings(
        dispatcher="kueue.x-k8s.io/multikueue-dispatcher-incremental", step_size=1
    )
    manager, workers, controller, clock = setup(settings=settings)
    add_secrets(manager)
    manager.put(f"{V1B2}{WL}", manager_workload().build())
    await step(controller, resync=True)
    await step(controller)
    onprem, cloud = workers["https://onprem"], workers["https://cloud"]
    status = manager.store[f"{V1B2}{WL}"]["status"]
    assert status["nominatedClusterNames"] == ["onprem-worker"], "the config's first worker"
    assert f"{V1B2}{WL}" in onprem.store and f"{V1B2}{WL}" not in cloud.store
    clock.set(START + timedelta(minutes=4))
    await step(controller)
    assert f"{V1B2}{WL}" not in cloud.store, "the round lasts five minutes"
    clock.set(START + timedelta(minutes=5, seconds=1))
    await step(controller)
    status = manager.store[f"{V1B2}{WL}"]["status"]
    assert status["nominatedClusterNames"] == ["onprem-worker", "cloud-worker"]
    assert f"{V1B2}{WL}" in cloud.store and f"{V1B2}{WL}" in onprem.store
