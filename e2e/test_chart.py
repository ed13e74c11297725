"""The Helm chart on the local cluster: install, least privilege, a queued Job, uninstall.

The session already runs kuota (the ``kuota`` fixture: the CRDs, the webhook
on 127.0.0.1 and its registrations named ``kuota-*``).  The chart is
installed beside it without collisions: release ``kuota-e2e`` in its own
namespace (labelled with the restricted Pod Security Standard, so the API
server itself proves the pods comply), ``crds.enabled=false`` (the fixture
owns the CRDs; the CRD toggle is checked by a server-side dry run), and
``webhook.externalURL`` pointing at the session's webhook, so the API server
never dials a Service address (docs/testing.md#the-local-cluster).  kwok makes the
Deployments' pods Ready but they run nothing; kuota's behaviour is what the
host processes do.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.cluster.tools import ToolPaths
from e2e.kuota_install import KuotaWebhook, kubectl
from scheduler.api.crds import load_crds
from tests.chart.helm import CHART, REPO_ROOT, render_text, run_helm

from .fixtures import ClusterHandle

pytestmark = pytest.mark.cluster

RELEASE = "kuota-e2e"
NAMESPACE = "kuota-chart-e2e"
JOB_NAMESPACE = (
    "kueue-system"  # excluded by the fixture's registrations: only the chart's apply there
)
VALUES_LOCAL = REPO_ROOT / "e2e" / "values-local.yaml"
SCHEDULER_SA = f"system:serviceaccount:{NAMESPACE}:{RELEASE}-scheduler"
WEBHOOK_SA = f"system:serviceaccount:{NAMESPACE}:{RELEASE}-webhook"
BOOTSTRAP_SA = f"system:serviceaccount:{NAMESPACE}:kuota-cert-bootstrap"
NOT_INSTALLABLE_HERE = {
    "cert-manager.io/v1": {"Issuer", "Certificate"},
    "monitoring.coreos.com/v1": {"ServiceMonitor"},
}


class Kube:
    def __init__(self, kubeconfig: Path) -> None:
        self.kubeconfig = kubeconfig
        self.binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")

    def __call__(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return kubectl(self.binary, self.kubeconfig, *args, stdin=stdin)

    def try_(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.binary), "--kubeconfig", str(self.kubeconfig), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def can_i(self, user: str, *args: str) -> bool:
        done = self.try_("auth", "can-i", f"--as={user}", *args)
        answer = done.stdout.strip()
        assert answer in ("yes", "no"), f"can-i {args}: {done.stdout}{done.stderr}"
        return answer == "yes"


def _external_values(webhook: KuotaWebhook) -> list[str]:
    return [
        "-f",
        str(VALUES_LOCAL),
        "--set",
        f"webhook.externalURL={webhook.base_url}",
        "--set",
        f"webhook.caBundle={webhook.ca_bundle}",
    ]


@pytest.fixture(scope="module")
def kube(cluster: ClusterHandle) -> Kube:
    return Kube(cluster.kubeconfig)


@pytest.fixture(scope="module")
def release(cluster: ClusterHandle, kuota: KuotaWebhook, kube: Kube) -> Iterator[str]:
    """``helm install`` of the chart, URL-based, into a restricted namespace;
    uninstalled at the end.
    """
    kube.try_("delete", "namespace", NAMESPACE, "--ignore-not-found", "--wait=true")
    kube("create", "namespace", NAMESPACE)
    kube(
        "label",
        "namespace",
        NAMESPACE,
        "pod-security.kubernetes.io/enforce=restricted",
        "pod-security.kubernetes.io/enforce-version=latest",
    )
    run_helm(
        "install",
        RELEASE,
        str(CHART),
        "-n",
        NAMESPACE,
        *_external_values(kuota),
        "--set",
        "crds.enabled=false",
        "--wait",
        "--timeout",
        "3m",
        kubeconfig=cluster.kubeconfig,
    )
    yield RELEASE
    run_helm(
        "uninstall", RELEASE, "-n", NAMESPACE, "--wait", check=False, kubeconfig=cluster.kubeconfig
    )
    kube.try_("delete", "namespace", NAMESPACE, "--ignore-not-found", "--wait=false")


def test_install_runs_both_deployments_under_the_restricted_standard(
    release: str, kube: Kube
) -> None:
    deployments = json.loads(kube("get", "deployments", "-n", NAMESPACE, "-o", "json").stdout)[
        "items"
    ]
    ready = {d["metadata"]["name"]: d["status"].get("readyReplicas", 0) for d in deployments}
    assert ready == {f"{RELEASE}-scheduler": 2, f"{RELEASE}-webhook": 2}
    events = kube("get", "events", "-n", NAMESPACE, "-o", "json").stdout
    assert "violates PodSecurity" not in events


def test_the_notes_tell_the_admin_how_to_start(cluster: ClusterHandle, release: str) -> None:
    notes = run_helm("get", "notes", release, "-n", NAMESPACE, kubeconfig=cluster.kubeconfig).stdout
    for needed in (
        "kind: ResourceFlavor",
        "kind: ClusterQueue",
        "kind: LocalQueue",
        "kueue.x-k8s.io/queue-name",
        "kubectl get workloads",
        f"helm uninstall {release} -n {NAMESPACE}",
    ):
        assert needed in notes, needed


def test_install_created_the_rbac_objects(release: str, kube: Kube) -> None:
    for kind, name in [
        ("clusterrole", f"{RELEASE}-scheduler"),
        ("clusterrolebinding", f"{RELEASE}-scheduler"),
        ("clusterrole", f"{RELEASE}-webhook"),
        ("clusterrolebinding", f"{RELEASE}-webhook"),
    ]:
        kube("get", kind, name)
    for kind, name in [
        ("serviceaccount", f"{RELEASE}-scheduler"),
        ("serviceaccount", f"{RELEASE}-webhook"),
        ("role", f"{RELEASE}-scheduler-leader-election"),
        ("rolebinding", f"{RELEASE}-scheduler-leader-election"),
    ]:
        kube("get", kind, name, "-n", NAMESPACE)


SCHEDULER_CAN = [
    ("list", "workloads.kueue.x-k8s.io", "-A"),
    ("watch", "clusterqueues.kueue.x-k8s.io"),
    ("watch", "localqueues.kueue.x-k8s.io", "-A"),
    ("list", "resourceflavors.kueue.x-k8s.io"),
    ("create", "workloads.kueue.x-k8s.io", "-n", "default"),
    # The Workload of a Job edited after it was built: rebuilt, or deleted with preconditions.
    ("update", "workloads.kueue.x-k8s.io", "-n", "default"),
    ("delete", "workloads.kueue.x-k8s.io", "-n", "default"),
    ("patch", "workloads.kueue.x-k8s.io", "--subresource=status", "-n", "default"),
    ("patch", "clusterqueues.kueue.x-k8s.io", "--subresource=status"),
    ("patch", "localqueues.kueue.x-k8s.io", "--subresource=status", "-n", "default"),
    ("list", "jobs.batch", "-A"),
    ("watch", "jobs.batch", "-A"),
    ("patch", "jobs.batch", "-n", "default"),
    ("patch", "jobs.batch", "--subresource=status", "-n", "default"),  # a stopped Job's startTime
    # objectRetentionPolicies: the Job of a Workload kuota deactivated (kube/retention.py)
    ("delete", "jobs.batch", "-n", "default"),
    ("watch", "namespaces"),
    ("list", "priorityclasses.scheduling.k8s.io"),
    # what a Workload is charged besides its requests (ClusterSettings.on_limit_range, ...)
    ("list", "limitranges", "-A"),
    ("watch", "runtimeclasses.node.k8s.io"),
    ("create", "events", "-n", "default"),
    ("patch", "events", "-n", "default"),  # the count of a repeated Event
    # The resource-in-use finalizer of a deleted one (no narrower grant can remove it).
    ("patch", "clusterqueues.kueue.x-k8s.io"),
    ("patch", "resourceflavors.kueue.x-k8s.io"),
    ("create", "leases.coordination.k8s.io", "-n", NAMESPACE),
    ("update", f"leases.coordination.k8s.io/{RELEASE}-scheduler", "-n", NAMESPACE),
]
SCHEDULER_CANNOT = [
    ("create", "jobs.batch", "-n", "default"),
    ("update", "jobs.batch", "-n", "default"),
    ("get", "secrets", "-n", NAMESPACE),
    ("list", "secrets", "-A"),
    ("patch", "workloads.kueue.x-k8s.io", "-n", "default"),
    ("update", "clusterqueues.kueue.x-k8s.io"),
    ("delete", "clusterqueues.kueue.x-k8s.io"),
    ("update", "resourceflavors.kueue.x-k8s.io"),
    ("patch", "localqueues.kueue.x-k8s.io", "-n", "default"),
    ("patch", "cohorts.kueue.x-k8s.io"),
    ("delete", "events", "-n", "default"),
    ("create", "pods", "-n", "default"),
    ("create", "limitranges", "-n", "default"),
    ("update", "runtimeclasses.node.k8s.io"),
    ("get", "leases.coordination.k8s.io", "-n", "kube-system"),
    ("update", "leases.coordination.k8s.io/someone-else", "-n", NAMESPACE),
    ("*", "*", "-A"),
]
WEBHOOK_CAN = [
    ("get", "namespaces"),
    ("get", "localqueues.kueue.x-k8s.io", "-n", "default"),
    ("get", "jobs.batch", "-n", "default"),
]
WEBHOOK_CANNOT = [
    ("patch", "jobs.batch", "-n", "default"),
    ("list", "jobs.batch", "-A"),
    ("watch", "namespaces"),
    ("get", "secrets", "-n", NAMESPACE),
    ("create", "events", "-n", "default"),
    ("update", "localqueues.kueue.x-k8s.io", "-n", "default"),
    ("list", "workloads.kueue.x-k8s.io", "-A"),
]


@pytest.mark.parametrize("check", SCHEDULER_CAN, ids=" ".join)
def test_the_scheduler_can_do_its_calls(release: str, kube: Kube, check: tuple[str, ...]) -> None:
    assert kube.can_i(SCHEDULER_SA, *check)


@pytest.mark.parametrize("check", SCHEDULER_CANNOT, ids=" ".join)
def test_the_scheduler_can_do_nothing_broader(
    release: str, kube: Kube, check: tuple[str, ...]
) -> None:
    assert not kube.can_i(SCHEDULER_SA, *check)


@pytest.mark.parametrize("check", WEBHOOK_CAN, ids=" ".join)
def test_the_webhook_can_do_its_lookups(release: str, kube: Kube, check: tuple[str, ...]) -> None:
    assert kube.can_i(WEBHOOK_SA, *check)


@pytest.mark.parametrize("check", WEBHOOK_CANNOT, ids=" ".join)
def test_the_webhook_can_do_nothing_broader(
    release: str, kube: Kube, check: tuple[str, ...]
) -> None:
    assert not kube.can_i(WEBHOOK_SA, *check)


def test_the_self_managed_certificate_bootstrap_is_least_privilege(
    release: str, kube: Kube
) -> None:
    """The default (self-managed) rendering's bootstrap RBAC, applied alone, then asked."""
    rendered = yaml.safe_load_all(render_text(namespace=NAMESPACE).stdout)
    rbac_kinds = {"ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}
    rbac = [
        obj
        for obj in rendered
        if obj and obj["metadata"]["name"] == "kuota-cert-bootstrap" and obj["kind"] in rbac_kinds
    ]
    assert {obj["kind"] for obj in rbac} == rbac_kinds
    manifest = yaml.safe_dump_all(rbac)
    kube("apply", "-f", "-", stdin=manifest)
    try:
        can = [
            ("create", "secrets", "-n", NAMESPACE),
            ("update", "secrets/kuota-webhook-server-cert", "-n", NAMESPACE),
            ("get", "secrets/kuota-webhook-server-cert", "-n", NAMESPACE),
            ("patch", "mutatingwebhookconfigurations/kuota-mutating-webhook-configuration"),
            ("list", "customresourcedefinitions"),
            ("patch", "customresourcedefinitions/workloads.kueue.x-k8s.io"),
        ]
        cannot = [
            ("get", "secrets/other", "-n", NAMESPACE),
            ("list", "secrets", "-n", NAMESPACE),
            ("get", "secrets", "-n", "default"),
            ("delete", "secrets/kuota-webhook-server-cert", "-n", NAMESPACE),
            ("patch", "mutatingwebhookconfigurations/someone-elses"),
            ("patch", "customresourcedefinitions/certificates.cert-manager.io"),
            ("delete", "customresourcedefinitions/workloads.kueue.x-k8s.io"),
            ("patch", "jobs.batch", "-A"),
        ]
        assert [c for c in can if not kube.can_i(BOOTSTRAP_SA, *c)] == []
        assert [c for c in cannot if kube.can_i(BOOTSTRAP_SA, *c)] == []
    finally:
        kube.try_("delete", "-f", "-", "--ignore-not-found", stdin=manifest)


def test_the_registrations_point_at_the_local_webhook(
    release: str, kube: Kube, kuota: KuotaWebhook
) -> None:
    for kind in ("mutatingwebhookconfiguration", "validatingwebhookconfiguration"):
        name = f"{RELEASE}-{kind.removesuffix('webhookconfiguration')}-webhook-configuration"
        configuration = json.loads(kube("get", kind, name, "-o", "json").stdout)
        for entry in configuration["webhooks"]:
            assert "service" not in entry["clientConfig"]
            assert entry["clientConfig"]["url"].startswith(kuota.base_url + "/")
            assert entry["clientConfig"]["caBundle"] == kuota.ca_bundle


def _queued_job(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": JOB_NAMESPACE,
            "labels": {"kueue.x-k8s.io/queue-name": "team-a"},
        },
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox"}],
                }
            }
        },
    }


