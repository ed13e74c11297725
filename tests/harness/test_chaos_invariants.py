"""The chaos watcher's invariants (e2e/chaos/invariants.py), on scripted event sequences:
each rule catches its violation with the event that showed it, and the normal life of a
Job (admitted, run, preempted, requeued, admitted again, finished) raises nothing, in
whichever order the two watches deliver it."""

from __future__ import annotations

import itertools
from typing import Any

from e2e.chaos.invariants import (
    CLUSTER_QUEUE,
    JOB,
    POD,
    WORKLOAD,
    InvariantChecker,
    Violation,
    summarize,
)

NS = "team"
FLAVOR = "ondemand"
_rv = itertools.count(100)


def cluster_queue(
    name: str,
    *,
    nominal: str = "2",
    borrowing: str | None = "1",
    lending: str | None = None,
    cohort: str | None = "pool",
    reserved: str | None = None,
) -> dict[str, Any]:
    resource: dict[str, Any] = {"name": "cpu", "nominalQuota": nominal}
    if borrowing is not None:
        resource["borrowingLimit"] = borrowing
    if lending is not None:
        resource["lendingLimit"] = lending
    spec: dict[str, Any] = {
        "resourceGroups": [
            {"coveredResources": ["cpu"], "flavors": [{"name": FLAVOR, "resources": [resource]}]}
        ]
    }
    if cohort:
        spec["cohortName"] = cohort
    status: dict[str, Any] = {}
    if reserved is not None:
        status["flavorsReservation"] = [
            {"name": FLAVOR, "resources": [{"name": "cpu", "total": reserved}]}
        ]
    return {
        "metadata": {"name": name, "resourceVersion": str(next(_rv))},
        "spec": spec,
        "status": status,
    }


def condition(kind: str, status: bool, when: str = "2026-01-01T00:00:00Z") -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True" if status else "False",
        "reason": kind,
        "lastTransitionTime": when,
        "message": kind,
    }


def workload(
    name: str,
    *,
    queue: str = "a",
    cpu: str = "500m",
    reserved: bool = False,
    evicted: bool = False,
    finished: bool = False,
    job_uid: str | None = None,
    extra: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": [condition("QuotaReserved", reserved)]}
    if reserved or evicted or finished:
        status["admission"] = {
            "clusterQueue": queue,
            "podSetAssignments": [
                {"name": "main", "flavors": {"cpu": FLAVOR}, "resourceUsage": {"cpu": cpu}}
            ],
        }
    if evicted:
        status["conditions"].append(condition("Evicted", True))
    if finished:
        status["conditions"].append(condition("Finished", True))
    status["conditions"] += extra or []
    return {
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"wl-{name}",
            "resourceVersion": str(next(_rv)),
            "ownerReferences": [{"kind": "Job", "name": name, "uid": job_uid or f"job-{name}"}],
        },
        "status": status,
    }


def job(name: str, *, suspend: bool = True, complete: bool = False) -> dict[str, Any]:
    status = {"conditions": [condition("Complete", True)]} if complete else {}
    return {
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"job-{name}",
            "resourceVersion": str(next(_rv)),
        },
        "spec": {"suspend": suspend},
        "status": status,
    }


def pod(
    name: str, job_name: str, *, phase: str = "Running", deleting: bool = False
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": NS,
        "uid": f"pod-{name}",
        "resourceVersion": str(next(_rv)),
        "ownerReferences": [{"kind": "Job", "name": job_name, "uid": f"job-{job_name}"}],
    }
    if deleting:
        metadata["deletionTimestamp"] = "2026-01-01T00:00:10Z"
    return {"metadata": metadata, "status": {"phase": phase}}


def checker(*queues: dict[str, Any]) -> InvariantChecker:
    check = InvariantChecker(NS, [q["metadata"]["name"] for q in queues])
    for queue in queues:
        check.observe(CLUSTER_QUEUE, "ADDED", queue)
    return check


def kinds(violations: list[Violation]) -> list[str]:
    return [v.kind for v in violations]


def caught_up(check: InvariantChecker) -> None:
    for stream in (WORKLOAD, JOB, POD, CLUSTER_QUEUE):
        check.advance(stream, next(_rv))


def test_usage_within_nominal_plus_borrowing_is_fine_and_one_more_is_caught() -> None:
    check = checker(cluster_queue("a"), cluster_queue("b"))
    for index in range(6):  # 6 x 500m = 3 cpu = nominal 2 + borrowing limit 1
        check.observe(WORKLOAD, "ADDED", workload(f"w{index}", reserved=True))
    assert check.violations == []
    last = workload("w6", reserved=True)
    check.observe(WORKLOAD, "ADDED", last)
    assert kinds(check.violations) == ["cq-over-quota"]
    assert "uses 3500m > 3000m" in check.violations[0].detail
    assert "w6" in check.violations[0].event and "rv=" in check.violations[0].event


