"""The feature gates the scheduling engine reads from its Configuration: PriorityBoost,
AdmissionGatedBy and FlavorFungibilityPreserveScanProgress (docs/configuration.md)."""

from __future__ import annotations

from typing import Any

from scheduler.api.config import parse_configuration
from scheduler.core.engine import Engine
from tests.builders import (
    T0,
    cluster_queue,
    engine_with,
    flavor_quotas,
    local_queue,
    resource_flavor,
    workload,
)

BOOST = "kueue.x-k8s.io/priority-boost"
GATED = "kueue.x-k8s.io/admission-gated-by"


def with_gates(**gates: bool) -> Any:
    return parse_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "featureGates": gates,
        }
    )


def admitted(engine: Engine) -> list[str]:
    _, steady = engine.run_until_steady(T0)
    assert steady
    return [
        key
        for key in engine.view.workload_keys()
        if engine.view.workload_state(key).state == "Admitted"
    ]


def one_slot(*workloads: Any, config: Any = None) -> Engine:
    return engine_with(
        resource_flavor("f"),
        cluster_queue("cq").resource_group(flavor_quotas("f", cpu="1")),
        local_queue("lq").cluster_queue("cq"),
        *workloads,
        config=config,
    )


def test_a_priority_boost_counts_only_with_the_gate() -> None:
    older = workload("older").queue("lq").created(1).priority(10).pod_set(cpu="1")
    boosted = (
        workload("boosted")
        .queue("lq")
        .created(2)
        .priority(5)
        .annotations({BOOST: "10"})
        .pod_set(cpu="1")
    )
    assert admitted(one_slot(older, boosted)) == ["default/older"], "off by default"
    on = one_slot(older, boosted, config=with_gates(PriorityBoost=True))
    assert admitted(on) == ["default/boosted"], "5 + 10 outranks 10"


def test_an_unparsable_boost_leaves_the_base_priority() -> None:
    older = workload("older").queue("lq").created(1).priority(10).pod_set(cpu="1")
    odd = workload("odd").queue("lq").created(2).priority(5).annotations({BOOST: "x"})
    engine = one_slot(older, odd.pod_set(cpu="1"), config=with_gates(PriorityBoost=True))
    assert admitted(engine) == ["default/older"]


def test_the_admission_gated_by_annotation_holds_only_with_the_gate() -> None:
    gated = workload("gated").queue("lq").annotations({GATED: "example.com/wait"}).pod_set(cpu="1")
    assert admitted(one_slot(gated)) == [], "on by default, as in Kueue v0.19"
    assert admitted(one_slot(gated, config=with_gates(AdmissionGatedBy=False))) == ["default/gated"]


def test_the_flavor_scan_progress_follows_its_gate() -> None:
    assert Engine().options.resume_flavor_scan, "on by default, as in Kueue v0.19"
    off = Engine(with_gates(FlavorFungibilityPreserveScanProgress=False))
    assert not off.options.resume_flavor_scan
    assert not Engine(resume_flavor_scan=False).options.resume_flavor_scan, "tests choose too"
