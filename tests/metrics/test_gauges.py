"""Kueue's gauges read out of the engine: the values a dashboard shows for a known cluster."""

from __future__ import annotations

import math
from typing import Any

from scheduler.api.config import parse_configuration
from scheduler.core.engine import Engine
from scheduler.metrics.gauges import LocalQueueFacts, Samples, UnadmittedFacts, queue_gauges
from scheduler.metrics.options import MetricOptions
from tests.builders import (
    T0,
    cluster_queue,
    cohort,
    flavor_quotas,
    local_queue,
    model,
    resource_flavor,
    workload,
)

ALL = MetricOptions(cluster_queue_resources=True, fair_sharing=True)


def facts(*queues: tuple[str, str, str], active: str = "True", **labels: str) -> list[Any]:
    return [
        LocalQueueFacts(namespace=ns, name=name, cluster_queue=cq, labels=labels, active=active)
        for ns, name, cq in queues
    ]


def value(samples: Samples, name: str, *labels: str) -> float | None:
    wanted = (*labels, "leader")
    found = [v for key, v in samples.get(name, []) if key == wanted]
    assert len(found) <= 1, (name, labels)
    return found[0] if found else None


def labelled(samples: Samples, name: str) -> set[tuple[str, ...]]:
    return {key[:-1] for key, _ in samples.get(name, [])}


def team_engine() -> Engine:
    """Two ClusterQueues under cohort team (under root): cq-a borrows 1 CPU."""
    engine = Engine()
    for obj in (
        resource_flavor("on-demand"),
        cohort("root"),
        cohort("team").parent("root"),
        cluster_queue("cq-a")
        .cohort("team")
        .resource_group(flavor_quotas("on-demand").resource("cpu", "4", borrowing_limit="2")),
        cluster_queue("cq-b")
        .cohort("team")
        .resource_group(flavor_quotas("on-demand").resource("cpu", "4", lending_limit="2")),
        local_queue("lq-a", "ml").cluster_queue("cq-a"),
        local_queue("lq-b", "ml").cluster_queue("cq-b"),
        workload("running", "ml")
        .queue("lq-a")
        .pod_set(cpu="5")
        .reserve_quota("cq-a", flavor="on-demand")
        .admitted(),
        workload("done", "ml")
        .queue("lq-a")
        .pod_set(cpu="1")
        .reserve_quota("cq-a", flavor="on-demand")
        .admitted()
        .finished(),
        workload("too-big", "ml").queue("lq-a").pod_set(cpu="20"),
    ):
        engine.apply(model(obj))
    engine.cycle(T0)  # too-big is tried and parked as inadmissible
    engine.apply(model(workload("new", "ml").queue("lq-a").pod_set(cpu="1")))
    return engine


LQS = facts(("ml", "lq-a", "cq-a"), ("ml", "lq-b", "cq-b"))


def test_pending_workloads_are_split_active_and_inadmissible() -> None:
    samples = queue_gauges(team_engine(), LQS, ALL, "leader")
    assert value(samples, "kueue_pending_workloads", "cq-a", "active") == 1
    assert value(samples, "kueue_pending_workloads", "cq-a", "inadmissible") == 1
    assert value(samples, "kueue_pending_workloads", "cq-b", "active") == 0
    assert value(samples, "kueue_pending_workloads", "cq-b", "inadmissible") == 0
    lq = "kueue_local_queue_pending_workloads"
    assert value(samples, lq, "lq-a", "ml", "active") == 1
    assert value(samples, lq, "lq-a", "ml", "inadmissible") == 1


def test_an_inactive_cluster_queue_counts_every_pending_workload_inadmissible() -> None:
    engine = team_engine()
    engine.apply(
        model(
            cluster_queue("cq-a")
            .cohort("team")
            .stop_policy("Hold")
            .resource_group(flavor_quotas("on-demand").resource("cpu", "4", borrowing_limit="2"))
        )
    )
    samples = queue_gauges(engine, LQS, ALL, "leader")
    assert value(samples, "kueue_pending_workloads", "cq-a", "active") == 0
    assert value(samples, "kueue_pending_workloads", "cq-a", "inadmissible") == 2
    assert value(samples, "kueue_local_queue_pending_workloads", "lq-a", "ml", "active") == 0
    status = "kueue_cluster_queue_status"
    assert [value(samples, status, "cq-a", s) for s in ("pending", "active", "terminating")] == [
        1,
        0,
        0,
    ]


