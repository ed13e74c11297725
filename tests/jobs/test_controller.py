"""Every state a queued Job and its Workload can be found in, and what the
scheduler does next: this is also what a restart finds and finishes."""

from __future__ import annotations

import copy

from scheduler.jobs.actions import (
    FinishWorkload,
    PropagateToWorkload,
    StartJob,
    SuspendJob,
    WaitForFlavor,
)
from scheduler.jobs.controller import next_action
from scheduler.status.workload_status import finished_status
from tests.jobs.sample import FLAVORS, NOW, admit, train, workload_for


def test_a_queued_suspended_job_without_workload_gets_one_owned_by_it() -> None:
    created = workload_for(train().build())
    assert created["metadata"]["ownerReferences"][0]["uid"] == "uid-1"
    assert created["spec"]["queueName"] == "user-queue"
    assert created["spec"]["podSets"][0]["count"] == 2
    assert workload_for(train().build()) == created, (
        "deterministic: a retry after a crash creates the same object"
    )


def test_unqueued_jobs_are_not_ours() -> None:
    assert next_action(train(None).suspend(False).build(), None, flavors=FLAVORS) is None


def test_a_queued_job_running_without_admission_is_suspended_again() -> None:
    action = next_action(train().suspend(False).build(), None, flavors=FLAVORS)
    assert isinstance(action, SuspendJob) and action.job["spec"]["suspend"] is True
    assert action.message == "Not admitted by cluster queue"
    pending = workload_for(train().build())
    assert isinstance(
        next_action(train().suspend(False).build(), pending, flavors=FLAVORS), SuspendJob
    )


def test_a_finished_job_is_left_alone_even_when_it_ran_unadmitted() -> None:
    assert (
        next_action(train().suspend(False).finished("Complete").build(), None, flavors=FLAVORS)
        is None
    )


def test_an_admitted_workload_starts_its_job_with_the_flavor_labels_in_one_patch() -> None:
    workload = admit(workload_for(train().build()))
    action = next_action(train().build(), workload, flavors=FLAVORS)
    assert isinstance(action, StartJob) and action.cluster_queue == "cq"
    spec = action.job["spec"]
    assert spec["suspend"] is False
    assert spec["template"]["spec"]["nodeSelector"] == {"zone": "a", "instance-type": "spot"}
    assert {"key": "spot", "operator": "Exists"} in spec["template"]["spec"]["tolerations"]
    labels = spec["template"]["metadata"]["labels"]
    assert (
        labels["kueue.x-k8s.io/podset"] == "main"
        and labels["kueue.x-k8s.io/cluster-queue-name"] == "cq"
    )
    assert labels["app"] == "train"


def test_a_started_job_needs_nothing_more() -> None:
    workload = admit(workload_for(train().build()))
    assert next_action(train().suspend(False).build(), workload, flavors=FLAVORS) is None


def test_an_admission_naming_an_unknown_flavor_waits() -> None:
    workload = admit(workload_for(train().build()), flavor="gpu")
    assert next_action(train().build(), workload, flavors=FLAVORS) == WaitForFlavor("gpu")


def test_a_finished_job_finishes_its_workload_once() -> None:
    workload = admit(workload_for(train().build()))
    action = next_action(
        train().suspend(False).finished("Complete").build(), workload, flavors=FLAVORS
    )
    assert action == FinishWorkload("Succeeded", "done")
    status = finished_status(workload, reason="Succeeded", message="done", now=NOW)
    assert status is not None and status["admission"] == workload["status"]["admission"], (
        "kept for the record"
    )
    finished = {**workload, "status": status}
    assert (
        next_action(train().suspend(False).finished("Complete").build(), finished, flavors=FLAVORS)
        is None
    )
    assert finished_status(finished, reason="Succeeded", message="done", now=NOW) is None
    assert next_action(
        train().suspend(False).finished("Failed").build(), workload, flavors=FLAVORS
    ) == FinishWorkload("Failed", "done")