def test_a_cohort_over_what_its_members_lend_is_caught() -> None:
    # No borrowing limits: each queue alone is bounded only by the cohort (4 cpu).
    check = checker(
        cluster_queue("a", borrowing=None), cluster_queue("b", borrowing=None, lending="1")
    )
    for index in range(5):  # a: 2.5 cpu, borrows 0.5
        check.observe(WORKLOAD, "ADDED", workload(f"a{index}", reserved=True))
    for index in range(3):  # b: 1.5 cpu of its 1 guaranteed + 1 lendable
        check.observe(WORKLOAD, "ADDED", workload(f"b{index}", queue="b", reserved=True))
    # a borrows 2.5 beyond its 0 guaranteed, b 0.5 beyond its 1: 3 = what they lend (2 + 1)
    assert check.violations == []
    check.observe(WORKLOAD, "ADDED", workload("a5", reserved=True))
    assert kinds(check.violations) == ["cohort-over-quota"]
    assert "pool" == check.violations[0].subject


def test_finished_and_released_workloads_free_their_quota() -> None:
    check = checker(cluster_queue("a", borrowing="0", cohort=None))
    for index in range(4):
        check.observe(WORKLOAD, "ADDED", workload(f"w{index}", reserved=True))
    check.observe(WORKLOAD, "MODIFIED", workload("w0", reserved=True, finished=True))
    check.observe(WORKLOAD, "MODIFIED", workload("w1", reserved=True, evicted=True))
    check.observe(WORKLOAD, "MODIFIED", workload("w1", evicted=True))
    check.observe(WORKLOAD, "ADDED", workload("w4", reserved=True))
    check.observe(WORKLOAD, "ADDED", workload("w5", reserved=True))
    assert check.violations == []
    assert check.usage("a") == {(FLAVOR, "cpu"): 2_000_000_000}


def test_a_reported_reservation_over_the_limit_is_caught() -> None:
    check = checker(cluster_queue("a"))
    check.observe(CLUSTER_QUEUE, "MODIFIED", cluster_queue("a", reserved="3"))
    assert check.violations == []
    check.observe(CLUSTER_QUEUE, "MODIFIED", cluster_queue("a", reserved="3100m"))
    assert kinds(check.violations) == ["reported-over-quota"]


def test_readmission_after_an_eviction_is_fine() -> None:
    check = checker(cluster_queue("a"))
    check.observe(WORKLOAD, "ADDED", workload("w"))
    check.observe(WORKLOAD, "MODIFIED", workload("w", reserved=True))
    check.observe(WORKLOAD, "MODIFIED", workload("w", reserved=True, evicted=True))
    check.observe(WORKLOAD, "MODIFIED", workload("w", evicted=True))
    check.observe(WORKLOAD, "MODIFIED", workload("w", reserved=True))
    assert check.violations == []
    assert check.workloads["wl-w"].admissions == 2


def test_admitted_twice_without_an_eviction_names_both_admissions() -> None:
    check = checker(cluster_queue("a"))
    check.observe(WORKLOAD, "MODIFIED", workload("w", reserved=True))
    check.observe(WORKLOAD, "MODIFIED", workload("w"))  # a stale writer wipes it
    check.observe(WORKLOAD, "MODIFIED", workload("w", reserved=True))
    assert kinds(check.violations) == ["admission-lost", "admitted-twice"]
    twice = check.violations[1]
    assert "admission #2" in twice.detail and "shown by: Workload MODIFIED" in twice.detail


def test_an_eviction_missed_by_the_watch_is_still_seen_in_the_conditions() -> None:
    # A relist after 410 Gone delivers only the end state: re-admitted, Evicted now False
    # with a new transition time. That differs from the first admission: an eviction.
    check = checker(cluster_queue("a"))
    check.observe(WORKLOAD, "MODIFIED", workload("w", reserved=True))
    check.observe(WORKLOAD, "MODIFIED", workload("w"))
    readmitted = workload(
        "w", reserved=True, extra=[condition("Evicted", False, "2026-01-01T00:00:07Z")]
    )
    check.observe(WORKLOAD, "MODIFIED", readmitted)
    assert kinds(check.violations) == ["admission-lost"]


