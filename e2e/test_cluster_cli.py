"""``python -m e2e.cluster up | status | env | down`` as a newcomer uses it:
``up`` leaves a detached cluster that kubectl reaches, ``down`` stops every
process ``up`` started, and nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from e2e.cluster.controlplane import read_state, recorded_processes
from e2e.cluster.processes import is_alive
from e2e.cluster.tools import ToolPaths

pytestmark = pytest.mark.cluster
ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args: str, state_root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUOTA_CLUSTER_DIR": str(state_root)}
    env.pop("KUBECONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "e2e.cluster", "--name", "cli-test", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_up_status_env_down(tmp_path: Path) -> None:
    tools = ToolPaths.resolve(build_if_missing=False)
    up = run_cli("up", state_root=tmp_path)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        workdir = tmp_path / "cli-test"
        state = read_state(workdir)
        assert state is not None
        records = recorded_processes(state)
        assert {r.name for r in records} == {
            "etcd",
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler",
            "kwok",
        }
        assert all(is_alive(r) for r in records), "up leaves every component running after it exits"

        status = run_cli("status", state_root=tmp_path)
        assert status.returncode == 0 and "kube-apiserver" in status.stdout

        env_line = run_cli("env", state_root=tmp_path).stdout.splitlines()[0]
        assert env_line == f"export KUBECONFIG={workdir / 'admin.kubeconfig'}"

        nodes = subprocess.run(
            [
                str(tools.binary("kubectl")),
                "--kubeconfig",
                str(workdir / "admin.kubeconfig"),
                "get",
                "nodes",
                "-o",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        items = json.loads(nodes.stdout)["items"]
        labels = [item["metadata"]["labels"].get("instance-type") for item in items]
        assert labels.count("spot") == 2 and labels.count("ondemand") == 2
        again = run_cli("up", state_root=tmp_path)
        assert "already running" in again.stdout
    finally:
        down = run_cli("down", state_root=tmp_path)
    assert down.returncode == 0, down.stderr
    assert not any(is_alive(r) for r in records), "down stops every process up started"
    assert not (tmp_path / "cli-test").exists()
    assert run_cli("status", state_root=tmp_path).returncode == 1


def test_build_with_a_warm_cache_rebuilds_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "e2e.cluster", "build"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "cache hit" in done.stderr and "go build" not in done.stderr and "go mod" not in done.stderr
    )
