"""A private network namespace for a cluster with a real node.

kubelet refuses a loopback node IP, and a real node's kubelet, kube-proxy
and CNI rewrite iptables and routes.  So a cluster with a real node lives in
a network namespace that the harness creates and deletes: a veth pair with
both ends inside it gives the node its address (:data:`NODE_IP`), nothing
connects it to the machine's own network, and every address its processes
can reach is inside it.  The API server is reached from the machine through
:mod:`e2e.cluster.netns_forward` (127.0.0.1 on both sides).

- ``ip netns add`` makes ``/run/netns/<name>`` (and, the first time on a
  machine, turns ``/run/netns`` into a shared bind mount); both are recorded
  in ``netns.json`` and undone by :func:`delete_recorded`.
- Processes enter it with ``nsenter --net=...`` (not ``ip netns exec``,
  which also makes a private mount namespace: kubelet's volume mounts would
  then be invisible to the container runtime).
- Short calls of the harness itself (readiness probes) run in a thread that
  has entered the namespace (:meth:`NetNamespace.call`): ``setns`` moves only
  the calling thread, and sockets keep the namespace they were created in.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypeVar

from .netns_forward import setns

NETNS_DIR = Path("/run/netns")
NODE_IP = "10.200.0.1"
NODE_PREFIX = 24
SERVICE_CIDR = "10.0.0.0/24"  # the control plane's --service-cluster-ip-range
POD_CIDR = "10.244.0.0/24"
LINK, PEER = "kuota0", "kuota1"
T = TypeVar("T")


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def _is_mountpoint(path: Path) -> bool:
    target = str(path)
    with open("/proc/self/mountinfo") as mounts:
        return any(line.split()[4] == target for line in mounts)


@dataclass(frozen=True)
class NetNamespace:
    """A named network namespace created by this harness (see :func:`create`)."""

    name: str
    created_netns_dir: bool  # /run/netns did not exist before
    mounted_netns_dir: bool  # /run/netns was not a mount point before

    @property
    def path(self) -> Path:
        return NETNS_DIR / self.name

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """The command line that runs ``argv`` inside the namespace."""
        return ["nsenter", f"--net={self.path}", "--", *argv]

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in a short-lived thread that has entered the namespace."""
        outcome: dict[str, object] = {}

        def run() -> None:
            try:
                setns(self.path)
                outcome["value"] = fn()
            except BaseException as error:  # re-raised in the caller's thread
                outcome["error"] = error

        thread = threading.Thread(target=run, name=f"netns-{self.name}", daemon=True)
        thread.start()
        thread.join()
        if "error" in outcome:
            raise outcome["error"]  # type: ignore[misc]
        return outcome["value"]  # type: ignore[return-value]

    def record(self, workdir: Path) -> None:
        (workdir / "netns.json").write_text(json.dumps(asdict(self), indent=2))


def create(name: str, workdir: Path) -> NetNamespace:
    """Create the namespace with the node's address; recorded in ``workdir`` at once."""
    existed = NETNS_DIR.is_dir()
    was_mounted = existed and _is_mountpoint(NETNS_DIR)
    netns = NetNamespace(name, created_netns_dir=not existed, mounted_netns_dir=not was_mounted)
    netns.record(workdir)
    _ip("netns", "add", name)
    _ip("-n", name, "link", "set", "lo", "up")
    _ip("-n", name, "link", "add", LINK, "type", "veth", "peer", "name", PEER)
    _ip("-n", name, "addr", "add", f"{NODE_IP}/{NODE_PREFIX}", "dev", LINK)
    _ip("-n", name, "link", "set", LINK, "up")
    _ip("-n", name, "link", "set", PEER, "up")
    # Service IPs are rewritten by kube-proxy after routing: the API server
    # (calling a webhook's ClusterIP) needs a route for the range to get there.
    _ip("-n", name, "route", "add", SERVICE_CIDR, "dev", LINK)
    return netns


def delete_recorded(workdir: Path) -> str | None:
    """Delete the namespace recorded in ``workdir`` and undo /run/netns; returns its name."""
    try:
        netns = NetNamespace(**json.loads((workdir / "netns.json").read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if netns.path.exists():
        subprocess.run(["ip", "netns", "del", netns.name], capture_output=True, timeout=30)
    if NETNS_DIR.is_dir() and not any(NETNS_DIR.iterdir()):
        if netns.mounted_netns_dir and _is_mountpoint(NETNS_DIR):
            subprocess.run(["umount", str(NETNS_DIR)], capture_output=True, timeout=30)
        if netns.created_netns_dir:
            # Gone already is fine (seen once after the umount): the goal is that it is gone.
            with contextlib.suppress(FileNotFoundError):
                NETNS_DIR.rmdir()
    (workdir / "netns.json").unlink(missing_ok=True)
    return netns.name
