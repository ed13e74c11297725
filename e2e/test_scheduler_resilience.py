"""kuota-scheduler survives what production throws at it, on the local cluster:

- the leader killed with SIGKILL in the middle of admitting a burst of 200
  Jobs, then restarted: every Job ends admitted exactly once, no
  ClusterQueue's usage ever exceeds its quota (checked from the Workloads'
  admission records as a watch delivers them, in order), nothing stays stuck;
- two replicas: the leader killed, the standby takes over within the lease
  and admissions continue;
- two replicas: the leader frozen (SIGSTOP) past its Lease while Jobs wait
  for quota, the standby takes over and admits, the old leader resumed
  (SIGCONT): it sends no write after resuming (fencing), steps down and
  stays alive; no Workload is admitted twice and quota is never exceeded;
- a leader stopped with SIGTERM releases its Lease on the way out.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client

from scheduler.api.quantity import Quantity
from scheduler.kube.informer import Event, Informer
from scheduler.kube.source import KubeSource, Resource

from .kuota_install import KUOTA_NAMESPACE
from .kuota_scheduler import SchedulerFleet
from .test_scheduler import GROUP, VERSION, condition, flavor, job
from .waiting import eventually

pytestmark = pytest.mark.cluster
JOBS = 200
QUOTA_MILLI = 5000
REQUEST = "100m"


class WorkloadWatch:
    """Follows the namespace's Workloads through a watch and checks quota after every event."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.current: dict[str, dict[str, Any]] = {}
        self.admissions: dict[str, int] = {}
        self.peak_milli = 0

    @staticmethod
    def holds_quota(workload: dict[str, Any]) -> bool:
        reserved = condition(workload, "QuotaReserved")
        finished = condition(workload, "Finished")
        return (
            bool((workload.get("status") or {}).get("admission"))
            and bool(reserved)
            and reserved["status"] == "True"
            and not (finished and finished["status"] == "True")
        )

    def usage_milli(self) -> int:
        total = 0
        for workload in self.current.values():
            if self.holds_quota(workload):
                for pod_set in workload["status"]["admission"]["podSetAssignments"]:
                    total += Quantity.parse(pod_set["resourceUsage"]["cpu"]).milli_value()
        return total

    def handle(self, event: Event) -> None:
        if not event.key.startswith(f"{self.namespace}/"):
            return
        before = self.current.get(event.key)
        if event.type == "DELETED":
            self.current.pop(event.key, None)
        else:
            self.current[event.key] = dict(event.object)
            if self.holds_quota(dict(event.object)) and not (before and self.holds_quota(before)):
                self.admissions[event.key] = self.admissions.get(event.key, 0) + 1
        self.peak_milli = max(self.peak_milli, self.usage_milli())


@pytest.fixture
async def small_queue(api: client.ApiClient, namespace: str) -> AsyncIterator[str]:
    custom = client.CustomObjectsApi(api)
    flavor_name, cq_name = f"ondemand-{namespace}", f"burst-{namespace}"
    await custom.create_cluster_custom_object(
        GROUP, VERSION, "resourceflavors", flavor(flavor_name, {"instance-type": "ondemand"})
    )
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ClusterQueue",
            "metadata": {"name": cq_name},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {
                                "name": flavor_name,
                                "resources": [{"name": "cpu", "nominalQuota": f"{QUOTA_MILLI}m"}],
                            }
                        ],
                    }
                ],
            },
        },
    )
    await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "localqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "LocalQueue",
            "metadata": {"name": "user-queue"},
            "spec": {"clusterQueue": cq_name},
        },
    )
    yield cq_name
    await custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", cq_name)
    await custom.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", flavor_name)


async def current_leader(fleet: SchedulerFleet) -> Any:
    async def probe() -> Any:
        return fleet.leader()

    return await eventually(
        probe, lambda leader: leader is not None, timeout=30, what="a leading replica"
    )


