"""One real node for the local cluster: containerd, kubelet and kube-proxy.

The kwok nodes fake everything; this node runs containers.  It lives with
the whole control plane in a private network namespace (:mod:`.netns`):
kubelet refuses a loopback node IP, and kubelet, kube-proxy and the CNI
bridge rewrite iptables and routes, which must not touch the machine's own
network.  What each piece is and why (see also docs/testing.md#the-real-node):

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
``realnode.json`` *before* it is changed and undone by
:func:`e2e.cluster.node_record.teardown_recorded` (global sysctls, its cgroup
tree, mounts under the node directory, CNI result files, kubelet's links in
/var/log/containers, containerd's shim sockets); ``python -m e2e.cluster
down`` and the next session's sweep of abandoned clusters call it too, so a
crashed test runner leaves nothing behind either.  The configuration files
are the pure functions of :mod:`e2e.cluster.node_config`.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

import yaml

from certs.generate import issue

from .controlplane import (
    ClusterInfo,
    ClusterStartError,
    ControlPlane,
    _answers,
    component_log_tails,
    stop_recorded,
)
from .kubeapi import request
from .netns import NODE_IP, NetNamespace
from .node_config import (
    NODE_LABELS,
    NODE_NAME,
    cni_config,
    containerd_config,
    kube_proxy_config,
    kubeconfig,
    kubelet_config,
)
from .node_record import (
    CNI_CACHE,
    CONTAINER_LOG_LINKS,
    GLOBAL_SYSCTLS,
    SHIM_SOCKETS,
    NodeRecord,
    cgroup_mounts,
    read_sysctl,
    save_record,
    teardown_recorded,
)
from .node_tools import NodeToolPaths
from .nodes import NodeSpec, is_usable
from .pki import ClusterPki
from .processes import clean_env, spawn


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
        taints: Sequence[dict[str, str]] = (),
    ) -> None:
        """``taints``: the node registers with them (e.g. to keep workloads on kwok's nodes)."""
        self.cluster = cluster
        self.netns = netns
        self.tools = tools
        self.images = tuple(images)
        self.die_with_parent = die_with_parent
        self.taints = tuple(dict(taint) for taint in taints)
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
        save_record(self.workdir, self.record)
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
            _reap(process)
        self._processes.clear()

    def log_tails(self, lines: int = 60) -> str:
        return component_log_tails(self.workdir, lines)

    # -- steps ---------------------------------------------------------------------
    def _note_machine_state(self) -> None:
        """Record, before anything changes them, the sysctls, directories and cgroups."""
        self.record.sysctls = {
            name: value for name in GLOBAL_SYSCTLS if (value := read_sysctl(name)) is not None
        }
        for shared in (CNI_CACHE, CONTAINER_LOG_LINKS, SHIM_SOCKETS.parent, SHIM_SOCKETS):
            if not shared.exists():
                self.record.created_dirs.append(str(shared))
        # kubelet insists that its cgroup root exists in every hierarchy.
        for mount in cgroup_mounts():
            path = mount / self.record.cgroup_root.lstrip("/")
            self.record.cgroup_dirs.append(str(path))
            save_record(self.workdir, self.record)
            path.mkdir(exist_ok=True)
        save_record(self.workdir, self.record)

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
                kubeconfig(
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
        save_record(self.workdir, self.record)
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
        settings = kubelet_config(
            self.directory,
            self.socket,
            self.record.cgroup_root,
            self.cluster.ca_file,
            pki["serving.crt"],
            pki["serving.key"],
        )
        if self.taints:
            settings["registerWithTaints"] = list(self.taints)
        config.write_text(yaml.safe_dump(settings))
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


def start_cluster(
    name: str,
    workdir: Path,
    *,
    images: Sequence[Path],
    die_with_parent: bool = True,
    nodes: Sequence[NodeSpec] | None = None,
    kwok_stages: Callable[[Path], str] | None = None,
    node_taints: Sequence[dict[str, str]] = (),
) -> ClusterInfo:
    """A control plane and the real node in a new network namespace, all recorded in ``workdir``.

    ``nodes``: the kwok nodes (default: the usual fleet); ``kwok_stages``: kwok's
    configuration (default: :func:`e2e.cluster.kwok_config.render`); ``node_taints``:
    the real node's taints.

    On any failure everything started so far is taken down again
    (:func:`e2e.cluster.controlplane.stop_recorded`) before the error propagates.
    """
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
            **({"kwok_stages": kwok_stages} if kwok_stages is not None else {}),
        )
        info = plane.start()
        node = RealNode(
            info,
            netns,
            tools=node_tools,
            images=images,
            die_with_parent=die_with_parent,
            taints=node_taints,
        )
        node.start()
    except BaseException:
        stop_recorded(workdir)
        raise
    _RUNNING[str(workdir)] = (plane, node)
    return info


_RUNNING: dict[str, tuple[ControlPlane, RealNode]] = {}
"""The owners of the running clusters' processes, by workdir, until :func:`stop_cluster`.

Dropped while their processes run, the ``Popen`` objects would warn "still running"
whenever the garbage collector finds them: in some later test, where warnings are errors.
"""


def network_namespace(workdir: Path) -> NetNamespace:
    """The network namespace of the cluster started in ``workdir`` (running)."""
    return _RUNNING[str(workdir)][1].netns


def stop_cluster(workdir: Path) -> None:
    """Stop what :func:`start_cluster` started in ``workdir`` and collect every exit status."""
    owners = _RUNNING.pop(str(workdir), None)
    stop_recorded(workdir)
    if owners is not None:
        plane, node = owners
        node.stop()  # reaps the node's components (their teardown ran above)
        plane.stop()  # reaps the control plane's


def _reap(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Collect the exit status of a component the teardown has already signalled.

    A Popen dropped before its status is collected warns "still running" when the
    garbage collector finds it, in whatever test runs then; warnings are errors, so the
    status is collected here (SIGKILL first if the process outlived its teardown).
    """
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)
