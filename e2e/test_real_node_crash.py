"""A test runner killed with a real node up leaves nothing the next sweep cannot undo.

A child process starts a cluster with a real node and a running container,
then is SIGKILLed, as a crashed or timed-out test runner would be.  The
kernel kills its direct children (parent-death signal), but the container,
its shim, the network namespace, kubelet's sysctls, the node's cgroups,
mounts and CNI files stay.  The sweep that every session runs first
(``sweep_abandoned``, as in ``e2e/fixtures.py``) must restore all of it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from e2e.cluster.controlplane import sweep_abandoned
from e2e.cluster.node_config import NODE_LABELS
from e2e.cluster.node_record import GLOBAL_SYSCTLS
from e2e.cluster.tools import ToolPaths
from e2e.image import recipe

pytestmark = pytest.mark.cluster

PREFIX = "kuota-e2e-node-crash-"
NAME = f"crash-{os.getpid()}"  # the namespace and cgroup root are named after it
CHILD = f"""
import sys, tempfile, time
from pathlib import Path
from e2e.cluster.realnode import start_cluster
from e2e.image.build import build
workdir = Path(tempfile.mkdtemp(prefix={PREFIX!r}))
print(workdir, flush=True)
start_cluster({NAME!r}, workdir, images=[build()])
print("up", flush=True)
time.sleep(600)
"""


def _machine() -> dict[str, Any]:
    """What a real node changes outside its directory, as a user would look at it."""
    with open("/proc/self/mountinfo") as mounts:
        ours = [line for line in mounts if PREFIX in line]
    shims = subprocess.run(
        ["pgrep", "-f", f"containerd-shim-runc-v2 .*{PREFIX}"], capture_output=True, text=True
    ).stdout.split()
    return {
        "netns": Path(f"/run/netns/kuota-{NAME}").exists(),
        "sysctls": {name: Path("/proc/sys", name).read_text().strip() for name in GLOBAL_SYSCTLS},
        "cgroups": sorted(str(p) for p in Path("/sys/fs/cgroup").glob(f"*/kuota-{NAME}")),
        "mounts": len(ours),
        "shims": len(shims),
    }


KERNEL_DEFAULTS = {"kernel/panic": "0", "vm/overcommit_memory": "0"}
"""Linux's own values of two sysctls kubelet sets (to 10 and 1)."""


@pytest.fixture
def kernel_defaults() -> Iterator[None]:
    """Two of kubelet's sysctls at Linux's defaults while the test runs, then as they were.

    A machine where a kubelet ran and was never swept keeps kubelet's values;
    starting from the kernel's own makes the change, and its undoing, visible.
    """
    saved = {name: Path("/proc/sys", name).read_text().strip() for name in KERNEL_DEFAULTS}
    for name, value in KERNEL_DEFAULTS.items():
        Path("/proc/sys", name).write_text(value)
    try:
        yield
    finally:
        for name, value in saved.items():
            Path("/proc/sys", name).write_text(value)


def test_the_sweep_undoes_a_killed_runners_real_node(kernel_defaults: None) -> None:
    if os.environ.get("KUBECONFIG") and Path(os.environ["KUBECONFIG"]).is_file():
        pytest.skip("runs its own local cluster with a real node; KUBECONFIG names another cluster")
    sweep_abandoned(Path(tempfile.gettempdir()), PREFIX)
    before = _machine()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        stdout=subprocess.PIPE,
        text=True,
        cwd=recipe.REPO_ROOT,
    )
    assert child.stdout is not None
    workdir = Path(child.stdout.readline().strip())
    try:
        assert child.stdout.readline().strip() == "up", "the real-node cluster did not start"
        kubectl = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "sleeper", "namespace": "default"},
            "spec": {
                "nodeSelector": NODE_LABELS,
                "containers": [
                    {
                        "name": "main",
                        "image": f"kuota:{recipe.version()}",
                        "command": ["python", "-c", "import time; time.sleep(600)"],
                    }
                ],
            },
        }
        config = ["--kubeconfig", str(workdir / "admin.kubeconfig")]
        subprocess.run(
            [str(kubectl), *config, "create", "-f", "-"],
            input=json.dumps(pod),
            text=True,
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [
                str(kubectl),
                *config,
                "wait",
                "--for=condition=Ready",
                "pod/sleeper",
                "--timeout=120s",
            ],
            check=True,
            capture_output=True,
        )
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stdout.close()
    time.sleep(2)
    left = _machine()
    assert left["netns"] and left["shims"] >= 1 and left["mounts"] > 0 and left["cgroups"]
    assert left["sysctls"] != before["sysctls"], "kubelet changes global sysctls at start"

    assert workdir in sweep_abandoned(Path(tempfile.gettempdir()), PREFIX)
    assert _machine() == before
    assert not workdir.exists()
