"""The Kubeflow training kinds (MPIJob; the Trainer v1 jobs): pod sets, life cycle, rules."""

from __future__ import annotations

import pytest

from scheduler.jobs import AdmissionFacts, PodSetInfo, for_object, workload_from_job
from scheduler.jobs.actions import CreateWorkload, RestoreJob, SuspendJob
from scheduler.jobs.controller import next_action
from scheduler.jobs.jaxjob import JAXJOB
from scheduler.jobs.mpijob import MPIJOB
from scheduler.jobs.propagation import propagation
from scheduler.jobs.pytorchjob import PYTORCHJOB
from scheduler.jobs.workload_from_job import PriorityClasses
from tests.builders import kubeflow_job

SPOT = {"instance-type": "spot"}


def mpijob() -> kubeflow_job:
    return (
        kubeflow_job("pi", "ns").uid("uid-pi").queue("q").replica("Worker", 2).replica("Launcher")
    )


def test_an_mpijob_is_a_launcher_then_its_workers() -> None:
    job = mpijob().build()
    assert for_object(job) is MPIJOB
    assert [(p["name"], p["count"]) for p in MPIJOB.pod_sets(job)] == [
        ("launcher", 1),
        ("worker", 2),
    ]
    only_workers = kubeflow_job("w").replica("Worker", None).build()
    assert [(p["name"], p["count"]) for p in MPIJOB.pod_sets(only_workers)] == [("worker", 1)]


def test_suspended_through_its_run_policy_and_steered_per_replica() -> None:
    job = mpijob().build()
    assert MPIJOB.is_suspended(job)
    started = MPIJOB.run_with(
        job, [PodSetInfo("launcher", 1, SPOT), PodSetInfo("worker", 2, SPOT, labels={"x": "y"})]
    )
    assert started["spec"]["runPolicy"]["suspend"] is False
    specs = started["spec"]["mpiReplicaSpecs"]
    assert specs["Launcher"]["template"]["spec"]["nodeSelector"] == SPOT
    assert specs["Worker"]["template"]["metadata"]["labels"] == {"x": "y"}
    restored = MPIJOB.restore(MPIJOB.suspend(started), MPIJOB.pod_sets(job))
    assert restored["spec"]["mpiReplicaSpecs"] == job["spec"]["mpiReplicaSpecs"]


def test_finished_by_its_conditions_and_active_by_its_replica_statuses() -> None:
    job = mpijob().build()
    job["status"] = {
        "conditions": [{"type": "Failed", "status": "True", "message": "launcher failed"}],
        "replicaStatuses": {"Launcher": {"active": 0}, "Worker": {"active": 2}},
    }
    finished = MPIJOB.finished(job)
    assert (finished.finished, finished.reason, finished.message) == (
        True,
        "Failed",
        "launcher failed",
    )
    assert MPIJOB.active(job) == 2


