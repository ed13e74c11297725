"""One real node for the local cluster: containerd, kubelet and kube-proxy.

The kwok nodes fake everything; this node runs containers.  It lives with
the whole control plane in a private network namespace (:mod:`.netns`):
kubelet refuses a loopback node IP, and kubelet, kube-proxy and the CNI
bridge rewrite iptables and routes, which must not touch the machine's own
network.  What each piece is and why (``shared/REAL_NODE.md``):

- **containerd** (Debian's 1.6, runc) with its own config, socket, root and
  state under the node's directory; ``restrict_oom_score_adj`` because the
  VM lacks ``CAP_SYS_RESOURCE``; sandbox network namespaces under its state
  directory; the pause image and kuota's image imported from OCI archives
  (no registry is reachable; pods use ``IfNotPresent``/``Never``).
- **CNI**: Debian's ``bridge`` + ``host-local`` plugins, IPAM state under
  the node's directory.
- **kubelet**: client certificate ``system:node:<name>`` signed by the
  cluster CA (Node authorizer + NodeRestriction), serving certificate for
  the node IP, webhook authentication/authorization (no anonymous access),
  cgroupfs driver under a cgroup root of its own, no cluster DNS (pods see
  an empty resolv.conf: nothing resolves or leaves the namespace).
- **kube-proxy** (iptables mode) as ``system:kube-proxy``: Service IPs work
  for pods and for the API server calling a webhook through its Service.

Everything the node changes outside its directory is recorded in
``realnode.json`` *before* it is changed, and :func:`teardown_recorded`
undoes it: global sysctls kubelet sets, its cgroup tree, mounts under the
node directory, CNI result files, kubelet's links in /var/log/containers,
containerd's shim sockets in /run/containerd.  ``python -m e2e.cluster down``
and the next session's sweep of abandoned clusters call it too, so a
crashed test runner leaves nothing behind either.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from certs.generate import issue

from .controlplane import ClusterInfo, ClusterStartError, _answers, component_log_tails
from .kubeapi import request
from .netns import NODE_IP, POD_CIDR, NetNamespace
from .node_tools import PAUSE_REFERENCE, NodeToolPaths
from .nodes import NodeSpec, is_usable
from .pki import ClusterPki
from .processes import ProcessRecord, clean_env, is_alive, spawn, stop

NODE_NAME = "kuota-real-0"
NODE_LABELS = {"type": "real", "kuota.test/real-node": "true"}
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


def _save(workdir: Path, record: NodeRecord) -> None:
    _record_path(workdir).write_text(json.dumps(asdict(record), indent=2))


def _load(workdir: Path) -> NodeRecord | None:
    try:
        return NodeRecord(**json.loads(_record_path(workdir).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def _cgroup_mounts() -> list[Path]:
    """Every mounted cgroup hierarchy (v1 controllers and the v2 ``unified`` one)."""
    with open("/proc/self/mounts") as mounts:
        return [
            Path(line.split()[1]) for line in mounts if line.split()[2] in ("cgroup", "cgroup2")
        ]


def _read_sysctl(name: str) -> str | None:
    try:
        return (Path("/proc/sys") / name).read_text().strip()
    except OSError:
        return None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _kubeconfig(server: str, ca: Path, cert: bytes, key: bytes, user: str) -> str:
    """Pure apart from reading the CA file: a kubeconfig with embedded credentials."""
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "local",
                    "cluster": {
                        "server": server,
                        "certificate-authority-data": _b64(ca.read_bytes()),
                    },
                }
            ],
            "users": [
                {
                    "name": user,
                    "user": {"client-certificate-data": _b64(cert), "client-key-data": _b64(key)},
                }
            ],
            "contexts": [{"name": "local", "context": {"cluster": "local", "user": user}}],
            "current-context": "local",
        }
    )


def containerd_config(directory: Path, socket: Path, cni_conf: Path) -> str:
    """Pure: containerd's config, everything under ``directory``."""
    return f"""version = 2
root = "{directory}/containerd/root"
state = "{directory}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
                    "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "{socket}"

[ttrpc]
  address = "{socket}.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "{directory}/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{PAUSE_REFERENCE}"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{cni_conf}"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{directory}/runc"
"""


