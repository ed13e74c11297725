"""The admission-check controller of the live scheduler, against an in-memory API server.

A ClusterQueue with a check reserves quota and leaves the Job suspended; the
check controller's Ready makes kuota write ``Admitted`` and start the Job with
the check's ``podSetUpdates``; a provisioning-request check is marked inactive
once; other controllers' checks are left alone.
"""

from __future__ import annotations

from scheduler.kube.checks import CheckController
from tests.builders import admission_check

from .world import KUEUE, World, workload_path


def controller(world: World) -> CheckController:
    return CheckController(
        engine=world.engine,
        state=world.cluster,
        writer=world.writer,
        clock=lambda: world.now,
        evict=world.executor.admissions.evict,
        reconcile_job=world.executor.jobs.reconcile_job,
    )


def checked_world() -> World:
    world = World().setup()
    world.add(
        f"{KUEUE}/admissionchecks/acc",
        admission_check("acc", "example.com/acc")
        .generation(1)
        .active(when="2026-11-22T11:00:00Z")
        .build(),
    )
    queue = dict(world.api.store[f"{KUEUE}/clusterqueues/cq"])
    queue["spec"] = {
        **queue["spec"],
        "admissionChecksStrategy": {"admissionChecks": [{"name": "acc"}]},
    }
    world.add(f"{KUEUE}/clusterqueues/cq", queue)
    return world


async def test_ready_admits_and_starts_the_job_with_the_checks_pod_set_updates() -> None:
    world = checked_world()
    checks = controller(world)
    key = await world.submit("train")
    await world.cycle()
    world.deliver()
    reserved = world.workload(key)
    assert [(c["name"], c["state"]) for c in reserved["status"]["admissionChecks"]] == [
        ("acc", "Pending")
    ]
    assert world.job("train")["spec"]["suspend"] is True
    assert not await checks.reconcile(), "nothing to do while the check is Pending"

    entries = [
        {
            **reserved["status"]["admissionChecks"][0],
            "state": "Ready",
            "podSetUpdates": [{"name": "main", "nodeSelector": {"pool": "a"}}],
        }
    ]
    world.add(
        workload_path(key.split("/", 1)[1]),
        {**reserved, "status": {**reserved["status"], "admissionChecks": entries}},
    )
    assert await checks.reconcile()
    admitted = next(
        c for c in world.workload(key)["status"]["conditions"] if c["type"] == "Admitted"
    )
    assert admitted["status"] == "True"
    started = world.job("train")
    assert started["spec"]["suspend"] is False
    assert started["spec"]["template"]["spec"]["nodeSelector"] == {
        "instance-type": "spot",
        "pool": "a",
    }
    world.deliver()
    status = world.engine.view.cluster_queue_status("cq")
    assert (status.reserving, status.admitted) == (1, 1)


async def test_only_a_provisioning_request_check_is_marked_inactive_and_only_once() -> None:
    world = World().setup()
    checks = controller(world)
    prov = f"{KUEUE}/admissionchecks/prov"
    world.add(
        prov, admission_check("prov", "kueue.x-k8s.io/provisioning-request").generation(1).build()
    )
    world.add(
        f"{KUEUE}/admissionchecks/mk",
        admission_check("mk", "kueue.x-k8s.io/multikueue").generation(1).build(),
    )
    assert await checks.reconcile()
    (active,) = world.api.store[prov]["status"]["conditions"]
    assert (active["status"], active["reason"]) == ("False", "ControllerNotSupported")
    assert "status" not in world.api.store[f"{KUEUE}/admissionchecks/mk"]
    world.deliver()
    assert not await checks.reconcile(), "already says so: no second write"
