"""Finished pods give their quota back (docs/concepts.md#reclaimable-pods): what each kind
reports and what the Job controller writes into ``status.reclaimablePods``."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.jobs import BATCH_JOB, JOBSET, ReclaimableCount, ReclaimablePods, capability
from scheduler.jobs.actions import SetReclaimablePods
from scheduler.jobs.batchjob.integration import reclaimable_count, terminal_indexes
from scheduler.jobs.controller import next_action
from scheduler.jobs.jobset.integration import reclaimable
from scheduler.jobs.propagation import reclaimable_update
from tests.builders import job, jobset
from tests.jobs.sample import FLAVORS, admit, workload_for


def running(parallelism: int, completions: int | None, **status: Any) -> dict[str, Any]:
    return job("j").parallelism(parallelism).completions(completions).status(**status).build()


@pytest.mark.parametrize(
    ("parallelism", "completions", "status", "expected"),
    [
        pytest.param(2, 4, {}, 0, id="nothing ended yet"),
        pytest.param(2, 4, {"succeeded": 1}, 0, id="3 left fill both slots"),
        pytest.param(2, 4, {"succeeded": 2}, 0, id="2 left fill both slots"),
        pytest.param(2, 4, {"succeeded": 3}, 1, id="1 left: one slot free"),
        pytest.param(2, 4, {"succeeded": 4}, 2, id="all done"),
        pytest.param(1, 4, {"succeeded": 3}, 0, id="one pod at a time: nothing to reclaim"),
        pytest.param(3, None, {"succeeded": 1}, 1, id="no completions: as many as parallelism"),
        pytest.param(3, 3, {"failed": 2}, 0, id="failed pods are retried, not terminal"),
        pytest.param(4, 2, {"succeeded": 1}, 3, id="parallelism above completions"),
    ],
)
def test_a_job_reclaims_what_no_longer_fills_a_parallel_slot(
    parallelism: int, completions: int | None, status: dict[str, Any], expected: int
) -> None:
    assert reclaimable_count(running(parallelism, completions, **status)) == expected


@pytest.mark.parametrize(
    ("completed", "failed", "completions", "expected"),
    [
        pytest.param("", "", 4, 0, id="none"),
        pytest.param("0,2-3", "", 4, 3, id="ranges"),
        pytest.param("0-1", "1-2", 4, 3, id="overlap counted once"),
        pytest.param("0-9", "", 4, 4, id="beyond completions cut"),
        pytest.param("x,1,3-2", "", 4, 1, id="malformed intervals skipped"),
    ],
)
def test_an_indexed_job_counts_completed_and_failed_indexes(
    completed: str, failed: str, completions: int, expected: int
) -> None:
    assert terminal_indexes(completed, failed, completions) == expected


def test_an_indexed_job_reclaims_by_its_terminal_indexes_not_succeeded() -> None:
    indexed = (
        job("j")
        .parallelism(2)
        .completions(4)
        .spec(completionMode="Indexed")
        .status(succeeded=1, completedIndexes="0", failedIndexes="1-2")
        .build()
    )
    assert BATCH_JOB.reclaimable_pods(indexed) == [ReclaimableCount("main", 1)]


def test_a_jobset_reclaims_the_pods_of_its_succeeded_replicas() -> None:
    built = (
        jobset("js")
        .replicated_job("workers", replicas=3, parallelism=2)
        .replicated_job("driver", replicas=1, parallelism=1)
        .replicated_job("capped", replicas=2, parallelism=4, completions=2)
        .status(
            replicatedJobsStatus=[
                {"name": "workers", "succeeded": 2},
                {"name": "driver", "succeeded": 0},
                {"name": "capped", "succeeded": 1},
            ]
        )
        .build()
    )
    assert reclaimable(built) == [ReclaimableCount("workers", 4), ReclaimableCount("capped", 2)]
    assert reclaimable(jobset("js").replicated_job("w").build()) == []


def test_batch_jobs_and_jobsets_declare_the_capability() -> None:
    assert capability(BATCH_JOB, ReclaimablePods) is not None
    assert capability(JOBSET, ReclaimablePods) is not None


def test_the_workload_gets_the_count_once_and_capped_at_its_pod_set() -> None:
    queued = job("j").uid("u").queue("q").parallelism(2).completions(2)
    workload = admit(workload_for(queued.build()))
    assert reclaimable_update(workload, [ReclaimableCount("main", 1)]) == SetReclaimablePods(
        (("main", 1),)
    )
    assert reclaimable_update(workload, [ReclaimableCount("main", 5)]) == SetReclaimablePods(
        (("main", 2),)
    ), "never more than the pod set counts"
    assert reclaimable_update(workload, [ReclaimableCount("other", 1)]) is None
    assert reclaimable_update(workload, []) is None
    workload["status"]["reclaimablePods"] = [{"name": "main", "count": 1}]
    assert reclaimable_update(workload, [ReclaimableCount("main", 1)]) is None
    assert reclaimable_update(workload, []) == SetReclaimablePods(())


def test_a_running_parallel_job_writes_its_reclaimable_pods_then_nothing() -> None:
    queued = job("j").uid("u").queue("q").parallelism(2).completions(4)
    workload = admit(workload_for(queued.build()))
    started = queued.suspend(False).status(active=1, succeeded=3).build()
    action = next_action(started, workload, flavors=FLAVORS)
    assert action == SetReclaimablePods((("main", 1),))
    workload["status"]["reclaimablePods"] = [{"name": "main", "count": 1}]
    assert next_action(started, workload, flavors=FLAVORS) is None


def test_a_finished_job_finishes_its_workload_rather_than_reclaiming() -> None:
    queued = job("j").uid("u").queue("q").parallelism(2).completions(2)
    workload = admit(workload_for(queued.build()))
    done = queued.suspend(False).status(succeeded=2).finished().build()
    assert not isinstance(next_action(done, workload, flavors=FLAVORS), SetReclaimablePods)
