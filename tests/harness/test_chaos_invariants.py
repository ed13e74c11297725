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
from tests.builders import (
    assignment,
    cluster_queue,
    condition,
    flavor_quotas,
    job,
    pod,
    workload,
)

NS = "team"
FLAVOR = "ondemand"
_rv = itertools.count(100)


T = "2026-01-01T00:00:00Z"


def listed_queue(name: str) -> cluster_queue:
    """ClusterQueue ``name`` as the checker's informer lists it, at the next resourceVersion."""
    return cluster_queue(name).namespace_selector(None).resource_version(next(_rv)).status()


def listed_workload(name: str) -> workload:
    """The Workload of Job ``name`` as the checker lists it (no spec), next resourceVersion."""
    return (
        workload(name, NS)
        .uid(f"wl-{name}")
        .created(None)
        .unset("spec")
        .resource_version(next(_rv))
        .owner("Job", name, f"job-{name}", api_version=None)
    )


def listed_job(name: str) -> job:
    """Job ``name`` as the checker lists it: only ``spec.suspend`` (true), next resourceVersion."""
    return (
        job(name, NS)
        .uid(f"job-{name}")
        .resource_version(next(_rv))
        .unset("spec.parallelism", "spec.completions", "spec.template")
        .status()
    )


def listed_pod(name: str, job_name: str) -> pod:
    """Pod ``name`` of Job ``job_name`` as the checker lists it, at the next resourceVersion."""
    return (
        pod(name, NS)
        .uid(f"pod-{name}")
        .resource_version(next(_rv))
        .owner("Job", job_name, f"job-{job_name}", api_version=None)
        .unset("spec")
    )


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
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed(),
        listed_queue("b")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed(),
    )
    for index in range(6):  # 6 x 500m = 3 cpu = nominal 2 + borrowing limit 1
        check.observe(
            WORKLOAD,
            "ADDED",
            listed_workload(f"w{index}")
            .condition("QuotaReserved", True, message="QuotaReserved", at=T)
            .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
            .listed(),
        )
    assert check.violations == []
    last = (
        listed_workload("w6")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed()
    )
    check.observe(WORKLOAD, "ADDED", last)
    assert kinds(check.violations) == ["cq-over-quota"]
    assert "uses 3500m > 3000m" in check.violations[0].detail
    assert "w6" in check.violations[0].event and "rv=" in check.violations[0].event


def test_a_cohort_over_what_its_members_lend_is_caught() -> None:
    # No borrowing limits: each queue alone is bounded only by the cohort (4 cpu).
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2"))
        .listed(),
        listed_queue("b")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", lending_limit="1"))
        .listed(),
    )
    for index in range(5):  # a: 2.5 cpu, borrows 0.5
        check.observe(
            WORKLOAD,
            "ADDED",
            listed_workload(f"a{index}")
            .condition("QuotaReserved", True, message="QuotaReserved", at=T)
            .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
            .listed(),
        )
    for index in range(3):  # b: 1.5 cpu of its 1 guaranteed + 1 lendable
        check.observe(
            WORKLOAD,
            "ADDED",
            listed_workload(f"b{index}")
            .condition("QuotaReserved", True, message="QuotaReserved", at=T)
            .admission("b", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
            .listed(),
        )
    # a borrows 2.5 beyond its 0 guaranteed, b 0.5 beyond its 1: 3 = what they lend (2 + 1)
    assert check.violations == []
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("a5")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
    )
    assert kinds(check.violations) == ["cohort-over-quota"]
    assert "pool" == check.violations[0].subject


def test_finished_and_released_workloads_free_their_quota() -> None:
    check = checker(
        listed_queue("a")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="0"))
        .listed()
    )
    for index in range(4):
        check.observe(
            WORKLOAD,
            "ADDED",
            listed_workload(f"w{index}")
            .condition("QuotaReserved", True, message="QuotaReserved", at=T)
            .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
            .listed(),
        )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("w0")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .condition("Finished", True, message="Finished", at=T)
        .listed(),
    )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("w1")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .condition("Evicted", True, message="Evicted", at=T)
        .listed(),
    )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("w1")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .condition("Evicted", True, message="Evicted", at=T)
        .listed(),
    )
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("w4")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
    )
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("w5")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
    )
    assert check.violations == []
    assert check.usage("a") == {(FLAVOR, "cpu"): 2_000_000_000}


