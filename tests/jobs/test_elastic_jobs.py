"""Elastic Jobs in the Job controller (docs/concepts.md#elastic-jobs).

A Job annotated ``kueue.x-k8s.io/elastic-job: "true"`` gets an elastic
Workload (Kueue's first workload slice: marked elastic, naming its slice
chain).  Running on its admission, it may scale down: its Workload's counts
are lowered in place and the admission stays.  It may scale up: a new
slice for the new size names the old one, and the engine admits it in the
old one's place.  Anything else that no longer matches (the gate off) stops
the Job as for any Job.
"""

from __future__ import annotations

import copy
from typing import Any

from scheduler.jobs.actions import CreateWorkload, StartJob, SuspendJob
from scheduler.jobs.controller import NO_MATCHING_WORKLOAD, next_action
from scheduler.jobs.elastic import RetireSlice, ScaleDownWorkload
from tests.jobs.sample import FLAVORS, admit, train, workload_for

ELASTIC = "kueue.x-k8s.io/elastic-job"
SLICE_NAME = "kueue.x-k8s.io/workload-slice-name"
REPLACES = "kueue.x-k8s.io/workload-slice-replacement-for"


def elastic_train() -> dict[str, Any]:
    return train().annotations({ELASTIC: "true"}).build()


def running(job: dict[str, Any], workload: dict[str, Any]) -> dict[str, Any]:
    start = next_action(job, workload, flavors=FLAVORS)
    assert isinstance(start, StartJob)
    return start.job


def resized(job: dict[str, Any], pods: int) -> dict[str, Any]:
    """``job`` running ``pods`` pods (an Indexed Job's completions move with parallelism)."""
    result = copy.deepcopy(job)
    result["spec"]["parallelism"] = result["spec"]["completions"] = pods
    return result


def test_an_elastic_jobs_workload_is_marked_elastic_and_names_its_slice_chain() -> None:
    workload = workload_for(elastic_train())
    annotations = workload["metadata"]["annotations"]
    assert annotations[ELASTIC] == "true"
    assert annotations[SLICE_NAME] == workload["metadata"]["name"]


def test_with_the_gate_off_the_workload_is_not_elastic() -> None:
    action = next_action(elastic_train(), None, flavors=FLAVORS, elastic_jobs=False)
    assert "annotations" not in action.workload["metadata"]  # type: ignore[union-attr]


def test_a_running_elastic_job_that_scales_down_lowers_its_workloads_count_in_place() -> None:
    workload = admit(workload_for(elastic_train()))
    job = running(elastic_train(), workload)
    action = next_action(resized(job, 1), workload, flavors=FLAVORS)
    assert isinstance(action, ScaleDownWorkload)
    assert action.difference == "pod set main: count 2 -> 1"
    assert [p["count"] for p in action.workload["spec"]["podSets"]] == [1]
    assert action.workload["status"] == workload["status"], "the admission stays as it was"


def test_once_the_workload_follows_the_scale_down_the_running_job_needs_nothing() -> None:
    workload = admit(workload_for(elastic_train()))
    job = resized(running(elastic_train(), workload), 1)
    action = next_action(job, workload, flavors=FLAVORS)
    assert isinstance(action, ScaleDownWorkload)
    assert next_action(job, action.workload, flavors=FLAVORS) is None


def test_a_workload_made_before_the_gate_was_on_is_marked_elastic_when_it_scales_down() -> None:
    workload = admit(workload_for(train().build()))
    job = running(elastic_train(), workload)
    action = next_action(resized(job, 1), workload, flavors=FLAVORS)
    assert isinstance(action, ScaleDownWorkload)
    annotations = action.workload["metadata"]["annotations"]
    assert annotations[ELASTIC] == "true"
    assert annotations[SLICE_NAME] == workload["metadata"]["name"]


