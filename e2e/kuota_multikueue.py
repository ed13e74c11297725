"""MultiKueue on local clusters: a manager and workers, each a control plane of its own.

* :func:`start_multikueue` runs ``kuota-multikueue`` against a manager with
  exactly the chart's RBAC for it (``multikueue.enabled=true``), through a
  client certificate for its ServiceAccount, as the scheduler replicas run;
* :func:`worker_secret` is the Secret a manager needs for one worker: the
  worker's admin kubeconfig (credentials embedded) under key ``kubeconfig``
  in kuota's namespace.  Admin is what a test may use; the chart's README
  describes the least-privilege ServiceAccount to use on real workers;
* :func:`start_named_clusters` starts several clusters at once with
  ``python -m e2e.cluster --name X up --kuota``, each on free loopback
  ports, each with its own webhook and scheduler.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

from e2e.cluster.controlplane import read_state
from e2e.cluster.processes import ProcessRecord, clean_env, is_alive, log_tail, spawn, stop
from e2e.kuota_install import (
    KUOTA_CONFIG,
    KUOTA_NAMESPACE,
    REPO_ROOT,
    apply_objects,
    cluster_access,
    render_chart,
    service_account_kubeconfig,
    service_account_user,
    wait_can_i,
)

T = TypeVar("T")
MULTIKUEUE_ACCOUNT = "kuota-multikueue"
MULTIKUEUE_RBAC_TEMPLATES = (
    "templates/serviceaccounts.yaml",
    "templates/rbac-multikueue.yaml",
    "templates/rbac-webhook.yaml",
)
"""The controller's RBAC, and the webhook's with what ``--multikueue-managed-by`` reads."""


@dataclass
class MultiKueueProcess:
    record: ProcessRecord
    process: subprocess.Popen[bytes] | None

    def alive(self) -> bool:
        return is_alive(self.record)

    def tail(self, lines: int = 60) -> str:
        return log_tail(self.record.log, lines)

    def stop(self) -> None:
        stop(self.record, reap=self.process.poll if self.process else None)


def install_multikueue_rbac(kubectl_binary: Path, kubeconfig: Path) -> None:
    """The chart's ServiceAccount and RBAC of the MultiKueue controller; waits until in effect."""
    objects = render_chart(*MULTIKUEUE_RBAC_TEMPLATES, sets=("multikueue.enabled=true",))
    apply_objects(kubectl_binary, kubeconfig, objects)
    wait_can_i(
        kubectl_binary,
        kubeconfig,
        service_account_user(MULTIKUEUE_ACCOUNT),
        "get",
        "secrets",
        "-n",
        KUOTA_NAMESPACE,
    )


def start_multikueue(
    kubectl_binary: Path,
    admin_kubeconfig: Path,
    workdir: Path,
    *,
    interval: float = 1.0,
    die_with_parent: bool = True,
    cluster_workdir: Path | None = None,
    config: Path = KUOTA_CONFIG,
) -> MultiKueueProcess:
    """``python -m scheduler.multikueue`` on the manager, as its ServiceAccount.

    ``cluster_workdir``: the cluster's own directory (its CA), when ``workdir``
    is another one (a second replica's, with its own log).
    """
    install_multikueue_rbac(kubectl_binary, admin_kubeconfig)
    pki, server = cluster_access(admin_kubeconfig, cluster_workdir or workdir)
    kubeconfig = service_account_kubeconfig(
        pki, server, workdir / "kuota-multikueue.kubeconfig", MULTIKUEUE_ACCOUNT
    )
    env = clean_env(workdir)
    env["PYTHONPATH"] = str(REPO_ROOT)
    argv = [
        sys.executable,
        "-m",
        "scheduler.multikueue",
        "--kubeconfig",
        str(kubeconfig),
        "--config",
        str(config),
        "--interval",
        str(interval),
    ]
    process, record = spawn(
        "kuota-multikueue", argv, workdir=workdir, env=env, die_with_parent=die_with_parent
    )
    time.sleep(0.5)
    if process.poll() is not None:
        raise RuntimeError(
            f"kuota-multikueue exited ({process.returncode}):\n{log_tail(record.log)}"
        )
    return MultiKueueProcess(record=record, process=process)