def test_a_reported_reservation_over_the_limit_is_caught() -> None:
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed()
    )
    check.observe(
        CLUSTER_QUEUE,
        "MODIFIED",
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .flavors_reservation(FLAVOR, cpu="3")
        .listed(),
    )
    assert check.violations == []
    check.observe(
        CLUSTER_QUEUE,
        "MODIFIED",
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .flavors_reservation(FLAVOR, cpu="3100m")
        .listed(),
    )
    assert kinds(check.violations) == ["reported-over-quota"]


def test_readmission_after_an_eviction_is_fine() -> None:
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed()
    )
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("w")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .listed(),
    )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("w")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
    )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("w")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .condition("Evicted", True, message="Evicted", at=T)
        .listed(),
    )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("w")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .condition("Evicted", True, message="Evicted", at=T)
        .listed(),
    )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("w")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
    )
    assert check.violations == []
    assert check.workloads["wl-w"].admissions == 2


def test_admitted_twice_without_an_eviction_names_both_admissions() -> None:
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed()
    )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("w")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
    )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("w")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .listed(),
    )  # a stale writer wipes it
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("w")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
    )
    assert kinds(check.violations) == ["admission-lost", "admitted-twice"]
    twice = check.violations[1]
    assert "admission #2" in twice.detail and "shown by: Workload MODIFIED" in twice.detail


def test_an_eviction_missed_by_the_watch_is_still_seen_in_the_conditions() -> None:
    # A relist after 410 Gone delivers only the end state: re-admitted, Evicted now False
    # with a new transition time. That differs from the first admission: an eviction.
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed()
    )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("w")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
    )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("w")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .listed(),
    )
    readmitted = (
        listed_workload("w")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .condition("Evicted", False, message="Evicted", at="2026-01-01T00:00:07Z")
        .listed()
    )
    check.observe(WORKLOAD, "MODIFIED", readmitted)
    assert kinds(check.violations) == ["admission-lost"]


def test_a_job_unsuspended_after_its_admission_is_fine_whatever_the_delivery_order() -> None:
    for order in ((WORKLOAD, JOB), (JOB, WORKLOAD)):
        check = checker(
            listed_queue("a")
            .cohort("pool")
            .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
            .listed()
        )
        check.observe(JOB, "ADDED", listed_job("j").listed())
        check.observe(
            WORKLOAD,
            "ADDED",
            listed_workload("j")
            .condition("QuotaReserved", False, message="QuotaReserved", at=T)
            .listed(),
        )
        admitted = (
            listed_workload("j")
            .condition("QuotaReserved", True, message="QuotaReserved", at=T)
            .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
            .listed()
        )
        unsuspended = (
            listed_job("j").suspend(False).listed()
        )  # written after the admission: higher revision
        for stream in order:  # the Job event may overtake the Workload's
            if stream == JOB:
                check.observe(JOB, "MODIFIED", unsuspended)
                check.advance(JOB, unsuspended["metadata"]["resourceVersion"])
            else:
                check.observe(WORKLOAD, "MODIFIED", admitted)
                check.advance(WORKLOAD, admitted["metadata"]["resourceVersion"])
        check.observe(
            JOB,
            "MODIFIED",
            listed_job("j")
            .suspend(False)
            .status(conditions=[condition("Complete", True, message="Complete", at=T)])
            .listed(),
        )
        check.observe(
            WORKLOAD,
            "MODIFIED",
            listed_workload("j")
            .condition("QuotaReserved", True, message="QuotaReserved", at=T)
            .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
            .condition("Finished", True, message="Finished", at=T)
            .listed(),
        )
        caught_up(check)
        assert check.violations == [], order


