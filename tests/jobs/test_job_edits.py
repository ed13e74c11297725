"""A Job edited after its Workload was built (docs/concepts.md#from-job-to-workload).

The scheduler charges quota and picks flavors from the Workload, so a Workload
that no longer describes its Job is never admitted or started as it is:
pending, it is rebuilt from the Job; holding quota for a suspended, edited
Job, it is deleted (once the Job has no pods) so the Job queues again as it
now is; a running Job that no longer matches is suspended first.  A user's
nodeSelector that conflicts with the admitted flavor is refused
(``FailedToStart``), never kept on a started Job.
"""

from __future__ import annotations

import copy
from typing import Any

from scheduler.jobs.actions import (
    DeleteWorkload,
    FinishWorkload,
    RestoreJob,
    StartJob,
    SuspendJob,
    UpdateWorkload,
)
from scheduler.jobs.controller import NO_MATCHING_WORKLOAD, next_action
from scheduler.jobs.equivalence import pod_sets_difference
from scheduler.jobs.protocol import PodSetInfo
from scheduler.jobs.start_placement import FlavorPlacement
from tests.builders import pod_set
from tests.jobs.sample import FLAVORS, NOW, admit, train, workload_for


def two_pods() -> pod_set:
    """Pod set ``main``: 2 pods of 1 cpu."""
    return pod_set("main", 2, cpu="1").image("i")


def edited(**pod_spec: Any) -> dict[str, Any]:
    result = train().build()
    result["spec"]["template"]["spec"].update(pod_spec)
    return result


def with_version(workload: dict[str, Any], version: str = "7") -> dict[str, Any]:
    return {**workload, "metadata": {**workload["metadata"], "resourceVersion": version}}


# -- the comparison --------------------------------------------------------------------------


def test_identical_pod_sets_match_and_empty_equals_absent() -> None:
    assert pod_sets_difference([two_pods().build()], [two_pods().build()]) is None
    assert (
        pod_sets_difference([two_pods().pod_spec(nodeSelector={}).build()], [two_pods().build()])
        is None
    )
    assert (
        pod_sets_difference([two_pods().pod_spec(tolerations=[]).build()], [two_pods().build()])
        is None
    )


def test_resources_compare_by_quantity() -> None:
    milli = two_pods().build()
    milli["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1000m"
    assert pod_sets_difference([milli], [two_pods().build()]) is None
    more = two_pods().build()
    more["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    assert pod_sets_difference([more], [two_pods().build()]) == "pod set main: containers changed"


def test_every_quota_or_placement_field_is_a_difference() -> None:
    assert (
        pod_sets_difference([two_pods().set(count=3).build()], [two_pods().build()])
        == "pod set main: count 2 -> 3"
    )
    assert pod_sets_difference([two_pods().min_count(1).build()], [two_pods().build()]) == (
        "pod set main: minCount None -> 1"
    )
    selector = two_pods().pod_spec(nodeSelector={"instance-type": "ondemand"}).build()
    assert (
        pod_sets_difference([selector], [two_pods().build()])
        == "pod set main: nodeSelector changed"
    )
    required = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}
                ]
            }
        }
    }
    assert pod_sets_difference(
        [two_pods().pod_spec(affinity=required).build()], [two_pods().build()]
    ) == ("pod set main: affinity changed")
    tolerating = two_pods().pod_spec(tolerations=[{"key": "spot", "operator": "Exists"}]).build()
    assert (
        pod_sets_difference([tolerating], [two_pods().build()])
        == "pod set main: tolerations changed"
    )
    init = two_pods().pod_spec(initContainers=[{"name": "init", "image": "i"}]).build()
    assert (
        pod_sets_difference([init], [two_pods().build()]) == "pod set main: initContainers changed"
    )
    assert pod_sets_difference(
        [two_pods().build(), two_pods().set(name="b").build()], [two_pods().build()]
    ) == ("1 pod sets -> 2")


def test_the_running_form_of_an_admitted_job_matches() -> None:
    placed = [PodSetInfo("main", 2, {"instance-type": "spot"}, ({"key": "spot"},))]
    running = (
        two_pods()
        .pod_spec(nodeSelector={"instance-type": "spot"}, tolerations=[{"key": "spot"}])
        .build()
    )
    assert pod_sets_difference([running], [two_pods().build()], placed=placed) is None
    assert pod_sets_difference([running], [two_pods().build()]) is not None, (
        "not without the admission"
    )
    other = two_pods().pod_spec(nodeSelector={"instance-type": "ondemand"}).build()
    assert pod_sets_difference([other], [two_pods().build()], placed=placed) == (
        "pod set main: nodeSelector changed"
    )
    partial = [PodSetInfo("main", 1, {"instance-type": "spot"})]
    cut = two_pods().set(count=1).pod_spec(nodeSelector={"instance-type": "spot"}).build()
    assert pod_sets_difference([cut], [two_pods().min_count(1).build()], placed=partial) is None, (
        "partial admission cut the count; the minimum no longer applies"
    )


