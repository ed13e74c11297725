"""Build and locate Kueue's scheduler benchmark: runner, minimalkueue and checker.

Kueue v0.19.2 is the oracle here, never a source of kuota's code: its
``test/performance/scheduler`` programs are compiled from the Go module proxy
(``sigs.k8s.io/kueue`` at the pinned tag) the way ``e2e.cluster.jobset_tools``
builds JobSet: a small wrapper module of our own requires the release, ``go mod
tidy`` resolves it (``GOFLAGS=-mod=mod``), and the binaries land in a
version-keyed directory under the tools cache, built under the same ``flock``
into a temporary directory that is renamed into place, ``VERSIONS`` written last.
Unlike JobSet, Kueue's own Kubernetes library versions are kept: the benchmark
runs exactly as upstream builds it.

* ``performance-scheduler-runner``: creates the cohorts, ClusterQueues,
  LocalQueues and Workloads of a generator config, plays them (finishes each
  Workload after its run time, completes evictions) and writes ``summary.yaml``;
* ``minimalkueue``: Kueue's core controllers and scheduler, nothing else;
* ``performance-scheduler-checker``: the checker package's test binary
  (``go test -c``), which compares a summary with a ``rangespec.yaml``.

The configs, range specs and Kueue's CRDs are copied out of the downloaded
module into the cache next to the binaries, so a warm cache needs no go command.
"""

from __future__ import annotations

import mmap
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from e2e.cluster.tools import ToolsMissing, _exclusive_lock, _go_env, _step, cache_root

KUEUE = "v0.19.2"
MODULE = "sigs.k8s.io/kueue"
PERF = f"{MODULE}/test/performance/scheduler"
RUNNER = "performance-scheduler-runner"
MINIMALKUEUE = "minimalkueue"
CHECKER = "performance-scheduler-checker"
BINARIES = (RUNNER, MINIMALKUEUE, CHECKER)

CONFIGS = ("baseline", "large-scale")
CRD_DIR = "config/components/crd/bases"
CRD_FILES = tuple(
    f"{CRD_DIR}/kueue.x-k8s.io_{kind}.yaml"
    for kind in (
        "admissionchecks",
        "clusterqueues",
        "cohorts",
        "localqueues",
        "multikueueclusters",
        "multikueueconfigs",
        "provisioningrequestconfigs",
        "resourceflavors",
        "topologies",
        "workloadpriorityclasses",
        "workloads",
    )
)
MODULE_FILES = (
    *CRD_FILES,
    *(
        f"test/performance/scheduler/configs/{config}/{name}.yaml"
        for config in CONFIGS
        for name in ("generator", "rangespec")
    ),
)


@dataclass(frozen=True)
class KueuePerfTools:
    """Absolute paths of one complete, verified build."""

    root: Path

    def binary(self, name: str) -> Path:
        return self.root / "bin" / name

    @property
    def module_files(self) -> Path:
        return self.root / "module"

    @property
    def crd_dir(self) -> Path:
        return self.module_files / CRD_DIR

    def generator_config(self, config: str) -> Path:
        return self.module_files / f"test/performance/scheduler/configs/{config}/generator.yaml"

    def rangespec(self, config: str) -> Path:
        return self.module_files / f"test/performance/scheduler/configs/{config}/rangespec.yaml"

    @classmethod
    def resolve(cls, *, build_if_missing: bool = True) -> KueuePerfTools:
        root = version_dir()
        if is_complete(root):
            return cls(root)
        if not build_if_missing or shutil.which("go") is None:
            raise ToolsMissing(
                f"no Kueue benchmark build in {root}; "
                "needs the Go toolchain and the Go module proxy"
            )
        return build()


def version_key() -> str:
    return f"kueue-perf-{KUEUE}"


def version_dir() -> Path:
    return cache_root() / version_key()


def stamp_text() -> str:
    return f'{{"kueue": "{KUEUE}"}}\n'


def build_info_marker() -> bytes:
    """The module line Go embeds in every binary built against the pinned release (pure)."""
    return f"{MODULE}\t{KUEUE}\t".encode()


def is_complete(root: Path) -> bool:
    stamp = root / "VERSIONS"
    if not stamp.is_file() or stamp.read_text() != stamp_text():
        return False
    tools = KueuePerfTools(root)
    if not all((tools.module_files / name).is_file() for name in MODULE_FILES):
        return False
    for name in BINARIES:
        path = tools.binary(name)
        try:
            with (
                open(path, "rb") as binary,
                mmap.mmap(binary.fileno(), 0, access=mmap.ACCESS_READ) as content,
            ):
                if not os.access(path, os.X_OK) or content.find(build_info_marker()) < 0:
                    return False
        except (OSError, ValueError):
            return False
    return True


def wrapper_go_mod() -> str:
    """The go.mod that builds the benchmark's programs from the pinned release (pure)."""
    return (
        "module kuota.local/kueue-perf-tools\n\n"
        "go 1.26.0\n\n"
        f"tool (\n\t{PERF}/runner\n\t{PERF}/minimalkueue\n)\n\n"
        f"require {MODULE} {KUEUE}\n"
    )


def _ldflags() -> str:
    return f"-s -w -X {MODULE}/pkg/version.GitVersion={KUEUE}"


def _build_into(staging: Path) -> None:
    src = staging / "src"
    src.mkdir(parents=True)
    bin_dir = staging / "bin"
    bin_dir.mkdir()
    (src / "go.mod").write_text(wrapper_go_mod())
    env = _go_env({"GOFLAGS": "-mod=mod -modcacherw -buildvcs=false"})
    _step("go mod tidy (kueue perf)", ["go", "mod", "tidy"], cwd=src, env=env)
    common = ["-p", "2", "-trimpath", "-ldflags", _ldflags()]
    for name, package in ((RUNNER, f"{PERF}/runner"), (MINIMALKUEUE, f"{PERF}/minimalkueue")):
        _step(
            f"go build {name}",
            ["go", "build", *common, "-o", str(bin_dir / name), package],
            cwd=src,
            env=env,
        )
    _step(
        f"go test -c {CHECKER}",
        ["go", "test", "-c", *common, "-o", str(bin_dir / CHECKER), f"{PERF}/checker"],
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


def build(*, force: bool = False) -> KueuePerfTools:
    """Build the pinned benchmark programs into the cache (no-op on a verified hit)."""
    root = version_dir()
    with _exclusive_lock(cache_root()):
        if not force and is_complete(root):
            print(f"[kuota-tools] cache hit: {root}", file=sys.stderr)
            return KueuePerfTools(root)
        staging = cache_root() / f".build-kueue-perf-{os.getpid()}"
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
            raise ToolsMissing(f"the Kueue benchmark build in {root} is not the pinned {KUEUE}")
        print(f"[kuota-tools] built in {time.monotonic() - started:.0f}s: {root}", file=sys.stderr)
        return KueuePerfTools(root)
