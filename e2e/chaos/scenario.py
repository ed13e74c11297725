"""One chaos scenario: a burst of Jobs into two ClusterQueues that borrow from each other and
preempt, a fault injected mid-burst, the invariant watcher running throughout, a report.

Shape of every scenario (:func:`run`):

1. two ClusterQueues in one cohort, 2 cpu nominal each with a 1 cpu borrowing limit:
   ``chaos-a-*`` preempts lower priorities within itself, ``chaos-b-*`` reclaims what
   ``chaos-a-*`` borrowed (no queue does both: under Kueue's rules that combination can
   loop, docs/scheduling.md#loop-guard);
   two WorkloadPriorityClasses; Jobs of 250m or 500m cpu running 1-3 s on kwok nodes,
   the first third low priority to queue A (it borrows), then both queues, 40 % high;
2. the watcher (:mod:`e2e.chaos.watcher`) synced, the scheduler replicas the scenario
   wants running, a leader elected;
3. Jobs created 8 a second (each create retried through API outages, bounded);
4. once a fifth of them are admitted, the fault (a coroutine of the scenario);
5. every Job complete and all quota free, each within its deadline;
6. the report: invariant violations with the events that showed them, scheduler
   replicas that exited without being told to (each restarted, as a Deployment
   would, so the rest can still be checked), end-state problems, timings.

Every wait has a deadline and every loop a count.  Sizes: ``KUOTA_CHAOS_JOBS``
(default 80, ``make chaos`` 300) and ``KUOTA_CHAOS_REPEATS`` (default 1).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from e2e.fixtures import ClusterHandle
from e2e.kuota_install import KUOTA_NAMESPACE
from e2e.kuota_scheduler import SchedulerFleet, SchedulerReplica

from .invariants import InvariantChecker, summarize
from .watcher import GROUP, VERSION, InvariantWatcher, watching

JOBS = int(os.environ.get("KUOTA_CHAOS_JOBS", "80"))
REPEATS = int(os.environ.get("KUOTA_CHAOS_REPEATS", "1"))
LEASE_NAME = "kuota-scheduler"
NOMINAL, BORROWING = "2", "1"
CREATE_PACE = (8, 1.0)  # 8 Jobs a second: the fault lands while Jobs still arrive
CREATE_ATTEMPTS = 40
MAX_REPLICA_RESTARTS = 6
STALL_SECONDS = 60.0
AFTER_DELETION_SECONDS = 5.0


def deadline_for(jobs: int) -> float:
    """Seconds for every Job to complete: generous on 2 shared cores, still bounded."""
    return 120 + 3.0 * jobs


def scenario_timeout(jobs: int = JOBS) -> int:
    """A pytest timeout for one scenario: its waits, plus set-up and tear-down."""
    return int(deadline_for(jobs) + 300)


@dataclass(frozen=True)
class Queues:
    flavor: str
    cohort: str
    cluster_queues: tuple[str, str]
    local_queues: tuple[str, str] = ("queue-a", "queue-b")
    priorities: tuple[str, str] = ("", "")  # low, high


def _cluster_queue(name: str, cohort: str, flavor: str, preemption: dict[str, str]) -> Any:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "cohortName": cohort,
            "preemption": preemption,
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {
                            "name": flavor,
                            "resources": [
                                {
                                    "name": "cpu",
                                    "nominalQuota": NOMINAL,
                                    "borrowingLimit": BORROWING,
                                }
                            ],
                        }
                    ],
                }
            ],
        },
    }


@contextlib.asynccontextmanager
async def cohort_of_two(api: client.ApiClient, namespace: str) -> AsyncIterator[Queues]:
    custom = client.CustomObjectsApi(api)
    queues = Queues(
        flavor=f"chaos-{namespace}",
        cohort=f"chaos-{namespace}",
        cluster_queues=(f"chaos-a-{namespace}", f"chaos-b-{namespace}"),
        priorities=(f"chaos-low-{namespace}", f"chaos-high-{namespace}"),
    )
    created: list[tuple[str, str]] = []

    async def create(plural: str, body: dict[str, Any]) -> None:
        await custom.create_cluster_custom_object(GROUP, VERSION, plural, body)
        created.append((plural, body["metadata"]["name"]))

    try:
        for name, value in zip(queues.priorities, (100, 1000), strict=True):
            await create(
                "workloadpriorityclasses",
                {
                    "apiVersion": f"{GROUP}/{VERSION}",
                    "kind": "WorkloadPriorityClass",
                    "metadata": {"name": name},
                    "value": value,
                },
            )
        await create(
            "resourceflavors",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "ResourceFlavor",
                "metadata": {"name": queues.flavor},
                "spec": {"nodeLabels": {"instance-type": "ondemand"}},
            },
        )
        a, b = queues.cluster_queues
        await create(
            "clusterqueues",
            _cluster_queue(
                a,
                queues.cohort,
                queues.flavor,
                {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Never"},
            ),
        )
        await create(
            "clusterqueues",
            _cluster_queue(
                b,
                queues.cohort,
                queues.flavor,
                {"withinClusterQueue": "Never", "reclaimWithinCohort": "Any"},
            ),
        )
        for local, cluster in zip(queues.local_queues, queues.cluster_queues, strict=True):
            await custom.create_namespaced_custom_object(
                GROUP,
                VERSION,
                namespace,
                "localqueues",
                {
                    "apiVersion": f"{GROUP}/{VERSION}",
                    "kind": "LocalQueue",
                    "metadata": {"name": local},
                    "spec": {"clusterQueue": cluster},
                },
            )
        yield queues
    finally:
        for plural, name in reversed(created):
            with contextlib.suppress(Exception):
                await custom.delete_cluster_custom_object(
                    GROUP, VERSION, plural, name, _request_timeout=10
                )


def chaos_jobs(count: int, queues: Queues, seed: int) -> list[dict[str, Any]]:
    """The burst, reproducible from ``seed``, in creation order: the first third low
    priority to queue A (it fills and borrows), then both queues with 40 % high priority
    (queue B reclaims what A borrowed, A's high Jobs preempt its low ones)."""
    rng = random.Random(seed)
    jobs = []
    for index in range(count):
        first = index < count // 3
        to_b = not first and rng.random() < 0.5
        high = not first and rng.random() < 0.4
        labels = {
            "kueue.x-k8s.io/queue-name": queues.local_queues[1 if to_b else 0],
            "kueue.x-k8s.io/priority-class": queues.priorities[1 if high else 0],
        }
        container = {
            "name": "main",
            "image": "busybox",
            "resources": {"requests": {"cpu": rng.choice(["250m", "500m"])}},
        }
        delay = rng.choice(["1s", "2s", "3s"])
        jobs.append(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": f"chaos-{index}", "labels": labels},
                "spec": {
                    "parallelism": 1,
                    "completions": 1,
                    "backoffLimit": 0,
                    "template": {
                        "metadata": {
                            "annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": delay}
                        },
                        "spec": {"restartPolicy": "Never", "containers": [container]},
                    },
                },
            }
        )
    return jobs


