"""Installing kuota's pieces into a test cluster the way an admin would.

For now: the CRDs, applied server-side with kubectl and waited on until
``Established``.  (The webhook and the scheduler join here in later issues.)
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import yaml

from scheduler.api.crds import load_crds


def kubectl(kubectl_binary: Path, kubeconfig: Path, *args: str, stdin: str | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run kubectl against ``kubeconfig``; raise with its output when it fails."""
    done = subprocess.run([str(kubectl_binary), "--kubeconfig", str(kubeconfig), *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done


def install_crds(kubectl_binary: Path, kubeconfig: Path) -> list[str]:
    """Apply every kuota CRD and wait until each is Established; returns their names."""
    crds = load_crds()
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as manifest:
        yaml.safe_dump_all(crds, manifest)
        manifest.flush()
        kubectl(kubectl_binary, kubeconfig, "apply", "--server-side", "--force-conflicts",
                "--field-manager=kuota-e2e", "-f", manifest.name)
    names = [crd["metadata"]["name"] for crd in crds]
    kubectl(kubectl_binary, kubeconfig, "wait", "--for=condition=Established", "--timeout=60s",
            *[f"crd/{name}" for name in names])
    return names