async def test_sigkill_during_a_burst_of_200_jobs_admits_each_exactly_once_within_quota(
    scheduler_fleet: SchedulerFleet,
    api: client.ApiClient,
    namespace: str,
    small_queue: str,
) -> None:
    batch = client.BatchV1Api(api)
    watch = WorkloadWatch(namespace)
    informer = Informer(
        "e2e-workloads", KubeSource(api, Resource(GROUP, VERSION, "workloads")), watch.handle
    )
    following = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.synced.wait(), timeout=30)
        leader = await current_leader(scheduler_fleet)
        for start in range(0, JOBS, 25):
            await asyncio.gather(
                *(
                    batch.create_namespaced_job(
                        namespace, job(f"burst-{i}", "user-queue", cpu=REQUEST, delay="2s")
                    )
                    for i in range(start, min(start + 25, JOBS))
                )
            )

        async def admitted_so_far() -> int:
            return len(watch.admissions)

        await eventually(
            admitted_so_far, lambda n: n >= 30, timeout=60, what="30 admissions before the crash"
        )
        leader.kill()
        assert not leader.alive()
        if not scheduler_fleet.alive():
            scheduler_fleet.add()  # the restart

        async def finished() -> int:
            listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
                GROUP, VERSION, namespace, "workloads"
            )
            return sum(
                1
                for wl in listed["items"]
                if (condition(wl, "Finished") or {}).get("status") == "True"
            )

        await eventually(
            finished,
            lambda n: n == JOBS,
            timeout=300,
            interval=2,
            what=f"all {JOBS} Workloads Finished after the crash",
        )
        listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
            GROUP, VERSION, namespace, "workloads"
        )
        owners = [wl["metadata"]["ownerReferences"][0]["name"] for wl in listed["items"]]
        assert sorted(owners) == sorted(f"burst-{i}" for i in range(JOBS)), (
            "one Workload per Job, none duplicated"
        )
        assert len(watch.admissions) == JOBS
        assert set(watch.admissions.values()) == {1}, "every Workload admitted exactly once"
        assert 0 < watch.peak_milli <= QUOTA_MILLI, (
            f"usage peaked at {watch.peak_milli}m over {QUOTA_MILLI}m"
        )
        jobs = (await batch.list_namespaced_job(namespace)).items
        assert sorted(j.status.succeeded or 0 for j in jobs) == [1] * JOBS, (
            "every Job ran its pod once"
        )
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        await batch.delete_collection_namespaced_job(namespace, propagation_policy="Background")


async def test_leader_failover_the_standby_takes_over_and_admissions_continue(
    scheduler_fleet: SchedulerFleet,
    api: client.ApiClient,
    namespace: str,
    small_queue: str,
) -> None:
    batch = client.BatchV1Api(api)
    leader = await current_leader(scheduler_fleet)
    while len(scheduler_fleet.alive()) < 2:
        scheduler_fleet.add()
    standby = next(replica for replica in scheduler_fleet.alive() if replica is not leader)
    assert scheduler_fleet.leader() is leader, "the standby waits for the Lease"

    await batch.create_namespaced_job(
        namespace, job("before", "user-queue", cpu=REQUEST, delay="1s")
    )

    async def reserved(name: str) -> bool:
        listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
            GROUP, VERSION, namespace, "workloads"
        )
        return any(
            wl["metadata"]["ownerReferences"][0]["name"] == name
            and (condition(wl, "QuotaReserved") or {}).get("status") == "True"
            for wl in listed["items"]
        )

    await eventually(
        lambda: reserved("before"), bool, timeout=30, what="admission by the first leader"
    )
    leader.kill()
    await batch.create_namespaced_job(
        namespace, job("after", "user-queue", cpu=REQUEST, delay="1s")
    )
    await eventually(
        lambda: reserved("after"),
        bool,
        timeout=45,
        what="admission by the standby after the leader died (lease 4 s)",
    )
    assert scheduler_fleet.leader() is standby


PAUSE_JOBS = 24
PAUSE_REQUEST = "1"  # five at a time in the 5-cpu queue: the rest wait for quota


