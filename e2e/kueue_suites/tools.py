"""Build and locate Kueue's end-to-end suites: Ginkgo test binaries and kueuectl.

Kueue v0.19.2 is the yardstick here, never a source of kuota's code: the test
packages of its ``test/e2e`` tree are compiled with ``go test -c`` from the Go
module proxy exactly as ``benchmarks.kueue_perf.tools`` builds the benchmark (a
small wrapper module of our own requires the release, ``go mod tidy`` resolves
it with ``GOFLAGS=-mod=mod``; Kueue's own library versions are kept), together
with ``kueuectl`` (``cmd/kueuectl``), which the kueuectl specs run.  Nothing of
Kueue's product (its manager) is built.

The cache directory (``kueue-e2e-<version>`` under the tools cache, built under
the same ``flock`` into a temporary directory renamed into place, ``VERSIONS``
written last) is laid out like Kueue's source tree, because the suites find
their files relative to the directory they run in:

- ``project/Makefile``: an empty marker; Kueue's test utilities locate the
  project root by walking up from the working directory to a Makefile
  (``test/util: getProjectBaseDir``) and fail at start without one;
- ``project/bin/kubectl-kueue``: kueuectl, where the suite looks for it
  (``kueuectlPath = ../../../../bin/kubectl-kueue`` from the suite directory);
- ``project/test/e2e/<suite>/<name>.test``: each suite's binary, run with its
  own directory as the working directory.
"""

from __future__ import annotations

import mmap
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from e2e.cluster.tools import ToolsMissing, _exclusive_lock, _go_env, _step, cache_root

KUEUE = "v0.19.2"
MODULE = "sigs.k8s.io/kueue"
KUEUECTL = "kubectl-kueue"

SUITES = (
    "singlecluster/baseline",
    "sequential/baseline",
    "tas/baseline",
    "singlecluster/extended",
    "multikueue/baseline",
)
"""The suites built, by their directory under ``test/e2e``."""


def binary_name(suite: str) -> str:
    """``singlecluster/baseline`` -> ``singlecluster-baseline.test`` (pure)."""
    return suite.replace("/", "-") + ".test"


@dataclass(frozen=True)
class KueueE2ETools:
    """Absolute paths of one complete, verified build."""

    root: Path

    @property
    def project(self) -> Path:
        return self.root / "project"

    def suite_dir(self, suite: str) -> Path:
        """The working directory a suite's binary runs in."""
        return self.project / "test" / "e2e" / suite

    def suite_binary(self, suite: str) -> Path:
        return self.suite_dir(suite) / binary_name(suite)

    @property
    def kueuectl(self) -> Path:
        return self.project / "bin" / KUEUECTL

    @classmethod
    def resolve(cls, *, build_if_missing: bool = True) -> KueueE2ETools:
        root = version_dir()
        if is_complete(root):
            return cls(root)
        if not build_if_missing or shutil.which("go") is None:
            raise ToolsMissing(
                f"no build of Kueue's e2e suites in {root}; "
                "needs the Go toolchain and the Go module proxy"
            )
        return build()


def version_key() -> str:
    return f"kueue-e2e-{KUEUE}"


def version_dir() -> Path:
    return cache_root() / version_key()


def stamp_text() -> str:
    suites = ", ".join(f'"{suite}"' for suite in SUITES)
    return f'{{"kueue": "{KUEUE}", "suites": [{suites}]}}\n'


def build_info_marker() -> bytes:
    """The module line Go embeds in every binary built against the pinned release (pure)."""
    return f"{MODULE}\t{KUEUE}\t".encode()


def _embeds_pinned_release(path: Path) -> bool:
    try:
        with (
            open(path, "rb") as binary,
            mmap.mmap(binary.fileno(), 0, access=mmap.ACCESS_READ) as content,
        ):
            return os.access(path, os.X_OK) and content.find(build_info_marker()) >= 0
    except (OSError, ValueError):
        return False


def is_complete(root: Path) -> bool:
    stamp = root / "VERSIONS"
    if not stamp.is_file() or stamp.read_text() != stamp_text():
        return False
    tools = KueueE2ETools(root)
    if not (tools.project / "Makefile").is_file():
        return False
    # Every binary records the pinned Kueue among its dependencies (the main module is
    # the wrapper; go test -c of a dependency's package still lists that dependency).
    binaries = [tools.kueuectl, *(tools.suite_binary(suite) for suite in SUITES)]
    return all(_embeds_pinned_release(path) for path in binaries)


def wrapper_go_mod() -> str:
    """The go.mod that builds the suites from the pinned release (pure).

    kueuectl is the one ``tool``: it keeps ``go mod tidy`` from emptying the
    requirements; the test packages' own dependencies are added by ``-mod=mod``.
    """
    return (
        "module kuota.local/kueue-e2e-tools\n\n"
        "go 1.26.0\n\n"
        f"tool {MODULE}/cmd/kueuectl\n\n"
        f"require {MODULE} {KUEUE}\n"
    )


def _ldflags() -> str:
    return f"-s -w -X {MODULE}/pkg/version.GitVersion={KUEUE}"


MAKEFILE_MARKER = (
    "# Marker for Kueue's e2e test utilities, which look for the project root as the\n"
    "# first directory above the working directory holding a Makefile. Written by\n"
    "# kuota's e2e/kueue_suites/tools.py; nothing here is built or run.\n"
)


def _build_into(staging: Path) -> None:
    src = staging / "src"
    src.mkdir(parents=True)
    tools = KueueE2ETools(staging)
    tools.kueuectl.parent.mkdir(parents=True)
    (tools.project / "Makefile").write_text(MAKEFILE_MARKER)
    (src / "go.mod").write_text(wrapper_go_mod())
    env = _go_env({"GOFLAGS": "-mod=mod -modcacherw -buildvcs=false"})
    _step("go mod tidy (kueue e2e)", ["go", "mod", "tidy"], cwd=src, env=env)
    common = ["-p", "2", "-trimpath", "-ldflags", _ldflags()]
    _step(
        "go build kueuectl",
        ["go", "build", *common, "-o", str(tools.kueuectl), f"{MODULE}/cmd/kueuectl"],
        cwd=src,
        env=env,
    )
    for suite in SUITES:
        target = tools.suite_binary(suite)
        target.parent.mkdir(parents=True, exist_ok=True)
        _step(
            f"go test -c {suite}",
            ["go", "test", "-c", *common, "-o", str(target), f"{MODULE}/test/e2e/{suite}"],
            cwd=src,
            env=env,
        )


def build(*, force: bool = False) -> KueueE2ETools:
    """Build the pinned suites into the cache (no-op on a verified hit)."""
    root = version_dir()
    with _exclusive_lock(cache_root()):
        if not force and is_complete(root):
            print(f"[kuota-tools] cache hit: {root}", file=sys.stderr)
            return KueueE2ETools(root)
        staging = cache_root() / f".build-kueue-e2e-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        started = time.monotonic()
        try:
            _build_into(staging)
            if root.exists():
                shutil.rmtree(root)
            staging.rename(root)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        (root / "VERSIONS").write_text(stamp_text())
        if not is_complete(root):
            raise ToolsMissing(f"the Kueue e2e build in {root} is not the pinned {KUEUE}")
        print(f"[kuota-tools] built in {time.monotonic() - started:.0f}s: {root}", file=sys.stderr)
        return KueueE2ETools(root)