def test_an_evicted_workload_stops_its_job_restores_it_and_releases_once_pods_are_gone() -> None:
    from scheduler.core.decisions import Evict
    from scheduler.jobs.actions import ReleaseWorkload, RestoreJob
    from scheduler.status.workload_status import evicted_status, released_status

    workload = admit(workload_for(train().build()))
    started = next_action(train().build(), workload, flavors=FLAVORS)
    assert isinstance(started, StartJob)
    running = {**started.job, "status": {"active": 2}}
    evict = Evict(
        victim="ml/x",
        preemptor="ml/y",
        reason="InClusterQueue",
        message="Preempted to accommodate a workload (UID: u2, JobUID: j2) "
        "due to prioritization in the ClusterQueue",
    )
    status = evicted_status(workload, evict, NOW)
    assert status is not None and status["admission"] == workload["status"]["admission"], (
        "quota still held"
    )
    evicted = {**workload, "status": status}
    by_type = {c["type"]: c for c in status["conditions"]}
    assert (by_type["Evicted"]["reason"], by_type["Preempted"]["reason"]) == (
        "Preempted",
        "InClusterQueue",
    )
    assert evicted_status(evicted, evict, NOW) is None, "written once"

    stop = next_action(
        {**running, "status": {"active": 2, "startTime": "2026-11-22T12:00:00Z"}},
        evicted,
        flavors=FLAVORS,
    )
    assert isinstance(stop, SuspendJob) and stop.message == evict.message
    assert stop.job["spec"]["suspend"] is True
    assert stop.job["spec"]["template"] == running["spec"]["template"], (
        "suspend first: a running template is immutable"
    )
    restore = next_action(stop.job, evicted, flavors=FLAVORS)
    assert isinstance(restore, RestoreJob) and restore.clear_start_time
    assert restore.job["spec"]["template"]["spec"]["nodeSelector"] == {"zone": "a"}, (
        "the user's template is back"
    )
    assert "tolerations" not in restore.job["spec"]["template"]["spec"]
    stopped = {**restore.job, "status": {"active": 1}}
    assert next_action(stopped, evicted, flavors=FLAVORS) is None, "pods still there"
    assert isinstance(
        next_action({**stopped, "status": {"active": 0}}, evicted, flavors=FLAVORS), ReleaseWorkload
    )

    released = released_status(evicted, NOW)
    assert "admission" not in released
    kinds = {c["type"]: (c["status"], c["reason"]) for c in released["conditions"]}
    assert kinds["QuotaReserved"] == ("False", "PendingEvaluation")
    assert kinds["Requeued"] == ("True", "Preempted")
    assert kinds["Evicted"] == ("True", "Preempted"), "stays True until quota is reserved again"
    pending_again = {**evicted, "status": released}
    assert next_action({**restore.job, "status": {}}, pending_again, flavors=FLAVORS) is None


def test_a_deactivated_admitted_workload_is_evicted_and_its_job_stopped() -> None:
    from scheduler.core.decisions import Evict
    from scheduler.jobs.actions import DeactivateWorkload
    from scheduler.status.workload_status import evicted_status

    workload = admit(workload_for(train().build()))
    running = next_action(train().build(), workload, flavors=FLAVORS)
    assert isinstance(running, StartJob)
    deactivated = {**workload, "spec": {**workload["spec"], "active": False}}
    action = next_action(running.job, deactivated, flavors=FLAVORS)
    assert action == DeactivateWorkload("The workload is deactivated")
    status = evicted_status(deactivated, Evict("ml/x", None, "Deactivated", action.message), NOW)
    assert status is not None
    kinds = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
    assert kinds["Evicted"] == ("True", "Deactivated") and "Preempted" not in kinds
    stop = next_action(running.job, {**deactivated, "status": status}, flavors=FLAVORS)
    assert isinstance(stop, SuspendJob) and stop.message == "The workload is deactivated"


def test_a_job_naming_a_prebuilt_workload_waits_for_it_and_never_gets_one_made() -> None:
    j = train().build()
    j["metadata"]["labels"]["kueue.x-k8s.io/prebuilt-workload-name"] = "wl-from-manager"
    assert next_action(j, None, flavors=FLAVORS) is None, "no Workload of its own"
    running = train().suspend(False).build()
    running["metadata"]["labels"]["kueue.x-k8s.io/prebuilt-workload-name"] = "wl-from-manager"
    assert isinstance(next_action(running, None, flavors=FLAVORS), SuspendJob)


def test_a_job_whose_prebuilt_workload_is_admitted_starts() -> None:
    j = train().build()
    j["metadata"]["labels"]["kueue.x-k8s.io/prebuilt-workload-name"] = "wl-from-manager"
    prebuilt = admit(workload_for(train().build()))
    del prebuilt["metadata"]["ownerReferences"]
    del prebuilt["metadata"]["labels"]["kueue.x-k8s.io/job-uid"]
    prebuilt["metadata"]["name"] = "wl-from-manager"
    adopt = next_action(j, prebuilt, flavors=FLAVORS)
    assert isinstance(adopt, PropagateToWorkload), "the job adopts its prebuilt Workload first"
    (reference,) = adopt.workload["metadata"]["ownerReferences"]
    assert (reference["kind"], reference["name"], reference["uid"]) == (
        "Job",
        j["metadata"]["name"],
        j["metadata"]["uid"],
    )
    assert reference["controller"] is True
    assert adopt.workload["metadata"]["labels"]["kueue.x-k8s.io/job-uid"] == j["metadata"]["uid"]
    assert adopt.messages == ("Adopted prebuilt workload: ml/wl-from-manager",)
    action = next_action(j, adopt.workload, flavors=FLAVORS)
    assert isinstance(action, StartJob)
    assert action.job["spec"]["suspend"] is False


def test_a_workload_that_lost_its_job_is_orphaned_until_finished() -> None:
    from scheduler.jobs.propagation import orphaned

    workload = admit(workload_for(train().build()))
    assert not orphaned(workload), "owned by its job"
    lost = {**workload, "metadata": {**workload["metadata"], "ownerReferences": []}}
    assert orphaned(lost)
    without_label = copy.deepcopy(lost)
    del without_label["metadata"]["labels"]["kueue.x-k8s.io/job-uid"]
    assert not orphaned(without_label), "made by hand, never a job's"
    finished = copy.deepcopy(lost)
    finished["status"]["conditions"].append(
        {"type": "Finished", "status": "True", "reason": "OwnerNotFound"}
    )
    assert not orphaned(finished)