def test_a_queued_job_is_suspended_through_the_charts_registration(
    release: str, kube: Kube
) -> None:
    # kueue-system is the session's kuota namespace (the scheduler fixture creates it too):
    # created if missing and left in place, so no later fixture meets it Terminating.
    kube.try_("create", "namespace", JOB_NAMESPACE)
    try:
        deadline, suspended = time.monotonic() + 60, False
        while (
            time.monotonic() < deadline and not suspended
        ):  # registrations take effect through an informer
            dry = kube(
                "create",
                "--dry-run=server",
                "-o",
                "json",
                "-f",
                "-",
                stdin=json.dumps(_queued_job("chart-probe")),
            )
            suspended = json.loads(dry.stdout)["spec"].get("suspend") is True
            time.sleep(0.0 if suspended else 0.5)
        assert suspended, "the chart's webhook registration never suspended a queued Job"
        created = json.loads(
            kube(
                "create", "-o", "json", "-f", "-", stdin=json.dumps(_queued_job("chart-job"))
            ).stdout
        )
        assert created["spec"]["suspend"] is True
    finally:
        kube.try_("delete", "job", "chart-job", "-n", JOB_NAMESPACE, "--ignore-not-found")


def test_the_crds_the_chart_ships_are_established(release: str, kube: Kube) -> None:
    names = [crd["metadata"]["name"] for crd in load_crds()]
    kube("wait", "--for=condition=Established", "--timeout=30s", *[f"crd/{name}" for name in names])


