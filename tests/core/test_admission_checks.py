"""Admission checks in the engine (scheduling.md 3.11, 9, 10.1): which apply, inactive queues,
reservation vs admitted usage, Retry backoff."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from scheduler.api.parse import parse_object
from scheduler.core.admission_checks import (
    CheckState,
    applicable_checks,
    check_rules,
    rejected_message,
    retry_eviction_message,
    retry_requeue_at,
)
from scheduler.core.decisions import Admit
from scheduler.core.engine import Engine
from tests.core.builders import T0, at, cluster_queue, flavor, flavor_quotas, local_queue, workload


def check(name: str, controller: str = "example.com/check", *, active: bool = True) -> Any:
    raw: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "AdmissionCheck",
        "metadata": {"name": name},
        "spec": {"controllerName": controller},
    }
    if active:
        raw["status"] = {
            "conditions": [
                {
                    "type": "Active",
                    "status": "True",
                    "reason": "Active",
                    "message": "ok",
                    "lastTransitionTime": at(0),
                }
            ]
        }
    return parse_object(raw)


def checked_queue(*rules: dict[str, Any]) -> cluster_queue:
    cq = cluster_queue("cq").resource_group(
        flavor_quotas("f1", cpu="2"), flavor_quotas("f2", cpu="4")
    )
    cq.raw["spec"]["admissionChecksStrategy"] = {"admissionChecks": list(rules)}
    return cq


def engine_with(*objects: Any) -> Engine:
    engine = Engine()
    for obj in objects:
        engine.apply(obj if not hasattr(obj, "build") else obj.build())
    return engine


def test_on_flavors_limits_a_check_to_the_assigned_flavors() -> None:
    rules = check_rules([("all", ()), ("spot", ("f2",))], ("f1", "f2"))
    assert applicable_checks(rules, ["f1"]) == ("all",)
    assert applicable_checks(rules, ["f2", "f1"]) == ("all", "spot")


def test_missing_and_inactive_checks_make_the_queue_inactive_with_kueues_message() -> None:
    engine = engine_with(
        flavor("f1"), flavor("f2"), checked_queue({"name": "b"}, {"name": "a"}, {"name": "c"})
    )
    state = engine.cluster_queue_status("cq")
    assert (state.active, state.active_reason, state.active_message) == (
        False,
        "AdmissionCheckNotFound",
        "Can't admit new workloads: references missing AdmissionCheck(s): a,b,c.",
    )
    engine.apply(check("a", active=False))
    engine.apply(check("b"))
    state = engine.cluster_queue_status("cq")
    assert state.active_message == (
        "Can't admit new workloads: references missing AdmissionCheck(s): c, "
        "references inactive AdmissionCheck(s): a."
    )
    engine.apply(check("a"))
    engine.apply(check("c"))
    assert engine.cluster_queue_status("cq").active_reason == "Ready"
    engine.remove("AdmissionCheck", "c")
    assert engine.cluster_queue_status("cq").active_reason == "AdmissionCheckNotFound"


def test_multikueue_misconfigurations() -> None:
    mk = "kueue.x-k8s.io/multikueue"
    engine = engine_with(
        flavor("f1"),
        flavor("f2"),
        check("mk1", mk),
        check("mk2", mk),
        check("prov", "kueue.x-k8s.io/provisioning-request"),
        checked_queue({"name": "mk1"}, {"name": "mk2", "onFlavors": ["f1"]}, {"name": "prov"}),
    )
    state = engine.cluster_queue_status("cq")
    assert state.active_reason == "MultipleMultiKueueAdmissionChecks"
    assert state.active_message == (
        "Can't admit new workloads: Cannot use multiple MultiKueue AdmissionChecks on the same "
        "ClusterQueue, found: mk1,mk2, Cannot specify MultiKueue AdmissionCheck per flavor, "
        "found: mk2, Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks "
        "together, found: mk1,mk2, prov."
    )


def test_an_admission_lists_the_checks_that_apply_and_counts_as_reserved_only() -> None:
    engine = engine_with(
        flavor("f1"),
        flavor("f2"),
        check("all"),
        check("spot"),
        checked_queue({"name": "all"}, {"name": "spot", "onFlavors": ["f2"]}),
        local_queue("lq").cluster_queue("cq"),
        workload("small").queue("lq").created(1).pod_set(cpu="1"),
    )
    (admit,) = [d for d in engine.cycle(T0).decisions if isinstance(d, Admit)]
    assert admit.admission_checks == ("all",)  # f1 fits: the f2-only check does not apply
    status = engine.cluster_queue_status("cq")
    assert (status.reserving, status.admitted) == (1, 0)
    assert str(status.usage["f1"]["cpu"]) == "1"
    assert status.admitted_usage is not None
    assert str(status.admitted_usage["f1"]["cpu"]) == "0"


def reserved_with_checks(*states: dict[str, Any], admitted: bool = False) -> workload:
    built = workload("w").queue("lq").created(1).pod_set(cpu="1").running("cq", "f1")
    built.raw["status"]["admissionChecks"] = list(states)
    if admitted:
        built.raw["status"]["conditions"].append(
            {
                "type": "Admitted",
                "status": "True",
                "reason": "Admitted",
                "message": "The workload is admitted",
                "lastTransitionTime": at(2),
            }
        )
    return built


def test_a_restarted_engine_keeps_a_reservation_waiting_for_checks_and_admits_nothing_twice() -> (
    None
):
    pending = {"name": "all", "state": "Pending", "lastTransitionTime": at(1)}
    engine = engine_with(
        flavor("f1"),
        flavor("f2"),
        check("all"),
        checked_queue({"name": "all"}),
        local_queue("lq").cluster_queue("cq"),
        reserved_with_checks(pending),
    )
    results, _ = engine.run_until_steady(T0)
    assert not [d for r in results for d in r.decisions if isinstance(d, Admit)]
    status = engine.cluster_queue_status("cq")
    assert (status.reserving, status.admitted) == (1, 0)
    engine.apply(reserved_with_checks({**pending, "state": "Ready"}, admitted=True).build())
    status = engine.cluster_queue_status("cq")
    assert (status.reserving, status.admitted) == (1, 1)
    assert status.admitted_usage is not None and str(status.admitted_usage["f1"]["cpu"]) == "1"


def test_a_workload_in_retry_backoff_waits_for_requeue_at() -> None:
    engine = engine_with(
        flavor("f1"),
        flavor("f2"),
        check("all"),
        checked_queue({"name": "all"}),
        local_queue("lq").cluster_queue("cq"),
    )
    waiting = workload("w").queue("lq").created(1).pod_set(cpu="1")
    waiting.raw["status"] = {"requeueState": {"requeueAt": at(60)}}
    engine.apply(waiting.build())
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