def worker_secret(name: str, worker_kubeconfig: Path) -> dict[str, Any]:
    """The Secret ``name`` in kuota's namespace holding a worker's kubeconfig."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": KUOTA_NAMESPACE},
        "type": "Opaque",
        "data": {"kubeconfig": base64.b64encode(worker_kubeconfig.read_bytes()).decode()},
    }


@dataclass(frozen=True)
class NamedCluster:
    name: str
    workdir: Path
    kubeconfig: Path
    server: str


def cluster_command(name: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "e2e.cluster", "--name", name, *args]


def cluster_env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["KUOTA_CLUSTER_DIR"] = str(root)
    env["PYTHONPATH"] = str(REPO_ROOT)
    return env


def start_named_clusters(
    root: Path, names: list[str], *, extra: dict[str, list[str]] | None = None
) -> list[NamedCluster]:
    """``up --kuota`` for every name at once (each its own process); raises if one failed."""
    started = {
        name: subprocess.Popen(
            cluster_command(name, "up", "--kuota", *(extra or {}).get(name, [])),
            cwd=REPO_ROOT,
            env=cluster_env(root),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for name in names
    }
    failures = []
    for name, process in started.items():
        output, _ = process.communicate(timeout=600)
        if process.returncode != 0:
            failures.append(f"{name}: exit {process.returncode}\n{output.decode()[-3000:]}")
    if failures:
        stop_named_clusters(root, names)
        raise RuntimeError("starting the clusters failed:\n" + "\n".join(failures))
    clusters = []
    for name in names:
        workdir = root / name
        state = read_state(workdir) or {}
        clusters.append(
            NamedCluster(
                name=name,
                workdir=workdir,
                kubeconfig=Path(state["kubeconfig"]),
                server=str(state["server"]),
            )
        )
    return clusters


def stop_named_clusters(root: Path, names: list[str]) -> None:
    for name in names:
        subprocess.run(
            cluster_command(name, "down"),
            cwd=REPO_ROOT,
            env=cluster_env(root),
            capture_output=True,
            timeout=180,
        )


@dataclass(frozen=True)
class Kubectl:
    """kubectl against one cluster (the admin's kubeconfig)."""

    binary: Path
    kubeconfig: Path

    def run(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        done = subprocess.run(
            [str(self.binary), "--kubeconfig", str(self.kubeconfig), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def json(self, *args: str) -> dict[str, Any]:
        """``kubectl get ... -o json`` (an empty dict when not found)."""
        text = self.run("get", *args, "-o", "json", "--ignore-not-found", check=True)
        loaded = json.loads(text) if text.strip() else {}
        return loaded if isinstance(loaded, dict) else {}

    def apply(self, manifests: str | list[dict[str, Any]]) -> None:
        text = manifests if isinstance(manifests, str) else yaml.safe_dump_all(manifests)
        self.run("apply", "-f", "-", stdin=text)


def wait_for(
    probe: Callable[[], T], accept: Callable[[T], bool], *, timeout: float, what: str
) -> T:
    """Call ``probe`` until ``accept`` holds; fail with what was last seen."""
    deadline = time.monotonic() + timeout
    while True:
        last = probe()
        if accept(last):
            return last
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout:.0f}s waiting for {what}; last: {last!r}"
            )
        time.sleep(0.5)


def active(obj: dict[str, Any]) -> tuple[str, str, str] | None:
    """``(status, reason, message)`` of an object's ``Active`` condition."""
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Active":
            return condition.get("status"), condition.get("reason"), condition.get("message")
    return None
