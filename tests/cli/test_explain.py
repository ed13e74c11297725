"""``kuota explain`` from raw cluster dicts: the engine's reasons, in a user's words."""

from __future__ import annotations

import argparse
import io
from datetime import timedelta

from scheduler.api.config import parse_configuration
from scheduler.api.models import Taint
from scheduler.api.quantity import Quantity
from scheduler.cli.explain import explain_workload, hard_blockers, run
from scheduler.cli.explain_target import Target, find_target
from scheduler.cli.live import ClusterObjects
from scheduler.core.pending_reasons import (
    PreemptionPossibility,
    ResourceUnavailable,
    Shortage,
    UntoleratedTaint,
    pod_set_message,
)
from scheduler.jobs.workload_from_job import workload_name
from tests.cli.live_builders import T0, LiveCluster, research_pool

NOW = T0 + timedelta(minutes=5)


def full_pool() -> LiveCluster:
    """2 on-demand cpu and 2 spot cpu, all taken by a, b (on demand) and c, d (spot)."""
    cluster = research_pool()
    for name, flavor in (("a", "ondemand"), ("b", "ondemand"), ("c", "spot"), ("d", "spot")):
        cluster.job("team", name, "user-queue", admitted=("research-pool", flavor))
    return cluster


def explain(cluster: LiveCluster, target: str, namespace: str = "team") -> list[str]:
    found = find_target(cluster.objects, target, namespace)
    assert isinstance(found, Target), found
    return explain_workload(cluster.objects, found, NOW)


def test_shortages_and_blockers_are_the_structure_of_the_engine_message() -> None:
    message = (
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
        "ondemand, 3 more needed, untolerated taint {spot true NoSchedule <nil>} in flavor spot"
    )
    shortage = Shortage(
        "main", "ondemand", "cpu", Quantity.parse("3"), False, PreemptionPossibility.NO_CANDIDATES
    )
    taint = UntoleratedTaint("main", "spot", Taint(key="spot", value="true", effect="NoSchedule"))
    assert pod_set_message("main", [shortage, taint]) == message
    assert (shortage.resource, shortage.flavor, str(shortage.amount)) == ("cpu", "ondemand", "3")
    assert hard_blockers([taint]) == [
        "flavor spot has the taint {spot true NoSchedule <nil>}, which the Job does not tolerate; "
        "add a toleration to use it"
    ]
    unavailable = ResourceUnavailable("main", "example.com/gpu")
    assert pod_set_message("main", [unavailable]) == (
        "couldn't assign flavors to pod set main: resource example.com/gpu unavailable "
        "in ClusterQueue"
    )
    assert hard_blockers([unavailable]) == [
        "the ClusterQueue has no quota at all for example.com/gpu"
    ]


def test_a_waiting_job_names_the_resource_the_flavors_and_what_must_free_up() -> None:
    cluster = full_pool()
    cluster.job("team", "late", "user-queue", cpu="1")
    assert explain(cluster, "late") == [
        f"Job team/late (Workload {workload_name('late', 'uid-late')}):",
        "It is pending in LocalQueue user-queue -> ClusterQueue research-pool.",
        "Position: 1 of 1 pending in ClusterQueue research-pool (queue order: priority, then age).",
        "Why (WaitingForQuota): couldn't assign flavors to pod set main: insufficient unused "
        "quota for cpu in flavor ondemand, 1 more needed, insufficient unused quota for cpu in "
        "flavor spot, 1 more needed",
        "To be admitted, one of these has to free up:",
        "  - 1 cpu in flavor ondemand (in use: 2 of 2); held by job/a (1), job/b (1)",
        "  - 1 cpu in flavor spot (in use: 2 of 2); held by job/c (1), job/d (1)",
    ]


def test_position_follows_priority_then_age() -> None:
    cluster = full_pool()
    cluster.job("team", "old", "user-queue", created=T0 + timedelta(seconds=10))
    cluster.job("team", "new", "user-queue", created=T0 + timedelta(seconds=20))
    cluster.job("team", "urgent", "user-queue", created=T0 + timedelta(seconds=30), priority=100)
    positions = {name: explain(cluster, name)[2] for name in ("old", "new", "urgent")}
    assert positions["urgent"].startswith("Position: 1 of 3 pending")
    assert positions["old"].startswith("Position: 2 of 3 pending")
    assert positions["new"].startswith("Position: 3 of 3 pending")


def test_a_job_that_can_never_fit_says_so() -> None:
    cluster = research_pool()
    cluster.job("team", "huge", "user-queue", cpu="3")
    lines = explain(cluster, "job/huge")
    assert lines[3].startswith("Why (ExceedsMaxQuota): ")
    assert lines[4] == "Not curable by waiting:"
    assert lines[5] == (
        "  - cpu in flavor ondemand: it asks for 3 but the ClusterQueue can never have more than 2 "
        "there; only a larger quota helps"
    )


