"""The turn loop: one turn reconciles, decides, writes, and every line carries its cycle."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator

import pytest

from scheduler import logs
from scheduler.api import objects
from scheduler.kube.fence import Fenced, LeaseFence
from scheduler.kube.informer import Event
from scheduler.kube.rest import Unreachable
from scheduler.kube.state import KUEUE_KINDS
from scheduler.service.loop import KUEUE_PLURALS, LoopSettings, SchedulerLoop
from tests.clock import FakeClock, LoopTime
from tests.kube.fake_api import FakeApi
from tests.kube.world import (
    KUEUE,
    NAMESPACE,
    NOW,
    cluster_queue,
    flavor,
    job,
    job_path,
    local_queue,
    namespace,
)


def deliver(scheduler: SchedulerLoop, api: FakeApi) -> None:
    for kind, obj in api.events():
        event = Event(kind, obj, objects.key(obj))  # type: ignore[arg-type]
        match str(obj.get("kind")):
            case "Job":
                scheduler.state.on_job(event)
            case "Namespace":
                scheduler.state.settings.on_namespace(event)
            case kind_name if kind_name in KUEUE_KINDS:
                scheduler.state.on_kueue(event)
            case _:
                pass


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JsonFormatter())
    logger = logging.getLogger("kuota")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    yield stream
    logger.removeHandler(handler)
    logger.setLevel(level)


async def test_turns_admit_a_queued_job_and_every_line_names_its_cycle(
    log_lines: io.StringIO,
) -> None:
    api = FakeApi()
    scheduler = SchedulerLoop(api, LoopSettings(queue_status_interval_seconds=0), clock=lambda: NOW)
    api.put(f"{KUEUE}/resourceflavors/spot", flavor())
    api.put(f"{KUEUE}/clusterqueues/cq", cluster_queue())
    api.put(f"{KUEUE}/namespaces/{NAMESPACE}/localqueues/lq", local_queue())
    api.put(f"/api/v1/namespaces/{NAMESPACE}", namespace())
    api.put(job_path("train"), job("train"))
    deliver(scheduler, api)

    assert await scheduler.turn(), "turn 1 creates the Workload"
    deliver(scheduler, api)
    assert await scheduler.turn(), "turn 2 admits it and starts the Job"
    await scheduler.settle()  # the turn does not wait for its writes
    await scheduler.writer.events_sent()
    deliver(scheduler, api)

    started = api.store[job_path("train")]
    assert started["spec"]["suspend"] is False
    lines = [json.loads(line) for line in log_lines.getvalue().splitlines()]
    admitted = next(line for line in lines if line["msg"] == "admitted")
    assert admitted["cycle"] == 2
    assert admitted["object"] == admitted["workload"]
    assert all("cycle" in line for line in lines), "everything logged in a turn names it"

    assert not await scheduler.turn(), "nothing left to do"
    await scheduler.settle()
    queue_status = api.store[f"{KUEUE}/clusterqueues/cq"]["status"]
    assert queue_status["admittedWorkloads"] == 1, "queue status refreshed from the engine"


def test_the_watched_kinds_are_the_chart_s() -> None:
    assert KUEUE_PLURALS == {
        "ResourceFlavor": "resourceflavors",
        "ClusterQueue": "clusterqueues",
        "Cohort": "cohorts",
        "LocalQueue": "localqueues",
        "Workload": "workloads",
        "WorkloadPriorityClass": "workloadpriorityclasses",
        "AdmissionCheck": "admissionchecks",
        "Topology": "topologies",
    }


def deliver_through_informers(scheduler: SchedulerLoop, api: FakeApi) -> None:
    """As the informers would: into their stores, then through their handlers."""
    informers = {informer.name: informer for informer in scheduler.informers}
    for kind, obj in api.events():
        informer = informers.get(str(obj.get("kind")))
        if informer is None:
            continue
        key = objects.key(obj)
        informer.store[key] = obj
        informer.handler(Event(kind, obj, key))  # type: ignore[arg-type]


async def test_a_fenced_admission_ends_the_term_and_the_rebuild_forgets_it() -> None:
    api, boot = FakeApi(), FakeClock(monotonic=500.0)
    gate = LeaseFence(lease_duration=15, renew_deadline=10, clock=boot.monotonic)
    gate.renewed(boot.monotonic())
    gate.start_term()
    scheduler = SchedulerLoop(
        api, LoopSettings(queue_status_interval_seconds=3600), clock=lambda: NOW, fence=gate
    )
    api.put(f"{KUEUE}/resourceflavors/spot", {**flavor(), "kind": "ResourceFlavor"})
    api.put(f"{KUEUE}/clusterqueues/cq", {**cluster_queue(), "kind": "ClusterQueue"})
    api.put(
        f"{KUEUE}/namespaces/{NAMESPACE}/localqueues/lq", {**local_queue(), "kind": "LocalQueue"}
    )
    api.put(f"/api/v1/namespaces/{NAMESPACE}", namespace())
    api.put(job_path("train"), job("train"))
    deliver_through_informers(scheduler, api)
    assert await scheduler.turn(), "turn 1 creates the Workload"
    deliver_through_informers(scheduler, api)
    (key,) = scheduler.state.stored("Workload")

    boot.advance(10)  # the renewal is 10 s old: the Lease may be someone else's
    writes = len(api.calls)
    assert await scheduler.turn(), "the turn starts the admission's write and goes on"
    with pytest.raises(Fenced):
        await scheduler.settle()
    assert len(api.calls) == writes, "the admission did not leave the process"
    assert scheduler.engine.view.workload_state(key).state == "Admitted", "only assumed"

    scheduler.rebuild()
    assert scheduler.engine.view.workload_state(key).state == "Pending"
    assert scheduler.engine.view.cluster_queue_status("cq").admitted == 0

    gate.renewed(boot.monotonic())  # the next term
    gate.start_term()
    assert await scheduler.turn()
    await scheduler.settle()
    await scheduler.writer.events_sent()
    stored = api.store[f"{KUEUE}/namespaces/{NAMESPACE}/workloads/{key.split('/', 1)[1]}"]
    assert stored["status"]["admission"]["clusterQueue"] == "cq"


async def test_the_loop_backs_off_while_the_api_server_does_not_answer(loop_time: LoopTime) -> None:
    api = FakeApi()
    scheduler = SchedulerLoop(
        api, LoopSettings(queue_status_interval_seconds=3600), clock=lambda: NOW
    )
    api.put(f"{KUEUE}/resourceflavors/spot", flavor())
    api.put(f"{KUEUE}/clusterqueues/cq", cluster_queue())
    api.put(f"{KUEUE}/namespaces/{NAMESPACE}/localqueues/lq", local_queue())
    api.put(f"/api/v1/namespaces/{NAMESPACE}", namespace())
    api.put(job_path("train"), job("train"))
    deliver(scheduler, api)
    for informer in scheduler.informers:
        informer.synced.set()
    for _ in range(50):
        api.fail("POST", "workloads", Unreachable("connection refused"))
    leading = asyncio.create_task(scheduler.lead())
    await asyncio.sleep(1.2)
    leading.cancel()
    await asyncio.gather(leading, return_exceptions=True)
    attempts = sum(1 for call in api.calls if call.verb == "POST")
    assert 2 <= attempts <= 3, f"0.5 s, then 1 s between attempts, not a busy loop: {attempts}"


async def test_a_turn_does_not_wait_for_its_writes() -> None:
    """Admissions, pending explanations and queue status are written in the background: the
    engine counts the admission at once, the next turn could run, and settling writes it all."""
    api = FakeApi(latency=0.2)
    scheduler = SchedulerLoop(api, LoopSettings(queue_status_interval_seconds=0), clock=lambda: NOW)
    api.put(f"{KUEUE}/resourceflavors/spot", flavor())
    api.put(f"{KUEUE}/clusterqueues/cq", cluster_queue(cpu="1"))
    api.put(f"{KUEUE}/namespaces/{NAMESPACE}/localqueues/lq", local_queue())
    api.put(f"/api/v1/namespaces/{NAMESPACE}", namespace())
    api.put(job_path("first"), job("first"))
    api.put(job_path("second"), job("second"))
    deliver(scheduler, api)
    await scheduler.turn()  # creates both Workloads
    await scheduler.settle()
    deliver(scheduler, api)

    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await scheduler.turn(), "admits one, the other waits"
    assert loop.time() - started < 0.2, "the turn returned before any write was answered"
    assert len(scheduler.executor.background) == 1
    assert scheduler.engine.view.cluster_queue_status("cq").admitted == 1, "counted at once"

    await scheduler.settle()
    await scheduler.writer.events_sent()
    deliver(scheduler, api)
    suspended = {name: api.store[job_path(name)]["spec"]["suspend"] for name in ("first", "second")}
    assert sorted(suspended.values()) == [False, True], "exactly one Job started"
    assert api.most_concurrent >= 2, "the admission and the queue statuses went out together"


async def test_after_a_long_cycle_the_loop_rests_as_long_again() -> None:
    """A cycle of C seconds is followed by C seconds for informers, writes and the Lease
    (cycle_share 0.5), so back-to-back slow cycles cannot starve them."""
    scheduler = SchedulerLoop(FakeApi(), LoopSettings(turn_interval_seconds=0.0), clock=lambda: NOW)
    for informer in scheduler.informers:
        informer.synced.set()
    loop = asyncio.get_running_loop()
    starts: list[float] = []

    async def slow_turn() -> bool:
        starts.append(loop.time())
        scheduler.last_cycle_seconds = 0.3  # what turn() records of a 0.3 s engine cycle
        return True

    scheduler.turn = slow_turn  # type: ignore[method-assign]
    leading = asyncio.create_task(scheduler.lead())
    while len(starts) < 3:
        await asyncio.sleep(0.05)
    leading.cancel()
    await asyncio.gather(leading, return_exceptions=True)
    gaps = [later - earlier for earlier, later in zip(starts, starts[1:], strict=False)]
    assert all(gap >= 0.3 for gap in gaps), gaps


async def test_queue_gauges_are_computed_when_scraped_from_the_current_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Per-queue gauges cost a pass over the workloads: never per turn, once per scrape."""
    from prometheus_client import generate_latest

    from scheduler.kube import kueue_metrics

    scheduler = SchedulerLoop(FakeApi(), LoopSettings(), clock=lambda: NOW)
    engines: list[object] = []
    real = kueue_metrics.queue_gauges

    def counting(engine, *args, **kwargs):  # type: ignore[no-untyped-def]
        engines.append(engine)
        return real(engine, *args, **kwargs)

    monkeypatch.setattr(kueue_metrics, "queue_gauges", counting)
    for _ in range(3):
        await scheduler.turn()
    assert engines == []
    generate_latest()
    assert engines == [scheduler.engine]
    scheduler.rebuild()
    generate_latest()
    assert engines[-1] is scheduler.engine and engines[0] is not scheduler.engine