DRY_RUN_GROUP = "dryrun.kuota.test"


def _fresh(obj: dict[str, Any]) -> dict[str, Any]:
    """A cluster-scoped object under a name nobody uses, so the dry run is a create, not a merge.

    The session's own CRDs and ``kuota-*`` registrations exist already; applying
    over them would merge the fixture's fields into the chart's.  A CRD keeps
    everything but its group (its name must be ``<plural>.<group>``).
    """
    if obj["kind"] == "CustomResourceDefinition":
        obj["spec"]["group"] = DRY_RUN_GROUP
        obj["metadata"]["name"] = f"{obj['spec']['names']['plural']}.{DRY_RUN_GROUP}"
    elif obj["kind"] in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        obj["metadata"]["name"] += "-dryrun"
    return obj


def _dry_run_all(kube: Kube, text: str) -> set[str]:
    """Server-side dry-run apply of every rendered object the cluster has a kind for;
    returns the kinds skipped.
    """
    objects = [_fresh(obj) for obj in yaml.safe_load_all(text) if obj]
    skipped = {
        obj["kind"]
        for obj in objects
        if obj["kind"] in NOT_INSTALLABLE_HERE.get(obj["apiVersion"], set())
    }
    manifest = yaml.safe_dump_all([obj for obj in objects if obj["kind"] not in skipped])
    done = kube(
        "apply",
        "--server-side",
        "--dry-run=server",
        "--force-conflicts",
        "--field-manager=kuota-chart-dryrun",
        "--validate=strict",
        "-f",
        "-",
        stdin=manifest,
    )
    applied = [line for line in done.stdout.splitlines() if line.endswith("(server dry run)")]
    assert len(applied) == len(objects) - sum(1 for obj in objects if obj["kind"] in skipped), (
        done.stdout
    )
    return skipped


