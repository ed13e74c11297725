"""``kuota-dashboard`` as a local process against the local cluster, with the chart's RBAC.

As the scheduler replicas are (:mod:`e2e.kuota_scheduler`): the chart's
dashboard ClusterRole (``rbac-dashboard.yaml``, rendered with
``dashboard.enabled=true``) is applied and the process authenticates with a
client certificate for its ServiceAccount's user, nothing more.  It serves
HTTPS on 127.0.0.1 with the harness' pair (:func:`e2e.metrics_access.metrics_certs`)
and samples usage every second.
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from e2e import metrics_access
from e2e.cluster.pki import ClusterPki
from e2e.cluster.processes import ProcessRecord, clean_env, log_tail, spawn, stop
from e2e.kuota_install import (
    REPO_ROOT,
    apply_objects,
    render_chart,
    service_account_kubeconfig,
    service_account_user,
    wait_can_i,
)

ACCOUNT = "kuota-dashboard"


@dataclass
class DashboardProcess:
    port: int
    ca: Path
    record: ProcessRecord
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}/"

    def stop(self) -> None:
        stop(self.record, reap=self.process.poll)

    def tail(self) -> str:
        return log_tail(self.record.log, 60)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_dashboard(
    kubectl_binary: Path,
    admin_kubeconfig: Path,
    pki: ClusterPki,
    server: str,
    workdir: Path,
    *,
    timeout: float = 90,
) -> DashboardProcess:
    """The chart's dashboard RBAC applied, then the process started and serving."""
    apply_objects(
        kubectl_binary,
        admin_kubeconfig,
        render_chart("templates/rbac-dashboard.yaml", sets=("dashboard.enabled=true",)),
    )
    wait_can_i(
        kubectl_binary,
        admin_kubeconfig,
        service_account_user(ACCOUNT),
        "watch",
        "workloads.kueue.x-k8s.io",
        "-A",
    )
    kubeconfig = service_account_kubeconfig(
        pki, server, workdir / "kuota-dashboard.kubeconfig", ACCOUNT
    )
    certs = metrics_access.metrics_certs(workdir)
    port = _free_port()
    env = clean_env(workdir)
    env["PYTHONPATH"] = str(REPO_ROOT)
    argv = [
        sys.executable,
        "-m",
        "scheduler.dashboard",
        "--kubeconfig",
        str(kubeconfig),
        "--bind-address",
        f"127.0.0.1:{port}",
        "--cert-dir",
        str(certs),
        "--history-interval",
        "1",
    ]
    process, record = spawn(ACCOUNT, argv, workdir=workdir, env=env, die_with_parent=True)
    dashboard = DashboardProcess(port=port, ca=certs / "ca.crt", record=record, process=process)
    context = ssl.create_default_context(cafile=str(dashboard.ca))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"kuota-dashboard exited ({process.returncode}):\n{dashboard.tail()}"
            )
        try:
            with urllib.request.urlopen(dashboard.url, context=context, timeout=2) as reply:
                if reply.status == 200:
                    return dashboard
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.3)
    dashboard.stop()
    raise RuntimeError(f"kuota-dashboard not serving within {timeout:.0f}s:\n{dashboard.tail()}")


__all__ = ["ACCOUNT", "DashboardProcess", "start_dashboard"]