@dataclass
class Report:
    """What one scenario saw; :meth:`failures` is empty when nothing broke."""

    name: str
    jobs: int
    timeline: list[str] = field(default_factory=list)
    exits: list[str] = field(default_factory=list)
    tolerated_exits: list[str] = field(default_factory=list)
    end: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Found by the fault itself (say, no standby took the Lease)."""
    create_retries: int = 0
    started: float = field(default_factory=time.monotonic)
    checker: InvariantChecker | None = None
    relists: int = 0

    def note(self, text: str) -> None:
        line = f"t+{time.monotonic() - self.started:6.1f}s {text}"
        self.timeline.append(line)
        print(f"[chaos {self.name}] {line}", flush=True)  # live with -s, kept on failure

    def failures(self) -> list[str]:
        found = []
        if self.checker is not None and self.checker.violations:
            found.append(
                f"{len(self.checker.violations)} invariant violations:\n"
                + summarize(self.checker.violations)
            )
        found += self.problems
        found += [f"scheduler replica exited: {exit}" for exit in self.exits]
        found += [f"end state: {problem}" for problem in self.end]
        return found

    def render(self) -> str:
        checker = self.checker
        lines = [f"== chaos scenario {self.name}: {self.jobs} Jobs"]
        if checker is not None:
            events = ", ".join(f"{k} {v}" for k, v in sorted(checker.events.items()))
            peaks = {
                name: {f"{f}/{r}": f"{n / 1e6:g}m" for (f, r), n in peak.items()}
                for name, peak in sorted(checker.peak.items())
            }
            lines.append(
                f"watched events: {events}; checks: {checker.checks}; relists: {self.relists}; "
                f"admitted Workloads: {checker.admitted_count()}; admissions: "
                f"{checker.admissions()}; evictions: {checker.evictions}; peak usage: {peaks}"
            )
            lines.append(f"eviction to release: {release_wait_text(checker.release_waits)}")
        lines.append(f"create retries (API unavailable): {self.create_retries}")
        lines += self.timeline
        lines += [f"tolerated: {exit}" for exit in self.tolerated_exits]
        failures = self.failures()
        lines += failures or ["nothing broke"]
        return "\n".join(lines)


def release_wait_text(waits: list[float]) -> str:
    """How long evicted Workloads kept their quota (until their last pod stopped): pure."""
    if not waits:
        return "no release seen"
    ordered = sorted(waits)
    middle = ordered[len(ordered) // 2]
    return (
        f"{len(ordered)} releases, median {middle:.1f} s, max {ordered[-1]:.1f} s "
        f"(until the job's last pod had stopped)"
    )


def last_words(log: str, *, lines: int = 4, errors: int = 3, width: int = 400) -> list[str]:
    """The lines of a replica's log that say why it ended: its last errors and warnings
    and its last ``lines`` lines, each cut to ``width`` characters."""
    all_lines = log.splitlines()
    flagged = [
        line
        for line in all_lines[:-lines]
        if '"level": "error"' in line or "Traceback" in line or '"level": "critical"' in line
    ][-errors:]
    return [_shorten(line, width) for line in flagged + all_lines[-lines:]]


def _shorten(line: str, width: int) -> str:
    """A log line cut to ``width``; for a JSON record with a traceback, its message and the
    traceback's last line (the exception itself) rather than its first."""
    try:
        record = json.loads(line)
    except ValueError:
        record = None
    if isinstance(record, dict) and record.get("exception"):
        last = str(record["exception"]).strip().splitlines()[-1]
        line = f"{record.get('time')} {record.get('msg')}: {last}"
    return line[:width] + (" ..." if len(line) > width else "")