@pytest.mark.parametrize(
    ("values", "skipped"),
    [
        ([], set()),
        (
            ["--set", "certManager.enabled=true", "--set", "metrics.serviceMonitor.enabled=true"],
            {"Issuer", "Certificate", "ServiceMonitor"},
        ),
        (
            [
                "--set",
                "config.manageJobsWithoutQueueName=true",
                "--set",
                "config.fairSharing.enabled=true",
            ],
            set(),
        ),
        (["--set", "crds.enabled=false", "--set", "webhook.enabled=false"], set()),
        (
            [
                "--set",
                "dashboard.enabled=true",
                "--set",
                "metrics.grafanaDashboard.enabled=true",
                "--set",
                "metrics.prometheusServiceAccount.name=prometheus",
                "--set",
                "metrics.prometheusServiceAccount.namespace=monitoring",
            ],
            set(),
        ),
    ],
    ids=[
        "default",
        "cert-manager",
        "manage-and-fair-sharing",
        "crds-and-webhook-off",
        "dashboard-and-grafana",
    ],
)
def test_every_rendered_manifest_passes_a_server_side_dry_run(
    release: str, kube: Kube, values: list[str], skipped: set[str]
) -> None:
    """The API server's own OpenAPI validation (strict: unknown fields fail) of each
    rendering; nothing is stored.

    Service-referenced registrations are only dry-run here: never stored, never called.
    """
    text = run_helm("template", "kuota", str(CHART), "-n", NAMESPACE, *values).stdout
    assert _dry_run_all(kube, text) == skipped


