"""Chaos on the local cluster: kuota-scheduler, kube-apiserver and etcd fail mid-burst, and
no invariant of :mod:`e2e.chaos.invariants` may break, checked on every watch event.

Each test is one scenario of :mod:`e2e.chaos.scenario` with one fault:

- the leading scheduler SIGKILLed, a replacement started (as a Deployment restarts a pod);
- the leader of two replicas SIGSTOPped until the standby holds the Lease, then SIGCONTed
  (a GC pause or a frozen VM): the resumed replica must not write as a leader; stepping
  down, even by exiting, is allowed for it and for it only;
- kube-apiserver killed, left down for twice the lease duration, started again on its
  address;
- etcd frozen (SIGSTOP) for twice the lease duration, then thawed.

A failure lists everything that broke (violations with the events that showed them,
replica exits with their logs, the end state), never only the first.  ``make chaos`` runs
the long form (``KUOTA_CHAOS_JOBS=300``, ``KUOTA_CHAOS_REPEATS``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest
from kubernetes_asyncio import client

from e2e.fixtures import ClusterHandle
from e2e.kuota_scheduler import LEASE_TIMINGS, SchedulerFleet

from .scenario import (
    REPEATS,
    Context,
    Fault,
    add_replica,
    leader_among,
    lease_holder,
    run,
    scenario_timeout,
)

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(scenario_timeout())]
LEASE_SECONDS = float(LEASE_TIMINGS[LEASE_TIMINGS.index("--lease-duration") + 1])
ETCD_FREEZE_SECONDS = 2 * LEASE_SECONDS
# Down past the Lease, as in a control-plane upgrade: a replica must ride it out.
APISERVER_DOWN_SECONDS = 2 * LEASE_SECONDS


async def sigkill_the_leader(ctx: Context) -> None:
    leader = await leader_among(ctx.api, ctx.fleet)
    await ctx.supervisor.kill(leader)
    ctx.report.note(f"SIGKILL {leader.identity} (the leader)")
    replacement = await add_replica(ctx.fleet)
    ctx.report.note(f"started {replacement.identity}")
    leader = await leader_among(ctx.api, ctx.fleet, timeout=60)
    ctx.report.note(f"leader: {leader.identity}")


async def sigstop_the_leader_past_its_lease(ctx: Context) -> None:
    leader = await leader_among(ctx.api, ctx.fleet)
    ctx.supervisor.may_exit.add(leader.identity)
    stopped = time.monotonic()
    os.killpg(leader.record.pid, signal.SIGSTOP)
    ctx.report.note(f"SIGSTOP {leader.identity} (the leader)")
    try:
        holder = leader.identity
        for _ in range(120):  # 60 s at most
            holder = await lease_holder(ctx.api) or holder
            if holder != leader.identity:
                break
            await asyncio.sleep(0.5)
        waited = time.monotonic() - stopped
        ctx.report.note(f"Lease held by {holder} after {waited:.1f}s")
        if holder == leader.identity:
            ctx.report.problems.append(f"no standby took the Lease in {waited:.0f}s")
        await asyncio.sleep(2)  # the new leader admits and writes while the old one sleeps
    finally:
        os.killpg(leader.record.pid, signal.SIGCONT)
        ctx.report.note(f"SIGCONT {leader.identity} after {time.monotonic() - stopped:.1f}s")


async def restart_the_apiserver(ctx: Context) -> None:
    assert ctx.cluster.plane is not None
    ctx.report.note(f"SIGKILL kube-apiserver, start it again after {APISERVER_DOWN_SECONDS:.0f}s")
    # On this thread (a component dies with the thread that started it); the watches
    # have nothing to deliver while it is down anyway.
    seconds = ctx.cluster.plane.restart("kube-apiserver", down_for=APISERVER_DOWN_SECONDS)
    ctx.report.note(f"kube-apiserver ready again {seconds:.1f}s after the kill")


async def freeze_etcd(ctx: Context) -> None:
    plane = ctx.cluster.plane
    assert plane is not None
    with plane.frozen("etcd"):
        ctx.report.note(f"SIGSTOP etcd for {ETCD_FREEZE_SECONDS:.0f}s")
        await asyncio.sleep(ETCD_FREEZE_SECONDS)
    ctx.report.note("SIGCONT etcd")


async def scenario(
    name: str,
    fault: Fault,
    *,
    replicas: int,
    repeat: int,
    api: client.ApiClient,
    cluster: ClusterHandle,
    fleet: SchedulerFleet,
    namespace: str,
) -> None:
    report = await run(
        name,
        api=api,
        cluster=cluster,
        fleet=fleet,
        namespace=namespace,
        fault=fault,
        replicas=replicas,
        seed=repeat,
    )
    print(report.render())
    failures = report.failures()
    assert not failures, f"{len(failures)} kinds of failure:\n" + report.render()


def _local_plane(cluster: ClusterHandle) -> None:
    if cluster.plane is None:
        pytest.skip("needs the local control plane (its processes are signalled)")


@pytest.mark.parametrize("repeat", range(REPEATS))
async def test_scheduler_sigkilled_mid_burst(
    repeat: int,
    api: client.ApiClient,
    cluster: ClusterHandle,
    scheduler_fleet: SchedulerFleet,
    namespace: str,
) -> None:
    await scenario(
        "scheduler SIGKILL",
        sigkill_the_leader,
        replicas=1,
        repeat=repeat,
        api=api,
        cluster=cluster,
        fleet=scheduler_fleet,
        namespace=namespace,
    )


@pytest.mark.parametrize("repeat", range(REPEATS))
async def test_leader_sigstopped_past_its_lease_with_two_replicas(
    repeat: int,
    api: client.ApiClient,
    cluster: ClusterHandle,
    scheduler_fleet: SchedulerFleet,
    namespace: str,
) -> None:
    await scenario(
        "leader SIGSTOP/SIGCONT",
        sigstop_the_leader_past_its_lease,
        replicas=2,
        repeat=repeat,
        api=api,
        cluster=cluster,
        fleet=scheduler_fleet,
        namespace=namespace,
    )


@pytest.mark.parametrize("repeat", range(REPEATS))
async def test_apiserver_restarted_mid_burst(
    repeat: int,
    api: client.ApiClient,
    cluster: ClusterHandle,
    scheduler_fleet: SchedulerFleet,
    namespace: str,
) -> None:
    _local_plane(cluster)
    await scenario(
        "kube-apiserver restart",
        restart_the_apiserver,
        replicas=1,
        repeat=repeat,
        api=api,
        cluster=cluster,
        fleet=scheduler_fleet,
        namespace=namespace,
    )


@pytest.mark.parametrize("repeat", range(REPEATS))
async def test_etcd_frozen_mid_burst(
    repeat: int,
    api: client.ApiClient,
    cluster: ClusterHandle,
    scheduler_fleet: SchedulerFleet,
    namespace: str,
) -> None:
    _local_plane(cluster)
    await scenario(
        "etcd SIGSTOP/SIGCONT",
        freeze_etcd,
        replicas=1,
        repeat=repeat,
        api=api,
        cluster=cluster,
        fleet=scheduler_fleet,
        namespace=namespace,
    )
