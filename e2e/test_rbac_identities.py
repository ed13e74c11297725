"""The harness runs kuota's processes as their ServiceAccounts, bound by the chart's RBAC only.

Without this, an API call the chart does not grant passes every e2e test (a
process in ``system:masters`` may do anything) and fails in a real cluster.
Each process's kubeconfig is asked who it is (``kubectl auth whoami``) and
tried against something the chart does not grant; the running processes are
checked to use exactly these kubeconfigs.  The certificate bootstrap, which
the session does not otherwise run, is run once here with its own identity.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from certs import files as cert_files
from certs.generate import KeyPair

from .cluster.processes import clean_env
from .cluster.tools import ToolPaths
from .fixtures import ClusterHandle
from .kuota_install import (
    BOOTSTRAP_ACCOUNT,
    KUOTA_NAMESPACE,
    REPO_ROOT,
    SCHEDULER_ACCOUNT,
    WEBHOOK_ACCOUNT,
    KuotaWebhook,
    apply_objects,
    cluster_access,
    render_chart,
    service_account_kubeconfig,
    service_account_user,
    wait_can_i,
)
from .kuota_scheduler import SchedulerFleet

pytestmark = pytest.mark.cluster
SERVICE_ACCOUNT_GROUPS = {
    "system:serviceaccounts",
    f"system:serviceaccounts:{KUOTA_NAMESPACE}",
    "system:authenticated",
}
BOOTSTRAP_SECRET = "kuota-webhook-server-cert"


def kubectl_as(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    return subprocess.run(
        [str(binary), "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def whoami(kubeconfig: Path) -> dict[str, Any]:
    done = kubectl_as(kubeconfig, "auth", "whoami", "-o", "json")
    assert done.returncode == 0, done.stderr
    user: dict[str, Any] = json.loads(done.stdout)["status"]["userInfo"]
    return user


def can_i(kubeconfig: Path, *check: str) -> bool:
    answer = kubectl_as(kubeconfig, "auth", "can-i", *check).stdout.strip()
    assert answer in ("yes", "no"), answer
    return answer == "yes"


def allowed(kubeconfig: Path, verb: str, group: str, resource: str) -> bool:
    """A SelfSubjectAccessReview, which (unlike ``auth can-i``) needs no served resource."""
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": verb, "group": group, "resource": resource}},
    }
    done = subprocess.run(
        [
            str(ToolPaths.resolve(build_if_missing=False).binary("kubectl")),
            "--kubeconfig",
            str(kubeconfig),
            "create",
            "--validate=false",
            "-f",
            "-",
            "-o",
            "json",
        ],
        input=json.dumps(review),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return bool(json.loads(done.stdout)["status"].get("allowed"))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def kubeconfig_argument(pid: int) -> Path:
    argv = command_line(pid)
    return Path(argv[argv.index("--kubeconfig") + 1])


def test_the_scheduler_runs_as_its_service_account_and_no_more(
    scheduler_fleet: SchedulerFleet,
) -> None:
    for replica in scheduler_fleet.alive():
        assert kubeconfig_argument(replica.record.pid) == scheduler_fleet.kubeconfig
    identity = scheduler_fleet.kubeconfig
    user = whoami(identity)
    assert user["username"] == service_account_user(SCHEDULER_ACCOUNT)
    assert set(user["groups"]) == SERVICE_ACCOUNT_GROUPS, "no system:masters"

    refused = kubectl_as(identity, "get", "secrets", "-n", KUOTA_NAMESPACE)
    assert refused.returncode != 0 and "Forbidden" in refused.stderr, refused
    assert can_i(identity, "patch", "jobs", "--subresource=status", "-A")
    assert can_i(identity, "patch", "events", "-A")
    assert can_i(identity, "patch", "clusterqueues.kueue.x-k8s.io")
    assert not can_i(identity, "delete", "clusterqueues.kueue.x-k8s.io")
    assert not can_i(identity, "patch", "workloads.kueue.x-k8s.io", "-A")
    # the Workload of a Job edited after it was built is replaced or deleted
    assert can_i(identity, "update", "workloads.kueue.x-k8s.io", "-A")
    assert can_i(identity, "delete", "workloads.kueue.x-k8s.io", "-A")
    # an AdmissionCheck whose controller kuota does not run is marked inactive
    assert can_i(identity, "patch", "admissionchecks.kueue.x-k8s.io", "--subresource=status")
    assert not can_i(identity, "patch", "admissionchecks.kueue.x-k8s.io")
    # a Job (a JobSet) is deleted only under objectRetentionPolicies, when the Workload
    # kuota deactivated has been kept long enough (scheduler/kube/retention.py)
    assert can_i(identity, "delete", "jobs", "-A")
    assert not can_i(identity, "create", "jobs", "-A")
    assert not can_i(identity, "update", "jobs", "-A")
    # JobSets are started, stopped and restored like Jobs
    # (the JobSet CRD may not be installed: asked without resource discovery)
    for verb in ("list", "watch", "patch", "delete"):
        assert allowed(identity, verb, "jobset.x-k8s.io", "jobsets"), verb
    assert not allowed(identity, "create", "jobset.x-k8s.io", "jobsets")
    # what a Workload is charged besides its requests: read, never written
    for group, resource in (("", "limitranges"), ("node.k8s.io", "runtimeclasses")):
        for verb in ("list", "watch"):
            assert allowed(identity, verb, group, resource), (verb, resource)
        assert not allowed(identity, "create", group, resource), resource
    # plain Pods: watched, started (gate off), stopped by deletion; never created
    for verb in ("list", "watch", "patch", "delete"):
        assert can_i(identity, verb, "pods", "-A"), verb
    assert can_i(identity, "patch", "pods", "--subresource=status", "-A")
    assert not can_i(identity, "create", "pods", "-A")
    assert not can_i(identity, "update", "pods", "-A")


def test_the_webhook_looks_up_as_its_service_account_and_no_more(kuota: KuotaWebhook) -> None:
    assert kubeconfig_argument(kuota.record.pid) == kuota.kubeconfig
    user = whoami(kuota.kubeconfig)
    assert user["username"] == service_account_user(WEBHOOK_ACCOUNT)
    assert set(user["groups"]) == SERVICE_ACCOUNT_GROUPS

    assert kubectl_as(kuota.kubeconfig, "get", "namespace", "default").returncode == 0
    refused = kubectl_as(kuota.kubeconfig, "get", "namespaces")
    assert refused.returncode != 0 and "Forbidden" in refused.stderr, "get one, never list"
    assert not can_i(kuota.kubeconfig, "get", "secrets", "-n", KUOTA_NAMESPACE)


def test_the_certificate_bootstrap_runs_with_its_own_identity(
    cluster: ClusterHandle, kuota: KuotaWebhook
) -> None:
    """``python -m certs bootstrap`` once, as ``kuota-cert-bootstrap`` with the chart's RBAC.

    Its Secret is seeded with the session webhook's CA and a serving
    certificate that expires tomorrow, so it issues a new one from that CA,
    replaces the Secret, reads both webhook configurations and lists the
    CRDs, and finds the CA bundle already in place (the session's webhook
    keeps working).
    """
    assert cluster.workdir is not None
    kubectl_binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    rbac = render_chart("templates/serviceaccounts.yaml", "templates/rbac-cert-bootstrap.yaml")
    rbac = [obj for obj in rbac if obj["metadata"]["name"] == BOOTSTRAP_ACCOUNT]
    session_ca = KeyPair.load(
        kuota.cert_dir / cert_files.CA_CERT, kuota.cert_dir / cert_files.CA_KEY
    )
    expiring = cert_files.make(
        dns_names=["localhost"], ip_addresses=["127.0.0.1"], ca=session_ca, valid_days=1
    )
    seed: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": BOOTSTRAP_SECRET, "namespace": KUOTA_NAMESPACE},
        "type": "kubernetes.io/tls",
        "data": {
            cert_files.CA_CERT: b64(session_ca.cert_pem),
            cert_files.CA_KEY: b64(session_ca.key_pem),
            cert_files.TLS_CERT: b64(expiring.serving.cert_pem),
            cert_files.TLS_KEY: b64(expiring.serving.key_pem),
        },
    }
    apply_objects(kubectl_binary, cluster.kubeconfig, [*rbac, seed])
    try:
        user = service_account_user(BOOTSTRAP_ACCOUNT)
        wait_can_i(kubectl_binary, cluster.kubeconfig, user, "list", "customresourcedefinitions")
        pki, server = cluster_access(cluster.kubeconfig, cluster.workdir)
        identity = service_account_kubeconfig(
            pki, server, cluster.workdir / "kuota-cert-bootstrap.kubeconfig", BOOTSTRAP_ACCOUNT
        )
        env = clean_env(cluster.workdir)
        env["PYTHONPATH"] = str(REPO_ROOT)
        done = subprocess.run(
            [sys.executable, "-m", "certs", "bootstrap", "--kubeconfig", str(identity)]
            + ["--namespace", KUOTA_NAMESPACE, "--ip", "127.0.0.1"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, f"certs bootstrap failed:\n{done.stdout}{done.stderr}"
        secret = json.loads(
            kubectl_as(
                cluster.kubeconfig,
                "get",
                "secret",
                BOOTSTRAP_SECRET,
                "-n",
                KUOTA_NAMESPACE,
                "-o",
                "json",
            ).stdout
        )
        renewed = base64.b64decode(secret["data"][cert_files.TLS_CERT])
        assert renewed != expiring.serving.cert_pem, "renewed and written back (update)"
        assert not cert_files.needs_renewal(renewed, before=timedelta(days=30))
        assert secret["data"][cert_files.CA_CERT] == seed["data"][cert_files.CA_CERT]
        refused = kubectl_as(identity, "get", "secrets", "-n", "default")
        assert refused.returncode != 0 and "Forbidden" in refused.stderr
        _cleared_bundle_comes_back(cluster, identity, env)
    finally:
        for obj in [*rbac, seed]:
            if obj["kind"] == "ServiceAccount":
                continue  # the harness's (install_rbac), not this test's
            kind, name = obj["kind"].lower(), obj["metadata"]["name"]
            scope = ["-n", obj["metadata"]["namespace"]] if obj["metadata"].get("namespace") else []
            kubectl_as(cluster.kubeconfig, "delete", kind, name, "--ignore-not-found", *scope)


def _cleared_bundle_comes_back(cluster: ClusterHandle, identity: Path, env: dict[str, str]) -> None:
    """``--watch``: a caBundle someone clears is put back at once, not at the next interval."""
    watching = subprocess.Popen(
        [sys.executable, "-m", "certs", "bootstrap", "--kubeconfig", str(identity), "--watch"]
        + ["--namespace", KUOTA_NAMESPACE, "--ip", "127.0.0.1", "--interval", "600"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    name = "kuota-mutating-webhook-configuration"

    def bundle() -> str:
        got = kubectl_as(cluster.kubeconfig, "get", "mutatingwebhookconfiguration", name, "-o",
                         "jsonpath={.webhooks[0].clientConfig.caBundle}")  # fmt: skip
        return got.stdout

    try:
        original = bundle()
        assert original, "the session's webhook configuration carries the CA"
        time.sleep(3)  # the watch is established
        remove = '[{"op":"remove","path":"/webhooks/0/clientConfig/caBundle"}]'
        cleared = kubectl_as(cluster.kubeconfig, "patch", "mutatingwebhookconfiguration", name,
                             "--type=json", "-p", remove)  # fmt: skip
        assert cleared.returncode == 0, cleared.stderr
        deadline = time.monotonic() + 20
        while bundle() != original and time.monotonic() < deadline:
            time.sleep(0.5)
        assert bundle() == original, "put back within 20 s (the interval is 600 s)"
    finally:
        watching.terminate()
        _, errors = watching.communicate(timeout=30)
        assert "Forbidden" not in errors, errors


def test_the_multikueue_controller_reads_only_its_namespaces_secrets_and_lease(
    cluster: ClusterHandle, kuota: KuotaWebhook, tmp_path: Path
) -> None:
    """``multikueue.enabled``'s RBAC, as the harness gives it to ``kuota-multikueue``."""
    from .kuota_multikueue import MULTIKUEUE_ACCOUNT, install_multikueue_rbac

    if cluster.workdir is None:
        pytest.skip("needs the local cluster's CA")
    kubectl_binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    install_multikueue_rbac(kubectl_binary, cluster.kubeconfig)
    pki, server = cluster_access(cluster.kubeconfig, cluster.workdir)
    identity = service_account_kubeconfig(
        pki, server, tmp_path / "multikueue.kubeconfig", MULTIKUEUE_ACCOUNT
    )
    user = whoami(identity)
    assert user["username"] == service_account_user(MULTIKUEUE_ACCOUNT)
    assert set(user["groups"]) == SERVICE_ACCOUNT_GROUPS, "no system:masters"
    assert can_i(identity, "get", "secrets", "-n", KUOTA_NAMESPACE)
    assert not can_i(identity, "list", "secrets", "-n", KUOTA_NAMESPACE)
    assert not can_i(identity, "get", "secrets", "-n", "default")
    assert can_i(identity, "patch", "workloads.kueue.x-k8s.io", "--subresource=status", "-A")
    assert not can_i(identity, "patch", "workloads.kueue.x-k8s.io", "-A"), "status only"
    assert can_i(identity, "patch", "jobs", "--subresource=status", "-A")
    assert not can_i(identity, "create", "jobs", "-A"), "Jobs are created on workers only"
    for plural in ("multikueueclusters", "multikueueconfigs", "admissionchecks", "workloads"):
        assert can_i(identity, "watch", f"{plural}.kueue.x-k8s.io", "-A"), plural
    lease = ["leases.coordination.k8s.io", "-n", KUOTA_NAMESPACE]
    assert can_i(identity, "create", *lease)
    for verb in ("get", "update", "patch"):
        assert can_i(identity, verb, f"{lease[0]}/kuota-multikueue", *lease[1:]), verb
        assert not can_i(identity, verb, f"{lease[0]}/kuota-scheduler", *lease[1:]), verb
    assert not can_i(identity, "create", "leases.coordination.k8s.io", "-n", "default")
    deployment = ["deployments.apps/kuota-multikueue", "-n", KUOTA_NAMESPACE]
    assert can_i(identity, "get", *deployment), "the Lease's owner"
    assert not can_i(identity, "get", "deployments.apps/kuota-scheduler", "-n", KUOTA_NAMESPACE)
