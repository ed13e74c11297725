"""Installing kuota's pieces into a test cluster the way an admin would.

* :func:`install_crds`: the CRDs alone, conversion strategy ``None``
  (``test_crds_on_cluster``: the schemas on their own);
* :func:`install_kuota`: what ``python -m e2e.cluster up --kuota`` and the
  ``kuota`` session fixture do — the webhook started as a local process on
  127.0.0.1 with generated certificates, the CRDs with their conversion
  webhook, both webhook configurations registered by URL (never through a
  Service: the API server must not dial a cluster IP here);
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from certs import files as cert_files
from e2e.cluster.processes import ProcessRecord, clean_env, is_alive, log_tail, spawn, stop
from scheduler.api.crds import CONVERSION_PATH, load_crds, with_conversion_webhook
from webhook.configurations import (
    MUTATING_NAME,
    VALIDATING_NAME,
    mutating_configuration,
    validating_configuration,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
KUOTA_NAMESPACE = "kueue-system"


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


# -- the webhook, as a local process registered by URL (LOCAL_CLUSTER.md section 8) ------------

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

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

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
        )
        wait_ready(self)


def _webhook_argv(cert_dir: Path, port: int, kubeconfig: Path) -> list[str]:
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
        "--shutdown-grace",
        "3",
    ]


def _spawn_webhook(
    workdir: Path, cert_dir: Path, port: int, kubeconfig: Path, *, die_with_parent: bool
) -> tuple[subprocess.Popen[bytes], ProcessRecord]:
    env = clean_env(workdir)
    env["PYTHONPATH"] = str(REPO_ROOT)
    return spawn(
        WEBHOOK_PROCESS,
        _webhook_argv(cert_dir, port, kubeconfig),
        workdir=workdir,
        env=env,
        die_with_parent=die_with_parent,
    )


def wait_ready(webhook: KuotaWebhook, timeout: float = 30) -> None:
    context = ssl.create_default_context(cafile=str(webhook.cert_dir / "ca.crt"))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if webhook.process is not None and webhook.process.poll() is not None:
            raise RuntimeError(
                f"kuota-webhook exited ({webhook.process.returncode}):\n{log_tail(webhook.record.log)}"
            )
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


def start_webhook(workdir: Path, kubeconfig: Path, *, die_with_parent: bool = True) -> KuotaWebhook:
    """Generate certificates for 127.0.0.1 and start ``kuota-webhook`` detached, logging to workdir/logs."""
    cert_dir = workdir / "kuota-webhook-certs"
    certificates = cert_files.make(dns_names=["localhost"], ip_addresses=["127.0.0.1"])
    cert_files.write(cert_dir, certificates)
    port = _free_port()
    process, record = _spawn_webhook(
        workdir, cert_dir, port, kubeconfig, die_with_parent=die_with_parent
    )
    webhook = KuotaWebhook(
        port=port,
        cert_dir=cert_dir,
        workdir=workdir,
        kubeconfig=kubeconfig,
        record=record,
        process=process,
        die_with_parent=die_with_parent,
    )
    wait_ready(webhook)
    return webhook


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def kuota_manifests(base_url: str, ca_bundle: str) -> list[dict[str, Any]]:
    """The CRDs (converted by the webhook) and both webhook configurations, all by URL."""
    client_config = {"url": base_url, "caBundle": ca_bundle}
    crds = [
        with_conversion_webhook(crd, url=f"{base_url}{CONVERSION_PATH}", ca_bundle=ca_bundle)
        for crd in load_crds()
    ]
    return [
        *crds,
        mutating_configuration(client_config, kuota_namespace=KUOTA_NAMESPACE),
        validating_configuration(client_config, kuota_namespace=KUOTA_NAMESPACE),
    ]


def install_kuota(
    kubectl_binary: Path, kubeconfig: Path, workdir: Path, *, die_with_parent: bool = True
) -> KuotaWebhook:
    """What a user's installation amounts to: CRDs, the webhook running, registrations by URL.

    Waits until the API server actually calls the webhook (a server-side
    dry-run of a queued Job comes back suspended), since registrations take
    effect through an informer.
    """
    webhook = start_webhook(workdir, kubeconfig, die_with_parent=die_with_parent)
    try:
        manifests = kuota_manifests(webhook.base_url, webhook.ca_bundle)
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
