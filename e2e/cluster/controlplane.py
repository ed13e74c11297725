"""One real Kubernetes control plane on loopback: etcd, kube-apiserver,
kube-controller-manager, kube-scheduler and kwok as ordinary processes.

Start order and readiness (docs/testing.md#the-local-cluster): every
port is picked free on 127.0.0.1 (and re-picked if a component still loses a
race for it), every component is polled until it answers, and any failure
raises with the tail of every component's log so the cause is on screen.

The state of a running cluster (ports, kubeconfig, the identity of each
process) is written to ``<workdir>/state.json`` so another invocation, e.g.
``python -m e2e.cluster down``, can stop exactly what this one started.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from certs.generate import issue

from . import kubeconfig, kwok_config, netns_forward, pki
from .kubeapi import AdminClient, request, tls_context
from .netns import NODE_IP, NetNamespace, delete_recorded
from .nodes import NodeSpec, default_fleet, is_usable
from .processes import ProcessRecord, clean_env, current_process, is_alive, log_tail, spawn, stop
from .tools import ToolPaths

# kuota's scheduler replicas (kuota-scheduler-0, -1, ...) stop first, so nothing writes
# while the cluster goes away; the webhooks (JobSet's controller and the frameworks'
# serve their own) stop last: the API server must never be left calling a webhook that
# is gone.
FRAMEWORK_CONTROLLERS = "framework-controllers"
"""The group of every framework manager (``frameworks.py`` names each ``<name>-controller``)."""
STOP_ORDER = (
    "kuota-multikueue",
    "kuota-scheduler",
    "kwok",
    "kube-scheduler",
    "kube-controller-manager",
    "api-forward",
    "kube-apiserver",
    "etcd",
    FRAMEWORK_CONTROLLERS,
    "jobset-controller",
    "kuota-webhook",
)


def _stop_group(record_name: str) -> str:
    """The STOP_ORDER entry a process belongs to (replicas are numbered; frameworks grouped)."""
    if record_name.startswith("kuota-scheduler-"):
        return "kuota-scheduler"
    if record_name.endswith("-controller") and record_name not in STOP_ORDER:
        return FRAMEWORK_CONTROLLERS
    return record_name


class ClusterStartError(RuntimeError):
    """The control plane did not come up; the message carries every log tail."""


@dataclass(frozen=True)
class ClusterInfo:
    """How to reach a running local cluster."""

    name: str
    workdir: Path
    kubeconfig: Path
    server: str
    ca_file: Path
    admin_cert: Path
    admin_key: Path

    def client(self) -> AdminClient:
        return AdminClient(
            server=self.server,
            ca_file=self.ca_file,
            cert_file=self.admin_cert,
            key_file=self.admin_key,
        )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def read_state(workdir: Path) -> dict | None:
    try:
        return json.loads((workdir / "state.json").read_text())
    except (OSError, json.JSONDecodeError):
        return None


def recorded_processes(state: dict) -> list[ProcessRecord]:
    return [ProcessRecord(**record) for record in state.get("processes", [])]


def sweep_abandoned(parent: Path, prefix: str) -> list[Path]:
    """Stop and remove clusters under ``parent`` whose owning process is gone.

    A test runner that was killed leaves its work directory (and, if the kernel
    could not deliver the death signal, processes) behind; the next session
    clears them so nothing accumulates.  Directories of live owners are kept.
    """
    removed = []
    for workdir in sorted(parent.glob(f"{prefix}*")):
        state = read_state(workdir)
        if state is None or "owner" not in state or is_alive(ProcessRecord(**state["owner"])):
            continue
        stop_recorded(workdir)
        shutil.rmtree(workdir, ignore_errors=True)
        removed.append(workdir)
    return removed


def stop_recorded(workdir: Path) -> list[str]:
    """Stop the processes a previous run recorded in ``workdir``; returns the names stopped.

    A real node (``realnode.json``) is taken down first, with everything it
    changed on the machine; its network namespace (``netns.json``) last.
    """
    from .node_record import teardown_recorded  # the real node builds on this module

    stopped = teardown_recorded(workdir)
    state = read_state(workdir)
    if state is not None:
        records = recorded_processes(state)
        for name in STOP_ORDER:
            for record in records:
                if _stop_group(record.name) == name and is_alive(record):
                    stop(record)
                    stopped.append(record.name)
    if delete_recorded(workdir):
        stopped.append("netns")
    return stopped


class ControlPlane:
    """A local control plane; usable as a context manager."""

    def __init__(
        self,
        name: str = "kuota",
        *,
        tools: ToolPaths | None = None,
        workdir: Path,
        nodes: Sequence[NodeSpec] = default_fleet(),
        die_with_parent: bool = True,
        netns: NetNamespace | None = None,
        kwok_stages: Callable[[Path], str] = kwok_config.render,
    ) -> None:
        """``netns``: run every component in that network namespace, the API server
        bound to its node address too (a cluster with a real node, e2e.cluster.realnode).
        ``kwok_stages``: kwok's configuration from the directory of its stage files
        (default: :func:`e2e.cluster.kwok_config.render`)."""
        self.name = name
        self.netns = netns
        self.tools = tools or ToolPaths.resolve()
        self.workdir = workdir
        self.nodes = tuple(nodes)
        self.die_with_parent = die_with_parent
        self.kwok_stages = kwok_stages
        self._processes: list[tuple[subprocess.Popen[bytes], ProcessRecord]] = []
        # How each component on fixed ports was started: its command line and readiness
        # probe, so restart() brings it back exactly as it was (same ports, same data).
        self._launches: dict[str, tuple[list[str], Callable[[], bool]]] = {}
        self._pki: pki.ClusterPki | None = None
        self._info: ClusterInfo | None = None
        self._owner = current_process()

    # -- lifecycle -----------------------------------------------------------------
    def __enter__(self) -> ClusterInfo:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout: float = 180.0) -> ClusterInfo:
        started = time.monotonic()
        self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            self._pki = pki.generate(self.workdir / "pki", cluster_name=self.name)
            etcd_port = self._start_etcd()
            api_port = self._start_apiserver(etcd_port)
            if self.netns is not None:
                self._start_api_forward(api_port)
            self._info = self._write_kubeconfig(api_port)
            self._start_controller_manager()
            self._start_scheduler()
            self._start_kwok()
            self._create_nodes()
            self._wait(self._nodes_usable, "fake nodes Ready and untainted", 60)
            self._wait(self._default_service_account, "ServiceAccount default/default", 60)
        except BaseException:
            self.stop(remove=False)
            raise
        elapsed = time.monotonic() - started
        if elapsed > timeout:
            print(f"[kuota-cluster] warning: start took {elapsed:.0f}s (budget {timeout:.0f}s)")
        self._save_state()
        return self._info

    def stop(self, *, remove: bool = False) -> None:
        """Stop every process this object started (idempotent)."""
        for name in STOP_ORDER:
            for process, record in self._processes:
                if record.name == name:
                    stop(record, reap=process.poll)
                    process.poll()
        self._processes.clear()
        if remove:
            shutil.rmtree(self.workdir, ignore_errors=True)

    @property
    def info(self) -> ClusterInfo:
        if self._info is None:
            raise RuntimeError("the control plane is not started")
        return self._info

    def log_tails(self, lines: int = 80) -> str:
        return component_log_tails(self.workdir, lines)

    # -- faults (chaos tests: e2e/chaos) ------------------------------------------------
    def _entry(self, name: str) -> tuple[subprocess.Popen[bytes], ProcessRecord]:
        for entry in self._processes:
            if entry[1].name == name and is_alive(entry[1]):
                return entry
        raise RuntimeError(f"{name} is not running in this control plane")

    def restart(self, name: str, *, down_for: float = 0.0, timeout: float = 120.0) -> float:
        """Crash component ``name`` (SIGKILL), leave it down ``down_for`` seconds, and start it
        again as it was; returns the seconds from the kill until it answered its readiness
        probe again.

        Same command line, hence the same ports, certificates and data: clients see their
        connections reset, then the same address answer again (a crash or an upgrade of a
        control-plane component).  Only components started on probed ports (etcd,
        kube-apiserver, kube-controller-manager, kube-scheduler) can be restarted.
        Call it from the thread that started the plane, not a worker thread: a component
        dies with the thread that spawned it (``PR_SET_PDEATHSIG`` is per thread).
        """
        argv, ready = self._launches[name]
        process, record = self._entry(name)
        started = time.monotonic()
        os.killpg(record.pid, signal.SIGKILL)
        process.wait(timeout=10)
        self._processes.remove((process, record))
        time.sleep(down_for)
        process, record = self._spawn(name, argv)
        deadline = started + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise ClusterStartError(
                    f"{name} exited with {process.returncode} on restart\n{self.log_tails()}"
                )
            if self._probe(ready):
                return time.monotonic() - started
            time.sleep(0.25)
        raise ClusterStartError(
            f"{name} not ready within {timeout:.0f}s of its restart\n{self.log_tails()}"
        )

    def freeze(self, name: str) -> None:
        """SIGSTOP component ``name``: it holds its sockets but answers nothing (a frozen VM,
        a disk stall).  Always :meth:`thaw` it; :meth:`frozen` does."""
        os.killpg(self._entry(name)[1].pid, signal.SIGSTOP)

    def thaw(self, name: str) -> None:
        """SIGCONT component ``name`` after :meth:`freeze`."""
        os.killpg(self._entry(name)[1].pid, signal.SIGCONT)

    @contextlib.contextmanager
    def frozen(self, name: str) -> Iterator[None]:
        """Component ``name`` frozen for the block, thawed however it ends."""
        self.freeze(name)
        try:
            yield
        finally:
            self.thaw(name)

    # -- components ------------------------------------------------------------------
    def _probe(self, predicate: Callable[[], bool]) -> bool:
        """``_answers`` run where the components listen (inside the namespace, if any)."""
        if self.netns is None:
            return _answers(predicate)
        return self.netns.call(lambda: _answers(predicate))

    def _spawn(
        self, name: str, argv: list[str], *, in_netns: bool = True
    ) -> tuple[subprocess.Popen[bytes], ProcessRecord]:
        if self.netns is not None and in_netns:
            argv = self.netns.wrap(argv)
        entry = spawn(
            name,
            argv,
            workdir=self.workdir,
            env=clean_env(self.workdir),
            die_with_parent=self.die_with_parent,
        )
        self._processes.append(entry)
        self._save_state()  # recorded at once, so a crash mid-start can still be cleaned up
        return entry

    def _start_with_ports(
        self,
        name: str,
        port_count: int,
        argv_for: Callable[[list[int]], list[str]],
        ready: Callable[[list[int]], bool],
        timeout: float,
    ) -> list[int]:
        """Start a component on fresh ports; retry when it lost a port race."""
        for _attempt in range(3):
            ports = [free_port() for _ in range(port_count)]
            argv = argv_for(ports)
            process, record = self._spawn(name, argv)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if process.poll() is not None:
                    break
                if self._probe(functools.partial(ready, ports)):
                    self._launches[name] = (argv, functools.partial(ready, ports))
                    return ports
                time.sleep(0.25)
            else:
                raise ClusterStartError(
                    f"{name} not ready within {timeout:.0f}s\n{self.log_tails()}"
                )
            self._processes.remove((process, record))
            self._save_state()
            if "address already in use" not in log_tail(record.log, 20):
                raise ClusterStartError(
                    f"{name} exited with {process.returncode}\n{self.log_tails()}"
                )
        raise ClusterStartError(f"{name}: no free port after 3 attempts\n{self.log_tails()}")

    def _start_etcd(self) -> int:
        binary = str(self.tools.binary("etcd"))
        data_dir = self.workdir / "etcd-data"

        def argv(ports: list[int]) -> list[str]:
            client, peer = ports
            shutil.rmtree(data_dir, ignore_errors=True)
            return [
                binary,
                f"--name={self.name}",
                f"--data-dir={data_dir}",
                f"--listen-client-urls=http://127.0.0.1:{client}",
                f"--advertise-client-urls=http://127.0.0.1:{client}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster={self.name}=http://127.0.0.1:{peer}",
                "--initial-cluster-state=new",
                "--unsafe-no-fsync=true",
                "--snapshot-count=10000",
                "--quota-backend-bytes=1073741824",
                "--log-level=warn",
            ]

        def ready(ports: list[int]) -> bool:
            reply = request(f"http://127.0.0.1:{ports[0]}/health", timeout=2)
            return (
                reply.status == 200
                and isinstance(reply.body, dict)
                and reply.body.get("health") == "true"
            )

        return self._start_with_ports("etcd", 2, argv, ready, 30)[0]

    def _start_apiserver(self, etcd_port: int) -> int:
        assert self._pki is not None
        p = self._pki
        context = tls_context(ca_file=p.ca_cert, cert_file=p.admin_cert, key_file=p.admin_key)

        # In a private namespace the API server also listens on the node's address and
        # keeps the `kubernetes` Service's endpoints (pods reach it through the
        # Service); on the machine's loopback neither is possible.
        network = (
            [
                "--bind-address=0.0.0.0",
                f"--advertise-address={NODE_IP}",
                f"--kubelet-client-certificate={p.admin_cert}",
                f"--kubelet-client-key={p.admin_key}",
                f"--kubelet-certificate-authority={p.ca_cert}",
                # The node's IP, never its name: there is no DNS for it to resolve.
                "--kubelet-preferred-address-types=InternalIP",
            ]
            if self.netns is not None
            else [
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                "--endpoint-reconciler-type=none",
            ]
        )

        def argv(ports: list[int]) -> list[str]:
            return [
                str(self.tools.binary("kube-apiserver")),
                f"--etcd-servers=http://127.0.0.1:{etcd_port}",
                *network,
                f"--secure-port={ports[0]}",
                f"--cert-dir={self.workdir / 'apiserver-certs'}",
                f"--tls-cert-file={p.apiserver_cert}",
                f"--tls-private-key-file={p.apiserver_key}",
                f"--client-ca-file={p.ca_cert}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={p.sa_pub}",
                f"--service-account-signing-key-file={p.sa_key}",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--authorization-mode=Node,RBAC",
                # The aggregation layer: the API server proxies extension APIs (kuota's
                # visibility API) with this client certificate and the caller in headers.
                f"--requestheader-client-ca-file={p.front_proxy_ca_cert}",
                f"--requestheader-allowed-names={pki.FRONT_PROXY_CLIENT}",
                "--requestheader-username-headers=X-Remote-User",
                "--requestheader-group-headers=X-Remote-Group",
                "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                "--requestheader-uid-headers=X-Remote-Uid",
                f"--proxy-client-cert-file={p.front_proxy_client_cert}",
                f"--proxy-client-key-file={p.front_proxy_client_key}",
                "--enable-admission-plugins=NodeRestriction",
                "--allow-privileged=true",
                "--profiling=false",
                # Load tests burst hundreds of writes; remove server-side throttling.
                "--max-requests-inflight=0",
                "--max-mutating-requests-inflight=0",
                "--enable-priority-and-fairness=false",
                "--v=1",
            ]

        def ready(ports: list[int]) -> bool:
            reply = request(f"https://127.0.0.1:{ports[0]}/readyz", context=context, timeout=3)
            return reply.status == 200

        return self._start_with_ports("kube-apiserver", 1, argv, ready, 120)[0]

    def _start_api_forward(self, api_port: int) -> None:
        """The machine's 127.0.0.1:api_port to the same port inside the namespace."""
        assert self.netns is not None
        argv = [sys.executable, netns_forward.__file__, str(self.netns.path), str(api_port)]
        process, _ = self._spawn("api-forward", argv, in_netns=False)
        deadline = time.monotonic() + 20
        while not _answers(lambda: _listening(api_port)):
            if process.poll() is not None or time.monotonic() > deadline:
                raise ClusterStartError(f"api-forward did not start\n{self.log_tails()}")
            time.sleep(0.1)

    def _write_kubeconfig(self, api_port: int) -> ClusterInfo:
        assert self._pki is not None
        server = f"https://127.0.0.1:{api_port}"
        path = self.workdir / "admin.kubeconfig"
        path.write_text(kubeconfig.render(cluster_name=self.name, server=server, pki=self._pki))
        path.chmod(0o600)
        return ClusterInfo(
            name=self.name,
            workdir=self.workdir,
            kubeconfig=path,
            server=server,
            ca_file=self._pki.ca_cert,
            admin_cert=self._pki.admin_cert,
            admin_key=self._pki.admin_key,
        )

    def _health_probe(self, path: str) -> Callable[[list[int]], bool]:
        insecure = tls_context(ca_file=None)
        return lambda ports: (
            request(f"https://127.0.0.1:{ports[0]}{path}", context=insecure, timeout=3).status
            == 200
        )

    def _start_controller_manager(self) -> None:
        assert self._pki is not None
        config = str(self.info.kubeconfig)

        def argv(ports: list[int]) -> list[str]:
            return [
                str(self.tools.binary("kube-controller-manager")),
                f"--kubeconfig={config}",
                f"--authentication-kubeconfig={config}",
                f"--authorization-kubeconfig={config}",
                "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
                "--bind-address=127.0.0.1",
                f"--secure-port={ports[0]}",
                "--leader-elect=false",
                "--controllers=*",
                f"--service-account-private-key-file={self._pki.sa_key}",
                f"--root-ca-file={self._pki.ca_cert}",
                "--use-service-account-credentials=false",
                f"--cluster-name={self.name}",
                "--kube-api-qps=100",
                "--kube-api-burst=200",
                "--v=1",
            ]

        self._start_with_ports(
            "kube-controller-manager", 1, argv, self._health_probe("/healthz"), 60
        )

    def _start_scheduler(self) -> None:
        config_path = self.workdir / "scheduler.yaml"
        config_path.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "clientConnection": {
                        "kubeconfig": str(self.info.kubeconfig),
                        "qps": 100,
                        "burst": 200,
                    },
                    "leaderElection": {"leaderElect": False},
                }
            )
        )

        def argv(ports: list[int]) -> list[str]:
            return [
                str(self.tools.binary("kube-scheduler")),
                f"--config={config_path}",
                "--bind-address=127.0.0.1",
                f"--secure-port={ports[0]}",
                "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
                "--v=1",
            ]

        self._start_with_ports("kube-scheduler", 1, argv, self._health_probe("/readyz"), 60)

    def _kwok_serving_pair(self) -> tuple[Path, Path]:
        """kwok's kubelet-API certificate for 127.0.0.1, signed by the cluster CA.

        The API server verifies kubelets against that CA
        (``--kubelet-certificate-authority``), so ``kubectl exec`` and ``logs``
        reach kwok's nodes only with a certificate it trusts."""
        assert self._pki is not None
        cert, key = (
            self.workdir / "pki" / "kwok-serving.crt",
            self.workdir / "pki" / "kwok-serving.key",
        )
        issue(self._pki.ca(), common_name="kwok", ip_addresses=("127.0.0.1",), server=True).write(
            cert, key
        )
        return cert, key

    def _start_kwok(self) -> None:
        config_path = self.workdir / "kwok.yaml"
        config_path.write_text(self.kwok_stages(self.tools.kwok_stages))
        cert, key = self._kwok_serving_pair()
        # kwok's own kubelet API (exec, logs): its nodes report 127.0.0.1 and this
        # port, so the API server, beside kwok in any network namespace, dials it.
        server_port = free_port()
        process, _ = self._spawn(
            "kwok",
            [
                str(self.tools.binary("kwok")),
                f"--kubeconfig={self.info.kubeconfig}",
                f"--config={config_path}",
                f"--server-address=127.0.0.1:{server_port}",
                "--node-ip=127.0.0.1",
                f"--node-port={server_port}",
                f"--tls-cert-file={cert}",
                f"--tls-private-key-file={key}",
                # With a real node kwok must leave it alone: it manages only the kwok nodes.
                "--manage-all-nodes=true"
                if self.netns is None
                else "--manage-nodes-with-label-selector=type=kwok",
            ],
        )
        time.sleep(0.5)
        if process.poll() is not None:
            raise ClusterStartError(f"kwok exited with {process.returncode}\n{self.log_tails()}")

    # -- cluster contents ------------------------------------------------------------
    def _create_nodes(self) -> None:
        client = self.info.client()
        for node in self.nodes:
            reply = client.call("POST", "/api/v1/nodes", node.manifest())
            if reply.status not in (201, 409):
                raise ClusterStartError(
                    f"creating node {node.name}: HTTP {reply.status}: {reply.body}"
                )

    def _nodes_usable(self) -> bool:
        reply = self.info.client().call("GET", "/api/v1/nodes")
        if reply.status != 200:
            return False
        usable = {
            item["metadata"]["name"] for item in reply.body.get("items", []) if is_usable(item)
        }
        return {node.name for node in self.nodes} <= usable

    def _default_service_account(self) -> bool:
        return (
            self.info.client()
            .call("GET", "/api/v1/namespaces/default/serviceaccounts/default")
            .status
            == 200
        )

    def _wait(self, predicate: Callable[[], bool], what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for process, record in self._processes:
                if process.poll() is not None:
                    raise ClusterStartError(
                        f"{record.name} exited ({process.returncode}) while waiting for {what}\n"
                        f"{self.log_tails()}"
                    )
            if self._probe(predicate):
                return
            time.sleep(0.5)
        raise ClusterStartError(
            f"timed out after {timeout:.0f}s waiting for {what}\n{self.log_tails()}"
        )

    def _save_state(self) -> None:
        state = {
            "name": self.name,
            "server": self._info.server if self._info else None,
            "kubeconfig": str(self._info.kubeconfig) if self._info else None,
            "owner": asdict(self._owner),
            "processes": [asdict(record) for _, record in self._processes],
        }
        (self.workdir / "state.json").write_text(json.dumps(state, indent=2))


def _listening(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return True


def _answers(predicate: Callable[[], bool]) -> bool:
    """A readiness probe that treats 'not listening yet' as 'not ready'."""
    try:
        return predicate()
    except (OSError, ValueError, http.client.HTTPException):
        return False


def component_log_tails(workdir: Path, lines: int = 80) -> str:
    logs = sorted((workdir / "logs").glob("*.log"))
    return "\n".join(
        f"----- {path.stem} (last {lines} lines) -----\n{log_tail(path, lines)}" for path in logs
    )
