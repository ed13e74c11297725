"""Build and locate Kueue's end-to-end suites: Ginkgo test binaries and kueuectl.

Kueue v0.19.2 is the yardstick here, never a source of kuota's code: the test
packages of its ``test/e2e`` tree are compiled with ``go test -c`` from the Go
module proxy exactly as ``benchmarks.kueue_perf.tools`` builds the benchmark (a
small wrapper module of our own requires the release, ``go mod tidy`` resolves
it with ``GOFLAGS=-mod=mod``; Kueue's own library versions are kept), together
with ``kueuectl`` (``cmd/kueuectl``), which the kueuectl specs run.  Nothing of
Kueue's product (its manager) is built.

The cache directory (``kueue-e2e-<version>`` under the tools cache, prepared
under the same ``flock`` in a temporary directory renamed into place, ``VERSIONS``
written last) holds the wrapper module; kueuectl and each suite's binary are
built into it when first asked for (``make test`` needs one suite, ``make
test-kueue-e2e`` those it runs), each written beside its place and renamed, so
a half-built binary never looks valid.  It is laid out like Kueue's source
tree, because the suites find their files relative to the directory they run in:

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
from collections.abc import Sequence
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
    """Absolute paths of a build; the binaries a caller needs are verified (or built)."""

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

    def binaries(self, suites: Sequence[str]) -> list[Path]:
        return [self.kueuectl, *(self.suite_binary(suite) for suite in suites)]

    @classmethod
    def resolve(
        cls, suites: Sequence[str] = SUITES, *, build_if_missing: bool = True
    ) -> KueueE2ETools:
        """The build holding kueuectl and the binaries of ``suites``, built if missing."""
        root = version_dir()
        if is_complete(root, suites):
            return cls(root)
        if not build_if_missing or shutil.which("go") is None:
            raise ToolsMissing(
                f"no build of Kueue's e2e suites {list(suites)} in {root}; "
                "needs the Go toolchain and the Go module proxy"
            )
        return build(suites)


def version_key() -> str:
    return f"kueue-e2e-{KUEUE}"


def version_dir() -> Path:
    return cache_root() / version_key()


def stamp_text() -> str:
    return f'{{"kueue": "{KUEUE}"}}\n'


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


def is_complete(root: Path, suites: Sequence[str] = SUITES) -> bool:
    """The stamp, the Makefile marker, kueuectl and the binaries of ``suites``.

    Every binary records the pinned Kueue among its dependencies (the main module is
    the wrapper; go test -c of a dependency's package still lists that dependency).
    """
    stamp = root / "VERSIONS"
    if not stamp.is_file() or stamp.read_text() != stamp_text():
        return False
    tools = KueueE2ETools(root)
    if not (tools.project / "Makefile").is_file():
        return False
    return all(_embeds_pinned_release(path) for path in tools.binaries(suites))


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


def _prepare(root: Path) -> None:
    """The wrapper module and the tree's skeleton, written into a fresh directory."""
    staging = root.parent / f".build-kueue-e2e-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    src = staging / "src"
    src.mkdir(parents=True)
    tools = KueueE2ETools(staging)
    tools.kueuectl.parent.mkdir(parents=True)
    (tools.project / "Makefile").write_text(MAKEFILE_MARKER)
    (src / "go.mod").write_text(wrapper_go_mod())
    _step("go mod tidy (kueue e2e)", ["go", "mod", "tidy"], cwd=src, env=_env())
    if root.exists():
        shutil.rmtree(root)
    staging.rename(root)
    (root / "VERSIONS").write_text(stamp_text())


def _base_ready(root: Path) -> bool:
    stamp = root / "VERSIONS"
    return (
        stamp.is_file()
        and stamp.read_text() == stamp_text()
        and (root / "src" / "go.mod").is_file()
        and (KueueE2ETools(root).project / "Makefile").is_file()
    )


def _env() -> dict[str, str]:
    return _go_env({"GOFLAGS": "-mod=mod -modcacherw -buildvcs=false"})


def _build_binary(root: Path, target: Path, package: str, *, test: bool) -> None:
    """Build one binary beside its place and rename it there (never half-written)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    common = ["-p", "2", "-trimpath", "-ldflags", _ldflags(), "-o", str(partial)]
    argv = ["go", "test", "-c", *common, package] if test else ["go", "build", *common, package]
    try:
        title = f"{'go test -c' if test else 'go build'} {package.removeprefix(MODULE + '/')}"
        _step(title, argv, cwd=root / "src", env=_env())
        partial.rename(target)
    finally:
        partial.unlink(missing_ok=True)


def build(suites: Sequence[str] = SUITES, *, force: bool = False) -> KueueE2ETools:
    """Build kueuectl and the binaries of ``suites`` into the cache (what is missing only).

    Under the tools cache's lock; the module and skeleton first (in a temporary
    directory renamed into place, ``VERSIONS`` last), then each missing binary.
    """
    root = version_dir()
    tools = KueueE2ETools(root)
    with _exclusive_lock(cache_root()):
        if not force and is_complete(root, suites):
            print(f"[kuota-tools] cache hit: {root}", file=sys.stderr)
            return tools
        started = time.monotonic()
        if force or not _base_ready(root):
            _prepare(root)
        if force or not _embeds_pinned_release(tools.kueuectl):
            _build_binary(root, tools.kueuectl, f"{MODULE}/cmd/kueuectl", test=False)
        for suite in suites:
            if force or not _embeds_pinned_release(tools.suite_binary(suite)):
                _build_binary(
                    root, tools.suite_binary(suite), f"{MODULE}/test/e2e/{suite}", test=True
                )
        if not is_complete(root, suites):
            raise ToolsMissing(f"the Kueue e2e build in {root} is not the pinned {KUEUE}")
        print(f"[kuota-tools] built in {time.monotonic() - started:.0f}s: {root}", file=sys.stderr)
        return tools