def test_workload_counts_and_status() -> None:
    samples = queue_gauges(team_engine(), LQS, ALL, "leader")
    assert value(samples, "kueue_reserving_active_workloads", "cq-a") == 1
    assert value(samples, "kueue_admitted_active_workloads", "cq-a") == 1
    assert value(samples, "kueue_finished_workloads", "cq-a") == 1
    assert value(samples, "kueue_local_queue_reserving_active_workloads", "lq-a", "ml") == 1
    assert value(samples, "kueue_local_queue_admitted_active_workloads", "lq-a", "ml") == 1
    assert value(samples, "kueue_local_queue_finished_workloads", "lq-a", "ml") == 1
    assert value(samples, "kueue_cluster_queue_status", "cq-a", "active") == 1
    assert value(samples, "kueue_local_queue_status", "lq-a", "ml", "True") == 1
    assert value(samples, "kueue_local_queue_status", "lq-a", "ml", "False") == 0


def test_quotas_and_usage_carry_the_cohort() -> None:
    samples = queue_gauges(team_engine(), LQS, ALL, "leader")
    a = ("team", "cq-a", "on-demand", "cpu")
    b = ("team", "cq-b", "on-demand", "cpu")
    assert value(samples, "kueue_cluster_queue_nominal_quota", *a) == 4
    assert value(samples, "kueue_cluster_queue_borrowing_limit", *a) == 2
    assert value(samples, "kueue_cluster_queue_lending_limit", *a) == math.inf
    assert value(samples, "kueue_cluster_queue_borrowing_limit", *b) == math.inf
    assert value(samples, "kueue_cluster_queue_lending_limit", *b) == 2
    assert value(samples, "kueue_cluster_queue_resource_reservation", *a) == 5
    assert value(samples, "kueue_cluster_queue_resource_usage", *a) == 5
    assert value(samples, "kueue_cluster_queue_resource_usage", *b) == 0
    assert value(samples, "kueue_cluster_queue_resource_pending", "cq-a", "cpu") == 21
    assert value(samples, "kueue_cluster_queue_resource_pending", "cq-b", "cpu") == 0
    lq = ("lq-a", "ml", "on-demand", "cpu")
    assert value(samples, "kueue_local_queue_resource_reservation", *lq) == 5
    assert value(samples, "kueue_local_queue_resource_usage", *lq) == 5


def test_cohort_tree_series() -> None:
    samples = queue_gauges(team_engine(), LQS, ALL, "leader")
    assert labelled(samples, "kueue_cluster_queue_info") == {
        ("cq-a", "team", "root"),
        ("cq-b", "team", "root"),
    }
    assert labelled(samples, "kueue_cohort_info") == {
        ("team", "root", "root"),
        ("root", "", "root"),
    }
    # cq-b lends only 2 of its 4 CPUs: team's subtree holds 4 + 2.
    assert value(samples, "kueue_cohort_subtree_quota", "team", "on-demand", "cpu") == 6
    assert value(samples, "kueue_cohort_subtree_quota", "root", "on-demand", "cpu") == 6
    reservations = "kueue_cohort_subtree_resource_reservations"
    assert value(samples, reservations, "team", "on-demand", "cpu") == 5
    assert value(samples, reservations, "root", "on-demand", "cpu") == 5
    assert value(samples, "kueue_cohort_subtree_admitted_active_workloads", "team") == 1


def fair_engine() -> Engine:
    return Engine(
        parse_configuration(
            {
                "apiVersion": "config.kueue.x-k8s.io/v1beta2",
                "kind": "Configuration",
                "fairSharing": {},
            }
        )
    )


def test_a_cluster_queue_without_cohort_has_empty_cohort_labels() -> None:
    engine = fair_engine()
    engine.apply(model(resource_flavor("default")))
    engine.apply(model(cluster_queue("alone").resource_group(flavor_quotas("default", cpu="1"))))
    samples = queue_gauges(engine, [], ALL, "leader")
    assert labelled(samples, "kueue_cluster_queue_info") == {("alone", "", "")}
    assert value(samples, "kueue_cluster_queue_nominal_quota", "", "alone", "default", "cpu") == 1
    assert value(samples, "kueue_cluster_queue_weighted_share", "alone", "") == 0


