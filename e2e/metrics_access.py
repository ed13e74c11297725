"""Reading kuota's /metrics on the local cluster as Prometheus would: HTTPS and a token.

kuota's processes serve /metrics over HTTPS to callers whose bearer token the
API server knows (TokenReview) and who may ``get`` the non-resource URL
``/metrics`` (SubjectAccessReview; docs/metrics.md#access).  The harness
gives them one serving pair for 127.0.0.1 (:func:`metrics_certs`) and reads
with the token of a ServiceAccount bound to the chart's metrics-reader
ClusterRole (:func:`reader_token`), both kept in the cluster's work
directory so every replica and test shares them.  :func:`scrape` is one GET.
"""

from __future__ import annotations

import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from certs import files as cert_files

NAMESPACE = "kueue-system"
READER = "kuota-metrics-reader"
"""The ServiceAccount the harness reads with, and the chart's ClusterRole it is bound to."""
TOKEN_FILE = "kuota-metrics-reader.token"
CERT_DIR = "kuota-metrics-certs"


def metrics_certs(workdir: Path) -> Path:
    """A CA and a serving pair for 127.0.0.1 under ``workdir`` (made once)."""
    directory = workdir / CERT_DIR
    if not (directory / "tls.crt").is_file():
        cert_files.write(
            directory, cert_files.make(dns_names=["localhost"], ip_addresses=["127.0.0.1"])
        )
    return directory


def _kubectl(
    kubectl_binary: Path, kubeconfig: Path, *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(kubectl_binary), "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done


def service_account_token(
    kubectl_binary: Path, kubeconfig: Path, account: str, *, namespace: str = NAMESPACE
) -> str:
    """A token of ServiceAccount ``account`` (created when missing), valid for two days."""
    _kubectl(
        kubectl_binary,
        kubeconfig,
        "create",
        "serviceaccount",
        account,
        "-n",
        namespace,
        check=False,
    )
    done = _kubectl(
        kubectl_binary,
        kubeconfig,
        "create",
        "token",
        account,
        "-n",
        namespace,
        "--duration=48h",
    )
    return done.stdout.strip()


def reader_token(kubectl_binary: Path, kubeconfig: Path, workdir: Path) -> str:
    """The token of :data:`READER`, bound to the metrics-reader ClusterRole (made once)."""
    path = workdir / TOKEN_FILE
    if path.is_file():
        return path.read_text().strip()
    token = service_account_token(kubectl_binary, kubeconfig, READER)
    _kubectl(
        kubectl_binary,
        kubeconfig,
        "create",
        "clusterrolebinding",
        READER,
        f"--clusterrole={READER}",
        f"--serviceaccount={NAMESPACE}:{READER}",
        check=False,
    )
    user = f"system:serviceaccount:{NAMESPACE}:{READER}"
    deadline = time.monotonic() + 30
    while (
        _kubectl(
            kubectl_binary,
            kubeconfig,
            "auth",
            "can-i",
            "get",
            "/metrics",
            f"--as={user}",
            check=False,
        ).stdout.strip()
        != "yes"
    ):  # RBAC reaches the authorizer through its informers
        if time.monotonic() > deadline:
            raise RuntimeError(f"{user} still may not get /metrics after 30 s")
        time.sleep(0.2)
    path.write_text(token)
    path.chmod(0o600)
    return token


def scrape(url: str, *, token: str | None, ca: Path, timeout: float = 10) -> tuple[int, str]:
    """GET ``url`` over HTTPS verified by ``ca``: (status, body); (0, why) without an answer."""
    context = ssl.create_default_context(cafile=str(ca))
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, context=context, timeout=timeout) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as failure:
        return failure.code, failure.read().decode(errors="replace")
    except OSError as failure:
        return 0, str(failure)


__all__ = [
    "READER",
    "metrics_certs",
    "reader_token",
    "scrape",
    "service_account_token",
]
