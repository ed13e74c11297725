"""Build and locate the real node's binaries: kubelet, kube-proxy and a pause image.

A second tool set beside the control plane's (:mod:`e2e.cluster.tools`), with
its own cache key, so adding it never rebuilds or changes the main set.  It
uses the same wrapper-module recipe (Kubernetes from its published Go
modules, the same version stamping), the same lock (the two builds share
the Go build cache and would only fight over two cores) and the same
build-into-a-temporary-directory-then-rename step.

The pause binary (``pause/main.go``) holds each pod's sandbox; it is packed
as a one-file OCI image with :mod:`e2e.image.oci`, since no registry is
reachable to pull the usual one.  containerd, runc and the CNI plugins are
Debian packages (:data:`DEBIAN_PACKAGES`), installed by ``ensure_packages``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from e2e.image import oci

from . import debian
from .tools import (
    KUBERNETES,
    ToolsMissing,
    _go_env,
    _kube_ldflags,
    _run_capture,
    _step,
    build_cached,
    cache_root,
    wrapper_go_mod,
)

NODE_COMMANDS = ("kubelet", "kube-proxy")
PAUSE_SOURCE = Path(__file__).parent / "pause" / "main.go"
PAUSE_REFERENCE = "kuota.local/pause:1.0"
# Debian packages the node runs on (their binaries are on PATH afterwards).
DEBIAN_PACKAGES = {
    "containerd": "containerd",
    "runc": "runc",
    "/usr/lib/cni/bridge": "containernetworking-plugins",
    "iptables": "iptables",
    "conntrack": "conntrack",
    "nsenter": "util-linux",
    "ip": "iproute2",
}


@dataclass(frozen=True)
class NodeToolPaths:
    root: Path

    def binary(self, name: str) -> Path:
        return self.root / "bin" / name

    @property
    def pause_image(self) -> Path:
        return self.root / "pause.oci.tar"

    @classmethod
    def resolve(cls, *, build_if_missing: bool = True) -> NodeToolPaths:
        root = version_dir()
        if is_complete(root):
            return cls(root)
        if not build_if_missing or shutil.which("go") is None:
            raise ToolsMissing(
                f"no real-node tools in {root}; run `python -m e2e.cluster build --real-node`"
            )
        return build()


def version_key() -> str:
    pause = hashlib.sha256(PAUSE_SOURCE.read_bytes()).hexdigest()[:8]
    return f"node-k8s-{KUBERNETES}_pause-{pause}"


def version_dir() -> Path:
    return cache_root() / version_key()


def stamp_text() -> str:
    return json.dumps({"kubernetes": KUBERNETES, "node": version_key()}, sort_keys=True) + "\n"


def is_complete(root: Path) -> bool:
    stamp = root / "VERSIONS"
    if not stamp.is_file() or stamp.read_text() != stamp_text():
        return False
    if not all((root / "bin" / name).is_file() for name in (*NODE_COMMANDS, "pause")):
        return False
    if not (root / "pause.oci.tar").is_file():
        return False
    try:
        kubelet = _run_capture([str(root / "bin" / "kubelet"), "--version"])
    except (OSError, subprocess.CalledProcessError):
        return False
    return f"Kubernetes {KUBERNETES}" in kubelet


def ensure_packages() -> None:
    """Install the node's Debian packages when a binary is missing (idempotent)."""
    try:
        debian.ensure(DEBIAN_PACKAGES)
    except debian.PackagesMissing as failure:
        raise ToolsMissing(str(failure)) from failure


def _pause_image(binary: Path, target: Path, workdir: Path) -> None:
    """A one-file OCI image: /pause, run as nobody."""
    layer = workdir / "pause-layer.tar"
    with tarfile.open(layer, "w") as tar:
        info = tar.gettarinfo(str(binary), arcname="pause")
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mode = 0o755
        with open(binary, "rb") as handle:
            tar.addfile(info, handle)
    config = oci.ImageConfig(
        reference=PAUSE_REFERENCE,
        env={},
        cmd=(),
        entrypoint=("/pause",),
        user="65535:65535",
        workdir="/",
    )
    oci.write_layout(layer, config, workdir / "pause-layout")
    oci.archive(workdir / "pause-layout", target)


def _build_into(staging: Path) -> None:
    src = staging / "src"
    bin_dir = staging / "bin"
    src.mkdir(parents=True)
    bin_dir.mkdir()
    (src / "go.mod").write_text(wrapper_go_mod(NODE_COMMANDS, module="kuota.local/node-tools"))
    env = _go_env()
    _step("go mod tidy (kubelet + kube-proxy)", ["go", "mod", "tidy"], cwd=src, env=env)
    _step(
        "go build kubelet kube-proxy",
        [
            "go",
            "build",
            "-p",
            "2",
            "-trimpath",
            "-tags",
            "selinux,notest,grpcnotrace",
            "-ldflags",
            _kube_ldflags(),
            "-o",
            f"{bin_dir}/",
            *(f"k8s.io/kubernetes/cmd/{cmd}" for cmd in NODE_COMMANDS),
        ],
        cwd=src,
        env=env,
    )
    pause_src = staging / "pause-src"
    pause_src.mkdir()
    shutil.copy(PAUSE_SOURCE, pause_src / "main.go")
    (pause_src / "go.mod").write_text("module kuota.local/pause\n\ngo 1.26.0\n")
    _step(
        "go build pause",
        ["go", "build", "-trimpath", "-ldflags", "-s -w", "-o", str(bin_dir / "pause"), "."],
        cwd=pause_src,
        env=env,
    )
    _pause_image(bin_dir / "pause", staging / "pause.oci.tar", staging)


def build(*, force: bool = False) -> NodeToolPaths:
    """Build the real node's tool set into the cache (no-op on a verified hit)."""
    ensure_packages()
    root = version_dir()
    build_cached(
        root,
        name="node",
        build_into=_build_into,
        stamp=stamp_text(),
        complete=is_complete,
        force=force,
    )
    return NodeToolPaths(root)