def test_a_job_unsuspended_after_its_admission_is_fine_whatever_the_delivery_order() -> None:
    for order in ((WORKLOAD, JOB), (JOB, WORKLOAD)):
        check = checker(cluster_queue("a"))
        check.observe(JOB, "ADDED", job("j"))
        check.observe(WORKLOAD, "ADDED", workload("j"))
        admitted = workload("j", reserved=True)
        unsuspended = job("j", suspend=False)  # written after the admission: higher revision
        for stream in order:  # the Job event may overtake the Workload's
            if stream == JOB:
                check.observe(JOB, "MODIFIED", unsuspended)
                check.advance(JOB, unsuspended["metadata"]["resourceVersion"])
            else:
                check.observe(WORKLOAD, "MODIFIED", admitted)
                check.advance(WORKLOAD, admitted["metadata"]["resourceVersion"])
        check.observe(JOB, "MODIFIED", job("j", suspend=False, complete=True))
        check.observe(WORKLOAD, "MODIFIED", workload("j", reserved=True, finished=True))
        caught_up(check)
        assert check.violations == [], order


def test_a_job_running_without_an_admitted_workload_is_caught_once_both_watches_pass() -> None:
    check = checker(cluster_queue("a"))
    check.observe(WORKLOAD, "ADDED", workload("j"))
    running = job("j", suspend=False)
    check.observe(JOB, "ADDED", running)
    check.advance(JOB, running["metadata"]["resourceVersion"])
    assert check.violations == []  # the Workload watch may still deliver an admission
    caught_up(check)
    assert kinds(check.violations) == ["job-runs-unadmitted"]
    assert "suspend" in check.violations[0].event and "job-runs" in str(check.violations[0])
    check.observe(JOB, "MODIFIED", job("j", suspend=False))
    caught_up(check)
    assert len(check.violations) == 1, "one violation per uncovered stretch"


def test_a_wiped_admission_under_a_running_job_is_caught() -> None:
    check = checker(cluster_queue("a"))
    check.observe(WORKLOAD, "ADDED", workload("j", reserved=True))
    check.observe(JOB, "ADDED", job("j", suspend=False))
    caught_up(check)
    assert check.violations == []
    check.observe(WORKLOAD, "MODIFIED", workload("j"))
    caught_up(check)
    assert kinds(check.violations) == ["admission-lost", "job-runs-unadmitted"]


def test_preemption_suspends_the_job_before_the_quota_is_released() -> None:
    check = checker(cluster_queue("a"))
    check.observe(WORKLOAD, "ADDED", workload("j", reserved=True))
    check.observe(JOB, "ADDED", job("j", suspend=False))
    check.observe(WORKLOAD, "MODIFIED", workload("j", reserved=True, evicted=True))
    check.observe(JOB, "MODIFIED", job("j", suspend=True))
    check.observe(WORKLOAD, "MODIFIED", workload("j", evicted=True))
    caught_up(check)
    assert check.violations == []


def test_a_preempted_jobs_pods_stop_before_its_quota_is_released() -> None:
    check = checker(cluster_queue("a"))
    check.observe(WORKLOAD, "ADDED", workload("j", reserved=True))
    check.observe(JOB, "ADDED", job("j", suspend=False))
    check.observe(POD, "ADDED", pod("j-1", "j"))
    check.observe(WORKLOAD, "MODIFIED", workload("j", reserved=True, evicted=True))
    check.observe(JOB, "MODIFIED", job("j", suspend=True))
    check.observe(POD, "MODIFIED", pod("j-1", "j", deleting=True))
    check.observe(POD, "DELETED", pod("j-1", "j", deleting=True))
    check.observe(WORKLOAD, "MODIFIED", workload("j", evicted=True))
    caught_up(check)
    assert check.violations == []


def test_quota_released_while_a_pod_terminates_is_caught_whatever_the_delivery_order() -> None:
    """The chaos run's case: released while the pod was still in its grace period."""
    for order in ((WORKLOAD, POD), (POD, WORKLOAD)):
        check = checker(cluster_queue("a"))
        check.observe(WORKLOAD, "ADDED", workload("j", reserved=True))
        check.observe(POD, "ADDED", pod("j-1", "j"))
        check.observe(WORKLOAD, "MODIFIED", workload("j", reserved=True, evicted=True))
        terminating = pod("j-1", "j", deleting=True)
        released = workload("j", evicted=True)  # written while the pod still terminates
        gone = pod("j-1", "j", deleting=True)
        for stream in order:
            if stream == POD:
                check.observe(POD, "MODIFIED", terminating)
                check.observe(POD, "DELETED", gone)
                check.advance(POD, gone["metadata"]["resourceVersion"])
            else:
                check.observe(WORKLOAD, "MODIFIED", released)
                check.advance(WORKLOAD, released["metadata"]["resourceVersion"])
        caught_up(check)
        assert kinds(check.violations) == ["pod-live-without-quota"], order