def cni_config(network: str, ipam_dir: Path) -> dict[str, Any]:
    """Pure: a bridge network for the node's pods, IPAM state in ``ipam_dir``."""
    return {
        "cniVersion": "1.0.0",
        "name": network,
        "plugins": [
            {
                "type": "bridge",
                "bridge": "cni0",
                "isGateway": True,
                "isDefaultGateway": True,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "dataDir": str(ipam_dir),
                    "ranges": [[{"subnet": POD_CIDR}]],
                },
            }
        ],
    }


def kubelet_config(
    directory: Path, socket: Path, cgroup_root: str, ca: Path, cert: Path, key: Path
) -> dict[str, Any]:
    """Pure: the KubeletConfiguration (REAL_NODE.md, with authentication by the cluster CA)."""
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": NODE_IP,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "tlsCertFile": str(cert),
        "tlsPrivateKeyFile": str(key),
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": str(ca)},
        },
        "authorization": {"mode": "Webhook"},
        "containerRuntimeEndpoint": f"unix://{socket}",
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": cgroup_root,
        "failCgroupV1": False,
        "failSwapOn": False,
        "resolvConf": "",
        "podLogsDir": str(directory / "pod-logs"),
        "evictionHard": {
            "memory.available": "100Mi",
            "nodefs.available": "1%",
            "imagefs.available": "1%",
            "nodefs.inodesFree": "1%",
        },
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "serializeImagePulls": False,
        "maxPods": 30,
    }


def kube_proxy_config(kubeconfig: Path) -> dict[str, Any]:
    """Pure: kube-proxy in iptables mode, touching no global conntrack setting."""
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "mode": "iptables",
        "hostnameOverride": NODE_NAME,
        "clusterCIDR": POD_CIDR,
        "healthzBindAddress": "127.0.0.1:10256",
        "metricsBindAddress": "127.0.0.1:10249",
        "conntrack": {
            "maxPerCore": 0,
            "min": 0,
            "tcpEstablishedTimeout": "0s",
            "tcpCloseWaitTimeout": "0s",
        },
    }


