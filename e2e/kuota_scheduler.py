"""``kuota-scheduler`` replicas as local processes against a local cluster.

Each replica runs with exactly the permissions the Helm chart grants (its
/metrics, HTTPS behind TokenReview and SubjectAccessReview, is read with a
metrics reader's token: :mod:`e2e.metrics_access`): the
chart's RBAC is applied (:func:`e2e.kuota_install.install_rbac`) and the
replicas share a kubeconfig whose client certificate names the user
``system:serviceaccount:kueue-system:kuota-scheduler`` with the groups of a
ServiceAccount and nothing more (no ``system:masters``), so an API call the
chart does not allow fails here as it would in a cluster.  It is also the
identity the webhook lets unsuspend queued Jobs.  Replicas elect a leader
through a Lease in ``kueue-system``; short lease timings make failover quick
enough to test.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from e2e import metrics_access
from e2e.cluster.pki import ClusterPki
from e2e.cluster.processes import ProcessRecord, clean_env, is_alive, log_tail, spawn, stop
from e2e.kuota_install import (
    KUOTA_CONFIG,
    KUOTA_NAMESPACE,
    REPO_ROOT,
    SCHEDULER_ACCOUNT,
    install_rbac,
    service_account_kubeconfig,
    service_account_user,
)
from e2e.kuota_visibility import visibility_certs

SCHEDULER_USER = service_account_user(SCHEDULER_ACCOUNT)
LEASE_TIMINGS = ("--lease-duration", "4", "--renew-deadline", "3", "--retry-period", "1")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def scheduler_kubeconfig(pki: ClusterPki, server: str, path: Path) -> Path:
    """A kubeconfig that authenticates as the scheduler's ServiceAccount, and only as that."""
    return service_account_kubeconfig(pki, server, path, SCHEDULER_ACCOUNT)


@dataclass
class SchedulerReplica:
    """One running replica; ``kill`` is a crash (SIGKILL), ``stop`` a graceful SIGTERM.

    ``port`` serves /healthz and /readyz (plain HTTP), ``metrics_port`` /metrics over
    HTTPS with the harness' pair for 127.0.0.1, read with the metrics reader's token
    (:mod:`e2e.metrics_access`, both in ``workdir``).
    """

    identity: str
    port: int
    record: ProcessRecord
    process: subprocess.Popen[bytes] | None
    visibility_port: int
    """Where its visibility API listens, on 127.0.0.1 (e2e.kuota_visibility registers it)."""
    metrics_port: int = 0
    workdir: Path | None = None

    @property
    def metrics_url(self) -> str:
        return f"https://127.0.0.1:{self.metrics_port}/metrics"

    def endpoint(self, path: str) -> tuple[int, str]:
        if path == "/metrics":
            assert self.workdir is not None
            token = (self.workdir / metrics_access.TOKEN_FILE).read_text().strip()
            ca = self.workdir / metrics_access.CERT_DIR / "ca.crt"
            return metrics_access.scrape(self.metrics_url, token=token, ca=ca, timeout=2)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=2) as reply:
                return reply.status, reply.read().decode()
        except urllib.error.HTTPError as failure:
            return failure.code, str(failure)
        except OSError as failure:
            return 0, str(failure)

    def alive(self) -> bool:
        return is_alive(self.record)

    def metric(self, name: str) -> float | None:
        """The value of an unlabelled metric on ``/metrics`` (None: not served, or no answer)."""
        status, text = self.endpoint("/metrics")
        if status != 200:
            return None
        for line in text.splitlines():
            metric, _, value = line.partition(" ")
            if metric == name:
                return float(value)
        return None

    def signal(self, number: signal.Signals) -> None:
        """Send ``number`` to the replica's process group (SIGSTOP: a frozen process)."""
        os.killpg(self.record.pid, number)

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.identity} exited ({self.process.returncode}):\n{self.tail()}"
                )
            if self.endpoint("/readyz")[0] == 200:
                return
            time.sleep(0.2)
        raise RuntimeError(f"{self.identity} not ready within {timeout:.0f}s:\n{self.tail()}")

    def tail(self, lines: int = 60) -> str:
        return log_tail(self.record.log, lines)

    def kill(self) -> None:
        if self.alive():
            os.killpg(self.record.pid, signal.SIGKILL)
        if self.process is not None:
            self.process.wait(timeout=10)

    def stop(self) -> None:
        stop(self.record, reap=self.process.poll if self.process else None)