def test_the_url_rendering_with_crds_passes_a_server_side_dry_run(
    release: str, kube: Kube, kuota: KuotaWebhook
) -> None:
    text = run_helm(
        "template", RELEASE, str(CHART), "-n", NAMESPACE, *_external_values(kuota)
    ).stdout
    assert "kind: CustomResourceDefinition" in text
    assert _dry_run_all(kube, text) == set()


def test_a_misspelled_value_fails_helm_install_with_the_schema_message(
    cluster: ClusterHandle, release: str
) -> None:
    done = run_helm(
        "install",
        "kuota-typo",
        str(CHART),
        "-n",
        NAMESPACE,
        "--set",
        "webhook.replcas=3",
        check=False,
        kubeconfig=cluster.kubeconfig,
    )
    assert done.returncode != 0
    assert "additional properties 'replcas' not allowed" in done.stderr
    listed = run_helm("list", "-n", NAMESPACE, "-q", kubeconfig=cluster.kubeconfig).stdout.split()
    assert "kuota-typo" not in listed


def test_uninstall_removes_the_release_and_leaves_the_crds(
    cluster: ClusterHandle, release: str, kube: Kube
) -> None:
    run_helm("uninstall", release, "-n", NAMESPACE, "--wait", kubeconfig=cluster.kubeconfig)
    assert (
        kube.try_(
            "get", "mutatingwebhookconfiguration", f"{RELEASE}-mutating-webhook-configuration"
        ).returncode
        != 0
    )
    assert kube.try_("get", "clusterrole", f"{RELEASE}-scheduler").returncode != 0
    assert kube.try_("get", "deployment", f"{RELEASE}-scheduler", "-n", NAMESPACE).returncode != 0
    names = [crd["metadata"]["name"] for crd in load_crds()]
    kube("wait", "--for=condition=Established", "--timeout=30s", *[f"crd/{name}" for name in names])
