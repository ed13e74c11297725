"""Build and locate the pinned control-plane binaries.

The local cluster is compiled from published Go modules (no container engine,
no prebuilt downloads).  Binaries live in a per-machine cache outside the
repository, one directory per version set, so a second run reuses them and a
version bump builds a fresh set beside the old one.

A cache hit is a ``VERSIONS`` stamp (written last) plus binaries that report
the pinned versions.  Builds run under an exclusive ``flock`` so two test
workers or a CI step never build at once; each build happens in a temporary
directory that is renamed into place only when complete, so an interrupted
build never leaves a half-filled cache that looks valid.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

KUBERNETES = "v1.36.3"
STAGING = "v0.36.3"
ETCD = "v3.6.8"
KWOK = "v0.8.0"
HELM = "v3.21.4"

# Exactly the `v0.0.0` staging requirements of k8s.io/kubernetes v1.36.x.
STAGING_MODULES = (
    "api",
    "apiextensions-apiserver",
    "apimachinery",
    "apiserver",
    "cli-runtime",
    "client-go",
    "cloud-provider",
    "cluster-bootstrap",
    "code-generator",
    "component-base",
    "component-helpers",
    "controller-manager",
    "cri-api",
    "cri-client",
    "cri-streaming",
    "csi-translation-lib",
    "dynamic-resource-allocation",
    "endpointslice",
    "externaljwt",
    "kms",
    "kube-aggregator",
    "kube-controller-manager",
    "kube-proxy",
    "kube-scheduler",
    "kubectl",
    "kubelet",
    "metrics",
    "mount-utils",
    "pod-security-admission",
    "sample-apiserver",
    "streaming",
)
KUBE_COMMANDS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl")
BINARIES = (*KUBE_COMMANDS, "etcd", "kwok", "helm")
KWOK_STAGE_FILES = (
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-complete.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
)


class ToolsMissing(RuntimeError):
    """The cache has no complete tool set and none can be built here."""


@dataclass(frozen=True)
class ToolPaths:
    """Absolute paths of one complete, verified tool set."""

    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def kwok_stages(self) -> Path:
        return self.root / "kwok-stages"

    def binary(self, name: str) -> Path:
        return self.bin / name

    @classmethod
    def resolve(cls, *, build_if_missing: bool = True) -> ToolPaths:
        """Return the cached tool set, building it under the lock if absent."""
        root = version_dir()
        if is_complete(root):
            return cls(root)
        if not build_if_missing or shutil.which("go") is None:
            raise ToolsMissing(
                f"no control-plane tools in {root}; run `python -m e2e.cluster build` "
                "(needs the Go toolchain and the Go module proxy)"
            )
        return build()


def cache_root() -> Path:
    """Where tool sets live: $KUOTA_TOOLS_DIR, else the user's cache directory."""
    explicit = os.environ.get("KUOTA_TOOLS_DIR")
    if explicit:
        return Path(explicit).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "kuota-cluster-tools"


def version_key() -> str:
    return f"k8s-{KUBERNETES}_etcd-{ETCD}_kwok-{KWOK}_helm-{HELM}"


def version_dir() -> Path:
    return cache_root() / version_key()


def stamp_text() -> str:
    return (
        json.dumps(
            {"kubernetes": KUBERNETES, "etcd": ETCD, "kwok": KWOK, "helm": HELM}, sort_keys=True
        )
        + "\n"
    )


def is_complete(root: Path) -> bool:
    """A cache hit: the stamp matches and the binaries report the pinned versions."""
    stamp = root / "VERSIONS"
    if not stamp.is_file() or stamp.read_text() != stamp_text():
        return False
    if not all((root / "bin" / name).is_file() for name in BINARIES):
        return False
    try:
        api = _run_capture([str(root / "bin" / "kube-apiserver"), "--version"])
        etcd = _run_capture([str(root / "bin" / "etcd"), "--version"])
    except (OSError, subprocess.CalledProcessError):
        return False
    return f"Kubernetes {KUBERNETES}" in api and f"etcd Version: {ETCD.lstrip('v')}" in etcd


def _run_capture(argv: list[str]) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True, timeout=60).stdout


@contextmanager
def _exclusive_lock(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def wrapper_go_mod(
    commands: tuple[str, ...] = KUBE_COMMANDS, *, module: str = "kuota.local/cluster-tools"
) -> str:
    """The go.mod that lets `go build` resolve Kubernetes' staging modules.

    k8s.io/kubernetes requires its staging modules at the placeholder v0.0.0 and
    replaces them with local paths, which only works when it is the main
    module; our own module maps each one to its published tag instead.  The
    main tool set (the default arguments) also builds etcd; the real node's
    set (e2e.cluster.node_tools) passes its own commands and module name.
    """
    replaces = "\n".join(f"\tk8s.io/{name} => k8s.io/{name} {STAGING}" for name in STAGING_MODULES)
    tools = "\n".join(f"\tk8s.io/kubernetes/cmd/{cmd}" for cmd in commands)
    with_etcd = commands == KUBE_COMMANDS
    etcd_tool = "\tgo.etcd.io/etcd/server/v3\n" if with_etcd else ""
    etcd_require = f"\tgo.etcd.io/etcd/server/v3 {ETCD}\n" if with_etcd else ""
    return (
        f"module {module}\n\n"
        "go 1.26.0\n\n"
        f"tool (\n{etcd_tool}{tools}\n)\n\n"
        f"require (\n{etcd_require}\tk8s.io/kubernetes {KUBERNETES}\n)\n\n"
        f"replace (\n{replaces}\n)\n"
    )


def _go_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {"GOTOOLCHAIN": "local", "CGO_ENABLED": "0", "GOFLAGS": "-modcacherw -buildvcs=false"}
    )
    env.pop("GOBIN", None)
    if extra:
        env.update(extra)
    return env