def start_replica(
    workdir: Path,
    kubeconfig: Path,
    identity: str,
    *,
    die_with_parent: bool = True,
    lease_timings: tuple[str, ...] = LEASE_TIMINGS,
    config: Path = KUOTA_CONFIG,
) -> SchedulerReplica:
    """One replica reading the Configuration ``config`` (default: the chart's)."""
    port, metrics_port = _free_port(), _free_port()
    visibility_port = _free_port()
    env = clean_env(workdir)
    env["PYTHONPATH"] = str(REPO_ROOT)
    argv = [
        sys.executable,
        "-m",
        "scheduler.service.app",
        "--kubeconfig",
        str(kubeconfig),
        "--identity",
        identity,
        "--lease-namespace",
        KUOTA_NAMESPACE,
        "--config",
        str(config),
        "--health-probe-bind-address",
        f"127.0.0.1:{port}",
        "--visibility-bind-address",
        f"127.0.0.1:{visibility_port}",
        "--visibility-cert-dir",
        str(visibility_certs(workdir)),
        "--metrics-bind-address",
        f"127.0.0.1:{metrics_port}",
        "--metrics-cert-dir",
        str(metrics_access.metrics_certs(workdir)),
        *lease_timings,
    ]
    process, record = spawn(
        identity, argv, workdir=workdir, env=env, die_with_parent=die_with_parent
    )
    return SchedulerReplica(
        identity=identity,
        port=port,
        record=record,
        process=process,
        visibility_port=visibility_port,
        metrics_port=metrics_port,
        workdir=workdir,
    )


def start_schedulers(
    kubectl_binary: Path,
    admin_kubeconfig: Path,
    pki: ClusterPki,
    server: str,
    workdir: Path,
    *,
    replicas: int = 1,
    die_with_parent: bool = True,
    lease_timings: tuple[str, ...] = LEASE_TIMINGS,
    config: Path = KUOTA_CONFIG,
) -> list[SchedulerReplica]:
    """Start ``replicas`` schedulers and wait until each has listed everything.

    ``lease_timings``: the Lease flags (default: short ones, so failover tests are quick;
    ``()``: the scheduler's own defaults, the chart's).  ``config``: the Configuration
    file they read (default: the chart's, ``e2e/kuota-config.yaml``).

    The chart's RBAC is applied first (again, if :func:`~e2e.kuota_install.install_kuota`
    did already: ``kubectl apply`` changes nothing then).
    """
    install_rbac(kubectl_binary, admin_kubeconfig)
    metrics_access.reader_token(kubectl_binary, admin_kubeconfig, workdir)
    kubeconfig = scheduler_kubeconfig(pki, server, workdir / "kuota-scheduler.kubeconfig")
    started = [
        start_replica(
            workdir,
            kubeconfig,
            f"kuota-scheduler-{index}",
            die_with_parent=die_with_parent,
            lease_timings=lease_timings,
            config=config,
        )
        for index in range(replicas)
    ]
    try:
        for replica in started:
            replica.wait_ready()
    except BaseException:
        for replica in started:
            replica.stop()
        raise
    return started


class SchedulerFleet:
    """The session's scheduler replicas, all with one identity (``kubeconfig``).

    Tests may kill the leader and add replicas; all stop at the end.
    """

    def __init__(self, kubeconfig: Path, workdir: Path, first: SchedulerReplica) -> None:
        self.kubeconfig = kubeconfig
        self.workdir = workdir
        self.replicas = [first]

    def add(self) -> SchedulerReplica:
        replica = self.start_one()
        replica.wait_ready()
        return replica

    def start_one(self) -> SchedulerReplica:
        """Start one more replica without waiting for it to be ready.

        Call it from the thread that runs the tests, never a worker thread: a replica dies
        with the thread that started it (``PR_SET_PDEATHSIG`` is per thread), so one started
        in ``asyncio.to_thread`` is killed when the executor retires that thread.  Waiting
        (:meth:`SchedulerReplica.wait_ready`) may run anywhere.
        """
        replica = start_replica(
            self.workdir, self.kubeconfig, f"kuota-scheduler-{len(self.replicas)}"
        )
        self.replicas.append(replica)
        return replica

    def alive(self) -> list[SchedulerReplica]:
        return [replica for replica in self.replicas if replica.alive()]

    def leader(self) -> SchedulerReplica | None:
        """The replica whose metrics say it leads now (``kuota_leading 1.0``)."""
        for replica in self.alive():
            if replica.metric("kuota_leading") == 1:
                return replica
        return None

    def stop(self) -> None:
        for replica in self.replicas:
            replica.stop()
