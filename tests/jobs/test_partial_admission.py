"""Partial admission of a batch/v1 Job (docs/scheduling.md#partial-admission).

Kueue's own ``sample-job-partial-admission`` (20 pods, at least 5, in
``data/``) in Kueue's single ClusterQueue of 9 CPUs: the Workload keeps the
Job's 20 pods and minimum 5, the admission records 9, the Job runs with
``parallelism: 9`` (``completions`` stays 20: the same work, fewer pods at a
time), that running form is no user edit, and an eviction puts
``parallelism: 20`` back so the Job queues again at its full size.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from scheduler.api.parse import parse_object
from scheduler.api.quantity import Quantity
from scheduler.core.decisions import Admit, Evict
from scheduler.core.engine import Engine
from scheduler.jobs.actions import ReleaseWorkload, RestoreJob, StartJob, SuspendJob
from scheduler.jobs.controller import next_action
from scheduler.jobs.start_placement import FlavorPlacement
from scheduler.status.workload_status import admitted_status, evicted_status, released_status
from tests.builders import T0, cluster_queue, flavor_quotas, local_queue, resource_flavor
from tests.jobs.sample import NOW, workload_for

SAMPLE = Path(__file__).parent / "data" / "sample-job-partial-admission.yaml"
FLAVORS = {"default-flavor": FlavorPlacement({})}


def sample() -> dict[str, Any]:
    job = yaml.safe_load(SAMPLE.read_text())
    job["metadata"]["uid"] = "uid-sample"
    return dict(job)


def admitted_by_the_engine(workload: dict[str, Any]) -> dict[str, Any]:
    """Kueue's single-clusterqueue-setup (9 CPUs, 36Gi) admits the Workload: its new status."""
    engine = Engine()
    engine.apply(resource_flavor("default-flavor").model())
    engine.apply(
        cluster_queue("cluster-queue")
        .resource_group(flavor_quotas("default-flavor", cpu="9", memory="36Gi"))
        .model()
    )
    engine.apply(local_queue("user-queue").cluster_queue("cluster-queue").model())
    engine.apply(parse_object(workload))
    decision = next(
        d for d in engine.cycle(T0).decisions if isinstance(d, Admit)
    )  # the first cycle admits it
    return {**workload, "status": admitted_status(workload, decision, NOW)}


def test_the_workload_keeps_the_jobs_full_count_and_its_minimum() -> None:
    (pod_set,) = workload_for(sample())["spec"]["podSets"]
    assert (pod_set["count"], pod_set["minCount"]) == (20, 5)


def test_the_sample_job_runs_nine_pods_at_a_time_until_twenty_complete() -> None:
    workload = admitted_by_the_engine(workload_for(sample()))
    (assignment,) = workload["status"]["admission"]["podSetAssignments"]
    assert assignment["count"] == 9
    assert Quantity.parse(assignment["resourceUsage"]["cpu"]) == Quantity.parse("9")
    assert Quantity.parse(assignment["resourceUsage"]["memory"]) == Quantity.parse("1800Mi")
    assert workload["spec"]["podSets"][0]["count"] == 20, "the Workload keeps what was asked"

    start = next_action(sample(), workload, flavors=FLAVORS)
    assert isinstance(start, StartJob)
    assert start.job["spec"]["suspend"] is False
    assert (start.job["spec"]["parallelism"], start.job["spec"]["completions"]) == (9, 20)
    running = {**start.job, "status": {"active": 9}}
    assert next_action(running, workload, flavors=FLAVORS) is None, (
        "the cut is the admission's, not a user edit"
    )


def test_an_eviction_restores_the_full_parallelism() -> None:
    workload = admitted_by_the_engine(workload_for(sample()))
    start = next_action(sample(), workload, flavors=FLAVORS)
    assert isinstance(start, StartJob)
    running = {**start.job, "status": {"active": 9, "startTime": "2026-11-22T12:00:00Z"}}
    evict = Evict(victim="default/x", preemptor="default/y", reason="InClusterQueue", message="m")
    status = evicted_status(workload, evict, NOW)
    assert status is not None
    evicted = {**workload, "status": status}

    stop = next_action(running, evicted, flavors=FLAVORS)
    assert isinstance(stop, SuspendJob)
    assert stop.job["spec"]["parallelism"] == 9, (
        "suspend first: a running partially admitted Job may not change its parallelism (JOB-U7)"
    )
    restore = next_action(stop.job, evicted, flavors=FLAVORS)
    assert isinstance(restore, RestoreJob)
    assert (restore.job["spec"]["parallelism"], restore.job["spec"]["completions"]) == (20, 20)
    idle = {**restore.job, "status": {"active": 0}}
    assert isinstance(next_action(idle, evicted, flavors=FLAVORS), ReleaseWorkload)
    pending_again = {**evicted, "status": released_status(evicted, NOW)}
    assert next_action(idle, pending_again, flavors=FLAVORS) is None, (
        "the restored Job is what its Workload describes: nothing to rebuild"
    )


def test_completions_follow_parallelism_when_the_job_asks_for_it() -> None:
    job = sample()
    job["metadata"]["annotations"]["kueue.x-k8s.io/job-completions-equal-parallelism"] = "true"
    workload = admitted_by_the_engine(workload_for(job))
    start = next_action(job, workload, flavors=FLAVORS)
    assert isinstance(start, StartJob)
    assert (start.job["spec"]["parallelism"], start.job["spec"]["completions"]) == (9, 9)
    evicted = copy.deepcopy(workload)
    evict = Evict(victim="default/x", preemptor=None, reason="InClusterQueue", message="m")
    status = evicted_status(workload, evict, NOW)
    assert status is not None
    evicted["status"] = status
    stopped = next_action({**start.job, "status": {"active": 9}}, evicted, flavors=FLAVORS)
    assert isinstance(stopped, SuspendJob)
    restore = next_action(stopped.job, evicted, flavors=FLAVORS)
    assert isinstance(restore, RestoreJob)
    assert (restore.job["spec"]["parallelism"], restore.job["spec"]["completions"]) == (20, 20)


def test_a_job_whose_reservation_went_first_is_restored_not_rebuilt_smaller() -> None:
    """A deactivated Workload loses its reservation before its Job stops (kuota's engine).

    The suspended Job still has the admission's parallelism 9: it is restored
    from the Workload (as Kueue's stopJob does), not taken for a user's edit
    that would rebuild the Workload with 9 pods.
    """
    workload = admitted_by_the_engine(workload_for(sample()))
    start = next_action(sample(), workload, flavors=FLAVORS)
    assert isinstance(start, StartJob)
    pending = {**workload, "spec": {**workload["spec"], "active": False}}
    pending["status"] = released_status(workload, NOW)
    running = {**start.job, "status": {"active": 9, "startTime": "2026-11-22T12:00:00Z"}}

    stop = next_action(running, pending, flavors=FLAVORS)
    assert isinstance(stop, SuspendJob)
    restore = next_action(stop.job, pending, flavors=FLAVORS)
    assert isinstance(restore, RestoreJob) and restore.clear_start_time
    assert (restore.job["spec"]["parallelism"], restore.job["spec"]["completions"]) == (20, 20)
    assert "kueue.x-k8s.io/podset" not in (
        restore.job["spec"]["template"].get("metadata", {}).get("labels", {})
    )
    assert next_action({**restore.job, "status": {}}, pending, flavors=FLAVORS) is None
