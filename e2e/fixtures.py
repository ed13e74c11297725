"""Session-wide access to a cluster for the end-to-end suites.

By default a fresh local control plane is started once per test session and
torn down at the end.  When ``KUBECONFIG`` names an existing file (a kind
cluster on a machine with Docker, or ``make demo``'s cluster), that cluster is
used as it is and nothing is started or stopped.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .cluster.controlplane import ClusterInfo, ControlPlane, component_log_tails, sweep_abandoned
from .cluster.tools import ToolPaths

WORKDIR_PREFIX = "kuota-e2e-"


@dataclass
class ClusterHandle:
    """What a test needs: a kubeconfig, whether the cluster is ours, its logs."""

    kubeconfig: Path
    local: bool
    workdir: Path | None = None
    info: ClusterInfo | None = None
    plane: ControlPlane | None = None
    """The local control plane (None for an external cluster): chaos tests restart or
    freeze its components."""

    def log_tails(self, lines: int = 80) -> str:
        if self.workdir is None:
            return "(external cluster: component logs are not available here)"
        return component_log_tails(self.workdir, lines)


class SessionCluster:
    """Starts (or adopts) the cluster for one pytest session."""

    def __init__(self) -> None:
        self._plane: ControlPlane | None = None
        self.handle: ClusterHandle | None = None

    def acquire(self) -> ClusterHandle:
        if self.handle is not None:
            return self.handle
        external = os.environ.get("KUBECONFIG")
        if external and Path(external).is_file():
            self.handle = ClusterHandle(kubeconfig=Path(external), local=False)
            return self.handle
        sweep_abandoned(Path(tempfile.gettempdir()), WORKDIR_PREFIX)
        workdir = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX))
        self._plane = ControlPlane("kuota-e2e", tools=ToolPaths.resolve(), workdir=workdir)
        atexit.register(self.release)
        info = self._plane.start()
        self.handle = ClusterHandle(
            kubeconfig=info.kubeconfig, local=True, workdir=workdir, info=info, plane=self._plane
        )
        return self.handle

    def release(self) -> None:
        if self._plane is None:
            return
        plane, self._plane = self._plane, None
        keep = os.environ.get("KUOTA_E2E_KEEP") == "1"
        plane.stop()
        if keep:
            print(
                f"\n[kuota-e2e] kept {plane.workdir}; "
                f"KUBECONFIG={plane.workdir / 'admin.kubeconfig'}"
            )
        else:
            shutil.rmtree(plane.workdir, ignore_errors=True)
