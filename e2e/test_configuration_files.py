"""Every kuota process checks its Configuration at start, against the local cluster.

Kueue v0.19.2's own shipped Configurations (copied in tests/data/kueue_v0.19.2: its
chart's default ``managerConfig.controllerManagerConfigYaml`` and
``config/components/manager/controller_manager_config.yaml``) start the scheduler, the
webhook and the MultiKueue controller unchanged, each logging one warning per setting it
does not act on; a ``v1beta1`` file starts them too, converted, with the conversion's
warnings; an invalid file stops each of them with exit code 1 and one error line naming
the fields (docs/configuration.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .cluster.pki import ClusterPki
from .cluster.processes import clean_env
from .cluster.tools import ToolPaths
from .fixtures import ClusterHandle
from .kuota_install import REPO_ROOT, KuotaWebhook, start_webhook
from .kuota_multikueue import start_multikueue
from .kuota_scheduler import scheduler_kubeconfig, start_replica

pytestmark = pytest.mark.cluster
SHIPPED = REPO_ROOT / "tests" / "data" / "kueue_v0.19.2"
FILES = sorted(path.name for path in SHIPPED.glob("*.yaml"))
KUEUE_LEASE = "c1f6bfd2.kueue.x-k8s.io"
NOT_ACTED_ON = ["controller.groupKindConcurrency: "]
"""The warnings Kueue's shipped configurations give; every framework they enable is managed."""
UNMANAGED = "kuota does not manage "
V1BETA1 = """\
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
namespace: kueue-system
fairSharing:
  enable: true
queueVisibility:
  updateIntervalSeconds: 5
"""
INVALID = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
featureGates:
  ConcurrentAdmission: true
resources:
  quotaCheckStrategy: Bogus
fairSharing:
  preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]
"""
FIELDS = (
    "resources.quotaCheckStrategy",
    "fairSharing.preemptionStrategies",
    "featureGates[ConcurrentAdmission]",
)


def log_lines(path: str) -> list[dict[str, Any]]:
    lines = []
    for line in Path(path).read_text().splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            continue
    return lines


def warnings_in(path: str) -> list[str]:
    return [str(line["msg"]) for line in log_lines(path) if line.get("level") == "warning"]


def _scheduler_kubeconfig(cluster: ClusterHandle, tmp_path: Path) -> Path:
    assert cluster.workdir is not None and cluster.info is not None
    pki = ClusterPki(cluster.workdir / "pki")
    return scheduler_kubeconfig(pki, cluster.info.server, tmp_path / "scheduler.kubeconfig")


@pytest.mark.parametrize("name", FILES)
def test_the_scheduler_starts_with_kueues_configuration(
    cluster: ClusterHandle, kuota: KuotaWebhook, tmp_path: Path, name: str
) -> None:
    replica = start_replica(
        tmp_path,
        _scheduler_kubeconfig(cluster, tmp_path),
        f"shipped-{name[:5]}",
        config=SHIPPED / name,
    )
    try:
        replica.wait_ready()
        assert replica.alive()
        warnings = warnings_in(replica.record.log)
        for expected in NOT_ACTED_ON:
            assert any(expected in warning for warning in warnings), (expected, warnings)
        assert not [warning for warning in warnings if UNMANAGED in warning], warnings
        (started,) = [
            line
            for line in log_lines(replica.record.log)
            if line["msg"] == "kuota-scheduler started"
        ]
        assert started["lease"] == f"kueue-system/{KUEUE_LEASE}", "leaderElection.resourceName"
    finally:
        replica.stop()


@pytest.mark.parametrize("name", FILES)
def test_the_webhook_starts_with_kueues_configuration(
    cluster: ClusterHandle, kuota: KuotaWebhook, tmp_path: Path, name: str
) -> None:
    webhook = start_webhook(
        tmp_path, kuota.kubeconfig, extra_args=("--config", str(SHIPPED / name))
    )
    try:
        assert webhook.process is not None and webhook.process.poll() is None
        warnings = warnings_in(webhook.record.log)
        for expected in NOT_ACTED_ON:
            assert any(expected in warning for warning in warnings), (expected, warnings)
        assert not [warning for warning in warnings if UNMANAGED in warning], warnings
    finally:
        webhook.stop()


@pytest.mark.parametrize("name", FILES)
def test_the_multikueue_controller_starts_with_kueues_configuration(
    cluster: ClusterHandle, kuota: KuotaWebhook, tmp_path: Path, name: str
) -> None:
    kubectl = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    assert cluster.workdir is not None
    controller = start_multikueue(
        kubectl,
        cluster.kubeconfig,
        tmp_path,
        cluster_workdir=cluster.workdir,
        config=SHIPPED / name,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            started = [
                line
                for line in log_lines(controller.record.log)
                if line["msg"] == "multikueue controller started"
            ]
            if started:
                break
            time.sleep(0.2)
        assert started, controller.tail()
        assert started[0]["lease"] == f"kueue-system/{KUEUE_LEASE}-multikueue"
        time.sleep(1)
        assert controller.alive(), controller.tail()
        warnings = warnings_in(controller.record.log)
        assert any(NOT_ACTED_ON[0] in warning for warning in warnings), warnings
    finally:
        controller.stop()


def test_a_v1beta1_configuration_is_converted_and_its_warnings_logged(
    cluster: ClusterHandle, kuota: KuotaWebhook, tmp_path: Path
) -> None:
    config = tmp_path / "v1beta1.yaml"
    config.write_text(V1BETA1)
    replica = start_replica(
        tmp_path, _scheduler_kubeconfig(cluster, tmp_path), "v1beta1", config=config
    )
    try:
        replica.wait_ready()
        warnings = warnings_in(replica.record.log)
        assert any("queueVisibility was removed in v1beta2" in w for w in warnings), warnings
    finally:
        replica.stop()


def _run(module: str, *argv: str, workdir: Path) -> subprocess.CompletedProcess[str]:
    env = clean_env(workdir)
    env["PYTHONPATH"] = str(REPO_ROOT)
    return subprocess.run(
        [sys.executable, "-m", module, *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=workdir,
        timeout=60,
    )


@pytest.mark.parametrize(
    "module", ["scheduler.service.app", "webhook.server", "scheduler.multikueue"]
)
def test_an_invalid_configuration_stops_each_process_naming_the_fields(
    cluster: ClusterHandle, kuota: KuotaWebhook, tmp_path: Path, module: str
) -> None:
    config = tmp_path / "invalid.yaml"
    config.write_text(INVALID)
    argv = ["--config", str(config), "--kubeconfig", str(cluster.kubeconfig)]
    if module == "webhook.server":
        argv += ["--cert-dir", str(kuota.cert_dir), "--port", "0"]
    done = _run(module, *argv, workdir=tmp_path)
    assert done.returncode == 1, done.stderr
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0]["level"] == "error", done.stderr
    for field in FIELDS:
        assert f"{field}: " in lines[0]["msg"], lines[0]["msg"]
