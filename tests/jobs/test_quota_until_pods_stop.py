"""The quota of an evicted or finished job is released only once its last pod has stopped.

A pod in its termination grace period still holds its node: neither the
Job's ``status.active`` (which does not count it) nor a stale counter may
hand its quota to the next Workload.  The scheduler counts the pods it sees
(``live_pods``: those labelled with the job's UID when kuota started it).
"""

from __future__ import annotations

from scheduler.core.decisions import Evict
from scheduler.jobs import BATCH_JOB
from scheduler.jobs.actions import FinishWorkload, ReleaseWorkload, RestoreJob, StartJob, SuspendJob
from scheduler.jobs.controller import next_action
from scheduler.status.workload_status import evicted_status
from tests.jobs.sample import FLAVORS, NOW, admit, train, workload_for

EVICT = Evict(victim="ml/x", preemptor="ml/y", reason="InClusterQueue", message="preempted")


def evicted_and_stopped() -> tuple[dict[str, object], dict[str, object]]:
    """The Workload evicted, and its Job suspended with the user's template back."""
    workload = admit(workload_for(train().build()))
    status = evicted_status(workload, EVICT, NOW)
    assert status is not None
    evicted = {**workload, "status": status}
    started = next_action(train().build(), workload, flavors=FLAVORS)
    assert isinstance(started, StartJob)
    stop = next_action(started.job, evicted, flavors=FLAVORS)
    assert isinstance(stop, SuspendJob)
    restore = next_action(stop.job, evicted, flavors=FLAVORS)
    assert isinstance(restore, RestoreJob)
    return restore.job, evicted


def test_a_started_jobs_pods_carry_its_uid() -> None:
    workload = admit(workload_for(train().build()))
    started = next_action(train().build(), workload, flavors=FLAVORS)
    assert isinstance(started, StartJob)
    labels = started.job["spec"]["template"]["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/job-uid"] == "uid-1"


def test_restoring_takes_the_job_uid_label_off_the_template() -> None:
    stopped, _ = evicted_and_stopped()
    assert "kueue.x-k8s.io/job-uid" not in stopped["spec"]["template"]["metadata"]["labels"]


def test_a_pod_the_job_controller_has_not_counted_yet_keeps_the_quota() -> None:
    """The chaos run's case: status.active is 0, yet the pod just created runs."""
    stopped, evicted = evicted_and_stopped()
    idle = {**stopped, "status": {"active": 0}}
    assert next_action(idle, evicted, flavors=FLAVORS, live_pods=1) is None
    assert isinstance(next_action(idle, evicted, flavors=FLAVORS, live_pods=0), ReleaseWorkload)


def test_a_terminating_pod_counts_as_active() -> None:
    stopped, evicted = evicted_and_stopped()
    terminating = {**stopped, "status": {"active": 0, "terminating": 2}}
    assert BATCH_JOB.active(terminating) == 2
    assert next_action(terminating, evicted, flavors=FLAVORS) is None
    gone = {**stopped, "status": {"active": 0, "terminating": 0}}
    assert isinstance(next_action(gone, evicted, flavors=FLAVORS), ReleaseWorkload)


def test_a_finished_job_with_a_pod_still_stopping_is_finished_once_it_has_stopped() -> None:
    workload = admit(workload_for(train().build()))
    failed = train().suspend(False).finished("Failed").build()
    assert next_action(failed, workload, flavors=FLAVORS, live_pods=1) is None
    assert next_action(failed, workload, flavors=FLAVORS, live_pods=0) == FinishWorkload(
        "Failed", "done"
    )


def test_a_pod_stranded_on_a_deleted_node_does_not_keep_the_quota() -> None:
    """Its node is gone: no kubelet ends it (the pod garbage collector deletes it a minute
    later) and it holds nothing, so the evicted job's quota goes back at once, as in Kueue."""
    stopped, evicted = evicted_and_stopped()
    terminating = {**stopped, "status": {"active": 0, "terminating": 1}}
    assert next_action(terminating, evicted, flavors=FLAVORS, live_pods=1) is None
    released = next_action(terminating, evicted, flavors=FLAVORS, live_pods=1, stranded_pods=1)
    assert isinstance(released, ReleaseWorkload)
    two = {**stopped, "status": {"active": 0, "terminating": 2}}
    assert next_action(two, evicted, flavors=FLAVORS, live_pods=2, stranded_pods=1) is None, (
        "the other pod still holds its node"
    )
