"""The chart's RBAC, read as data: each process gets the verbs it uses and no more.

The live proof (``kubectl auth can-i`` as each ServiceAccount) is in
``e2e/test_chart.py``; these tests pin the rules to the code they come from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from scheduler.cli.cluster_reader import CORE_RESOURCES
from scheduler.service.loop import KUEUE_PLURALS

from .helm import by_kind, render


def _rules(objects: list[dict[str, Any]], name: str) -> list[Mapping[str, Any]]:
    return [
        rule
        for obj in objects
        if obj["kind"] in ("ClusterRole", "Role") and obj["metadata"]["name"].startswith(name)
        for rule in obj["rules"]
        if "apiGroups" in rule
    ]


def _grants(rules: list[Mapping[str, Any]]) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    return render()


def test_no_wildcards_anywhere(objects: list[dict[str, Any]]) -> None:
    for obj in by_kind(objects, "ClusterRole") + by_kind(objects, "Role"):
        for rule in obj["rules"]:
            for field in ("apiGroups", "resources", "verbs", "nonResourceURLs"):
                assert "*" not in rule.get(field, ()), (obj["metadata"]["name"], rule)


METRICS_ACCESS = {
    ("authentication.k8s.io", "tokenreviews", "create"),
    ("authorization.k8s.io", "subjectaccessreviews", "create"),
}
"""scheduler/kube/access_review.py: who calls /metrics, and may they."""


def test_reading_metrics_is_the_metrics_reader_role_and_nothing_else(
    objects: list[dict[str, Any]],
) -> None:
    (reader,) = [
        obj
        for obj in by_kind(objects, "ClusterRole")
        if obj["metadata"]["name"] == "kuota-metrics-reader"
    ]
    assert reader["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    assert not [
        b
        for b in by_kind(objects, "ClusterRoleBinding")
        if b["roleRef"]["name"] == "kuota-metrics-reader"
    ], "bound only when asked"
    bound = render(
        {
            "metrics.prometheusServiceAccount.name": "prometheus-k8s",
            "metrics.prometheusServiceAccount.namespace": "monitoring",
        }
    )
    (binding,) = [
        b
        for b in by_kind(bound, "ClusterRoleBinding")
        if b["roleRef"]["name"] == "kuota-metrics-reader"
    ]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "prometheus-k8s", "namespace": "monitoring"}
    ]


def test_the_scheduler_gets_exactly_what_its_calls_need(objects: list[dict[str, Any]]) -> None:
    grants = _grants(_rules(objects, "kuota-scheduler"))
    expected = {
        ("kueue.x-k8s.io", plural, verb)
        for plural in KUEUE_PLURALS.values()
        for verb in ("list", "watch")
    }
    expected |= {
        ("kueue.x-k8s.io", "workloads", "create"),
        # Writer.update_workload / delete_workload: the Workload of a changed Job
        ("kueue.x-k8s.io", "workloads", "update"),
        ("kueue.x-k8s.io", "workloads", "delete"),
        ("kueue.x-k8s.io", "workloads/status", "patch"),
        ("kueue.x-k8s.io", "clusterqueues/status", "patch"),
        ("kueue.x-k8s.io", "cohorts/status", "patch"),
        ("kueue.x-k8s.io", "localqueues/status", "patch"),
        # scheduler/kube/checks.py: Active=False on a check whose controller kuota lacks
        ("kueue.x-k8s.io", "admissionchecks/status", "patch"),
        # scheduler/kube/finalizers.py: the resource-in-use finalizer of deleted ones
        ("kueue.x-k8s.io", "clusterqueues", "patch"),
        ("kueue.x-k8s.io", "resourceflavors", "patch"),
        ("batch", "jobs", "list"),
        ("batch", "jobs", "watch"),
        ("batch", "jobs", "patch"),
        # kube/retention.py (Writer.delete_job): the job of a Workload kuota deactivated,
        # once objectRetentionPolicies.workloads.afterDeactivatedByKueue elapsed
        ("batch", "jobs", "delete"),
        ("jobset.x-k8s.io", "jobsets", "delete"),
        # Writer.clear_job_start_time: a stopped Job's status.startTime (preemption)
        ("batch", "jobs/status", "patch"),
        # the jobset.x-k8s.io/jobset integration (watches.py, Writer.patch_job)
        ("jobset.x-k8s.io", "jobsets", "list"),
        ("jobset.x-k8s.io", "jobsets", "watch"),
        # the pod integration: managed Pods watched (watches.py), started, finalized
        # (Writer.patch_job) and stopped (Writer.stop_pod: status apply, delete)
        ("", "pods", "list"),
        ("", "pods", "watch"),
        ("", "pods", "patch"),
        ("", "pods", "delete"),
        ("", "pods/status", "patch"),
        ("jobset.x-k8s.io", "jobsets", "patch"),
        # the leaderworkerset.x-k8s.io/leaderworkerset integration: watched (watches.py);
        # its Workloads are made and its pods placed with the rights above
        ("leaderworkerset.x-k8s.io", "leaderworkersets", "list"),
        ("leaderworkerset.x-k8s.io", "leaderworkersets", "watch"),
        # the statefulset integration: its Workload is made from the StatefulSet
        ("apps", "statefulsets", "list"),
        ("apps", "statefulsets", "watch"),
        # the ray.io integrations: watched, started and stopped (watches.py, Writer.patch_job)
        ("ray.io", "rayjobs", "list"),
        ("ray.io", "rayjobs", "watch"),
        ("ray.io", "rayjobs", "patch"),
        ("ray.io", "rayclusters", "list"),
        ("ray.io", "rayclusters", "watch"),
        ("ray.io", "rayclusters", "patch"),
        ("ray.io", "rayservices", "list"),
        ("ray.io", "rayservices", "watch"),
        ("ray.io", "rayservices", "patch"),
        # the kubeflow.org/mpijob integration
        ("kubeflow.org", "mpijobs", "list"),
        ("kubeflow.org", "mpijobs", "watch"),
        ("kubeflow.org", "mpijobs", "patch"),
        # the kubeflow.org/pytorchjob and kubeflow.org/jaxjob integrations
        ("kubeflow.org", "pytorchjobs", "list"),
        ("kubeflow.org", "pytorchjobs", "watch"),
        ("kubeflow.org", "pytorchjobs", "patch"),
        ("kubeflow.org", "jaxjobs", "list"),
        ("kubeflow.org", "jaxjobs", "watch"),
        ("kubeflow.org", "jaxjobs", "patch"),
        # the workload.codeflare.dev/appwrapper integration
        ("workload.codeflare.dev", "appwrappers", "list"),
        ("workload.codeflare.dev", "appwrappers", "watch"),
        ("workload.codeflare.dev", "appwrappers", "patch"),
        # the kinds kuota does not manage: their queued objects get a NotManaged Event
        # (watches.py, scheduler/jobs/unmanaged_kinds.py)
        ("kubeflow.org", "paddlejobs", "list"),
        ("kubeflow.org", "paddlejobs", "watch"),
        ("kubeflow.org", "tfjobs", "list"),
        ("kubeflow.org", "tfjobs", "watch"),
        ("kubeflow.org", "xgboostjobs", "list"),
        ("kubeflow.org", "xgboostjobs", "watch"),
        ("trainer.kubeflow.org", "trainjobs", "list"),
        ("trainer.kubeflow.org", "trainjobs", "watch"),
        ("trainer.kubeflow.org", "trainjobs", "patch"),
        # scheduler/kube/referenced_objects.py: the runtimes a TrainJob's pod sets come from
        ("trainer.kubeflow.org", "trainingruntimes", "list"),
        ("trainer.kubeflow.org", "trainingruntimes", "watch"),
        ("trainer.kubeflow.org", "clustertrainingruntimes", "list"),
        ("trainer.kubeflow.org", "clustertrainingruntimes", "watch"),
        ("sparkoperator.k8s.io", "sparkapplications", "list"),
        ("sparkoperator.k8s.io", "sparkapplications", "watch"),
        ("", "namespaces", "list"),
        ("", "namespaces", "watch"),
        # topology-aware scheduling (watches.py, core/tas/inputs.py): Nodes, Topologies
        ("", "nodes", "list"),
        ("", "nodes", "watch"),
        ("kueue.x-k8s.io", "topologies", "list"),
        ("kueue.x-k8s.io", "topologies", "watch"),
        ("scheduling.k8s.io", "priorityclasses", "list"),
        ("scheduling.k8s.io", "priorityclasses", "watch"),
        # scheduler/kube/watches.py: what LimitRanges and RuntimeClasses add to a
        # Workload's requests (ClusterSettings.on_limit_range, .on_runtime_class)
        ("", "limitranges", "list"),
        ("", "limitranges", "watch"),
        ("node.k8s.io", "runtimeclasses", "list"),
        ("node.k8s.io", "runtimeclasses", "watch"),
        ("", "events", "create"),
        ("", "events", "patch"),  # scheduler/kube/events.py: count of a repeated Event
        ("coordination.k8s.io", "leases", "create"),
        ("coordination.k8s.io", "leases", "get"),
        ("coordination.k8s.io", "leases", "update"),
        # scheduler/kube/ownership.py: the Lease's owner is the scheduler's Deployment
        ("coordination.k8s.io", "leases", "patch"),
        ("apps", "deployments", "get"),
        *METRICS_ACCESS,
    }
    assert grants == expected


def test_the_scheduler_lease_role_is_namespaced_and_named(objects: list[dict[str, Any]]) -> None:
    (role,) = [
        r
        for r in by_kind(objects, "Role")
        if r["metadata"]["name"] == "kuota-scheduler-leader-election"
    ]
    assert role["metadata"]["namespace"] == "kueue-system"
    named = [rule for rule in role["rules"] if "get" in rule["verbs"]]
    assert named[0]["resourceNames"] == ["kuota-scheduler"]


def test_the_webhook_only_reads_single_objects(objects: list[dict[str, Any]]) -> None:
    grants = _grants(_rules(objects, "kuota-webhook"))
    assert grants == {
        ("", "namespaces", "get"),
        ("kueue.x-k8s.io", "localqueues", "get"),
        ("kueue.x-k8s.io", "workloadpriorityclasses", "get"),  # WorkloadPriorityClassDefaulting
        ("batch", "jobs", "get"),
        ("jobset.x-k8s.io", "jobsets", "get"),
        *METRICS_ACCESS,
        ("ray.io", "rayjobs", "get"),
        ("ray.io", "rayservices", "get"),
        ("kubeflow.org", "mpijobs", "get"),
        ("workload.codeflare.dev", "appwrappers", "get"),
        ("trainer.kubeflow.org", "trainjobs", "get"),
        # webhook/validate_jobs.py: a TrainJob's runtime, for the rules on its pod sets
        ("trainer.kubeflow.org", "trainingruntimes", "get"),
        ("trainer.kubeflow.org", "clustertrainingruntimes", "get"),
    }


def test_the_cert_bootstrap_touches_only_its_secret_and_kuotas_objects(
    objects: list[dict[str, Any]],
) -> None:
    rules = _rules(objects, "kuota-cert-bootstrap")
    for rule in rules:
        if set(rule["verbs"]) & {"get", "update", "patch"}:
            assert rule.get("resourceNames"), rule
    crd_names = next(
        rule["resourceNames"]
        for rule in rules
        if rule["resources"] == ["customresourcedefinitions"] and "patch" in rule["verbs"]
    )
    assert sorted(crd_names) == sorted(
        crd["metadata"]["name"] for crd in by_kind(objects, "CustomResourceDefinition")
    )
    assert not any("delete" in rule["verbs"] for rule in rules)


def test_bindings_name_the_chart_service_accounts(objects: list[dict[str, Any]]) -> None:
    accounts = {sa["metadata"]["name"] for sa in by_kind(objects, "ServiceAccount")}
    bindings = by_kind(objects, "ClusterRoleBinding") + by_kind(objects, "RoleBinding")
    for binding in bindings:
        if binding["roleRef"]["name"].endswith("-metrics-reader"):
            continue  # Prometheus' own ServiceAccount (metrics.prometheusServiceAccount)
        (subject,) = binding["subjects"]
        assert subject["name"] in accounts and subject["namespace"] == "kueue-system"


def test_multikueue_is_off_by_default_and_gets_exactly_what_its_calls_need(
    objects: list[dict[str, Any]],
) -> None:
    assert not _rules(objects, "kuota-multikueue"), "no MultiKueue RBAC unless enabled"
    enabled = render({"multikueue.enabled": True})
    grants = _grants(_rules(enabled, "kuota-multikueue"))
    expected = {
        ("kueue.x-k8s.io", plural, verb)
        for plural in ("multikueueclusters", "multikueueconfigs", "admissionchecks", "workloads")
        for verb in ("list", "watch")
    }
    expected |= {
        ("kueue.x-k8s.io", f"{plural}/status", "patch")
        for plural in ("multikueueclusters", "admissionchecks", "workloads")
    }
    dispatched = {  # every kind MultiKueue copies to workers: read it, write its copied status
        "batch": ("jobs",),
        "jobset.x-k8s.io": ("jobsets",),
        "kubeflow.org": ("mpijobs", "pytorchjobs", "jaxjobs"),
        "ray.io": ("rayjobs", "rayclusters", "rayservices"),
        "workload.codeflare.dev": ("appwrappers",),
        "trainer.kubeflow.org": ("trainjobs",),
    }
    for group, plurals in dispatched.items():
        for plural in plurals:
            expected |= {(group, plural, "get"), (group, f"{plural}/status", "patch")}
    expected |= {("", "secrets", "get")}
    expected |= {("coordination.k8s.io", "leases", verb) for verb in ("create", "get", "update")}
    expected |= {("coordination.k8s.io", "leases", "patch")}
    expected |= {("apps", "deployments", "get")}
    expected |= METRICS_ACCESS
    assert grants == expected
    (secrets,) = [
        obj
        for obj in by_kind(enabled, "Role")
        if obj["metadata"]["name"] == "kuota-multikueue-secrets"
    ]
    assert secrets["metadata"]["namespace"] == "kueue-system", "Secrets of its namespace only"
    (named,) = [
        rule for rule in secrets["rules"] if "update" in rule["verbs"] and rule.get("resourceNames")
    ]
    assert named["resources"] == ["leases"]
    assert named["resourceNames"] == ["kuota-multikueue"], "its own Lease only"
    assert not [
        rule
        for rule in secrets["rules"]
        if rule["resources"] == ["leases"]
        and set(rule["verbs"]) - {"create"}
        and not rule.get("resourceNames")
    ], "beyond create, only its own Lease"
    (owner,) = [rule for rule in secrets["rules"] if rule["resources"] == ["deployments"]]
    assert (owner["verbs"], owner["resourceNames"]) == (["get"], ["kuota-multikueue"])
    webhook = _grants(_rules(enabled, "kuota-webhook")) - _grants(_rules(objects, "kuota-webhook"))
    assert webhook == {
        ("kueue.x-k8s.io", "clusterqueues", "get"),
        ("kueue.x-k8s.io", "admissionchecks", "get"),
    }, "--multikueue-managed-by reads a queued Job's ClusterQueue and its checks"
    test_bindings_name_the_chart_service_accounts(enabled)


def test_the_dashboard_is_off_by_default_and_only_reads(objects: list[dict[str, Any]]) -> None:
    assert not _rules(objects, "kuota-dashboard")
    enabled = render({"dashboard.enabled": True})
    grants = _grants(_rules(enabled, "kuota-dashboard"))
    writes = {"create", "update", "patch", "delete", "deletecollection"}
    assert {g for g in grants if g[2] in writes} == METRICS_ACCESS, "it writes nothing"
    reads = {g for g in grants if g[2] not in writes}
    assert {("", "events", "list"), ("", "nodes", "watch"), ("batch", "jobs", "watch")} <= reads
    assert {("kueue.x-k8s.io", "workloads", verb) for verb in ("list", "watch")} <= reads
    mirrored = {
        (resource.group, resource.plural, verb)
        for resource in CORE_RESOURCES.values()
        for verb in ("list", "watch")
    }
    assert mirrored <= reads, "every kind `kuota explain` reads, the dashboard mirrors"
    assert not {g for g in reads if g[1] == "secrets"}
    test_bindings_name_the_chart_service_accounts(enabled)
