"""The JobSet integration's pure parts, and the controller's decisions for a JobSet."""

from __future__ import annotations

import copy

from scheduler.jobs import JOBSET, PodSetInfo, for_object
from scheduler.jobs.actions import (
    CreateWorkload,
    FinishWorkload,
    ReleaseWorkload,
    RestoreJob,
    SuspendJob,
)
from scheduler.jobs.controller import next_action
from scheduler.jobs.start_placement import FlavorPlacement
from scheduler.jobs.workload_from_job import PriorityClasses
from tests.builders import jobset
from tests.jobs.sample import admitted_workload


def train() -> jobset:
    """Kueue's sample JobSet ``train`` in ``ml`` (queue ``user-queue``): a driver and 3
    workers of 2 pods; each job 4 completions of 1 cpu, priority class high-priority, on ssd."""
    return (
        jobset("train", "ml")
        .uid("js-uid")
        .queue("user-queue")
        .replicated_job("driver", replicas=None, completions=4)
        .template_labels(app="driver")
        .priority_class_name("high-priority")
        .node_selector(disk="ssd")
        .requests(cpu="1")
        .replicated_job("workers", replicas=3, parallelism=2, completions=4)
        .template_labels(app="workers")
        .priority_class_name("high-priority")
        .node_selector(disk="ssd")
        .requests(cpu="1")
    )


def test_the_registry_finds_the_jobset_integration_by_kind() -> None:
    assert for_object(train().build()) is JOBSET
    assert JOBSET.framework == "jobset.x-k8s.io/jobset"
    assert JOBSET.queue_name(train().build()) == "user-queue"


def test_one_pod_set_per_replicated_job_of_replicas_times_parallelism() -> None:
    pod_sets = JOBSET.pod_sets(train().build())
    assert [(p["name"], p["count"]) for p in pod_sets] == [("driver", 1), ("workers", 6)]
    assert pod_sets[1]["template"]["metadata"]["labels"] == {"app": "workers"}
    assert pod_sets[1]["template"]["spec"]["nodeSelector"] == {"disk": "ssd"}


def test_suspend_and_is_suspended() -> None:
    running = train().suspend(False).build()
    assert not JOBSET.is_suspended(running)
    suspended = JOBSET.suspend(running)
    assert JOBSET.is_suspended(suspended)
    assert not JOBSET.is_suspended(running), "the argument is not mutated"