# -- a pending Job -----------------------------------------------------------------------------


def test_a_pending_job_given_a_node_selector_gets_its_workload_rebuilt() -> None:
    workload = with_version(workload_for(train().build()))
    changed = edited(nodeSelector={"zone": "a", "instance-type": "ondemand"})
    action = next_action(changed, workload, flavors=FLAVORS)
    assert isinstance(action, UpdateWorkload)
    assert action.difference == "pod set main: nodeSelector changed"
    rebuilt = action.workload
    assert rebuilt["metadata"]["resourceVersion"] == "7", "the write is guarded by it"
    assert rebuilt["metadata"]["name"] == workload["metadata"]["name"]
    assert rebuilt["spec"]["podSets"][0]["template"]["spec"]["nodeSelector"] == {
        "zone": "a",
        "instance-type": "ondemand",
    }
    assert next_action(changed, rebuilt, flavors=FLAVORS) is None, "then it matches"


def test_a_pending_job_resized_gets_its_workload_rebuilt_with_the_new_count() -> None:
    workload = workload_for(train().build())
    resized = train().build()
    resized["spec"]["parallelism"] = 4
    resized["spec"]["completions"] = 4
    action = next_action(resized, workload, flavors=FLAVORS)
    assert isinstance(action, UpdateWorkload) and action.difference == (
        "pod set main: count 2 -> 4"
    )
    assert action.workload["spec"]["podSets"][0]["count"] == 4


def test_a_rebuilt_workload_stays_deactivated_and_unchanged_jobs_need_nothing() -> None:
    workload = workload_for(train().build())
    assert next_action(train().build(), workload, flavors=FLAVORS) is None
    inactive = {**workload, "spec": {**workload["spec"], "active": False}}
    action = next_action(edited(tolerations=[{"key": "x"}]), inactive, flavors=FLAVORS)
    assert isinstance(action, UpdateWorkload) and action.workload["spec"]["active"] is False


def test_a_pending_job_with_a_new_time_limit_gets_its_workload_rebuilt() -> None:
    workload = workload_for(train().build())
    limited = train().build()
    limited["metadata"]["labels"]["kueue.x-k8s.io/max-exec-time-seconds"] = "60"
    action = next_action(limited, workload, flavors=FLAVORS)
    assert isinstance(action, UpdateWorkload)
    assert action.workload["spec"]["maximumExecutionTimeSeconds"] == 60


def test_the_time_limit_is_the_label_kueue_reads_not_an_annotation() -> None:
    annotated = train().build()
    annotated["metadata"]["annotations"] = {"kueue.x-k8s.io/max-exec-time-seconds": "60"}
    assert "maximumExecutionTimeSeconds" not in workload_for(annotated)["spec"]
    labelled = train().build()
    labelled["metadata"]["labels"]["kueue.x-k8s.io/max-exec-time-seconds"] = "60"
    assert workload_for(labelled)["spec"]["maximumExecutionTimeSeconds"] == 60