def _step(title: str, argv: list[str], *, cwd: Path, env: dict[str, str]) -> None:
    started = time.monotonic()
    print(f"[kuota-tools] {title} ...", file=sys.stderr, flush=True)
    subprocess.run(argv, cwd=cwd, env=env, check=True)
    print(f"[kuota-tools] {title}: {time.monotonic() - started:.0f}s", file=sys.stderr, flush=True)


def _kube_ldflags() -> str:
    minor = KUBERNETES.split(".")[1]
    date = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    flags = ["-s", "-w"]
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [
            f"-X {package}.gitVersion={KUBERNETES}",
            f"-X {package}.gitMajor=1",
            f"-X {package}.gitMinor={minor}",
            f"-X {package}.gitTreeState=clean",
            f"-X {package}.buildDate={date}",
        ]
    return " ".join(flags)


def _helm_ldflags() -> str:
    base = "helm.sh/helm/v3"
    minor = KUBERNETES.split(".")[1]
    return " ".join(
        [
            "-s",
            "-w",
            f"-X {base}/internal/version.version={HELM}",
            f"-X {base}/pkg/chartutil.k8sVersionMajor=1",
            f"-X {base}/pkg/chartutil.k8sVersionMinor={minor}",
            f"-X {base}/pkg/lint/rules.k8sVersionMajor=1",
            f"-X {base}/pkg/lint/rules.k8sVersionMinor={minor}",
        ]
    )


def _build_into(staging: Path) -> None:
    src = staging / "src"
    bin_dir = staging / "bin"
    src.mkdir(parents=True)
    bin_dir.mkdir()
    (src / "go.mod").write_text(wrapper_go_mod())
    env = _go_env()
    _step("go mod tidy (kubernetes + etcd)", ["go", "mod", "tidy"], cwd=src, env=env)
    _step(
        "go build kubernetes",
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
            *(f"k8s.io/kubernetes/cmd/{cmd}" for cmd in KUBE_COMMANDS),
        ],
        cwd=src,
        env=env,
    )
    _step(
        "go build etcd",
        [
            "go",
            "build",
            "-p",
            "2",
            "-trimpath",
            "-ldflags",
            "-s -w",
            "-o",
            str(bin_dir / "etcd"),
            "go.etcd.io/etcd/server/v3",
        ],
        cwd=src,
        env=env,
    )
    # kwok and helm carry no replace directives: plain `go install pkg@version`,
    # run outside the wrapper module so they resolve their own graphs.
    outside = staging
    install_env = _go_env({"GOBIN": str(bin_dir)})
    _step(
        "go install kwok",
        ["go", "install", "-trimpath", "-ldflags", "-s -w", f"sigs.k8s.io/kwok/cmd/kwok@{KWOK}"],
        cwd=outside,
        env=install_env,
    )
    _step(
        "go install helm",
        [
            "go",
            "install",
            "-trimpath",
            "-ldflags",
            _helm_ldflags(),
            f"helm.sh/helm/v3/cmd/helm@{HELM}",
        ],
        cwd=outside,
        env=install_env,
    )
    _harvest_kwok_stages(staging / "kwok-stages", env=install_env, cwd=outside)


def _harvest_kwok_stages(target: Path, *, env: dict[str, str], cwd: Path) -> None:
    """Copy kwok's default stage files (they live in kwokctl, not in kwok)."""
    out = subprocess.run(
        ["go", "mod", "download", "-json", f"sigs.k8s.io/kwok@{KWOK}"],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    source = Path(json.loads(out)["Dir"])
    target.mkdir()
    for relative in KWOK_STAGE_FILES:
        shutil.copy(source / relative, target / Path(relative).name)


def build_cached(
    root: Path,
    *,
    name: str,
    build_into: Callable[[Path], None],
    stamp: str,
    complete: Callable[[Path], bool],
    force: bool = False,
) -> None:
    """Build one tool set into ``root`` under the cache lock, unless a verified one is there.

    The build goes to a staging directory that replaces ``root`` only once it
    succeeded; ``stamp`` is written as its ``VERSIONS`` and ``complete``
    checks the result (a build that does not report the pinned versions is
    refused, never cached).
    """
    with _exclusive_lock(cache_root()):
        if not force and complete(root):
            print(f"[kuota-tools] cache hit: {root}", file=sys.stderr)
            return
        staging = cache_root() / f".build-{name}-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        started = time.monotonic()
        try:
            build_into(staging)
            if root.exists():
                shutil.rmtree(root)
            staging.rename(root)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        (root / "VERSIONS").write_text(stamp)
        if not complete(root):
            raise ToolsMissing(f"the {name} build in {root} does not report the pinned versions")
        print(f"[kuota-tools] built in {time.monotonic() - started:.0f}s: {root}", file=sys.stderr)


def build(*, force: bool = False) -> ToolPaths:
    """Build the pinned tool set into the cache (no-op on a verified hit)."""
    cache_root().mkdir(parents=True, exist_ok=True)  # a new machine has no cache yet
    free = shutil.disk_usage(cache_root()).free
    if free < 8 * 1024**3 and (force or not is_complete(version_dir())):
        print(
            f"[kuota-tools] warning: only {free / 1024**3:.1f} GiB free; a cold build needs ~7 GiB",
            file=sys.stderr,
        )
    build_cached(
        version_dir(),
        name="control-plane",
        build_into=_build_into,
        stamp=stamp_text(),
        complete=is_complete,
        force=force,
    )
    return ToolPaths(version_dir())
