"""Every v1beta2 manifest of the seed documents parses, and what users wrote comes through."""

from __future__ import annotations

import pytest

from scheduler.api.config import Configuration
from scheduler.api.models import ClusterQueue, LocalQueue, MultiKueueCluster
from scheduler.api.parse import parse_object
from scheduler.api.quantity import Quantity
from tests.api.seed_examples import SEEDS, SeedDocument, documents, v1beta2_documents

V1BETA2 = v1beta2_documents()


def _by_name(kind: str, name: str, source_prefix: str = "") -> list[SeedDocument]:
    return [
        doc
        for doc in V1BETA2
        if doc.kind == kind
        and doc.raw["metadata"].get("name") == name
        and doc.source.startswith(source_prefix)
    ]


def test_the_helper_finds_the_examples_of_every_version() -> None:
    versions = {doc.api_version for doc in documents()}
    assert {
        "kueue.x-k8s.io/v1alpha1",
        "kueue.x-k8s.io/v1alpha2",
        "kueue.x-k8s.io/v1beta2",
    } <= versions
    written = sum(
        line.startswith(
            ("apiVersion: kueue.x-k8s.io/v1beta2", "apiVersion: config.kueue.x-k8s.io/v1beta2")
        )
        for path in SEEDS.glob("*.txt")
        for line in path.read_text(encoding="utf-8").splitlines()
    )
    assert len(V1BETA2) == written


@pytest.mark.parametrize("doc", V1BETA2, ids=lambda d: f"{d.source}:{d.line}:{d.kind}")
def test_every_v1beta2_seed_parses(doc: SeedDocument) -> None:
    model = parse_object(doc.raw)
    assert model.kind == doc.kind


def test_quotas_flavors_and_cohorts_come_through() -> None:
    (doc,) = _by_name("ClusterQueue", "team-b-cq")
    cq = parse_object(doc.raw)
    assert isinstance(cq, ClusterQueue)
    assert cq.spec.cohort_name == "team-ab"
    (group,) = cq.spec.resource_groups
    assert group.covered_resources == ("cpu", "memory")
    (flavor,) = group.flavors
    assert flavor.name == "default-flavor"
    assert [(r.name, str(r.nominal_quota)) for r in flavor.resources] == [
        ("cpu", "12"),
        ("memory", "48Gi"),
    ]
    assert cq.spec.namespace_selector is not None  # {} = every namespace


def test_two_resource_groups_with_credits() -> None:
    (doc,) = _by_name("ClusterQueue", "team-cluster-queue")
    cq = parse_object(doc.raw)
    assert isinstance(cq, ClusterQueue)
    assert [[f.name for f in g.flavors] for g in cq.spec.resource_groups] == [
        ["on-demand", "spot"],
        ["credits"],
    ]
    credits = cq.spec.resource_groups[1].flavors[0].resources[0]
    assert credits.name == "cpu_credits" and credits.nominal_quota == Quantity.parse("14")


def test_borrowing_limit_and_preemption_policies() -> None:
    with_limit = [
        d for d in _by_name("ClusterQueue", "team-a-cq") if "borrowingLimit" in str(d.raw)
    ]
    cq = parse_object(with_limit[0].raw)
    assert isinstance(cq, ClusterQueue)
    cpu = cq.spec.resource_groups[0].flavors[0].resources[0]
    assert (cpu.nominal_quota, cpu.borrowing_limit, cpu.lending_limit) == (
        Quantity.parse("9"),
        Quantity.parse("1"),
        None,
    )
    (doc,) = _by_name("ClusterQueue", "team-a-queue")
    preemptive = parse_object(doc.raw)
    assert isinstance(preemptive, ClusterQueue)
    assert preemptive.spec.preemption.reclaim_within_cohort == "Any"
    assert preemptive.spec.preemption.within_cluster_queue == "LowerPriority"
    assert preemptive.spec.preemption.borrow_within_cohort.policy == "LowerPriority"
    threshold = [
        d for d in _by_name("ClusterQueue", "team-a-cq") if "maxPriorityThreshold" in str(d.raw)
    ]
    parsed = parse_object(threshold[0].raw)
    assert isinstance(parsed, ClusterQueue)
    assert parsed.spec.preemption.borrow_within_cohort.max_priority_threshold == 100
    assert parsed.spec.resource_groups == ()


def test_local_queue_and_multikueue_and_configuration() -> None:
    (doc,) = _by_name("LocalQueue", "user-queue")
    lq = parse_object(doc.raw)
    assert isinstance(lq, LocalQueue)
    assert (lq.metadata.namespace, lq.spec.cluster_queue, lq.spec.stop_policy) == (
        "default",
        "cluster-queue",
        "None",
    )
    (doc,) = _by_name("MultiKueueCluster", "cloud-worker")
    mkc = parse_object(doc.raw)
    assert isinstance(mkc, MultiKueueCluster)
    assert mkc.spec.cluster_source is not None and mkc.spec.cluster_source.kube_config is not None
    assert mkc.spec.cluster_source.kube_config.location == "cloud-worker-secret"
    (config_doc,) = [d for d in V1BETA2 if d.kind == "Configuration"]
    config = parse_object(config_doc.raw)
    assert isinstance(config, Configuration)
    assert config.fair_sharing is not None
    assert config.fair_sharing.preemption_strategies == (
        "LessThanOrEqualToFinalShare",
        "LessThanInitialShare",
    )