def test_a_job_running_without_an_admitted_workload_is_caught_once_both_watches_pass() -> None:
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed()
    )
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("j")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .listed(),
    )
    running = listed_job("j").suspend(False).listed()
    check.observe(JOB, "ADDED", running)
    check.advance(JOB, running["metadata"]["resourceVersion"])
    assert check.violations == []  # the Workload watch may still deliver an admission
    caught_up(check)
    assert kinds(check.violations) == ["job-runs-unadmitted"]
    assert "suspend" in check.violations[0].event and "job-runs" in str(check.violations[0])
    check.observe(JOB, "MODIFIED", listed_job("j").suspend(False).listed())
    caught_up(check)
    assert len(check.violations) == 1, "one violation per uncovered stretch"


def test_a_wiped_admission_under_a_running_job_is_caught() -> None:
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed()
    )
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("j")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
    )
    check.observe(JOB, "ADDED", listed_job("j").suspend(False).listed())
    caught_up(check)
    assert check.violations == []
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("j")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .listed(),
    )
    caught_up(check)
    assert kinds(check.violations) == ["admission-lost", "job-runs-unadmitted"]


def test_preemption_suspends_the_job_before_the_quota_is_released() -> None:
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed()
    )
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("j")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
    )
    check.observe(JOB, "ADDED", listed_job("j").suspend(False).listed())
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("j")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .condition("Evicted", True, message="Evicted", at=T)
        .listed(),
    )
    check.observe(JOB, "MODIFIED", listed_job("j").listed())
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("j")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .condition("Evicted", True, message="Evicted", at=T)
        .listed(),
    )
    caught_up(check)
    assert check.violations == []


def test_a_preempted_jobs_pods_stop_before_its_quota_is_released() -> None:
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed()
    )
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("j")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
    )
    check.observe(JOB, "ADDED", listed_job("j").suspend(False).listed())
    check.observe(POD, "ADDED", listed_pod("j-1", "j").phase("Running").listed())
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("j")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .condition("Evicted", True, message="Evicted", at=T)
        .listed(),
    )
    check.observe(JOB, "MODIFIED", listed_job("j").listed())
    check.observe(
        POD,
        "MODIFIED",
        listed_pod("j-1", "j").deleting("2026-01-01T00:00:10Z").phase("Running").listed(),
    )
    check.observe(
        POD,
        "DELETED",
        listed_pod("j-1", "j").deleting("2026-01-01T00:00:10Z").phase("Running").listed(),
    )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("j")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .condition("Evicted", True, message="Evicted", at=T)
        .listed(),
    )
    caught_up(check)
    assert check.violations == []


def test_quota_released_while_a_pod_terminates_is_caught_whatever_the_delivery_order() -> None:
    """The chaos run's case: released while the pod was still in its grace period."""
    for order in ((WORKLOAD, POD), (POD, WORKLOAD)):
        check = checker(
            listed_queue("a")
            .cohort("pool")
            .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
            .listed()
        )
        check.observe(
            WORKLOAD,
            "ADDED",
            listed_workload("j")
            .condition("QuotaReserved", True, message="QuotaReserved", at=T)
            .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
            .listed(),
        )
        check.observe(POD, "ADDED", listed_pod("j-1", "j").phase("Running").listed())
        check.observe(
            WORKLOAD,
            "MODIFIED",
            listed_workload("j")
            .condition("QuotaReserved", True, message="QuotaReserved", at=T)
            .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
            .condition("Evicted", True, message="Evicted", at=T)
            .listed(),
        )
        terminating = (
            listed_pod("j-1", "j").deleting("2026-01-01T00:00:10Z").phase("Running").listed()
        )
        released = (
            listed_workload("j")
            .condition("QuotaReserved", False, message="QuotaReserved", at=T)
            .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
            .condition("Evicted", True, message="Evicted", at=T)
            .listed()
        )  # written while the pod still terminates
        gone = listed_pod("j-1", "j").deleting("2026-01-01T00:00:10Z").phase("Running").listed()
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
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed()
    )
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("j")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
    )
    check.observe(POD, "ADDED", listed_pod("j-1", "j").phase("Running").listed())
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("j")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .condition("Finished", True, message="Finished", at=T)
        .listed(),
    )
    check.observe(POD, "MODIFIED", listed_pod("j-1", "j").phase("Succeeded").listed())
    caught_up(check)
    assert kinds(check.violations) == ["pod-live-without-quota"]