async def add_replica(fleet: SchedulerFleet) -> SchedulerReplica:
    """One more replica, started on this thread (see ``SchedulerFleet.start_one``), waited
    for in a worker thread so the watches keep running."""
    replica = fleet.start_one()
    await asyncio.to_thread(replica.wait_ready)
    return replica


class Supervisor:
    """The scheduler replicas, as a Deployment keeps them: an exit nobody asked for is
    recorded (with the log tail) and the replica replaced; ``killed`` exits are ours."""

    def __init__(self, fleet: SchedulerFleet, report: Report) -> None:
        self.fleet = fleet
        self.report = report
        self.killed: set[str] = set()
        self.may_exit: set[str] = set()
        self.restarts = 0
        # Replicas that ended before this scenario are not its business.
        self.noted: set[str] = {r.identity for r in fleet.replicas if not r.alive()}

    async def ensure(self, count: int) -> None:
        while len(self.fleet.alive()) < count:
            await add_replica(self.fleet)
        self.report.note(f"replicas running: {[r.identity for r in self.fleet.alive()]}")

    async def check(self) -> None:
        for replica in list(self.fleet.replicas):
            if replica.identity in self.noted or replica.process is None:
                continue
            code = replica.process.poll()
            if code is None:
                continue
            self.noted.add(replica.identity)
            if replica.identity in self.killed:
                continue
            tail = "\n      ".join(last_words(replica.tail(60)))
            text = f"{replica.identity} exited with code {code}; its last log lines:\n      {tail}"
            if replica.identity in self.may_exit:
                self.report.tolerated_exits.append(text)
            else:
                self.report.exits.append(text)
            self.report.note(f"{replica.identity} exited ({code}), unasked")
            if self.restarts < MAX_REPLICA_RESTARTS:
                self.restarts += 1
                replacement = await add_replica(self.fleet)
                self.report.note(f"replaced by {replacement.identity}")

    async def run(self) -> None:
        while True:  # cancelled when the scenario ends
            await self.check()
            await asyncio.sleep(1)

    async def kill(self, replica: SchedulerReplica) -> None:
        self.killed.add(replica.identity)
        await asyncio.to_thread(replica.kill)