def test_an_admitted_job_says_where_and_since_when() -> None:
    cluster = full_pool()
    assert explain(cluster, "c") == [
        f"Job team/c (Workload {workload_name('c', 'uid-c')}):",
        "It is admitted in ClusterQueue research-pool since 2025-03-01T12:00:04Z (4m ago).",
        "Flavors: main[cpu=spot]",
        "Its pods are not ready yet: evicted unless they are within 30m0s, in 25m4s "
        "(waitForPodsReady, admission 1).",
    ]


PODS_READY_CONFIG = parse_configuration(
    {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "waitForPodsReady": {
            "timeout": "5m",
            "recoveryTimeout": "1m",
            "requeuingStrategy": {"backoffLimitCount": 5},
        },
    }
)


def explain_with(cluster: LiveCluster, target: str) -> list[str]:
    found = find_target(cluster.objects, target, "team")
    assert isinstance(found, Target), found
    return explain_workload(cluster.objects, found, NOW, config=PODS_READY_CONFIG)


def test_an_admitted_job_says_when_it_is_evicted_if_its_pods_are_not_ready() -> None:
    cluster = research_pool()
    workload = cluster.job("team", "slow", "user-queue", admitted=("research-pool", "spot"))
    workload["status"]["requeueState"] = {"count": 1}
    assert explain_with(cluster, "slow")[3] == (
        "Its pods are not ready yet: evicted unless they are within 5m0s, in 2s "
        "(waitForPodsReady, admission 2 of 6)."
    )
    workload["status"]["conditions"].append(
        {
            "type": "PodsReady",
            "status": "False",
            "reason": "WaitForRecovery",
            "message": "At least one pod has failed, waiting for recovery",
            "lastTransitionTime": "2025-03-01T12:04:30Z",
        }
    )
    assert explain_with(cluster, "slow")[3] == (
        "A pod stopped being ready: evicted unless its pods are ready again within 1m0s, "
        "in 30s (waitForPodsReady)."
    )
    workload["status"]["conditions"][-1].update(status="True", reason="Recovered")
    assert explain_with(cluster, "slow")[3:] == ["Its pods are ready (Recovered)."]


def test_a_job_evicted_for_its_pods_says_the_timeout_the_backoff_and_the_tries() -> None:
    cluster = research_pool()
    workload = cluster.job("team", "slow", "user-queue")
    workload["status"] = {
        "conditions": [
            {
                "type": "Evicted",
                "status": "True",
                "reason": "PodsReadyTimeout",
                "message": "Exceeded the PodsReady timeout team/x",
                "lastTransitionTime": "2025-03-01T12:04:00Z",
            },
            {
                "type": "Requeued",
                "status": "False",
                "reason": "PodsReadyTimeout",
                "message": "Exceeded the PodsReady timeout team/x",
                "lastTransitionTime": "2025-03-01T12:04:00Z",
            },
        ],
        "requeueState": {"count": 1, "requeueAt": "2025-03-01T12:06:00Z"},
    }
    assert explain_with(cluster, "slow")[1] == (
        "evicted: pods not ready within 5m0s; requeued in 1m0s, try 2 of 6"
    )


def test_an_admitted_job_with_a_time_limit_says_how_much_is_left() -> None:
    cluster = research_pool()
    workload = cluster.job("team", "capped", "user-queue", admitted=("research-pool", "spot"))
    workload["spec"]["maximumExecutionTimeSeconds"] = 600
    workload["status"]["accumulatedPastExecutionTimeSeconds"] = 60
    workload["status"]["conditions"].append(
        {
            "type": "PodsReady",
            "status": "True",
            "reason": "Started",
            "message": "",
            "lastTransitionTime": "2025-03-01T12:00:10Z",
        }
    )
    assert explain_with(cluster, "capped")[3:] == [
        "Its pods are ready (Started).",
        "Maximum execution time 600s: 4m2s left, 60s of it in earlier admissions; "
        "then it is deactivated.",
    ]


def test_a_finished_job_says_how_it_ended() -> None:
    cluster = research_pool()
    cluster.job("team", "done", "user-queue", admitted=("research-pool", "ondemand"), finished=True)
    assert (
        explain(cluster, "done")[1] == "It finished 4m ago (Succeeded): Job finished successfully"
    )


