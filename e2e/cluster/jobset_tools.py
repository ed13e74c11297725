"""Build and locate the pinned JobSet controller manager and its manifests.

JobSet (``sigs.k8s.io/jobset``) is compiled from the Go module proxy the same
way as the rest of the control plane (``tools.py``): a small wrapper module of
our own requires the pinned release and lifts the Kubernetes libraries it links
to the patch the cluster runs (``tools.STAGING``), so the client speaks the
cluster's exact API version and the build reuses the modules the Kubernetes
build already downloaded.  Only the manager binary is built (``CGO_ENABLED=0``,
``-trimpath``, no symbols or DWARF): the in-place-restart agent, tests and
images of the upstream repository are not needed here.

The CRD and the webhook manifests are not copied into this repository: the
build copies them out of the downloaded module into the cache, next to the
binary, so a warm cache needs no go command at all (not even to find the
module cache).  The set lives in its own version-keyed directory under the
same cache root, built under the same ``flock`` (two Go builds never share the
two cores) into a temporary directory that is renamed into place, with a
``VERSIONS`` stamp written last.  The existing Kubernetes tool set's key and
contents are untouched.

A cache hit is the stamp plus a binary whose embedded build information names
the pinned JobSet release and the cluster's client-go patch: the check reads
the file (Go keeps module versions in every binary, stripped or not) instead of
running anything.
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .tools import STAGING, ToolsMissing, _go_env, _step, build_cached, cache_root

JOBSET = "v0.12.0"
MODULE = "sigs.k8s.io/jobset"
MANAGER = "jobset-controller-manager"

# The Kubernetes libraries the manager links, lifted to the cluster's patch
# (JobSet v0.12.0 itself asks for v0.36.0).
LIFTED_LIBRARIES = (
    "api",
    "apiextensions-apiserver",
    "apimachinery",
    "apiserver",
    "client-go",
    "component-base",
)

# What the cache keeps from the module, relative to its root: the CRD the
# cluster installs and the webhook registrations (with the kustomize patches
# that scope the Pod webhooks to JobSet's Pods).
MODULE_FILES = (
    "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml",
    "config/components/webhook/manifests.yaml",
    "config/components/webhook/kustomization.yaml",
    "config/components/webhook/patches/mutating-patch.yaml",
    "config/components/webhook/patches/validating-patch.yaml",
)


@dataclass(frozen=True)
class JobSetTools:
    """Absolute paths of one complete, verified JobSet build."""

    root: Path

    @property
    def manager(self) -> Path:
        return self.root / "bin" / MANAGER

    @property
    def module_files(self) -> Path:
        """The module's own files (``config/...``), as the module lays them out."""
        return self.root / "module"

    @property
    def crd(self) -> Path:
        return self.module_files / MODULE_FILES[0]

    @property
    def webhook_dir(self) -> Path:
        return self.module_files / "config/components/webhook"

    @classmethod
    def resolve(cls, *, build_if_missing: bool = True) -> JobSetTools:
        """Return the cached build, building it under the lock if absent."""
        root = version_dir()
        if is_complete(root):
            return cls(root)
        if not build_if_missing or shutil.which("go") is None:
            raise ToolsMissing(
                f"no JobSet controller in {root}; run `python -m e2e.cluster build` "
                "(needs the Go toolchain and the Go module proxy)"
            )
        return build()


def version_key() -> str:
    return f"jobset-{JOBSET}_k8s-libs-{STAGING}"


def version_dir() -> Path:
    return cache_root() / version_key()


def stamp_text() -> str:
    return json.dumps({"jobset": JOBSET, "k8s-libraries": STAGING}, sort_keys=True) + "\n"


def build_info_markers() -> tuple[bytes, ...]:
    """Module lines Go embeds in the binary's build information (pure)."""
    return (
        f"{MODULE}\t{JOBSET}\t".encode(),
        f"k8s.io/client-go\t{STAGING}\t".encode(),
    )


def is_complete(root: Path) -> bool:
    """A cache hit: the stamp matches, the manifests are there, the binary is the pinned one."""
    stamp = root / "VERSIONS"
    if not stamp.is_file() or stamp.read_text() != stamp_text():
        return False
    tools = JobSetTools(root)
    if not all((tools.module_files / name).is_file() for name in MODULE_FILES):
        return False
    try:
        with (
            open(tools.manager, "rb") as binary,
            mmap.mmap(binary.fileno(), 0, access=mmap.ACCESS_READ) as content,
        ):
            return os.access(tools.manager, os.X_OK) and all(
                content.find(marker) >= 0 for marker in build_info_markers()
            )
    except (OSError, ValueError):
        return False


def wrapper_go_mod() -> str:
    """The go.mod that builds the pinned manager against the cluster's libraries (pure)."""
    lifted = "\n".join(f"\tk8s.io/{name} {STAGING}" for name in LIFTED_LIBRARIES)
    return (
        "module kuota.local/jobset-tools\n\n"
        "go 1.26.0\n\n"
        f"tool {MODULE}\n\n"
        f"require (\n\t{MODULE} {JOBSET}\n{lifted}\n)\n"
    )


def _ldflags() -> str:
    # Upstream's Makefile stamps the same variable; the manager logs it at start.
    return f"-s -w -X {MODULE}/pkg/version.GitVersion={JOBSET}"


def _build_into(staging: Path) -> None:
    src = staging / "src"
    src.mkdir(parents=True)
    (staging / "bin").mkdir()
    (src / "go.mod").write_text(wrapper_go_mod())
    env = _go_env()
    _step("go mod tidy (jobset)", ["go", "mod", "tidy"], cwd=src, env=env)
    _step(
        "go build jobset",
        [
            "go",
            "build",
            "-p",
            "2",
            "-trimpath",
            "-ldflags",
            _ldflags(),
            "-o",
            str(staging / "bin" / MANAGER),
            MODULE,
        ],
        cwd=src,
        env=env,
    )
    module_dir = Path(
        subprocess.run(
            ["go", "list", "-m", "-f", "{{.Dir}}", MODULE],
            cwd=src,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    for relative in MODULE_FILES:
        target = staging / "module" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(module_dir / relative, target)


def build(*, force: bool = False) -> JobSetTools:
    """Build the pinned JobSet manager into the cache (no-op on a verified hit)."""
    root = version_dir()
    build_cached(
        root,
        name="jobset",
        build_into=_build_into,
        stamp=stamp_text(),
        complete=is_complete,
        force=force,
    )
    return JobSetTools(root)