async def lease_holder(api: client.ApiClient) -> str | None:
    try:
        lease = await client.CoordinationV1Api(api).read_namespaced_lease(
            LEASE_NAME, KUOTA_NAMESPACE, _request_timeout=5
        )
    except (ApiException, OSError, TimeoutError):
        return None
    return lease.spec.holder_identity if lease.spec else None


async def leader_among(
    api: client.ApiClient, fleet: SchedulerFleet, *, timeout: float = 60
) -> SchedulerReplica:
    """The running replica that holds the Lease (waits for one, up to ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        holder = await lease_holder(api)
        for replica in fleet.alive():
            if replica.identity == holder:
                return replica
        await asyncio.sleep(0.5)
    raise AssertionError(f"no running replica holds the Lease within {timeout:.0f}s")


async def create_with_retries(
    batch: client.BatchV1Api, namespace: str, body: dict[str, Any], report: Report
) -> None:
    """Create one Job, retrying while the API server is away; AlreadyExists counts as done
    (an earlier attempt whose answer was lost)."""
    for attempt in range(CREATE_ATTEMPTS):
        try:
            await batch.create_namespaced_job(namespace, body, _request_timeout=15)
            return
        except ApiException as failure:
            if failure.status == 409:
                return
            if failure.status is not None and failure.status < 500 and failure.status != 429:
                raise
        except (OSError, TimeoutError, aiohttp.ClientError):
            pass
        report.create_retries += 1
        await asyncio.sleep(min(0.25 * 2**attempt, 3.0))
    raise AssertionError(f"Job {body['metadata']['name']} not created in {CREATE_ATTEMPTS} tries")


async def create_burst(
    api: client.ApiClient, namespace: str, jobs: list[dict[str, Any]], report: Report
) -> None:
    batch = client.BatchV1Api(api)
    size, pause = CREATE_PACE
    for start in range(0, len(jobs), size):
        chunk = jobs[start : start + size]
        await asyncio.gather(*(create_with_retries(batch, namespace, b, report) for b in chunk))
        await asyncio.sleep(pause)
    report.note(f"all {len(jobs)} Jobs created")


async def until(
    condition: Callable[[], bool], *, timeout: float, what: str, interval: float = 0.5
) -> bool:
    """Poll ``condition`` until it holds or ``timeout``; False (not an error) on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(interval)
    return condition()


async def until_stalled(
    condition: Callable[[], bool],
    *,
    progress: Callable[[], int],
    timeout: float,
    stall: float,
) -> str:
    """Poll ``condition`` until it holds (""), ``timeout`` passes, or ``progress`` (a count
    of events) has not moved for ``stall`` seconds: waiting on would only wait."""
    start = time.monotonic()
    last, moved = progress(), start
    while not condition():
        now = time.monotonic()
        if now - start > timeout:
            return f" (deadline of {timeout:.0f}s passed)"
        if now - moved > stall:
            return f" (stalled: no watch event for {stall:.0f}s)"
        await asyncio.sleep(1)
        if progress() != last:
            last, moved = progress(), time.monotonic()
    return ""


@dataclass
class Context:
    """What a fault coroutine gets."""

    api: client.ApiClient
    cluster: ClusterHandle
    fleet: SchedulerFleet
    supervisor: Supervisor
    watcher: InvariantWatcher
    report: Report


Fault = Callable[[Context], Awaitable[None]]