def test_an_evicted_job_says_how_many_pods_must_stop_before_its_quota_is_released() -> None:
    cluster = research_pool()
    workload = cluster.job("team", "old", "user-queue", admitted=("research-pool", "ondemand"))
    workload["status"]["conditions"].append(
        {
            "type": "Evicted",
            "status": "True",
            "reason": "Preempted",
            "message": "Preempted to accommodate a higher priority Workload",
            "lastTransitionTime": "2025-03-01T12:04:00Z",
        }
    )

    def pod(name: str, phase: str) -> dict[str, object]:
        labels = {"kueue.x-k8s.io/job-uid": "uid-old"}
        return {
            "metadata": {"name": name, "namespace": "team", "labels": labels},
            "status": {"phase": phase},
        }

    cluster.objects.pods += [
        pod("old-a", "Running"),
        pod("old-b", "Running"),
        pod("old-c", "Succeeded"),
    ]
    assert explain(cluster, "old")[1] == (
        "It is evicted (Preempted): Preempted to accommodate a higher priority Workload; "
        "waiting for 2 pods to stop before the quota is released."
    )
    cluster.objects.pods.clear()
    assert explain(cluster, "old")[1:] == [
        "It is evicted (Preempted): Preempted to accommodate a higher priority Workload",
        "Nothing of it runs any more: its quota is released next, then it queues again.",
    ]


def test_a_job_whose_local_queue_is_missing_is_not_queued() -> None:
    cluster = research_pool()
    cluster.job("team", "lost", "no-such-queue")
    assert (
        explain(cluster, "lost")[1]
        == "It is not queued (Misconfigured): LocalQueue no-such-queue doesn't exist"
    )


def test_a_job_the_scheduler_has_not_seen_yet_gets_a_prediction() -> None:
    cluster = research_pool()
    cluster.job("team", "fresh", "user-queue", with_workload=False)
    lines = explain(cluster, "fresh")
    assert (
        lines[1] == "The scheduler has not created its Workload yet; this is what it would decide."
    )
    assert lines[2] == (
        "It is pending in LocalQueue user-queue -> ClusterQueue research-pool, and it fits now "
        "(main: cpu=ondemand): the scheduler's next cycle should admit it."
    )


def test_workloads_the_engine_would_admit_first_are_marked_as_being_admitted() -> None:
    cluster = research_pool()
    cluster.job("team", "a", "user-queue", cpu="2", admitted=("research-pool", "ondemand"))
    cluster.job("team", "b", "user-queue", cpu="2")
    cluster.job("team", "c", "user-queue", cpu="1")
    lines = explain(cluster, "c")
    assert (
        lines[-1] == "  - 1 cpu in flavor spot (in use: 2 of 2); held by job/b (2, being admitted)"
    )


def test_targets_by_kind_and_name() -> None:
    cluster = full_pool()
    workload = cluster.job("team", "w", "user-queue")
    name = workload["metadata"]["name"]
    by_workload = find_target(cluster.objects, f"workload/{name}", "team")
    assert isinstance(by_workload, Target) and by_workload.job is not None
    assert by_workload.job["metadata"]["name"] == "w"
    assert isinstance(find_target(cluster.objects, name, "team"), Target)
    assert find_target(cluster.objects, "w", "elsewhere") == (
        "Job w not found in namespace elsewhere among Jobs with the kueue.x-k8s.io/queue-name "
        "label (kuota only queues Jobs that carry it)"
    )
    assert (
        find_target(cluster.objects, "workload/nope", "team")
        == "Workload nope not found in namespace team"
    )
    assert find_target(cluster.objects, "pod/w", "team") == (
        "cannot explain 'pod': name a Job (JOB or job/NAME), another kind of job "
        "(KIND/NAME, e.g. jobset/NAME, leaderworkerset/NAME) or a Workload (workload/NAME)"
    )
    assert find_target(cluster.objects, "jobset/w", "team") == (
        "JobSet w not found in namespace team among JobSets with the kueue.x-k8s.io/queue-name "
        "label (kuota only queues JobSets that carry it)"
    )


def test_run_uses_the_namespace_and_fails_clearly() -> None:
    cluster = full_pool()
    cluster.job("team", "late", "user-queue")

    def fetcher(path: str | None) -> ClusterObjects:
        return cluster.objects

    out, err = io.StringIO(), io.StringIO()
    args = argparse.Namespace(
        kubeconfig="/k", namespace="team", all_namespaces=False, target="late"
    )
    assert run(args, io.StringIO(), out, err, fetcher=fetcher) == 0
    assert "1 cpu in flavor spot" in out.getvalue()
    args = argparse.Namespace(
        kubeconfig="/k", namespace="other", all_namespaces=False, target="late"
    )
    out, err = io.StringIO(), io.StringIO()
    assert run(args, io.StringIO(), out, err, fetcher=fetcher) == 1
    assert err.getvalue().startswith("error: Job late not found in namespace other")


