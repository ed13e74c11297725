"""Installing kuota's pieces into a test cluster the way an admin would.

* :func:`install_crds`: the CRDs alone, conversion strategy ``None``
  (``test_crds_on_cluster``: the schemas on their own);
* :func:`install_kuota`: what ``python -m e2e.cluster up --kuota`` and the
  ``kuota`` session fixture do — the chart's ServiceAccounts and RBAC, the
  webhook started as a local process on 127.0.0.1 with generated
  certificates, the CRDs with their conversion webhook, both webhook
  configurations registered by URL (never through a Service: the API server
  must not dial a cluster IP here);
* :func:`serve_legacy_versions`: the served versions changed afterwards, as
  with the chart's ``crds.servedLegacyVersions`` (by default ``v1beta2`` and
  ``v1beta1`` are served, docs/api-differences.md#api-versions-served; tests about
  the alpha versions ask for them: the ``legacy_versions_served`` fixture);
* :func:`install_rbac` and :func:`service_account_kubeconfig`: kuota's
  processes run with exactly the permissions the Helm chart grants.  The
  chart's RBAC templates are rendered by ``helm template --show-only`` (release
  ``kuota`` in ``kueue-system``, default values: what a user installs) and
  applied; each process gets a client certificate for its ServiceAccount's
  user (``system:serviceaccount:kueue-system:<name>``, groups
  ``system:serviceaccounts`` and ``system:serviceaccounts:kueue-system``,
  never ``system:masters``), so a permission the code uses and the chart
  lacks fails a test here as it would fail in a cluster;
* :func:`uninstall_kuota`: registrations deleted and CRD conversion switched
  off *before* the webhook stops, so nothing is left calling a dead webhook.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from certs import files as cert_files
from certs.generate import issue
from e2e.cluster.pki import ClusterPki
from e2e.cluster.processes import ProcessRecord, clean_env, is_alive, log_tail, spawn, stop
from e2e.cluster.tools import ToolPaths
from scheduler.api.crds import (
    CONVERSION_PATH,
    SERVED_LEGACY_VERSIONS,
    load_crds,
    serving_legacy_versions,
    with_conversion_webhook,
)
from webhook.configurations import (
    MUTATING_NAME,
    VALIDATING_NAME,
    mutating_configuration,
    validating_configuration,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
KUOTA_NAMESPACE = "kueue-system"
KUOTA_CONFIG = Path(__file__).resolve().parent / "kuota-config.yaml"
"""The Configuration of the webhook and the scheduler replicas (the chart's default)."""
KUOTA_RELEASE = "kuota"
CHART = REPO_ROOT / "charts" / "kuota"
RBAC_TEMPLATES = (
    "templates/serviceaccounts.yaml",
    "templates/rbac-scheduler.yaml",
    "templates/rbac-webhook.yaml",
    "templates/rbac-visibility.yaml",
    "templates/rbac-metrics.yaml",
)
"""The chart's RBAC for the processes the harness runs (the certificate bootstrap runs
only in ``e2e/test_rbac_identities.py``, which applies its own templates)."""
SCHEDULER_ACCOUNT = "kuota-scheduler"
WEBHOOK_ACCOUNT = "kuota-webhook"
BOOTSTRAP_ACCOUNT = "kuota-cert-bootstrap"


def kubectl(
    kubectl_binary: Path,
    kubeconfig: Path,
    *args: str,
    stdin: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run kubectl against ``kubeconfig``; raise with its output when it fails."""
    done = subprocess.run(
        [str(kubectl_binary), "--kubeconfig", str(kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"kubectl {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
        )
    return done


def install_crds(kubectl_binary: Path, kubeconfig: Path) -> list[str]:
    """Apply every kuota CRD and wait until each is Established; returns their names."""
    crds = load_crds()
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as manifest:
        yaml.safe_dump_all(crds, manifest)
        manifest.flush()
        kubectl(
            kubectl_binary,
            kubeconfig,
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=kuota-e2e",
            "-f",
            manifest.name,
        )
    names = [crd["metadata"]["name"] for crd in crds]
    kubectl(
        kubectl_binary,
        kubeconfig,
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        *[f"crd/{name}" for name in names],
    )
    return names


# -- the chart's RBAC, and identities bound by it ------------------------------------------------


def service_account_user(account: str, namespace: str = KUOTA_NAMESPACE) -> str:
    """The user name the API server gives a ServiceAccount's credentials: pure."""
    return f"system:serviceaccount:{namespace}:{account}"


def render_chart(
    *templates: str, namespace: str = KUOTA_NAMESPACE, sets: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """``helm template`` of the chart (release ``kuota``, default values but ``sets``:
    ``--set`` arguments), only ``templates``."""
    helm = ToolPaths.resolve(build_if_missing=False).binary("helm")
    with tempfile.TemporaryDirectory(prefix="kuota-helm-") as home:
        env = clean_env(Path(home))
        for name in ("CONFIG", "CACHE", "DATA"):
            env[f"HELM_{name}_HOME"] = str(Path(home) / name.lower())
        only = [arg for template in templates for arg in ("--show-only", template)]
        done = subprocess.run(
            [
                str(helm),
                "template",
                KUOTA_RELEASE,
                str(CHART),
                "-n",
                namespace,
                *only,
                *(arg for value in sets for arg in ("--set", value)),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    if done.returncode != 0:
        raise RuntimeError(f"helm template failed ({done.returncode}):\n{done.stderr}")
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def apply_objects(kubectl_binary: Path, kubeconfig: Path, manifests: list[dict[str, Any]]) -> None:
    kubectl(kubectl_binary, kubeconfig, "apply", "-f", "-", stdin=yaml.safe_dump_all(manifests))


def wait_can_i(
    kubectl_binary: Path, kubeconfig: Path, user: str, *check: str, timeout: float = 30
) -> None:
    """Poll ``kubectl auth can-i --as user`` until yes (RBAC takes effect through informers)."""
    deadline = time.monotonic() + timeout
    while True:
        done = subprocess.run(
            [str(kubectl_binary), "--kubeconfig", str(kubeconfig), "auth", "can-i"]
            + [f"--as={user}", *check],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.stdout.strip() == "yes":
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{user} still cannot {' '.join(check)}: {done.stdout}{done.stderr}")
        time.sleep(0.2)


def install_rbac(kubectl_binary: Path, kubeconfig: Path) -> None:
    """kuota's namespace, the chart's ServiceAccounts and RBAC; waits until they take effect."""
    subprocess.run(
        [str(kubectl_binary), "--kubeconfig", str(kubeconfig), "create", "namespace"]
        + [KUOTA_NAMESPACE],
        capture_output=True,
        timeout=60,
    )
    kubectl(kubectl_binary, kubeconfig, "get", "namespace", KUOTA_NAMESPACE)
    apply_objects(kubectl_binary, kubeconfig, render_chart(*RBAC_TEMPLATES))
    wait_can_i(
        kubectl_binary,
        kubeconfig,
        service_account_user(SCHEDULER_ACCOUNT),
        "list",
        "jobs.batch",  # a built-in kind: kuota's CRDs may not be installed yet
        "-A",
    )
    wait_can_i(
        kubectl_binary, kubeconfig, service_account_user(WEBHOOK_ACCOUNT), "get", "namespaces"
    )


def cluster_access(kubeconfig: Path, workdir: Path) -> tuple[ClusterPki, str]:
    """The local cluster's PKI (``<workdir>/pki``) and API server URL (from ``kubeconfig``)."""
    pki = ClusterPki(workdir / "pki")
    if not pki.ca_key.is_file():
        raise RuntimeError(
            f"no cluster CA key in {pki.directory}: kuota's processes get ServiceAccount "
            "client certificates from the local cluster's CA"
        )
    config = yaml.safe_load(kubeconfig.read_text())
    return pki, str(config["clusters"][0]["cluster"]["server"])


def service_account_kubeconfig(pki: ClusterPki, server: str, path: Path, account: str) -> Path:
    """A kubeconfig whose client certificate authenticates as ServiceAccount ``account``.

    The API server takes the certificate's CN as the user and its O fields as
    the groups, so this identity is exactly the one a token of that
    ServiceAccount would give: the user, ``system:serviceaccounts`` and
    ``system:serviceaccounts:<namespace>``; no ``system:masters``.
    """
    identity = issue(
        pki.ca(),
        common_name=service_account_user(account),
        organizations=("system:serviceaccounts", f"system:serviceaccounts:{KUOTA_NAMESPACE}"),
        client=True,
    )

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": account,
        "clusters": [
            {
                "name": "local",
                "cluster": {
                    "server": server,
                    "certificate-authority-data": b64(pki.ca_cert.read_bytes()),
                },
            }
        ],
        "users": [
            {
                "name": account,
                "user": {
                    "client-certificate-data": b64(identity.cert_pem),
                    "client-key-data": b64(identity.key_pem),
                },
            }
        ],
        "contexts": [{"name": account, "context": {"cluster": "local", "user": account}}],
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


# -- the webhook, as a local process registered by URL (docs/testing.md#the-local-cluster) -----

WEBHOOK_PROCESS = "kuota-webhook"


@dataclass
class KuotaWebhook:
    """A running ``kuota-webhook`` on 127.0.0.1 and how the API server reaches it."""

    port: int
    cert_dir: Path
    workdir: Path
    kubeconfig: Path
    record: ProcessRecord
    process: subprocess.Popen[bytes] | None = None
    die_with_parent: bool = True
    extra_args: tuple[str, ...] = ()
    metrics_port: int = 0

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def metrics_url(self) -> str:
        """Its /metrics: HTTPS with the same pair, behind TokenReview and SubjectAccessReview."""
        return f"https://127.0.0.1:{self.metrics_port}/metrics"

    def metrics(self) -> tuple[int, str]:
        """(status, text) of /metrics read with the metrics reader's token (e2e.metrics_access)."""
        from e2e import metrics_access

        token = (self.workdir / metrics_access.TOKEN_FILE).read_text().strip()
        return metrics_access.scrape(self.metrics_url, token=token, ca=self.cert_dir / "ca.crt")

    @property
    def ca_pem(self) -> bytes:
        return (self.cert_dir / "ca.crt").read_bytes()

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.ca_pem).decode()

    def alive(self) -> bool:
        return is_alive(self.record)

    def kill(self) -> None:
        """SIGKILL, as a crash would (tests of the outage)."""
        if self.alive():
            os.killpg(self.record.pid, signal.SIGKILL)
        if self.process is not None:
            self.process.wait(timeout=10)

    def stop(self) -> None:
        stop(self.record, reap=self.process.poll if self.process else None)

    def restart(self) -> None:
        """Start the process again on the same port with the same certificates."""
        self.stop()
        self.process, self.record = _spawn_webhook(
            self.workdir,
            self.cert_dir,
            self.port,
            self.kubeconfig,
            die_with_parent=self.die_with_parent,
            extra_args=(*_metrics_args(self.metrics_port, self.cert_dir), *self.extra_args),
        )
        wait_ready(self)


def _webhook_argv(
    cert_dir: Path, port: int, kubeconfig: Path, extra_args: tuple[str, ...] = ()
) -> list[str]:
    return [
        sys.executable,
        "-m",
        "webhook.server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--cert-dir",
        str(cert_dir),
        "--kubeconfig",
        str(kubeconfig),
        "--kuota-namespace",
        KUOTA_NAMESPACE,
        "--config",
        str(KUOTA_CONFIG),
        "--shutdown-grace",
        "3",
        *extra_args,
    ]


def _spawn_webhook(
    workdir: Path,
    cert_dir: Path,
    port: int,
    kubeconfig: Path,
    *,
    die_with_parent: bool,
    extra_args: tuple[str, ...] = (),
) -> tuple[subprocess.Popen[bytes], ProcessRecord]:
    env = clean_env(workdir)
    env["PYTHONPATH"] = str(REPO_ROOT)
    return spawn(
        WEBHOOK_PROCESS,
        _webhook_argv(cert_dir, port, kubeconfig, extra_args),
        workdir=workdir,
        env=env,
        die_with_parent=die_with_parent,
    )


def wait_ready(webhook: KuotaWebhook, timeout: float = 30) -> None:
    context = ssl.create_default_context(cafile=str(webhook.cert_dir / "ca.crt"))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if webhook.process is not None and webhook.process.poll() is not None:
            code, tail = webhook.process.returncode, log_tail(webhook.record.log)
            raise RuntimeError(f"kuota-webhook exited ({code}):\n{tail}")
        try:
            with urllib.request.urlopen(
                f"{webhook.base_url}/readyz", context=context, timeout=2
            ) as reply:
                if reply.status == 200:
                    return
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.2)
    raise RuntimeError(
        f"kuota-webhook not ready within {timeout:.0f}s:\n{log_tail(webhook.record.log)}"
    )


def start_webhook(
    workdir: Path,
    kubeconfig: Path,
    *,
    die_with_parent: bool = True,
    extra_args: tuple[str, ...] = (),
) -> KuotaWebhook:
    """Certificates for 127.0.0.1, then ``kuota-webhook`` started detached (logs in workdir/logs).

    ``kubeconfig`` is the identity of its cluster lookups.
    """
    cert_dir = workdir / "kuota-webhook-certs"
    certificates = cert_files.make(dns_names=["localhost"], ip_addresses=["127.0.0.1"])
    cert_files.write(cert_dir, certificates)
    port, metrics_port = _free_port(), _free_port()
    process, record = _spawn_webhook(
        workdir,
        cert_dir,
        port,
        kubeconfig,
        die_with_parent=die_with_parent,
        extra_args=(*_metrics_args(metrics_port, cert_dir), *extra_args),
    )
    webhook = KuotaWebhook(
        port=port,
        cert_dir=cert_dir,
        workdir=workdir,
        kubeconfig=kubeconfig,
        record=record,
        process=process,
        die_with_parent=die_with_parent,
        extra_args=extra_args,
        metrics_port=metrics_port,
    )
    wait_ready(webhook)
    return webhook


def _metrics_args(port: int, cert_dir: Path) -> tuple[str, ...]:
    """The webhook's /metrics on 127.0.0.1:``port``, HTTPS with its own pair."""
    return ("--metrics-bind-address", f"127.0.0.1:{port}", "--metrics-cert-dir", str(cert_dir))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def kuota_manifests(
    base_url: str,
    ca_bundle: str,
    *,
    legacy_versions: Collection[str] = SERVED_LEGACY_VERSIONS,
) -> list[dict[str, Any]]:
    """The CRDs (converted by the webhook) and both webhook configurations, all by URL.

    ``legacy_versions``: the versions served besides v1beta2 (the chart's
    ``crds.servedLegacyVersions``), by default the chart's: ``v1beta1``.
    """
    client_config = {"url": base_url, "caBundle": ca_bundle}
    crds = [
        with_conversion_webhook(
            serving_legacy_versions(crd, legacy_versions),
            url=f"{base_url}{CONVERSION_PATH}",
            ca_bundle=ca_bundle,
        )
        for crd in load_crds()
    ]
    return [
        *crds,
        mutating_configuration(client_config, kuota_namespace=KUOTA_NAMESPACE),
        validating_configuration(client_config, kuota_namespace=KUOTA_NAMESPACE),
    ]


def install_kuota(
    kubectl_binary: Path,
    kubeconfig: Path,
    workdir: Path,
    *,
    die_with_parent: bool = True,
    webhook_args: tuple[str, ...] = (),
    legacy_versions: Collection[str] = SERVED_LEGACY_VERSIONS,
) -> KuotaWebhook:
    """What a user's installation amounts to: RBAC, CRDs, the webhook running, registrations.

    ``kubeconfig`` is the admin's (it installs); the webhook's own lookups use
    its ServiceAccount's identity (``<workdir>/kuota-webhook.kubeconfig``).
    Waits until the API server actually calls the webhook (a server-side
    dry-run of a queued Job comes back suspended), since registrations take
    effect through an informer.
    """
    install_rbac(kubectl_binary, kubeconfig)
    from e2e import metrics_access

    metrics_access.reader_token(kubectl_binary, kubeconfig, workdir)
    pki, server = cluster_access(kubeconfig, workdir)
    identity = service_account_kubeconfig(
        pki, server, workdir / "kuota-webhook.kubeconfig", WEBHOOK_ACCOUNT
    )
    webhook = start_webhook(
        workdir, identity, die_with_parent=die_with_parent, extra_args=webhook_args
    )
    try:
        manifests = kuota_manifests(
            webhook.base_url, webhook.ca_bundle, legacy_versions=legacy_versions
        )
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as manifest:
            yaml.safe_dump_all(manifests, manifest)
            manifest.flush()
            kubectl(
                kubectl_binary,
                kubeconfig,
                "apply",
                "--server-side",
                "--force-conflicts",
                "--field-manager=kuota-e2e",
                "-f",
                manifest.name,
            )
        names = [
            item["metadata"]["name"]
            for item in manifests
            if item["kind"] == "CustomResourceDefinition"
        ]
        kubectl(
            kubectl_binary,
            kubeconfig,
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            *[f"crd/{name}" for name in names],
        )
        _wait_until_called(kubectl_binary, kubeconfig)
    except BaseException:
        webhook.stop()
        raise
    return webhook


def serve_legacy_versions(
    kubectl_binary: Path,
    kubeconfig: Path,
    webhook: KuotaWebhook,
    legacy_versions: Collection[str],
    *,
    timeout: float = 60,
) -> None:
    """Serve ``legacy_versions`` besides v1beta2 from now on (what changing the chart's
    ``crds.servedLegacyVersions`` and upgrading does): the CRDs applied again, then a wait
    until the API server's discovery shows exactly those versions.

    Stored objects are untouched (their storage version stays v1beta2).
    """
    crds = [
        item
        for item in kuota_manifests(
            webhook.base_url, webhook.ca_bundle, legacy_versions=legacy_versions
        )
        if item["kind"] == "CustomResourceDefinition"
    ]
    kubectl(
        kubectl_binary,
        kubeconfig,
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=kuota-e2e",
        "-f",
        "-",
        stdin=yaml.safe_dump_all(crds),
    )
    wait_until_served(kubectl_binary, kubeconfig, crds, timeout=timeout)


def served_resources(kubectl_binary: Path, kubeconfig: Path, group_version: str) -> set[str]:
    """The resources the API server's discovery lists for ``group/version`` (none: empty)."""
    done = subprocess.run(
        [str(kubectl_binary), "--kubeconfig", str(kubeconfig)]
        + ["get", "--raw", f"/apis/{group_version}"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if done.returncode != 0:
        return set()
    return {
        resource["name"]
        for resource in json.loads(done.stdout).get("resources", [])
        if "/" not in resource["name"]
    }


def wait_until_served(
    kubectl_binary: Path, kubeconfig: Path, crds: list[dict[str, Any]], *, timeout: float = 60
) -> None:
    """Until discovery lists each CRD's plural under exactly its served versions."""
    expected: dict[str, set[str]] = {}
    for crd in crds:
        plural = crd["spec"]["names"]["plural"]
        for version in crd["spec"]["versions"]:
            group_version = f"{crd['spec']['group']}/{version['name']}"
            wanted = expected.setdefault(group_version, set())
            if version["served"]:
                wanted.add(plural)
    ours = {crd["spec"]["names"]["plural"] for crd in crds}
    deadline = time.monotonic() + timeout
    while True:
        listed = {
            group_version: served_resources(kubectl_binary, kubeconfig, group_version) & ours
            for group_version in expected
        }
        if listed == expected:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"discovery lists {listed}, expected {expected}")
        time.sleep(0.5)


_PROBE_JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {
        "name": "kuota-webhook-probe",
        "namespace": "default",
        "labels": {"kueue.x-k8s.io/queue-name": "probe"},
    },
    "spec": {
        "template": {
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
        }
    },
}


def _wait_until_called(kubectl_binary: Path, kubeconfig: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        try:
            done = kubectl(
                kubectl_binary,
                kubeconfig,
                "create",
                "--dry-run=server",
                "-o",
                "json",
                "-f",
                "-",
                stdin=json.dumps(_PROBE_JOB),
            )
            if json.loads(done.stdout).get("spec", {}).get("suspend") is True:
                return
            last = "dry-run Job not suspended yet"
        except RuntimeError as failed:
            last = str(failed)
        time.sleep(0.5)
    raise RuntimeError(f"the API server does not call kuota's webhook after {timeout:.0f}s: {last}")


def uninstall_kuota(kubectl_binary: Path, kubeconfig: Path, webhook: KuotaWebhook | None) -> None:
    """The safe order: registrations gone and CRD conversion off first, then the webhook stops."""
    kubectl(
        kubectl_binary,
        kubeconfig,
        "delete",
        "--ignore-not-found",
        "mutatingwebhookconfiguration",
        MUTATING_NAME,
        "validatingwebhookconfiguration",
        VALIDATING_NAME,
    )
    patch = json.dumps({"spec": {"conversion": {"strategy": "None", "webhook": None}}})
    for crd in load_crds():
        subprocess.run(
            [
                str(kubectl_binary),
                "--kubeconfig",
                str(kubeconfig),
                "patch",
                "crd",
                crd["metadata"]["name"],
                "--type=merge",
                "-p",
                patch,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    if webhook is not None:
        webhook.stop()