async def run(
    name: str,
    *,
    api: client.ApiClient,
    cluster: ClusterHandle,
    fleet: SchedulerFleet,
    namespace: str,
    fault: Fault,
    replicas: int = 1,
    jobs: int = JOBS,
    seed: int = 0,
) -> Report:
    """The scenario; returns the report (the caller asserts ``report.failures()`` empty)."""
    report = Report(name, jobs)
    supervisor = Supervisor(fleet, report)
    replicas_before = len(fleet.alive())
    async with cohort_of_two(api, namespace) as queues:
        async with watching(api, namespace, queues.cluster_queues) as watcher:
            report.checker = watcher.checker
            await supervisor.ensure(replicas)
            leader = await leader_among(api, fleet)
            report.note(f"leader: {leader.identity}")
            supervising = asyncio.create_task(supervisor.run())
            creating = asyncio.create_task(
                create_burst(api, namespace, chaos_jobs(jobs, queues, seed), report)
            )
            try:
                checker = watcher.checker
                trigger = max(5, jobs // 5)
                reached = await until(
                    lambda: checker.admitted_count() >= trigger or creating.done(),
                    timeout=120,
                    what="admissions before the fault",
                )
                report.note(
                    f"fault after {checker.admitted_count()} admissions "
                    f"({'as planned' if reached else 'timed out waiting for ' + str(trigger)})"
                )
                await fault(Context(api, cluster, fleet, supervisor, watcher, report))
                await asyncio.wait_for(asyncio.shield(creating), timeout=300)
                outcome = await until_stalled(
                    lambda: checker.jobs_complete()[0] >= jobs,
                    progress=lambda: sum(checker.events.values()),
                    timeout=deadline_for(jobs),
                    stall=STALL_SECONDS,
                )
                report.note(f"{checker.jobs_complete()[0]}/{jobs} Jobs complete{outcome}")
                free = await until(  # a stuck Job may hold quota for good: a short look then
                    lambda: not checker.quota_held(),
                    timeout=5 if outcome else 60,
                    what="quota free",
                )
                report.note("all quota free" if free else "quota still held at the deadline")
                await supervisor.check()
            finally:
                for task in (supervising, creating):
                    task.cancel()
                await asyncio.gather(supervising, creating, return_exceptions=True)
                for replica in fleet.alive():  # never leave a frozen replica behind
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(replica.record.pid, signal.SIGCONT)
            report.end = checker.end_violations(jobs)
            report.relists = watcher.relists()
        with contextlib.suppress(Exception):
            await client.BatchV1Api(api).delete_collection_namespaced_job(
                namespace, propagation_policy="Background", _request_timeout=30
            )
    # The queues are deleted on the way out: the scheduler must survive that too.
    gone = await queues_gone(api, queues.cluster_queues, timeout=30)
    report.note(f"ClusterQueues deleted{'' if gone else ': still there after 30s'}")
    await asyncio.sleep(AFTER_DELETION_SECONDS)  # a replica that trips over it does so soon
    await supervisor.check()
    await restore_fleet(api, fleet, max(1, replicas_before))
    return report


async def queues_gone(api: client.ApiClient, names: tuple[str, ...], *, timeout: float) -> bool:
    custom = client.CustomObjectsApi(api)
    for _ in range(int(timeout * 2)):
        listed = await custom.list_cluster_custom_object(
            GROUP, VERSION, "clusterqueues", _request_timeout=10
        )
        if not {item["metadata"]["name"] for item in listed["items"]} & set(names):
            return True
        await asyncio.sleep(0.5)
    return False


async def restore_fleet(api: client.ApiClient, fleet: SchedulerFleet, count: int) -> None:
    """Leave ``count`` replicas running, the leader among them, as the session's other
    tests expect (one replica, which leads)."""
    while len(fleet.alive()) < count:
        await add_replica(fleet)
    holder = await lease_holder(api)
    extra = sorted(fleet.alive(), key=lambda replica: replica.identity == holder)
    for replica in extra[: max(0, len(extra) - count)]:
        await asyncio.to_thread(replica.stop)
