"""Admission checks in the engine: which apply, inactive queues, reservation vs admitted
usage, Retry backoff (docs/scheduling.md#admission-checks)."""

from __future__ import annotations

from datetime import timedelta

from scheduler.core.admission_checks import (
    CheckState,
    applicable_checks,
    check_rules,
    rejected_message,
    retry_eviction_message,
    retry_requeue_at,
)
from scheduler.core.decisions import Admit
from tests.builders import (
    T0,
    admission_check,
    at,
    cluster_queue,
    engine_with,
    flavor_quotas,
    local_queue,
    resource_flavor,
    workload,
)


def test_on_flavors_limits_a_check_to_the_assigned_flavors() -> None:
    rules = check_rules([("all", ()), ("spot", ("f2",))], ("f1", "f2"))
    assert applicable_checks(rules, ["f1"]) == ("all",)
    assert applicable_checks(rules, ["f2", "f1"]) == ("all", "spot")


def test_missing_and_inactive_checks_make_the_queue_inactive_with_kueues_message() -> None:
    engine = engine_with(
        resource_flavor("f1"),
        resource_flavor("f2"),
        cluster_queue("cq")
        .resource_group(flavor_quotas("f1", cpu="2"), flavor_quotas("f2", cpu="4"))
        .admission_checks("b", "a", "c"),
    )
    state = engine.view.cluster_queue_status("cq")
    assert (state.active, state.active_reason, state.active_message) == (
        False,
        "AdmissionCheckNotFound",
        "Can't admit new workloads: references missing AdmissionCheck(s): a,b,c.",
    )
    engine.apply(admission_check("a", "example.com/check").model())
    engine.apply(admission_check("b", "example.com/check").active().model())
    state = engine.view.cluster_queue_status("cq")
    assert state.active_message == (
        "Can't admit new workloads: references missing AdmissionCheck(s): c, "
        "references inactive AdmissionCheck(s): a."
    )
    engine.apply(admission_check("a", "example.com/check").active().model())
    engine.apply(admission_check("c", "example.com/check").active().model())
    assert engine.view.cluster_queue_status("cq").active_reason == "Ready"
    engine.remove("AdmissionCheck", "c")
    assert engine.view.cluster_queue_status("cq").active_reason == "AdmissionCheckNotFound"


def test_multikueue_misconfigurations() -> None:
    mk = "kueue.x-k8s.io/multikueue"
    engine = engine_with(
        resource_flavor("f1"),
        resource_flavor("f2"),
        admission_check("mk1", mk).active(),
        admission_check("mk2", mk).active(),
        admission_check("prov", "kueue.x-k8s.io/provisioning-request").active(),
        cluster_queue("cq")
        .resource_group(flavor_quotas("f1", cpu="2"), flavor_quotas("f2", cpu="4"))
        .admission_checks("mk1", {"name": "mk2", "onFlavors": ["f1"]}, "prov"),
    )
    state = engine.view.cluster_queue_status("cq")
    assert state.active_reason == "MultipleMultiKueueAdmissionChecks"
    assert state.active_message == (
        "Can't admit new workloads: Cannot use multiple MultiKueue AdmissionChecks on the same "
        "ClusterQueue, found: mk1,mk2, Cannot specify MultiKueue AdmissionCheck per flavor, "
        "found: mk2, Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks "
        "together, found: mk1,mk2, prov."
    )


def test_an_admission_lists_the_checks_that_apply_and_counts_as_reserved_only() -> None:
    engine = engine_with(
        resource_flavor("f1"),
        resource_flavor("f2"),
        admission_check("all", "example.com/check").active(),
        admission_check("spot", "example.com/check").active(),
        cluster_queue("cq")
        .resource_group(flavor_quotas("f1", cpu="2"), flavor_quotas("f2", cpu="4"))
        .admission_checks("all", {"name": "spot", "onFlavors": ["f2"]}),
        local_queue("lq").cluster_queue("cq"),
        workload("small").queue("lq").created(1).pod_set(cpu="1"),
    )
    (admit,) = [d for d in engine.cycle(T0).decisions if isinstance(d, Admit)]
    assert admit.admission_checks == ("all",)  # f1 fits: the f2-only check does not apply
    status = engine.view.cluster_queue_status("cq")
    assert (status.reserving, status.admitted) == (1, 0)
    assert str(status.usage["f1"]["cpu"]) == "1"
    assert status.admitted_usage is not None
    assert str(status.admitted_usage["f1"]["cpu"]) == "0"


def test_a_restarted_engine_keeps_a_reservation_waiting_for_checks_and_admits_nothing_twice() -> (
    None
):
    engine = engine_with(
        resource_flavor("f1"),
        resource_flavor("f2"),
        admission_check("all", "example.com/check").active(),
        cluster_queue("cq")
        .resource_group(flavor_quotas("f1", cpu="2"), flavor_quotas("f2", cpu="4"))
        .admission_checks("all"),
        local_queue("lq").cluster_queue("cq"),
        workload("w")
        .queue("lq")
        .created(1)
        .pod_set(cpu="1")
        .reserve_quota("cq", flavor="f1")
        .admission_check("all", "Pending", lastTransitionTime=at(1)),
    )
    results, _ = engine.run_until_steady(T0)
    assert not [d for r in results for d in r.decisions if isinstance(d, Admit)]
    status = engine.view.cluster_queue_status("cq")
    assert (status.reserving, status.admitted) == (1, 0)
    ready = (
        workload("w")
        .queue("lq")
        .created(1)
        .pod_set(cpu="1")
        .reserve_quota("cq", flavor="f1")
        .admission_check("all", "Ready", lastTransitionTime=at(1))
        .admitted(at=2, message="The workload is admitted")
    )
    engine.apply(ready.model())
    status = engine.view.cluster_queue_status("cq")
    assert (status.reserving, status.admitted) == (1, 1)
    assert status.admitted_usage is not None and str(status.admitted_usage["f1"]["cpu"]) == "1"


def test_a_workload_in_retry_backoff_waits_for_requeue_at() -> None:
    engine = engine_with(
        resource_flavor("f1"),
        resource_flavor("f2"),
        admission_check("all", "example.com/check").active(),
        cluster_queue("cq")
        .resource_group(flavor_quotas("f1", cpu="2"), flavor_quotas("f2", cpu="4"))
        .admission_checks("all"),
        local_queue("lq").cluster_queue("cq"),
    )
    waiting = workload("w").queue("lq").created(1).pod_set(cpu="1")
    waiting.status(requeueState={"requeueAt": at(60)})
    engine.apply(waiting.model())
    results, _ = engine.run_until_steady(T0 + timedelta(seconds=30))
    assert not [d for r in results for d in r.decisions if isinstance(d, Admit)]
    results, _ = engine.run_until_steady(T0 + timedelta(seconds=61))
    assert [d.workload for r in results for d in r.decisions if isinstance(d, Admit)] == [
        "default/w"
    ]


def test_messages_and_requeue_time_as_kueue_words_them() -> None:
    states = [
        CheckState("b", "Retry", "try later", T0, 30),
        CheckState("a", "Retry", "", T0, 90),
        CheckState("c", "Rejected", "no capacity"),
    ]
    assert retry_eviction_message(states) == (
        'Evicted due to AdmissionChecks in Retry state: "a"; "b" (try later)'
    )
    assert rejected_message(states) == 'AdmissionCheck in Rejected state: "c" (no capacity)'
    assert retry_requeue_at(states) == T0 + timedelta(seconds=90)
