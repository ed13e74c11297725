"""Build and locate the real controllers of the job frameworks kuota queues (beyond JobSet).

Each framework's controller is compiled from its published Go module at the
version Kueue v0.19.2 tests with (its ``go.mod``), the way ``jobset_tools``
builds JobSet's: a small wrapper module of ours requires the pinned release
(``tool`` directive) and ``go build`` makes the manager binary
(``CGO_ENABLED=0``, ``-trimpath``, no symbols).  The Kubernetes libraries are
the ones the release itself asks for (several frameworks pin older
controller-runtime minors than the cluster's, which newer client libraries
would not build with); their clients speak to the v1.36 API server all the
same.

What a framework needs from its module besides the binary (CRDs, webhook
registrations and the kustomize patches that scope them) is copied out of
the downloaded module into the cache, next to the binary, so a warm cache
needs no go command.  Each framework has its own version-keyed directory
under the tools cache, built under the cache's ``flock`` into a temporary
directory renamed into place, with a ``VERSIONS`` stamp written last; a hit
is the stamp, the files, and a binary whose embedded build information names
the pinned module version.
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .tools import ToolsMissing, _go_env, _step, build_cached, cache_root


@dataclass(frozen=True)
class ControllerModule:
    """One framework controller: where its code is and what the cluster needs from it."""

    name: str
    """Short name: the cache directory, the binary, the process (``lws``)."""
    module: str
    version: str
    main: str
    """The main package to build."""
    files: tuple[str, ...]
    """Module-relative files kept in the cache (CRDs, webhook manifests and patches)."""

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"


@dataclass(frozen=True)
class ControllerBuild:
    """Absolute paths of one complete, verified build of a framework controller."""

    module: ControllerModule
    root: Path

    @property
    def binary(self) -> Path:
        return self.root / "bin" / self.module.name

    def file(self, relative: str) -> Path:
        """A file copied out of the module (``relative`` as the module lays it out)."""
        return self.root / "module" / relative


def version_dir(module: ControllerModule) -> Path:
    return cache_root() / module.key


def stamp_text(module: ControllerModule) -> str:
    return json.dumps({"module": module.module, "version": module.version}) + "\n"


def is_complete(module: ControllerModule, root: Path) -> bool:
    """A cache hit: the stamp, every kept file, and the pinned binary."""
    stamp = root / "VERSIONS"
    if not stamp.is_file() or stamp.read_text() != stamp_text(module):
        return False
    built = ControllerBuild(module, root)
    if not all(built.file(name).is_file() for name in module.files):
        return False
    marker = f"{module.module}\t{module.version}\t".encode()
    try:
        with (
            open(built.binary, "rb") as binary,
            mmap.mmap(binary.fileno(), 0, access=mmap.ACCESS_READ) as content,
        ):
            return os.access(built.binary, os.X_OK) and content.find(marker) >= 0
    except (OSError, ValueError):
        return False


def wrapper_go_mod(module: ControllerModule) -> str:
    """The go.mod that builds the pinned controller with the libraries it pins (pure)."""
    return (
        f"module kuota.local/{module.name}-tools\n\n"
        "go 1.26.0\n\n"
        f"tool {module.main}\n\n"
        f"require {module.module} {module.version}\n"
    )


def _build_into(module: ControllerModule, staging: Path) -> None:
    src = staging / "src"
    src.mkdir(parents=True)
    (staging / "bin").mkdir()
    (src / "go.mod").write_text(wrapper_go_mod(module))
    env = _go_env()
    _step(f"go mod tidy ({module.name})", ["go", "mod", "tidy"], cwd=src, env=env)
    _step(
        f"go build {module.name}",
        [
            "go",
            "build",
            "-p",
            "2",
            "-trimpath",
            "-ldflags",
            "-s -w",
            "-o",
            str(staging / "bin" / module.name),
            module.main,
        ],
        cwd=src,
        env=env,
    )
    module_dir = Path(
        subprocess.run(
            ["go", "list", "-m", "-f", "{{.Dir}}", module.module],
            cwd=src,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    for relative in module.files:
        target = staging / "module" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(module_dir / relative, target)


def build(module: ControllerModule, *, force: bool = False) -> ControllerBuild:
    """Build the pinned controller into the cache (no-op on a verified hit)."""
    root = version_dir(module)
    build_cached(
        root,
        name=module.name,
        build_into=lambda staging: _build_into(module, staging),
        stamp=stamp_text(module),
        complete=lambda path: is_complete(module, path),
        force=force,
    )
    return ControllerBuild(module, root)


def resolve(module: ControllerModule, *, build_if_missing: bool = True) -> ControllerBuild:
    """The cached build, built under the lock if absent (and Go is there)."""
    root = version_dir(module)
    if is_complete(module, root):
        return ControllerBuild(module, root)
    if not build_if_missing or shutil.which("go") is None:
        raise ToolsMissing(
            f"no {module.name} controller in {root}; run `python -m e2e.cluster build "
            "--frameworks` (needs the Go toolchain and the Go module proxy)"
        )
    return build(module)