def test_a_job_with_an_env_variable_named_twice_is_the_job_its_workload_describes() -> None:
    job = train().build()
    job["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "TEST_ENV", "value": "test1"},
        {"name": "TEST_ENV", "value": "test2"},
    ]
    workload = workload_for(job)
    recorded = workload["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["env"]
    assert recorded == [{"name": "TEST_ENV", "value": "test2"}]
    assert next_action(job, workload, flavors=FLAVORS) is None
    assert isinstance(next_action(job, admit(workload, flavor="spot"), flavors=FLAVORS), StartJob)
    job["spec"]["template"]["spec"]["containers"][0]["env"][1]["value"] = "test3"
    action = next_action(job, workload, flavors=FLAVORS)
    assert isinstance(action, UpdateWorkload)


# -- an admitted Workload ----------------------------------------------------------------------


def test_a_job_edited_between_admission_and_start_is_not_started_its_workload_goes() -> None:
    workload = admit(workload_for(train().build()), flavor="spot")
    changed = edited(nodeSelector={"zone": "a", "instance-type": "ondemand"})
    action = next_action(changed, workload, flavors=FLAVORS)
    assert action == DeleteWorkload("pod set main: nodeSelector changed")


def test_a_suspended_running_job_resized_gets_its_placement_removed_then_requeued() -> None:
    workload = admit(workload_for(train().build()), flavor="spot")
    start = next_action(train().build(), workload, flavors=FLAVORS)
    assert isinstance(start, StartJob)
    suspended = copy.deepcopy(start.job)
    suspended["spec"].update(suspend=True, parallelism=3, completions=3)
    suspended["status"] = {"active": 2, "startTime": "2026-11-22T12:00:00Z"}
    assert next_action(suspended, workload, flavors=FLAVORS) is None, "quota held until pods go"

    suspended["status"] = {"startTime": "2026-11-22T12:00:00Z"}
    restore = next_action(suspended, workload, flavors=FLAVORS)
    assert isinstance(restore, RestoreJob) and restore.clear_start_time
    spec = restore.job["spec"]
    assert spec["parallelism"] == 3 and spec["completions"] == 3, "the user's counts are kept"
    assert spec["template"]["spec"]["nodeSelector"] == {"zone": "a"}, "the flavor's label is off"
    assert "tolerations" not in spec["template"]["spec"]
    assert "kueue.x-k8s.io/podset" not in spec["template"]["metadata"]["labels"]

    restored = {**restore.job, "status": {}}
    assert next_action(restored, workload, flavors=FLAVORS) == DeleteWorkload(
        "pod set main: count 2 -> 3"
    )


def test_a_user_suspending_an_unchanged_running_job_gets_it_started_again() -> None:
    workload = admit(workload_for(train().build()), flavor="spot")
    start = next_action(train().build(), workload, flavors=FLAVORS)
    assert isinstance(start, StartJob)
    suspended = copy.deepcopy(start.job)
    suspended["spec"]["suspend"] = True
    assert isinstance(next_action(suspended, workload, flavors=FLAVORS), StartJob)


def test_a_running_job_resized_behind_the_webhooks_back_is_stopped() -> None:
    workload = admit(workload_for(train().build()), flavor="spot")
    start = next_action(train().build(), workload, flavors=FLAVORS)
    assert isinstance(start, StartJob)
    assert next_action(start.job, workload, flavors=FLAVORS) is None, "the running form matches"
    grown = copy.deepcopy(start.job)
    grown["spec"]["parallelism"] = 5
    grown["spec"]["completions"] = 5
    action = next_action(grown, workload, flavors=FLAVORS)
    assert isinstance(action, SuspendJob) and action.message == NO_MATCHING_WORKLOAD
    assert action.job["spec"]["suspend"] is True


def test_a_selector_conflicting_with_the_admitted_flavor_is_refused_not_kept() -> None:
    # The flavor's labels changed after the admission: the Job asks for
    # instance-type=spot, the flavor now stands for instance-type=preemptible.
    mine = edited(nodeSelector={"instance-type": "spot"})
    workload = admit(workload_for(mine), flavor="spot")
    relabelled = {"spot": FlavorPlacement({"instance-type": "preemptible"})}
    action = next_action(mine, workload, flavors=relabelled)
    assert action == FinishWorkload(
        "FailedToStart",
        "invalid admission check PodSetUpdate: conflict for nodeSelector: "
        "conflict for key=instance-type, value1=spot, value2=preemptible",
    )
    same = next_action(mine, workload, flavors=FLAVORS)
    assert isinstance(same, StartJob), "the same value is no conflict"


def test_a_partially_admitted_running_job_is_no_mismatch() -> None:
    from scheduler.api.quantity import Quantity
    from scheduler.core.decisions import Admit, PodSetAdmission
    from scheduler.status.workload_status import admitted_status

    wide = train().build()
    wide["metadata"]["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": "2"}
    wide["spec"].update(parallelism=4, completions=4)
    workload = workload_for(wide)
    assert workload["spec"]["podSets"][0]["minCount"] == 2
    for admitted_count in (3, 2):
        decision = Admit(
            workload="ml/x",
            cluster_queue="cq",
            pod_sets=(
                PodSetAdmission(
                    "main", admitted_count, {"cpu": "spot"}, {"cpu": Quantity.parse("2")}
                ),
            ),
            message="",
        )
        admitted = {**workload, "status": admitted_status(workload, decision, NOW)}
        start = next_action(wide, admitted, flavors=FLAVORS)
        assert isinstance(start, StartJob)
        assert start.job["spec"]["parallelism"] == admitted_count
        assert next_action(start.job, admitted, flavors=FLAVORS) is None, admitted_count


def test_a_pending_job_moved_to_another_queue_takes_its_workload_along() -> None:
    workload = workload_for(train().build())
    moved = train("other-queue").build()
    action = next_action(moved, workload, flavors=FLAVORS)
    assert isinstance(action, UpdateWorkload) and action.difference == "queue name changed"
    assert action.workload["spec"]["queueName"] == "other-queue"


def test_a_flavor_relabelled_under_a_running_job_does_not_stop_it() -> None:
    workload = admit(workload_for(train().build()), flavor="spot")
    start = next_action(train().build(), workload, flavors=FLAVORS)
    assert isinstance(start, StartJob)
    relabelled = {**FLAVORS, "spot": FlavorPlacement({"instance-type": "preemptible"})}
    assert next_action(start.job, workload, flavors=relabelled) is None
