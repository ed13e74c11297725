"""Valid fields of API objects that kuota does not act on get a warning, from the webhook and
from ``kuota validate`` alike (scheduler.api.validation.not_acted_on)."""

from __future__ import annotations

from typing import Any

from scheduler.api.pipeline import review
from tests.builders import cluster_queue, flavor_quotas, workload

MULTIKUEUE_CONFIG: dict[str, Any] = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "MultiKueueConfig",
    "metadata": {"name": "mk"},
    "spec": {"clusters": ["worker"], "quotaManagement": "Automated"},
}


def test_automated_quota_management_is_accepted_with_a_warning() -> None:
    answer = review(MULTIKUEUE_CONFIG)
    assert answer.valid
    assert answer.warnings == (
        "spec.quotaManagement: Automated: kuota does not set the manager ClusterQueue's quota "
        "from its workers (Kueue's MultiKueueManagerQuotaAutomation feature, which kuota does "
        "not have): set the quota by hand",
    )
    manual = {**MULTIKUEUE_CONFIG, "spec": {"clusters": ["worker"], "quotaManagement": "Manual"}}
    assert review(manual).warnings == ()
    unchanged = review(MULTIKUEUE_CONFIG, old=MULTIKUEUE_CONFIG, operation="UPDATE")
    assert unchanged.warnings == (), "said once, when set"


def test_preemption_gates_are_accepted_with_a_warning() -> None:
    gated = (
        workload("w")
        .queue("q")
        .pod_set(cpu="1")
        .spec(preemptionGates=[{"name": "example.com/wait"}])
        .build()
    )
    answer = review(gated)
    assert answer.valid and len(answer.warnings) == 1
    assert answer.warnings[0].startswith("spec.preemptionGates: kuota does not hold preemptions")
    assert review(workload("w").queue("q").pod_set(cpu="1").build()).warnings == ()


def test_an_invalid_object_carries_no_warning() -> None:
    broken = {**MULTIKUEUE_CONFIG, "spec": {"clusters": [], "quotaManagement": "Automated"}}
    answer = review(broken)
    assert not answer.valid and answer.warnings == ()


def test_a_concurrent_admission_policy_is_accepted_with_a_warning() -> None:
    queue = (
        cluster_queue("cq")
        .resource_group(flavor_quotas("a", cpu="1"), flavor_quotas("b", cpu="1"))
        .spec(concurrentAdmissionPolicy={"migration": {"mode": "TryPreferredFlavors"}})
        .build()
    )
    answer = review(queue)
    assert answer.valid, answer.errors
    assert len(answer.warnings) == 1
    assert answer.warnings[0].startswith("spec.concurrentAdmissionPolicy: kuota does not try")
    plain = cluster_queue("cq").resource_group(flavor_quotas("a", cpu="1")).build()
    assert review(plain).warnings == ()