def test_a_finished_workload_no_longer_covers_a_live_pod() -> None:
    check = checker(cluster_queue("a"))
    check.observe(WORKLOAD, "ADDED", workload("j", reserved=True))
    check.observe(POD, "ADDED", pod("j-1", "j"))
    check.observe(WORKLOAD, "MODIFIED", workload("j", reserved=True, finished=True))
    check.observe(POD, "MODIFIED", pod("j-1", "j", phase="Succeeded"))
    caught_up(check)
    assert kinds(check.violations) == ["pod-live-without-quota"]


def test_other_namespaces_and_queues_are_ignored() -> None:
    check = checker(cluster_queue("a", borrowing="0", cohort=None))
    stranger = workload("x", queue="other", cpu="100")
    stranger["metadata"]["namespace"] = "elsewhere"
    check.observe(WORKLOAD, "ADDED", stranger)
    check.observe(CLUSTER_QUEUE, "ADDED", cluster_queue("other", reserved="99"))
    caught_up(check)
    assert check.violations == [] and check.events[WORKLOAD] == 0


def test_end_state_names_incomplete_jobs_and_held_quota() -> None:
    check = checker(cluster_queue("a"))
    check.observe(JOB, "ADDED", job("done", complete=True))
    check.observe(JOB, "ADDED", job("stuck", suspend=True))
    check.observe(WORKLOAD, "ADDED", workload("stuck", reserved=True))
    check.observe(CLUSTER_QUEUE, "MODIFIED", cluster_queue("a", reserved="500m"))
    problems = check.end_violations(expected_jobs=2)
    assert len(problems) == 4
    assert "1 of 2 Jobs complete" in problems[0] and "team/stuck" in problems[0]
    assert "last seen: Job ADDED team/stuck" in problems[1] and "Workload ADDED" in problems[1]
    assert "still holds ondemand/cpu=500m" in problems[2]
    assert "reports ondemand/cpu=500m" in problems[3]


def test_summary_counts_by_kind_and_shows_the_events() -> None:
    violations = [
        Violation("admitted-twice", f"w{i}", "again", f"Workload rv={i}") for i in range(7)
    ]
    text = summarize(violations, limit=2)
    assert text.startswith("admitted-twice: 7")
    assert "shown by: Workload rv=0" in text and "and 5 more admitted-twice" in text


def test_a_relist_is_checked_for_quota_as_a_whole_not_object_by_object() -> None:
    # After a lost watch the list arrives in name order: a Workload admitted while the watch
    # was down ("a-new") comes before the release of the one it replaced ("w5").
    check = checker(cluster_queue("a"), cluster_queue("b"))
    for index in range(6):
        check.observe(WORKLOAD, "ADDED", workload(f"w{index}", reserved=True))
    caught_up(check)
    check.observe(WORKLOAD, "ADDED", workload("a-new", reserved=True), relisted=True)
    check.observe(WORKLOAD, "MODIFIED", workload("w5", evicted=True), relisted=True)
    caught_up(check)
    assert check.violations == []
    check.observe(WORKLOAD, "ADDED", workload("a-newer", reserved=True), relisted=True)
    assert check.violations == []  # not yet: the list is not complete
    caught_up(check)
    assert kinds(check.violations) == ["cq-over-quota"]
    assert "the list of Workloads" in check.violations[0].event


def test_a_relist_never_accuses_a_job_of_what_happened_while_the_watch_was_down() -> None:
    check = checker(cluster_queue("a"))
    check.observe(JOB, "ADDED", job("j"))
    check.observe(WORKLOAD, "ADDED", workload("j"))
    caught_up(check)
    # Down: admitted, Job unsuspended, then the Workload's status touched again (a later
    # revision than the Job's). The list shows only the end states.
    running = job("j", suspend=False)
    admitted = workload("j", reserved=True)
    check.observe(JOB, "MODIFIED", running, relisted=True)
    check.observe(WORKLOAD, "MODIFIED", admitted, relisted=True)
    caught_up(check)
    assert check.violations == []
    # A Job the list shows running with a Workload the list shows unadmitted is caught.
    check.observe(JOB, "ADDED", job("k"), relisted=False)
    check.observe(WORKLOAD, "ADDED", workload("k"), relisted=False)
    caught_up(check)
    check.observe(JOB, "MODIFIED", job("k", suspend=False), relisted=True)
    check.observe(WORKLOAD, "MODIFIED", workload("k"), relisted=True)
    caught_up(check)
    assert kinds(check.violations) == ["job-runs-unadmitted"]


def test_the_time_from_an_eviction_to_its_release_is_measured() -> None:
    check = checker(cluster_queue("a"))
    check.observe(WORKLOAD, "ADDED", workload("j", reserved=True), at=10.0)
    check.observe(WORKLOAD, "MODIFIED", workload("j", reserved=True, evicted=True), at=12.0)
    check.observe(WORKLOAD, "MODIFIED", workload("j", evicted=True), at=32.5)
    assert check.release_waits == [20.5]
