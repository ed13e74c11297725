"""Build and locate Kueue's command-line tool, kueuectl, at the pinned release.

kueuectl is what Kueue's users point at a cluster (``kueuectl list workload``
with its POSITION column, ``stop``/``resume``, ``create`` ...); kuota is
tested against the real binary, unchanged.  It is compiled from the Go module
proxy like the rest of the tooling (``tools.py``, ``jobset_tools.py``): a small
wrapper module of our own requires ``sigs.k8s.io/kueue`` at the pinned tag and
``go mod tidy`` resolves it with Kueue's own library versions (the tool runs as
upstream builds it), the binary lands in a version-keyed directory under the
tools cache, built under the same ``flock`` into a temporary directory renamed
into place, ``VERSIONS`` written last.  The version it reports is the pinned
tag (``-X .../pkg/version.GitVersion``), as a release build's.

A cache hit is the stamp plus a binary whose embedded build information names
the pinned release (read from the file, nothing run).
"""

from __future__ import annotations

import mmap
import os
import shutil
from pathlib import Path

from .tools import ToolsMissing, _go_env, _step, build_cached, cache_root

KUEUE = "v0.19.2"
MODULE = "sigs.k8s.io/kueue"
PACKAGE = f"{MODULE}/cmd/kueuectl"
BINARY = "kueuectl"


def version_dir() -> Path:
    return cache_root() / f"kueuectl-{KUEUE}"


def stamp_text() -> str:
    return f'{{"kueue": "{KUEUE}"}}\n'


def binary_path(root: Path) -> Path:
    return root / "bin" / BINARY


def is_complete(root: Path) -> bool:
    stamp = root / "VERSIONS"
    if not stamp.is_file() or stamp.read_text() != stamp_text():
        return False
    path = binary_path(root)
    marker = f"{MODULE}\t{KUEUE}\t".encode()
    try:
        with (
            open(path, "rb") as binary,
            mmap.mmap(binary.fileno(), 0, access=mmap.ACCESS_READ) as content,
        ):
            return os.access(path, os.X_OK) and content.find(marker) >= 0
    except (OSError, ValueError):
        return False


def wrapper_go_mod() -> str:
    """The go.mod that builds kueuectl from the pinned release (pure)."""
    return (
        "module kuota.local/kueuectl-tools\n\n"
        "go 1.26.0\n\n"
        f"tool {PACKAGE}\n\n"
        f"require {MODULE} {KUEUE}\n"
    )


def _build_into(staging: Path) -> None:
    src = staging / "src"
    src.mkdir(parents=True)
    (staging / "bin").mkdir()
    (src / "go.mod").write_text(wrapper_go_mod())
    env = _go_env({"GOFLAGS": "-mod=mod -modcacherw -buildvcs=false"})
    _step("go mod tidy (kueuectl)", ["go", "mod", "tidy"], cwd=src, env=env)
    ldflags = f"-s -w -X {MODULE}/pkg/version.GitVersion={KUEUE}"
    _step(
        "go build kueuectl",
        ["go", "build", "-p", "2", "-trimpath", "-ldflags", ldflags]
        + ["-o", str(binary_path(staging)), PACKAGE],
        cwd=src,
        env=env,
    )


def build(*, force: bool = False) -> Path:
    """Build the pinned kueuectl into the cache (no-op on a verified hit); its path."""
    root = version_dir()
    build_cached(
        root,
        name="kueuectl",
        build_into=_build_into,
        stamp=stamp_text(),
        complete=is_complete,
        force=force,
    )
    return binary_path(root)


def resolve(*, build_if_missing: bool = True) -> Path:
    """The path of the pinned kueuectl, built first if it is missing and Go is at hand."""
    root = version_dir()
    if is_complete(root):
        return binary_path(root)
    if not build_if_missing or shutil.which("go") is None:
        raise ToolsMissing(
            f"no kueuectl {KUEUE} in {root}; run `make tools` (needs Go and the module proxy)"
        )
    return build()