def test_the_run_policys_priority_class_comes_first() -> None:
    classes = PriorityClasses(pod={"policy": 10, "launcher": 20, "worker": 30})
    job = mpijob()
    job.priority_class_name("launcher")  # the last replica added: Launcher
    raw = job.build()
    raw["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["priorityClassName"] = "worker"
    assert workload_from_job(raw, priority_classes=classes)["spec"]["priority"] == 20
    raw["spec"]["runPolicy"]["schedulingPolicy"] = {"priorityClass": "policy"}
    workload = workload_from_job(raw, priority_classes=classes)
    assert workload["spec"]["priorityClassRef"]["name"] == "policy"
    assert workload["spec"]["priority"] == 10


def test_a_workload_priority_class_taken_off_falls_back_to_the_run_policys() -> None:
    classes = PriorityClasses(workload={"low": 1}, pod={"policy": 10, "launcher": 20})
    job = mpijob().labels({"kueue.x-k8s.io/priority-class": "low"})
    job.priority_class_name("launcher")
    job.run_policy(schedulingPolicy={"priorityClass": "policy"})
    raw = job.build()
    workload = workload_from_job(raw, priority_classes=classes)
    assert (workload["spec"]["priorityClassRef"]["name"], workload["spec"]["priority"]) == (
        "low",
        1,
    )
    del raw["metadata"]["labels"]["kueue.x-k8s.io/priority-class"]
    updated = propagation(raw, workload, classes)
    assert updated is not None
    assert updated.workload["spec"]["priorityClassRef"]["name"] == "policy"
    assert updated.workload["spec"]["priority"] == 10


def test_an_evicted_mpijob_is_suspended_then_restored_keeping_its_start_time() -> None:
    job = mpijob().build()
    created = next_action(job, None, flavors={})
    assert isinstance(created, CreateWorkload)
    assert created.workload["metadata"]["name"].startswith("mpijob-pi-")
    workload = created.workload
    workload["status"] = {
        "admission": {
            "clusterQueue": "cq",
            "podSetAssignments": [
                {"name": "launcher", "count": 1, "flavors": {"cpu": "spot"}},
                {"name": "worker", "count": 2, "flavors": {"cpu": "spot"}},
            ],
        },
        "conditions": [
            {"type": "QuotaReserved", "status": "True"},
            {"type": "Admitted", "status": "True"},
            {"type": "Evicted", "status": "True", "reason": "Preempted", "message": "out"},
        ],
    }
    running = MPIJOB.run_with(job, [PodSetInfo("launcher", 1, SPOT), PodSetInfo("worker", 2, SPOT)])
    running["status"] = {"startTime": "2026-01-01T00:00:00Z"}
    stop = next_action(running, workload, flavors={})
    assert isinstance(stop, SuspendJob)
    restore = next_action(stop.job, workload, flavors={})
    assert isinstance(restore, RestoreJob) and not restore.clear_start_time


@pytest.mark.parametrize(
    ("suspended", "rules"),
    [(True, []), (False, ["JOB-U1 metadata.labels[kueue.x-k8s.io/queue-name]"])],
)
def test_the_queue_name_is_fixed_while_its_run_policy_does_not_suspend_it(
    suspended: bool, rules: list[str]
) -> None:
    old = mpijob().run_policy(suspend=suspended).build()
    new = mpijob().queue("other").run_policy(suspend=suspended).build()
    errors = MPIJOB.validate_update(new, old, facts=AdmissionFacts())
    assert [f"{e.rule} {e.field}" for e in errors] == rules


def test_a_pytorchjob_is_its_master_then_its_workers_and_a_jaxjob_its_workers() -> None:
    torch = kubeflow_job("t", kind="PyTorchJob").replica("Worker", 3).replica("Master").build()
    kind = for_object(torch)
    assert kind is PYTORCHJOB
    assert [(p["name"], p["count"]) for p in kind.pod_sets(torch)] == [
        ("master", 1),
        ("worker", 3),
    ]
    jax = kubeflow_job("j", kind="JAXJob").replica("Worker", 4).build()
    assert for_object(jax) is JAXJOB
    assert [(p["name"], p["count"]) for p in JAXJOB.pod_sets(jax)] == [("worker", 4)]
    created = next_action(
        jax | {"metadata": {**jax["metadata"], "labels": {"kueue.x-k8s.io/queue-name": "q"}}},
        None,
        flavors={},
    )
    assert isinstance(created, CreateWorkload)
    assert created.workload["metadata"]["name"].startswith("jaxjob-j-")


def test_pods_ready_is_the_running_condition() -> None:
    """Kueue's PodsReady for the Kubeflow kinds (docs/concepts.md#pods-ready)."""
    for kind, integration in (("MPIJob", MPIJOB), ("PyTorchJob", PYTORCHJOB), ("JAXJob", JAXJOB)):
        raw = kubeflow_job("k", kind=kind).replica("Worker", 2).build()
        assert not integration.pods_ready(raw)
        created = {"conditions": [{"type": "Created", "status": "True"}]}
        assert not integration.pods_ready({**raw, "status": created})
        running = {"conditions": [{"type": "Running", "status": "True"}]}
        assert integration.pods_ready({**raw, "status": running})