def test_a_running_elastic_job_that_scales_up_gets_a_new_slice_naming_the_old_one() -> None:
    workload = admit(workload_for(elastic_train()))
    job = running(elastic_train(), workload)
    action = next_action(resized(job, 3), workload, flavors=FLAVORS)
    assert isinstance(action, CreateWorkload)
    new = action.workload
    old_key = f"{workload['metadata']['namespace']}/{workload['metadata']['name']}"
    assert new["metadata"]["annotations"][REPLACES] == old_key
    assert new["metadata"]["annotations"][SLICE_NAME] == workload["metadata"]["name"]
    assert new["metadata"]["name"] != workload["metadata"]["name"]
    assert [p["count"] for p in new["spec"]["podSets"]] == [3]


def test_while_the_new_slice_waits_the_running_job_needs_nothing() -> None:
    workload = admit(workload_for(elastic_train()))
    job = resized(running(elastic_train(), workload), 3)
    created = next_action(job, workload, flavors=FLAVORS)
    assert isinstance(created, CreateWorkload)
    assert next_action(job, workload, flavors=FLAVORS, pending_slice=created.workload) is None


def test_a_waiting_slice_the_job_no_longer_matches_is_finished_out_of_sync() -> None:
    workload = admit(workload_for(elastic_train()))
    job = resized(running(elastic_train(), workload), 3)
    created = next_action(job, workload, flavors=FLAVORS)
    assert isinstance(created, CreateWorkload)
    action = next_action(resized(job, 4), workload, flavors=FLAVORS, pending_slice=created.workload)
    assert isinstance(action, RetireSlice) and action.reason == "OutOfSync"
    assert action.workload["metadata"]["name"] == created.workload["metadata"]["name"]


def test_a_slice_left_over_is_finished_with_the_reason_given() -> None:
    workload = admit(workload_for(elastic_train()))
    job = running(elastic_train(), workload)
    old = copy.deepcopy(workload)
    action = next_action(
        job, workload, flavors=FLAVORS, stale_slices=[(old, "WorkloadSliceReplaced", "replaced")]
    )
    assert isinstance(action, RetireSlice) and action.reason == "WorkloadSliceReplaced"


def test_with_the_gate_off_a_scale_up_stops_the_job() -> None:
    workload = admit(workload_for(elastic_train()))
    job = running(elastic_train(), workload)
    action = next_action(resized(job, 3), workload, flavors=FLAVORS, elastic_jobs=False)
    assert isinstance(action, SuspendJob) and action.message == NO_MATCHING_WORKLOAD


def test_a_started_elastic_jobs_pods_wait_behind_the_elastic_gate() -> None:
    workload = admit(workload_for(elastic_train()))
    job = running(elastic_train(), workload)
    gates = job["spec"]["template"]["spec"]["schedulingGates"]
    assert {"name": "kueue.x-k8s.io/elastic-job"} in gates


def test_with_the_gate_off_a_scale_down_stops_the_job_as_for_any_job() -> None:
    workload = admit(workload_for(elastic_train()))
    job = running(elastic_train(), workload)
    action = next_action(resized(job, 1), workload, flavors=FLAVORS, elastic_jobs=False)
    assert isinstance(action, SuspendJob) and action.message == NO_MATCHING_WORKLOAD


def test_a_job_that_is_not_elastic_is_stopped_when_it_scales_down() -> None:
    workload = admit(workload_for(train().build()))
    job = running(train().build(), workload)
    action = next_action(resized(job, 1), workload, flavors=FLAVORS)
    assert isinstance(action, SuspendJob) and action.message == NO_MATCHING_WORKLOAD


def test_an_admitted_elastic_job_scaled_down_before_it_starts_keeps_its_admission() -> None:
    workload = admit(workload_for(elastic_train()))
    action = next_action(resized(elastic_train(), 1), workload, flavors=FLAVORS)
    assert isinstance(action, ScaleDownWorkload)
    start = next_action(resized(elastic_train(), 1), action.workload, flavors=FLAVORS)
    assert isinstance(start, StartJob)
    assert start.job["spec"]["parallelism"] == 1, "it starts with the pods it asks for"