async def test_a_leader_paused_past_its_lease_writes_nothing_on_resuming_and_steps_down(
    scheduler_fleet: SchedulerFleet,
    api: client.ApiClient,
    namespace: str,
    small_queue: str,
) -> None:
    """SIGSTOP the leader while Jobs wait for quota; the standby takes over; SIGCONT the old one.

    Without fencing the resumed leader acts on its stale picture for seconds
    (admissions wiped, quota exceeded, Workloads admitted twice) and then exits.
    """
    batch = client.BatchV1Api(api)
    watch = WorkloadWatch(namespace)
    informer = Informer(
        "e2e-workloads", KubeSource(api, Resource(GROUP, VERSION, "workloads")), watch.handle
    )
    following = asyncio.create_task(informer.run())
    leader = await current_leader(scheduler_fleet)
    while len(scheduler_fleet.alive()) < 2:
        scheduler_fleet.add()
    standby = next(replica for replica in scheduler_fleet.alive() if replica is not leader)
    stopped = False
    try:
        await asyncio.wait_for(informer.synced.wait(), timeout=30)
        for start in range(0, PAUSE_JOBS, 8):
            await asyncio.gather(
                *(
                    batch.create_namespaced_job(
                        namespace, job(f"paused-{i}", "user-queue", cpu=PAUSE_REQUEST, delay="3s")
                    )
                    for i in range(start, min(start + 8, PAUSE_JOBS))
                )
            )

        async def admitted_so_far() -> int:
            return len(watch.admissions)

        await eventually(admitted_so_far, lambda n: n >= 5, timeout=60, what="the first admissions")
        leader.signal(signal.SIGSTOP)
        stopped = True
        paused_at = len(watch.admissions)

        async def standby_leads() -> bool:
            return standby.metric("kuota_leading") == 1

        await eventually(standby_leads, bool, timeout=30, what="the standby leads")
        await eventually(
            admitted_so_far,
            lambda n: n >= paused_at + 3,
            timeout=60,
            what="admissions by the new leader while the old one is paused",
        )
        resumed_at = time.time()
        leader.signal(signal.SIGCONT)
        stopped = False

        async def stepped_down() -> bool:
            return "stepped down" in leader.tail(400)

        await eventually(stepped_down, bool, timeout=30, what="the resumed leader steps down")
        assert leader.alive(), "the resumed leader steps down, it does not exit"
        assert leader.metric("kuota_leading") == 0
        last_write = leader.metric("kuota_api_last_write_sent_timestamp_seconds")
        assert last_write is not None and last_write < resumed_at, (
            f"the resumed leader sent a write {last_write - resumed_at:.2f}s after resuming"
            if last_write
            else "no write metric"
        )

        async def finished() -> int:
            listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
                GROUP, VERSION, namespace, "workloads"
            )
            return sum(
                1
                for wl in listed["items"]
                if (condition(wl, "Finished") or {}).get("status") == "True"
            )

        await eventually(
            finished,
            lambda n: n == PAUSE_JOBS,
            timeout=240,
            interval=2,
            what=f"all {PAUSE_JOBS} Workloads Finished",
        )
        assert scheduler_fleet.leader() is standby
        assert len(watch.admissions) == PAUSE_JOBS
        twice = {key: n for key, n in watch.admissions.items() if n != 1}
        assert not twice, f"Workloads admitted more than once: {twice}"
        assert 0 < watch.peak_milli <= QUOTA_MILLI, (
            f"usage peaked at {watch.peak_milli}m over {QUOTA_MILLI}m"
        )
        jobs = (await batch.list_namespaced_job(namespace)).items
        assert sorted(j.status.succeeded or 0 for j in jobs) == [1] * PAUSE_JOBS
    finally:
        if stopped:
            leader.signal(signal.SIGCONT)
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        await batch.delete_collection_namespaced_job(namespace, propagation_policy="Background")


async def test_a_leader_stopped_gracefully_releases_the_lease_for_the_standby(
    scheduler_fleet: SchedulerFleet, api: client.ApiClient
) -> None:
    leader = await current_leader(scheduler_fleet)
    while len(scheduler_fleet.alive()) < 2:
        scheduler_fleet.add()
    # Earlier tests may have left more than one standby: any of them may take the Lease.
    standbys = [replica for replica in scheduler_fleet.alive() if replica is not leader]
    leases = client.CoordinationV1Api(api)
    held = await leases.read_namespaced_lease("kuota-scheduler", KUOTA_NAMESPACE)
    assert held.spec.holder_identity == leader.identity

    leader.stop()  # SIGTERM, and wait for the exit
    assert not leader.alive()
    after = await leases.read_namespaced_lease("kuota-scheduler", KUOTA_NAMESPACE)
    assert after.spec.holder_identity in ("", None, *(r.identity for r in standbys)), (
        "released on the way out (else it would name the old leader for the lease duration)"
    )

    async def a_standby_leads() -> bool:
        return any(replica.metric("kuota_leading") == 1 for replica in standbys)

    await eventually(a_standby_leads, bool, timeout=30, what="a standby leads")