def test_run_with_unsuspends_and_steers_each_replicated_job_then_restore_undoes_it() -> None:
    original = train().build()
    before = copy.deepcopy(original)
    infos = [
        PodSetInfo("driver", 1, {"instance-type": "ondemand"}),
        PodSetInfo(
            "workers",
            6,
            {"instance-type": "spot", "disk": "hdd"},
            ({"key": "spot", "operator": "Exists", "effect": "NoSchedule"},),
            labels={"kueue.x-k8s.io/podset": "workers"},
        ),
    ]
    started = JOBSET.run_with(original, infos)
    assert original == before
    assert started["spec"]["suspend"] is False
    driver, workers = (r["template"]["spec"]["template"] for r in started["spec"]["replicatedJobs"])
    assert driver["spec"]["nodeSelector"] == {"instance-type": "ondemand", "disk": "ssd"}
    assert workers["spec"]["nodeSelector"] == {"instance-type": "spot", "disk": "ssd"}
    assert workers["spec"]["tolerations"] == [
        {"key": "spot", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert workers["metadata"]["labels"] == {"app": "workers", "kueue.x-k8s.io/podset": "workers"}

    restored = JOBSET.restore(JOBSET.suspend(started), JOBSET.pod_sets(original))
    assert restored["spec"]["replicatedJobs"] == original["spec"]["replicatedJobs"]


def test_finished_by_completed_or_failed_condition() -> None:
    assert not JOBSET.finished(train().build()).finished
    done = JOBSET.finished(
        train().status(conditions=[{"type": "Completed", "status": "True"}]).build()
    )
    assert (done.finished, done.reason) == (True, "Succeeded")
    failed = JOBSET.finished(
        train().status(conditions=[{"type": "Failed", "status": "True", "message": "boom"}]).build()
    )
    assert (failed.finished, failed.reason, failed.message) == (True, "Failed", "boom")
    assert not JOBSET.finished(
        train().status(conditions=[{"type": "Completed", "status": "False"}]).build()
    ).finished


def test_the_workload_is_owned_by_the_jobset_and_takes_its_pod_priority_class() -> None:
    action = next_action(
        train().build(),
        None,
        flavors={},
        priority_classes=PriorityClasses(pod={"high-priority": 1000}),
    )
    assert isinstance(action, CreateWorkload)
    workload = action.workload
    assert workload["metadata"]["name"].startswith("jobset-train-")
    assert workload["metadata"]["labels"] == {"kueue.x-k8s.io/job-uid": "js-uid"}
    (owner,) = workload["metadata"]["ownerReferences"]
    assert (owner["apiVersion"], owner["kind"], owner["uid"]) == (
        "jobset.x-k8s.io/v1alpha2",
        "JobSet",
        "js-uid",
    )
    assert workload["spec"]["queueName"] == "user-queue"
    assert workload["spec"]["priorityClassRef"]["name"] == "high-priority"
    assert workload["spec"]["priority"] == 1000
    assert [p["name"] for p in workload["spec"]["podSets"]] == ["driver", "workers"]


def test_an_unsuspended_jobset_without_workload_is_suspended() -> None:
    action = next_action(train().suspend(False).build(), None, flavors={})
    assert isinstance(action, SuspendJob)
    assert action.job["spec"]["suspend"] is True


def test_a_finished_jobset_finishes_its_workload() -> None:
    created = next_action(train().build(), None, flavors={})
    assert isinstance(created, CreateWorkload)
    done = (
        train().suspend(False).status(conditions=[{"type": "Completed", "status": "True"}]).build()
    )
    action = next_action(done, created.workload, flavors={})
    assert isinstance(action, FinishWorkload)
    assert action.reason == "Succeeded"


def test_an_evicted_jobset_is_restored_and_released_once_its_jobs_are_gone() -> None:
    workload = admitted_workload(train().build(), {"driver": 1, "workers": 6})
    workload["status"]["conditions"].append(
        {"type": "Evicted", "status": "True", "reason": "Preempted", "message": "out"}
    )
    started = JOBSET.run_with(
        train().build(), [PodSetInfo("workers", 6, {"instance-type": "spot"})]
    )
    flavors = {"spot": FlavorPlacement({"instance-type": "spot"})}
    stop = next_action(started, workload, flavors=flavors)
    assert isinstance(stop, SuspendJob)
    restore = next_action(stop.job, workload, flavors=flavors)
    assert isinstance(restore, RestoreJob)
    assert not restore.clear_start_time
    stopping = {
        **restore.job,
        "status": {"replicatedJobsStatus": [{"name": "workers", "active": 2}]},
    }
    assert next_action(stopping, workload, flavors=flavors) is None
    stopped = {
        **restore.job,
        "status": {"replicatedJobsStatus": [{"name": "workers", "active": 0}]},
    }
    assert isinstance(next_action(stopped, workload, flavors=flavors), ReleaseWorkload)


def test_frameworks_without_an_integration_are_named_not_ignored() -> None:
    from scheduler.jobs import not_integrated

    enabled = [
        "batch/job",
        "sparkoperator.k8s.io/sparkapplication",
        "jobset.x-k8s.io/jobset",
        "kubeflow.org/paddlejob",
    ]
    assert not_integrated(enabled) == [
        "sparkoperator.k8s.io/sparkapplication",
        "kubeflow.org/paddlejob",
    ]
