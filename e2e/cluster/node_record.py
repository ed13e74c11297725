"""What a real node changed on the machine, recorded before each change, and its undo.

The real node (:mod:`e2e.cluster.realnode`) writes ``realnode.json`` in the
cluster's directory *before* it changes anything outside that directory:
the global sysctls kubelet sets (their values before), the cgroup root it
creates in every hierarchy, the shared directories that did not exist yet,
and the identity of each process it starts.  :func:`teardown_recorded` reads
it back and undoes everything, in an order that works whether the node is
healthy, half-started, or was left behind by a runner that was killed:

1. stop kubelet and kube-proxy (kubelet would restart what is killed next);
2. kill every process in the node's cgroup tree (the containers);
3. stop containerd, kill its shims (they outlive it by design; found by the
   node's own socket path on their command line);
4. unmount everything under the node's directory (rootfs, volumes, sandbox
   network namespaces);
5. remove the cgroup tree, restore the sysctls, remove libcni's cached
   results for the node's sandboxes, kubelet's log links, stale shim
   sockets, and the shared directories the node created, if empty.

``python -m e2e.cluster down``, the test fixtures and the sweep of abandoned
clusters all end here.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .processes import ProcessRecord, is_alive, stop

# Global (not per-network-namespace) sysctls kubelet sets at start
# (pkg/kubelet/cm setupKernelTunables) and kube-proxy may touch; restored at teardown.
GLOBAL_SYSCTLS = (
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
    "net/netfilter/nf_conntrack_max",
)
CNI_CACHE = Path("/var/lib/cni")  # libcni's fixed cache directory (not configurable in 1.6)
CONTAINER_LOG_LINKS = Path("/var/log/containers")  # kubelet's fixed symlink directory
SHIM_SOCKETS = Path("/run/containerd/s")  # containerd 1.6's fixed shim socket directory


@dataclass
class NodeRecord:
    """What the node changed, written before each change (``realnode.json``)."""

    name: str
    directory: str
    cgroup_root: str
    cni_network: str
    containerd_socket: str
    sysctls: dict[str, str] = field(default_factory=dict)
    created_dirs: list[str] = field(default_factory=list)  # outside the node directory
    cgroup_dirs: list[str] = field(default_factory=list)
    processes: list[dict[str, Any]] = field(default_factory=list)


def _record_path(workdir: Path) -> Path:
    return workdir / "realnode.json"


def save_record(workdir: Path, record: NodeRecord) -> None:
    _record_path(workdir).write_text(json.dumps(asdict(record), indent=2))


def load_record(workdir: Path) -> NodeRecord | None:
    try:
        return NodeRecord(**json.loads(_record_path(workdir).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def cgroup_mounts() -> list[Path]:
    """Every mounted cgroup hierarchy (v1 controllers and the v2 ``unified`` one)."""
    with open("/proc/self/mounts") as mounts:
        return [
            Path(line.split()[1]) for line in mounts if line.split()[2] in ("cgroup", "cgroup2")
        ]


def read_sysctl(name: str) -> str | None:
    try:
        return (Path("/proc/sys") / name).read_text().strip()
    except OSError:
        return None


def _mounts_under(directory: str) -> list[str]:
    prefix = directory.rstrip("/") + "/"
    with open("/proc/self/mountinfo") as mounts:
        points = [line.split()[4] for line in mounts]
    inside = {p for p in points if p == directory or p.startswith(prefix)}
    return sorted(inside, key=lambda p: p.count("/"), reverse=True)


def _subdirectories(top: str) -> list[Path]:
    """Every directory below ``top``, deepest first.  The cgroups of a stopping node vanish
    while they are listed: ``os.walk`` skips one gone meanwhile (``rglob`` raises)."""
    found = [Path(root) / name for root, names, _ in os.walk(top) for name in names]
    return sorted(found, key=lambda p: len(p.parts), reverse=True)


def _pids_in_cgroups(directories: Sequence[str]) -> set[int]:
    pids: set[int] = set()
    for top in directories:
        for directory in [Path(top), *_subdirectories(top)]:
            try:
                text = (directory / "cgroup.procs").read_text()
                pids.update(int(line) for line in text.split())
            except (OSError, ValueError):
                continue
    return pids


def _shim_pids(socket: str) -> list[int]:
    """containerd's shims for ``socket`` (they outlive containerd by design)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"containerd-shim-runc-v2") and socket.encode() in argv:
            found.append(int(proc.name))
    return found


def _kill_all(pids: Sequence[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _sandbox_ids(record: NodeRecord) -> list[str]:
    sandboxes = Path(record.directory) / "containerd" / "state" / "io.containerd.grpc.v1.cri"
    return [path.name for path in (sandboxes / "sandboxes").glob("*")]


def _remove_stale_shim_sockets() -> None:
    """Shim sockets nobody listens on any more (the shims are gone): containerd 1.6 puts
    them in a fixed directory under names that are hashes, so staleness is what marks ours."""
    for path in SHIM_SOCKETS.glob("*"):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            path.unlink(missing_ok=True)
        except OSError:
            pass
        finally:
            probe.close()


def teardown_recorded(workdir: Path) -> list[str]:
    """Stop the real node recorded in ``workdir`` and undo its changes; returns what stopped."""
    record = load_record(workdir)
    if record is None:
        return []
    stopped: list[str] = []
    processes = [ProcessRecord(**entry) for entry in record.processes]

    def stop_named(names: Sequence[str]) -> None:
        for process in processes:
            if process.name in names and is_alive(process):
                stop(process)
                stopped.append(process.name)

    # kubelet first, or it would restart the containers killed next.
    stop_named(("kubelet", "kube-proxy"))
    # Every process in the node's cgroup tree is a container's: kill them all.
    for _ in range(50):
        pids = _pids_in_cgroups(record.cgroup_dirs)
        if not pids:
            break
        _kill_all(sorted(pids))
        time.sleep(0.1)
    stop_named(("containerd",))
    sandboxes = _sandbox_ids(record)
    _kill_all(_shim_pids(record.containerd_socket))
    for point in _mounts_under(record.directory):
        subprocess.run(["umount", "--lazy", point], capture_output=True, timeout=30)
    for top in record.cgroup_dirs:
        for path in _subdirectories(top):
            try:
                path.rmdir()
            except OSError:
                pass
        try:
            Path(top).rmdir()
        except OSError:
            pass
    for name, value in record.sysctls.items():
        if read_sysctl(name) != value:
            try:
                (Path("/proc/sys") / name).write_text(value)
            except OSError:
                pass
    # libcni caches one result per sandbox and network: <network>-<sandbox id>-<interface>.
    for sandbox in sandboxes:
        for result in (CNI_CACHE / "results").glob(f"*-{sandbox}-*"):
            result.unlink(missing_ok=True)
    if CONTAINER_LOG_LINKS.is_dir():
        for link in CONTAINER_LOG_LINKS.iterdir():
            if link.is_symlink() and os.readlink(link).startswith(record.directory):
                link.unlink()
    _remove_stale_shim_sockets()
    for created in sorted(record.created_dirs, key=lambda p: p.count("/"), reverse=True):
        _remove_empty_tree(Path(created))
    _record_path(workdir).unlink(missing_ok=True)
    return stopped


def _remove_empty_tree(top: Path) -> None:
    """Remove ``top`` if it holds nothing but empty directories (never a file)."""
    if not top.is_dir():
        return
    for path in sorted(top.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path.is_dir() and not path.is_symlink():
            try:
                path.rmdir()
            except OSError:
                return
    try:
        top.rmdir()
    except OSError:
        pass