def test_weighted_share_is_the_dominant_resource_share_over_the_weight() -> None:
    """docs/scheduling.md#dominant-resource-share: 1 CPU borrowed of 10 lendable is 100."""
    engine = fair_engine()
    for obj in (
        resource_flavor("default"),
        cluster_queue("x").cohort("c").resource_group(flavor_quotas("default", cpu="2")),
        cluster_queue("y").cohort("c").resource_group(flavor_quotas("default", cpu="8")),
        cluster_queue("zero")
        .cohort("c")
        .fair_weight("0")
        .resource_group(flavor_quotas("default", cpu="0")),
        workload("w").queue("lq").pod_set(cpu="3").reserve_quota("x"),
        workload("v").queue("lq").pod_set(cpu="1").reserve_quota("zero"),
    ):
        engine.apply(model(obj))
    samples = queue_gauges(engine, [], ALL, "leader")
    assert value(samples, "kueue_cluster_queue_weighted_share", "x", "c") == 100
    assert value(samples, "kueue_cluster_queue_weighted_share", "y", "c") == 0
    assert math.isnan(value(samples, "kueue_cluster_queue_weighted_share", "zero", "c") or 0)
    assert value(samples, "kueue_cohort_weighted_share", "c") == 0


def test_no_weighted_share_while_the_scheduler_does_not_share_fairly() -> None:
    """As the status: no share without fair sharing in the scheduler (``enable: false``)."""
    engine = Engine()
    engine.apply(model(resource_flavor("default")))
    engine.apply(
        model(cluster_queue("x").cohort("c").resource_group(flavor_quotas("default", cpu="1")))
    )
    samples = queue_gauges(engine, [], ALL, "leader")
    assert value(samples, "kueue_cluster_queue_nominal_quota", "c", "x", "default", "cpu") == 1
    assert "kueue_cluster_queue_weighted_share" not in samples
    assert "kueue_cohort_weighted_share" not in samples


def test_options_leave_series_out() -> None:
    engine = team_engine()
    plain = queue_gauges(engine, LQS, MetricOptions(), "leader")
    assert "kueue_cluster_queue_nominal_quota" not in plain
    assert "kueue_cluster_queue_weighted_share" not in plain
    assert "kueue_cohort_weighted_share" not in plain
    assert "kueue_pending_workloads" in plain
    selected = MetricOptions(local_queue_selector={"matchLabels": {"metrics": "on"}})
    only = queue_gauges(
        engine,
        [*facts(("ml", "lq-a", "cq-a"), metrics="on"), *facts(("ml", "lq-b", "cq-b"))],
        selected,
        "leader",
    )
    assert labelled(only, "kueue_local_queue_status") == {
        ("lq-a", "ml", s) for s in ("True", "False", "Unknown")
    }
    none = queue_gauges(engine, LQS, MetricOptions(local_queue_metrics=False), "leader")
    assert not any(name.startswith("kueue_local_queue_") for name in none)
    no_info = queue_gauges(engine, LQS, MetricOptions(cohort_info=False), "leader")
    assert "kueue_cohort_info" not in no_info and "kueue_cluster_queue_info" not in no_info


def test_a_local_queue_of_a_missing_cluster_queue_keeps_only_its_queue_series() -> None:
    """As Kueue: pending (zero) and status stay; the cache's series go with the queue."""
    samples = queue_gauges(team_engine(), facts(("ml", "orphan", "gone"), active="False"), ALL, "x")
    names = {name for name, items in samples.items() if any(k[0] == "orphan" for k, _ in items)}
    assert names == {
        "kueue_local_queue_pending_workloads",
        "kueue_local_queue_finished_workloads",
        "kueue_local_queue_status",
    }


def test_unadmitted_workloads_by_reason_and_cause() -> None:
    workloads = [
        UnadmittedFacts("ml", "lq-a", "NoReservation", "PendingEvaluation"),
        UnadmittedFacts("ml", "lq-a", "NoReservation", "Inadmissible"),
        UnadmittedFacts("ml", "lq-a", "NoReservation", "Inadmissible"),
    ]
    samples = queue_gauges(team_engine(), LQS, MetricOptions(unadmitted=True), "leader", workloads)
    name = "kueue_unadmitted_workloads"
    assert value(samples, name, "cq-a", "NoReservation", "Inadmissible") == 2
    assert value(samples, name, "cq-a", "NoReservation", "PendingEvaluation") == 1
    lq = "kueue_local_queue_unadmitted_workloads"
    assert value(samples, lq, "lq-a", "ml", "cq-a", "NoReservation", "Inadmissible") == 2