class RealNode:
    """The node's processes and files; :meth:`start` once, :meth:`stop` (idempotent)."""

    def __init__(
        self,
        cluster: ClusterInfo,
        netns: NetNamespace,
        *,
        tools: NodeToolPaths,
        images: Sequence[Path],
        die_with_parent: bool = True,
    ) -> None:
        self.cluster = cluster
        self.netns = netns
        self.tools = tools
        self.images = tuple(images)
        self.die_with_parent = die_with_parent
        self.workdir = cluster.workdir
        self.directory = cluster.workdir / "node"
        self.socket = self.directory / "containerd.sock"
        self.record = NodeRecord(
            name=NODE_NAME,
            directory=str(self.directory),
            cgroup_root=f"/{netns.name}",
            cni_network=netns.name,
            containerd_socket=str(self.socket),
        )
        self._processes: list[tuple[str, subprocess.Popen[bytes]]] = []

    # -- lifecycle -----------------------------------------------------------------
    def start(self, timeout: float = 180.0) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        _save(self.workdir, self.record)
        try:
            self._note_machine_state()
            pki = self._write_pki()
            self._start_containerd()
            for image in (self.tools.pause_image, *self.images):
                self._ctr("images", "import", str(image), timeout=300)
            self._start_kubelet(pki)
            self._start_kube_proxy(pki)
            self._wait_ready(timeout)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        teardown_recorded(self.workdir)
        for _, process in self._processes:
            process.poll()
        self._processes.clear()

    def log_tails(self, lines: int = 60) -> str:
        return component_log_tails(self.workdir, lines)

    # -- steps ---------------------------------------------------------------------
    def _note_machine_state(self) -> None:
        """Record, before anything changes them, the sysctls, directories and cgroups."""
        self.record.sysctls = {
            name: value for name in GLOBAL_SYSCTLS if (value := _read_sysctl(name)) is not None
        }
        for shared in (CNI_CACHE, CONTAINER_LOG_LINKS, SHIM_SOCKETS.parent, SHIM_SOCKETS):
            if not shared.exists():
                self.record.created_dirs.append(str(shared))
        # kubelet insists that its cgroup root exists in every hierarchy.
        for mount in _cgroup_mounts():
            path = mount / self.record.cgroup_root.lstrip("/")
            self.record.cgroup_dirs.append(str(path))
            _save(self.workdir, self.record)
            path.mkdir(exist_ok=True)
        _save(self.workdir, self.record)

    def _write_pki(self) -> dict[str, Path]:
        cluster_pki = ClusterPki(self.cluster.ca_file.parent)
        ca = cluster_pki.ca()
        out = self.directory / "pki"
        out.mkdir(exist_ok=True)
        paths = {name: out / name for name in ("serving.crt", "serving.key")}
        issue(
            ca,
            common_name=NODE_NAME,
            dns_names=(NODE_NAME,),
            ip_addresses=(NODE_IP,),
            server=True,
        ).write(paths["serving.crt"], paths["serving.key"])
        kubelet = issue(
            ca,
            common_name=f"system:node:{NODE_NAME}",
            organizations=("system:nodes",),
            client=True,
        )
        proxy = issue(ca, common_name="system:kube-proxy", client=True)
        for name, pair, user in (
            ("kubelet", kubelet, f"system:node:{NODE_NAME}"),
            ("kube-proxy", proxy, "system:kube-proxy"),
        ):
            path = self.directory / f"{name}.kubeconfig"
            path.write_text(
                _kubeconfig(
                    self.cluster.server, self.cluster.ca_file, pair.cert_pem, pair.key_pem, user
                )
            )
            path.chmod(0o600)
            paths[name] = path
        return paths

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        process, record = spawn(
            name,
            self.netns.wrap(argv),
            workdir=self.workdir,
            env=clean_env(self.directory),
            die_with_parent=self.die_with_parent,
        )
        self._processes.append((name, process))
        self.record.processes.append(asdict(record))
        _save(self.workdir, self.record)
        return process

    def _ctr(self, *args: str, timeout: float = 60) -> str:
        done = subprocess.run(
            ["ctr", "--address", str(self.socket), "--namespace", "k8s.io", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            raise ClusterStartError(f"ctr {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def _wait_for(self, what: str, predicate: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, process in self._processes:
                if process.poll() is not None:
                    raise ClusterStartError(
                        f"{name} exited ({process.returncode}) while waiting for "
                        f"{what}\n{self.log_tails()}"
                    )
            if _answers(predicate):
                return
            time.sleep(0.5)
        raise ClusterStartError(
            f"timed out after {timeout:.0f}s waiting for {what}\n{self.log_tails()}"
        )

    def _start_containerd(self) -> None:
        cni_conf = self.directory / "cni" / "net.d"
        cni_conf.mkdir(parents=True, exist_ok=True)
        (cni_conf / "10-kuota.conflist").write_text(
            json.dumps(cni_config(self.record.cni_network, self.directory / "cni" / "ipam"))
        )
        config = self.directory / "containerd.toml"
        config.write_text(containerd_config(self.directory, self.socket, cni_conf))
        self._spawn("containerd", ["containerd", f"--config={config}"])
        self._wait_for("containerd", self._containerd_answers, 60)

    def _containerd_answers(self) -> bool:
        try:
            return bool(self._ctr("version", timeout=5))
        except ClusterStartError:  # the socket exists before containerd serves on it
            return False

    def _start_kubelet(self, pki: dict[str, Path]) -> None:
        config = self.directory / "kubelet.yaml"
        config.write_text(
            yaml.safe_dump(
                kubelet_config(
                    self.directory,
                    self.socket,
                    self.record.cgroup_root,
                    self.cluster.ca_file,
                    pki["serving.crt"],
                    pki["serving.key"],
                )
            )
        )
        labels = ",".join(f"{k}={v}" for k, v in NODE_LABELS.items())
        self._spawn(
            "kubelet",
            [
                str(self.tools.binary("kubelet")),
                f"--config={config}",
                f"--kubeconfig={pki['kubelet']}",
                f"--root-dir={self.directory / 'kubelet'}",
                f"--hostname-override={NODE_NAME}",
                f"--node-ip={NODE_IP}",
                f"--node-labels={labels}",
                "--v=1",
            ],
        )

    def _start_kube_proxy(self, pki: dict[str, Path]) -> None:
        config = self.directory / "kube-proxy.yaml"
        config.write_text(yaml.safe_dump(kube_proxy_config(pki["kube-proxy"])))
        self._spawn(
            "kube-proxy",
            [str(self.tools.binary("kube-proxy")), f"--config={config}", "--v=1"],
        )

    def _wait_ready(self, timeout: float) -> None:
        client = self.cluster.client()

        def ready() -> bool:
            reply = client.call("GET", f"/api/v1/nodes/{NODE_NAME}")
            return reply.status == 200 and is_usable(reply.body)

        def proxy_ready() -> bool:
            # kube-proxy's healthz answers 200 once its first iptables sync is done.
            return request("http://127.0.0.1:10256/healthz", timeout=2).status == 200

        self._wait_for(f"node {NODE_NAME} Ready and untainted", ready, timeout)
        self._wait_for("kube-proxy synced", lambda: self.netns.call(proxy_ready), 60)


# -- teardown (also for `down` and the sweep of abandoned clusters) -------------------
def _mounts_under(directory: str) -> list[str]:
    prefix = directory.rstrip("/") + "/"
    with open("/proc/self/mountinfo") as mounts:
        points = [line.split()[4] for line in mounts]
    inside = {p for p in points if p == directory or p.startswith(prefix)}
    return sorted(inside, key=lambda p: p.count("/"), reverse=True)


def _pids_in_cgroups(directories: Sequence[str]) -> set[int]:
    pids: set[int] = set()
    for top in directories:
        for procs in Path(top).rglob("cgroup.procs"):
            try:
                pids.update(int(line) for line in procs.read_text().split())
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
    record = _load(workdir)
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
        for path in sorted(Path(top).rglob("*"), key=lambda p: len(p.parts), reverse=True):
            if path.is_dir():
                try:
                    path.rmdir()
                except OSError:
                    pass
        try:
            Path(top).rmdir()
        except OSError:
            pass
    for name, value in record.sysctls.items():
        if _read_sysctl(name) != value:
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


def start_cluster(
    name: str,
    workdir: Path,
    *,
    images: Sequence[Path],
    die_with_parent: bool = True,
    nodes: Sequence[NodeSpec] | None = None,
) -> ClusterInfo:
    """A control plane and the real node in a new network namespace, all recorded in ``workdir``.

    On any failure everything started so far is taken down again
    (:func:`e2e.cluster.controlplane.stop_recorded`) before the error propagates.
    """
    from .controlplane import ControlPlane, stop_recorded
    from .netns import create
    from .tools import ToolPaths

    workdir.mkdir(parents=True, exist_ok=True)
    node_tools = NodeToolPaths.resolve()
    try:
        netns = create(f"kuota-{name}", workdir)
        plane = ControlPlane(
            name,
            tools=ToolPaths.resolve(),
            workdir=workdir,
            die_with_parent=die_with_parent,
            netns=netns,
            **({"nodes": nodes} if nodes is not None else {}),
        )
        info = plane.start()
        RealNode(
            info, netns, tools=node_tools, images=images, die_with_parent=die_with_parent
        ).start()
    except BaseException:
        stop_recorded(workdir)
        raise
    return info