def test_other_namespaces_and_queues_are_ignored() -> None:
    check = checker(
        listed_queue("a")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="0"))
        .listed()
    )
    stranger = (
        listed_workload("x")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .listed()
    )
    stranger["metadata"]["namespace"] = "elsewhere"
    check.observe(WORKLOAD, "ADDED", stranger)
    check.observe(
        CLUSTER_QUEUE,
        "ADDED",
        listed_queue("other")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .flavors_reservation(FLAVOR, cpu="99")
        .listed(),
    )
    caught_up(check)
    assert check.violations == [] and check.events[WORKLOAD] == 0


def test_end_state_names_incomplete_jobs_and_held_quota() -> None:
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed()
    )
    check.observe(
        JOB,
        "ADDED",
        listed_job("done")
        .status(conditions=[condition("Complete", True, message="Complete", at=T)])
        .listed(),
    )
    check.observe(JOB, "ADDED", listed_job("stuck").listed())
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("stuck")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
    )
    check.observe(
        CLUSTER_QUEUE,
        "MODIFIED",
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .flavors_reservation(FLAVOR, cpu="500m")
        .listed(),
    )
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
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed(),
        listed_queue("b")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed(),
    )
    for index in range(6):
        check.observe(
            WORKLOAD,
            "ADDED",
            listed_workload(f"w{index}")
            .condition("QuotaReserved", True, message="QuotaReserved", at=T)
            .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
            .listed(),
        )
    caught_up(check)
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("a-new")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
        relisted=True,
    )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("w5")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .condition("Evicted", True, message="Evicted", at=T)
        .listed(),
        relisted=True,
    )
    caught_up(check)
    assert check.violations == []
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("a-newer")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
        relisted=True,
    )
    assert check.violations == []  # not yet: the list is not complete
    caught_up(check)
    assert kinds(check.violations) == ["cq-over-quota"]
    assert "the list of Workloads" in check.violations[0].event


def test_a_relist_never_accuses_a_job_of_what_happened_while_the_watch_was_down() -> None:
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed()
    )
    check.observe(JOB, "ADDED", listed_job("j").listed())
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("j")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .listed(),
    )
    caught_up(check)
    # Down: admitted, Job unsuspended, then the Workload's status touched again (a later
    # revision than the Job's). The list shows only the end states.
    running = listed_job("j").suspend(False).listed()
    admitted = (
        listed_workload("j")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed()
    )
    check.observe(JOB, "MODIFIED", running, relisted=True)
    check.observe(WORKLOAD, "MODIFIED", admitted, relisted=True)
    caught_up(check)
    assert check.violations == []
    # A Job the list shows running with a Workload the list shows unadmitted is caught.
    check.observe(JOB, "ADDED", listed_job("k").listed(), relisted=False)
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("k")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .listed(),
        relisted=False,
    )
    caught_up(check)
    check.observe(JOB, "MODIFIED", listed_job("k").suspend(False).listed(), relisted=True)
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("k")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .listed(),
        relisted=True,
    )
    caught_up(check)
    assert kinds(check.violations) == ["job-runs-unadmitted"]


def test_the_time_from_an_eviction_to_its_release_is_measured() -> None:
    check = checker(
        listed_queue("a")
        .cohort("pool")
        .resource_group(flavor_quotas(FLAVOR).resource("cpu", "2", borrowing_limit="1"))
        .listed()
    )
    check.observe(
        WORKLOAD,
        "ADDED",
        listed_workload("j")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .listed(),
        at=10.0,
    )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("j")
        .condition("QuotaReserved", True, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .condition("Evicted", True, message="Evicted", at=T)
        .listed(),
        at=12.0,
    )
    check.observe(
        WORKLOAD,
        "MODIFIED",
        listed_workload("j")
        .condition("QuotaReserved", False, message="QuotaReserved", at=T)
        .admission("a", assignment({"cpu": FLAVOR}, {"cpu": "500m"}, count=None))
        .condition("Evicted", True, message="Evicted", at=T)
        .listed(),
        at=32.5,
    )
    assert check.release_waits == [20.5]