def test_a_job_blocked_by_a_taint_is_told_both_what_frees_up_and_what_does_not() -> None:
    cluster = full_pool()
    cluster.job("team", "strict", "user-queue", tolerate_spot=False)
    assert explain(cluster, "strict")[3:] == [
        "Why (WaitingForQuota): couldn't assign flavors to pod set main: insufficient unused quota "
        "for cpu in flavor ondemand, 1 more needed, untolerated taint {spot true NoSchedule <nil>} "
        "in flavor spot",
        "To be admitted, this has to free up:",
        "  - 1 cpu in flavor ondemand (in use: 2 of 2); held by job/a (1), job/b (1)",
        "Also:",
        "  - flavor spot has the taint {spot true NoSchedule <nil>}, which the Job does not "
        "tolerate; add a toleration to use it",
    ]


def test_a_request_above_the_maximum_with_earlier_pod_sets_is_not_curable() -> None:
    cluster = research_pool()
    cluster.job("team", "wide", "user-queue", cpu="1500m", tolerate_spot=False)
    workload = cluster.objects.workloads[-1]
    main = workload["spec"]["podSets"][0]
    workload["spec"]["podSets"] = [main, {**main, "name": "second"}]
    assert explain(cluster, "wide")[3:] == [
        "Why (ExceedsMaxQuota): couldn't assign flavors to pod set second: insufficient quota for "
        "cpu in flavor ondemand, previously considered podsets requests (1500m) + current podset "
        "request (1500m) > maximum capacity (2), untolerated taint {spot true NoSchedule <nil>} in "
        "flavor spot",
        "Not curable by waiting:",
        "  - cpu in flavor ondemand: it asks for 1500m (plus 1500m for earlier pod sets) but the "
        "ClusterQueue can never have more than 2 there; only a larger quota helps",
        "  - flavor spot has the taint {spot true NoSchedule <nil>}, which the Job does not "
        "tolerate; add a toleration to use it",
    ]


def test_a_job_waiting_for_admission_checks_names_each_check_its_state_and_message() -> None:
    cluster = research_pool()
    cluster.job("team", "gated", "user-queue", admitted=("research-pool", "ondemand"))
    workload = cluster.objects.workloads[-1]
    status = workload["status"]
    status["conditions"] = [c for c in status["conditions"] if c["type"] != "Admitted"]
    status["admissionChecks"] = [
        {"name": "prov", "state": "Retry", "message": "no capacity"},
        {"name": "approve", "state": "Pending"},
        {"name": "done", "state": "Ready"},
    ]
    lines = explain(cluster, "gated")
    assert lines[1].startswith(
        "It holds quota (waiting for its admission checks) in ClusterQueue research-pool since"
    )
    assert lines[3:] == [
        "It is waiting for admission check approve (Pending).",
        "It is waiting for admission check prov (Retry, no capacity).",
    ]


def test_a_waiting_jobset_is_explained_by_its_name_and_one_holding_quota_is_named() -> None:
    cluster = research_pool()
    for name, flavor in (("a", "ondemand"), ("b", "ondemand"), ("c", "spot")):
        cluster.job("team", name, "user-queue", admitted=("research-pool", flavor))
    cluster.job("team", "d", "user-queue", admitted=("research-pool", "spot"), kind="JobSet")
    cluster.job("team", "train", "user-queue", kind="JobSet")
    name = workload_name("train", "uid-train", kind="JobSet", group="jobset.x-k8s.io")
    expected = [
        f"JobSet team/train (Workload {name}):",
        "It is pending in LocalQueue user-queue -> ClusterQueue research-pool.",
        "Position: 1 of 1 pending in ClusterQueue research-pool (queue order: priority, then age).",
        "Why (WaitingForQuota): couldn't assign flavors to pod set workers: insufficient unused "
        "quota for cpu in flavor ondemand, 1 more needed, insufficient unused quota for cpu in "
        "flavor spot, 1 more needed",
        "To be admitted, one of these has to free up:",
        "  - 1 cpu in flavor ondemand (in use: 2 of 2); held by job/a (1), job/b (1)",
        "  - 1 cpu in flavor spot (in use: 2 of 2); held by job/c (1), jobset/d (1)",
    ]
    assert explain(cluster, "jobset/train") == expected
    assert explain(cluster, "train") == expected
    assert explain(cluster, "jobsets.jobset.x-k8s.io/train") == expected
    assert find_target(cluster.objects, "job/train", "team") == (
        "Job train not found in namespace team among Jobs with the kueue.x-k8s.io/queue-name "
        "label (kuota only queues Jobs that carry it)"
    )


def test_a_queued_jobset_without_its_workload_yet_is_counted_as_the_scheduler_would() -> None:
    cluster = full_pool()
    cluster.job("team", "fresh", "user-queue", kind="JobSet", with_workload=False)
    cluster.job("team", "late", "user-queue")
    lines = explain(cluster, "late")
    assert lines[2] == (
        "Position: 2 of 2 pending in ClusterQueue research-pool (queue order: priority, then age)."
    )
