"""The real controllers of the job frameworks on the local cluster: CRDs, manager, webhooks.

Each framework kuota queues besides batch Jobs and JobSets has a controller
of its own (LeaderWorkerSet, KubeRay, the MPI operator, Kubeflow's trainers,
AppWrapper).  The end-to-end tests run that controller, built from its Go
module (``framework_tools``), so they prove that the framework's own
controller makes the pods where kuota placed them.  On the local cluster
each runs the way the JobSet controller does (``jobset.py``,
docs/testing.md#the-local-cluster):

* its CRDs, from the pinned module, created through the API and waited on
  until ``Established``;
* its manager, a local process on 127.0.0.1 with the admin kubeconfig (so it
  needs no RBAC of its own), leader election and metrics off, certificate
  management off: the harness writes a serving certificate for 127.0.0.1
  and hands the manager its directory;
* its webhooks, when it has some: the module's registrations with upstream's
  kustomize patches applied and every ``clientConfig.service`` replaced by a
  ``url`` on 127.0.0.1 plus the generated CA;
* what its installation ships besides (Kubeflow Trainer's ``torch-distributed``
  ClusterTrainingRuntime, which TrainJobs name), created before the manager starts.

A framework built on another controller (Trainer makes JobSets) is refused,
with the reason, unless that controller's CRD is already there.

What differs between frameworks (files, command line, the probe that says
its webhooks are called) is a :class:`Framework`; :data:`FRAMEWORKS` lists
them.  Every process is recorded, so ``python -m e2e.cluster down`` stops
it; the registrations go before the process, the process before the API
server would miss it.
"""

from __future__ import annotations

import base64
import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from certs import files as cert_files

from . import framework_tools
from .controller_start import CRD_PATH, ControllerStartError, apply, check, wait_for
from .controlplane import ClusterInfo, free_port
from .framework_tools import ControllerBuild, ControllerModule
from .jobset import WEBHOOK_PATHS, webhook_configurations
from .kubeapi import AdminClient, request
from .netns import NetNamespace
from .processes import ProcessRecord, clean_env, log_tail, spawn, stop


@dataclass(frozen=True)
class Ports:
    webhook: int
    health: int
    metrics: int


@dataclass(frozen=True)
class Framework:
    """What it takes to run one framework's controller on the local cluster."""

    module: ControllerModule
    crds: tuple[str, ...]
    """Module-relative CRD files (a file may hold several documents)."""
    command: Callable[[ControllerBuild, ClusterInfo, Path, Ports, Path], list[str]]
    """argv of the manager: (build, cluster, workdir, ports, certificate directory)."""
    webhook_dir: str | None = None
    """Module-relative directory of ``manifests.yaml`` and ``kustomization.yaml``, if any."""
    probe: Callable[[AdminClient], bool] | None = None
    """True once the API server calls the framework's webhooks (or the manager is up)."""
    health_path: str = "/readyz"
    health_port: int | None = None
    """A health port the manager fixes itself (on every interface), when it lets none be chosen."""
    namespaces: tuple[str, ...] = ()
    """Namespaces the manager needs (its leader-election Lease's, when it cannot turn that off)."""
    objects: tuple[tuple[str, dict[str, Any]], ...] = ()
    """(collection path, manifest) of objects its installation provides before it starts."""
    module_objects: tuple[tuple[str, str], ...] = ()
    """(collection path, module-relative file) of the module's own objects created after its
    CRDs (Trainer's ClusterTrainingRuntimes); a file may hold several documents."""
    needs: tuple[str, ...] = field(default_factory=tuple)
    """Other controllers (by name: ``jobset`` or a framework) this one relies on."""

    @property
    def name(self) -> str:
        return self.module.name

    @property
    def process(self) -> str:
        return f"{self.name}-controller"


FrameworkStartError = ControllerStartError
"""The controller or its registrations did not come up; carries its log tail."""


@dataclass
class FrameworkController:
    """A running framework manager on 127.0.0.1 and what was registered for it."""

    framework: Framework
    client: AdminClient
    ports: Ports
    record: ProcessRecord
    process: subprocess.Popen[bytes] | None
    registrations: list[tuple[str, str]]

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.ports.webhook}"

    def log_tail(self, lines: int = 80) -> str:
        return log_tail(self.record.log, lines)

    def uninstall(self) -> None:
        """Registrations first, then the process (stopped even when the API server is gone)."""
        try:
            for collection, name in self.registrations:
                self.client.call("DELETE", f"{collection}/{name}")
            self.registrations = []
        finally:
            stop(self.record, reap=_reaper(self.process))


def kubebuilder_config(
    api_version: str, ports: Ports, cert_dir: Path, **extra: Any
) -> dict[str, Any]:
    """A controller-runtime manager's ``Configuration`` for a local, single-replica run (pure)."""
    return {
        "apiVersion": api_version,
        "kind": "Configuration",
        "webhook": {"host": "127.0.0.1", "port": ports.webhook, "certDir": str(cert_dir)},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{ports.health}"},
        "metrics": {"bindAddress": "0"},
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        **extra,
    }


def install_framework(
    framework: Framework,
    info: ClusterInfo,
    workdir: Path,
    *,
    controller_build: ControllerBuild | None = None,
    die_with_parent: bool = True,
    timeout: float = 120,
    netns: NetNamespace | None = None,
) -> FrameworkController:
    """CRDs, the manager running, its webhooks by URL; returns once the API server calls them.

    ``netns``: the network namespace of a cluster with a real node, whose API server
    reaches 127.0.0.1 inside it only; the manager then runs there (its kubeconfig's
    127.0.0.1 address is the API server's own inside, the forwarder's outside).
    """
    built = controller_build or framework_tools.resolve(framework.module)
    client = info.client()
    cert_dir = workdir / f"{framework.name}-webhook-certs"
    cert_files.write(cert_dir, cert_files.make(dns_names=["localhost"], ip_addresses=["127.0.0.1"]))
    for relative in framework.crds:
        for crd in yaml.safe_load_all(built.file(relative).read_text()):
            if crd:
                apply(client, CRD_PATH, crd)
    for name in framework.namespaces:
        reply = client.call(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )
        if reply.status not in (201, 409):
            check(reply, f"creating namespace {name}")
    for collection, manifest in framework.objects:
        apply(client, collection, manifest)
    for collection, relative in framework.module_objects:
        for manifest in yaml.safe_load_all(built.file(relative).read_text()):
            if manifest:
                apply(client, collection, manifest)
    _check_needs(framework, client)
    controller = _start_manager(framework, built, info, workdir, cert_dir, die_with_parent, netns)
    try:
        if framework.webhook_dir is not None:
            ca_bundle = base64.b64encode((cert_dir / "ca.crt").read_bytes()).decode()
            for configuration in load_webhooks(
                built, framework, base_url=controller.base_url, ca_bundle=ca_bundle
            ):
                collection = WEBHOOK_PATHS[configuration["kind"]]
                apply(client, collection, configuration)
                controller.registrations.append((collection, configuration["metadata"]["name"]))
        if framework.probe is not None:
            probe = framework.probe
            _wait(controller, lambda: probe(client), f"{framework.name}'s webhooks", timeout)
    except BaseException:
        controller.uninstall()
        raise
    return controller


_NEEDED_CRDS = {"jobset": "jobsets.jobset.x-k8s.io"}
"""The CRD whose presence shows that a controller a framework needs is installed."""


def _check_needs(framework: Framework, client: AdminClient) -> None:
    """Refuse to start a manager whose prerequisite is missing, saying which.

    A manager that watches another controller's kind (Trainer watches JobSets) cannot
    start its controllers without that kind's CRD, and says so late: Trainer comes up,
    answers its webhooks, then exits two minutes on with "failed to wait for
    trainjob_controller caches to sync kind source: *v1alpha2.JobSet".
    """
    for need in framework.needs:
        crd = _NEEDED_CRDS.get(need)
        if crd is not None and client.call("GET", f"{CRD_PATH}/{crd}").status != 200:
            raise FrameworkStartError(
                f"{framework.name} needs {need} installed first (its CRD {crd} is missing): "
                f"`up --jobset --framework {framework.name}`, or the `jobset` fixture"
            )


def load_webhooks(
    built: ControllerBuild, framework: Framework, *, base_url: str, ca_bundle: str
) -> list[dict[str, Any]]:
    """The module's webhook registrations, patched and reached by URL."""
    assert framework.webhook_dir is not None
    directory = built.file(framework.webhook_dir)
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    manifests = [
        document
        for document in yaml.safe_load_all((directory / "manifests.yaml").read_text())
        if document
    ]
    patches = {
        entry["path"]: yaml.safe_load((directory / entry["path"]).read_text())
        for entry in kustomization.get("patches", [])
    }
    return webhook_configurations(
        manifests,
        kustomization,
        patches,
        base_url=base_url,
        ca_bundle=ca_bundle,
        prefix=f"{framework.name}-",
    )


def _start_manager(
    framework: Framework,
    built: ControllerBuild,
    info: ClusterInfo,
    workdir: Path,
    cert_dir: Path,
    die_with_parent: bool,
    netns: NetNamespace | None = None,
) -> FrameworkController:
    """Start the manager on fresh ports; pick new ones when it lost a race for them."""
    if netns is None and framework.health_port is not None and _listening(framework.health_port):
        raise FrameworkStartError(
            f"{framework.process} listens on port {framework.health_port}, which it fixes "
            "itself, and something else holds that port"
        )
    for _attempt in range(3):
        ports = Ports(
            webhook=free_port(),
            health=framework.health_port or free_port(),
            metrics=free_port(),
        )
        argv = framework.command(built, info, workdir, ports, cert_dir)
        process, record = spawn(
            framework.process,
            netns.wrap(argv) if netns is not None else argv,
            workdir=workdir,
            env=clean_env(workdir),
            die_with_parent=die_with_parent,
        )
        controller = FrameworkController(
            framework=framework,
            client=info.client(),
            ports=ports,
            record=record,
            process=process,
            registrations=[],
        )
        try:
            _wait(
                controller,
                _ready(ports.health, framework.health_path, netns),
                f"the {framework.name} manager's health endpoint",
                90,
            )
            return controller
        except FrameworkStartError:
            stop(record, reap=_reaper(process))
            if "address already in use" not in controller.log_tail(20):
                raise
    raise FrameworkStartError(f"{framework.process}: no free port after 3 attempts")


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _reaper(process: subprocess.Popen[bytes] | None) -> Callable[[], None] | None:
    if process is None:
        return None
    child = process

    def reap() -> None:
        child.poll()

    return reap


def _ready(port: int, path: str, netns: NetNamespace | None = None) -> Callable[[], bool]:
    def answers() -> bool:
        return request(f"http://127.0.0.1:{port}{path}", timeout=2).status == 200

    return (lambda: netns.call(answers)) if netns is not None else answers


def _wait(
    controller: FrameworkController, predicate: Callable[[], bool], what: str, timeout: float
) -> None:
    wait_for(
        controller.process,
        controller.framework.process,
        controller.log_tail,
        predicate,
        what,
        timeout,
    )


# -- the frameworks ---------------------------------------------------------------------------


def _write_config(workdir: Path, name: str, config: dict[str, Any]) -> Path:
    path = workdir / f"{name}-controller.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _lws_command(
    built: ControllerBuild, info: ClusterInfo, workdir: Path, ports: Ports, cert_dir: Path
) -> list[str]:
    config = kubebuilder_config("config.lws.x-k8s.io/v1alpha1", ports, cert_dir)
    return [
        str(built.binary),
        f"--kubeconfig={info.kubeconfig}",
        f"--config={_write_config(workdir, 'lws', config)}",
        "--zap-log-level=info",
    ]


_LWS_PROBE_PATH = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets?dryRun=All"
_LWS_PROBE = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "lws-webhook-probe", "namespace": "default"},
    "spec": {
        "leaderWorkerTemplate": {
            "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}
        }
    },
}


def _lws_probe(client: AdminClient) -> bool:
    """Only the LeaderWorkerSet mutating webhook sets a restart policy (the CRD has none)."""
    reply = client.call("POST", _LWS_PROBE_PATH, _LWS_PROBE)
    template = (reply.body.get("spec") or {}).get("leaderWorkerTemplate") or {}
    return reply.status == 201 and bool(template.get("restartPolicy"))


LWS = Framework(
    module=ControllerModule(
        name="lws",
        module="sigs.k8s.io/lws",
        version="v0.9.0",
        main="sigs.k8s.io/lws/cmd",
        files=(
            "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml",
            "config/crd/bases/disaggregatedset.x-k8s.io_disaggregatedsets.yaml",
            "config/webhook/manifests.yaml",
            "config/webhook/kustomization.yaml",
            "config/webhook/mutating-patch.yaml",
            "config/webhook/validating-patch.yaml",
        ),
    ),
    crds=(
        "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml",
        "config/crd/bases/disaggregatedset.x-k8s.io_disaggregatedsets.yaml",
    ),
    command=_lws_command,
    webhook_dir="config/webhook",
    probe=_lws_probe,
)


def _kuberay_command(
    built: ControllerBuild, info: ClusterInfo, workdir: Path, ports: Ports, cert_dir: Path
) -> list[str]:
    # No webhooks: KubeRay runs them only with ENABLE_WEBHOOKS=true, which its default
    # installation (and Kueue's e2e setup) leaves off.
    return [
        str(built.binary),
        f"--kubeconfig={info.kubeconfig}",
        f"--metrics-addr=127.0.0.1:{ports.metrics}",
        f"--health-probe-bind-address=127.0.0.1:{ports.health}",
        "--enable-leader-election=false",
        "--log-stdout-encoder=console",
    ]


_RAY_CRDS = tuple(
    f"config/crd/bases/ray.io_{plural}.yaml"
    for plural in ("rayclusters", "rayjobs", "rayservices", "raycronjobs")
)
KUBERAY = Framework(
    module=ControllerModule(
        name="kuberay",
        module="github.com/ray-project/kuberay/ray-operator",
        version="v1.6.2",
        main="github.com/ray-project/kuberay/ray-operator",
        files=_RAY_CRDS,
    ),
    crds=_RAY_CRDS,
    command=_kuberay_command,
)


def _mpi_command(
    built: ControllerBuild, info: ClusterInfo, workdir: Path, ports: Ports, cert_dir: Path
) -> list[str]:
    # Its health check listens on :8080 (fixed), its leader election cannot be turned off
    # (a Lease in the namespace below); no webhooks, no metrics port.
    return [
        str(built.binary),
        f"--kubeConfig={info.kubeconfig}",
        f"--lock-namespace={MPI_NAMESPACE}",
        "--threadiness=2",
        "--kube-api-qps=50",
        "--kube-api-burst=100",
    ]


MPI_NAMESPACE = "mpi-operator"
MPI_OPERATOR = Framework(
    module=ControllerModule(
        name="mpi-operator",
        module="github.com/kubeflow/mpi-operator",
        version="v0.8.2",
        main="github.com/kubeflow/mpi-operator/cmd/mpi-operator",
        files=("manifests/base/kubeflow.org_mpijobs.yaml",),
    ),
    crds=("manifests/base/kubeflow.org_mpijobs.yaml",),
    command=_mpi_command,
    health_path="/healthz",
    health_port=8080,
    namespaces=(MPI_NAMESPACE,),
)


_TRAINING_ROTATOR_CERT = Path("/tmp/k8s-webhook-server/serving-certs/tls.crt")
"""Where the training operator's certificate rotator waits for a file (a fixed path)."""


def _training_operator_command(
    built: ControllerBuild, info: ClusterInfo, workdir: Path, ports: Ports, cert_dir: Path
) -> list[str]:
    # Its certificate rotator makes certificates for its Service's name into a Secret and
    # holds the controllers back until a file exists at a fixed path (a mounted Secret, in
    # a cluster) and the CA is in a registration of a fixed name.  Here the webhook server
    # reads the harness's certificates from its own TMPDIR, the registrations (by URL, the
    # harness's CA) carry another name, and the rotator finds its file: only its presence
    # is checked, nothing reads it.
    tmp = workdir / "training-operator-tmp"
    serving = tmp / "k8s-webhook-server" / "serving-certs"
    serving.parent.mkdir(parents=True, exist_ok=True)
    if not serving.exists():
        serving.symlink_to(cert_dir.resolve(), target_is_directory=True)
    if not _TRAINING_ROTATOR_CERT.exists():
        _TRAINING_ROTATOR_CERT.parent.mkdir(parents=True, exist_ok=True)
        _TRAINING_ROTATOR_CERT.write_bytes((cert_dir / "tls.crt").read_bytes())
    return [
        "/usr/bin/env",
        f"TMPDIR={tmp}",
        str(built.binary),
        f"--kubeconfig={info.kubeconfig}",
        f"--metrics-bind-address=127.0.0.1:{ports.metrics}",
        f"--health-probe-bind-address=127.0.0.1:{ports.health}",
        f"--webhook-server-port={ports.webhook}",
        "--leader-elect=false",
        "--enable-scheme=pytorchjob",
        "--enable-scheme=jaxjob",
    ]


_TRAINING_PROBE_PATH = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs?dryRun=All"
_TRAINING_PROBE = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "training-operator-webhook-probe", "namespace": "default"},
    "spec": {
        "pytorchReplicaSpecs": {
            "Worker": {
                "replicas": 1,
                "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
            }
        }
    },
}


def _training_probe(client: AdminClient) -> bool:
    """Only the operator's webhook asks for a container named ``pytorch`` (the CRD does not)."""
    reply = client.call("POST", _TRAINING_PROBE_PATH, _TRAINING_PROBE)
    return reply.status == 403 and "container with name pytorch" in str(reply.body)


_TRAINING_CRDS = tuple(
    f"manifests/base/crds/kubeflow.org_{plural}.yaml" for plural in ("pytorchjobs", "jaxjobs")
)
_TRAINING_WEBHOOKS = tuple(
    f"manifests/base/webhook/{name}"
    for name in ("manifests.yaml", "kustomization.yaml", "patch.yaml")
)
TRAINING_OPERATOR = Framework(
    module=ControllerModule(
        name="training-operator",
        module="github.com/kubeflow/training-operator",
        version="v1.9.3",
        main="github.com/kubeflow/training-operator/cmd/training-operator.v1",
        files=_TRAINING_CRDS + _TRAINING_WEBHOOKS,
    ),
    crds=_TRAINING_CRDS,
    command=_training_operator_command,
    webhook_dir="manifests/base/webhook",
    probe=_training_probe,
    namespaces=("kubeflow",),
    # Its certificate rotator fills this Secret, which upstream's manifests provide empty.
    objects=(
        (
            "/api/v1/namespaces/kubeflow/secrets",
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "training-operator-webhook-cert", "namespace": "kubeflow"},
            },
        ),
    ),
)

APPWRAPPER_NAMESPACE = "appwrapper-system"
APPWRAPPER_HEALTH_PORT = 18081
"""Fixed: the port is read from the operator's ConfigMap, installed before it starts."""
_APPWRAPPER_CRD = "config/crd/bases/workload.codeflare.dev_appwrappers.yaml"
_APPWRAPPER_CONFIG = {
    # Its webhooks (defaulting, the wrapped objects' checks) need its certificate rotator,
    # which patches registrations of fixed names for a Service: off, as in its own dev mode.
    "webhooksEnabled": False,
    "controllerManager": {
        "health": {"bindAddress": f"127.0.0.1:{APPWRAPPER_HEALTH_PORT}"},
        "metrics": {"bindAddress": "0"},
        "leaderElection": False,
    },
}


def _appwrapper_command(
    built: ControllerBuild, info: ClusterInfo, workdir: Path, ports: Ports, cert_dir: Path
) -> list[str]:
    # Its namespace comes from NAMESPACE (its ConfigMap is there); it has no port flags.
    return [
        "/usr/bin/env",
        f"NAMESPACE={APPWRAPPER_NAMESPACE}",
        str(built.binary),
        f"--kubeconfig={info.kubeconfig}",
        "--zap-log-level=2",
    ]


APPWRAPPER = Framework(
    module=ControllerModule(
        name="appwrapper",
        module="github.com/project-codeflare/appwrapper",
        version="v1.2.2",
        main="github.com/project-codeflare/appwrapper/cmd",
        files=(_APPWRAPPER_CRD,),
    ),
    crds=(_APPWRAPPER_CRD,),
    command=_appwrapper_command,
    # Its /readyz asks the webhook server, which it does not start with webhooks off.
    health_path="/healthz",
    health_port=APPWRAPPER_HEALTH_PORT,
    namespaces=(APPWRAPPER_NAMESPACE,),
    objects=(
        (
            f"/api/v1/namespaces/{APPWRAPPER_NAMESPACE}/configmaps",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": "appwrapper-operator-config",
                    "namespace": APPWRAPPER_NAMESPACE,
                },
                "data": {"config.yaml": yaml.safe_dump(_APPWRAPPER_CONFIG)},
            },
        ),
    ),
)

_TRAINER_CRDS = tuple(
    f"manifests/base/crds/trainer.kubeflow.org_{plural}.yaml"
    for plural in ("trainjobs", "trainingruntimes", "clustertrainingruntimes")
)
_TRAINER_WEBHOOKS = tuple(
    f"manifests/base/webhook/{name}"
    for name in (
        "manifests.yaml",
        "kustomization.yaml",
        "patch_mutating.yaml",
        "patch_validating.yaml",
    )
)
_TRAINER_RUNTIMES = ("manifests/base/runtimes/torch_distributed.yaml",)
"""The runtimes installed with it: ``torch-distributed``, the one TrainJobs name by default."""


def trainer_config(ports: Ports) -> dict[str, Any]:
    """The Trainer manager's ``Configuration`` for a local, single-replica run (pure).

    Its file is decoded strictly and has no certificate directory, so this is not
    :func:`kubebuilder_config`: the webhook server reads controller-runtime's default
    directory under ``TMPDIR`` (see :func:`_trainer_command`).  Certificate management
    off: its rotator would fill a Secret for its Service and patch the registrations
    of upstream's names, and hold the controllers back until it had.
    """
    return {
        "apiVersion": "config.trainer.kubeflow.org/v1alpha1",
        "kind": "Configuration",
        "webhook": {"host": "127.0.0.1", "port": ports.webhook},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{ports.health}"},
        "metrics": {"bindAddress": "0"},
        "leaderElection": {"leaderElect": False},
        "certManagement": {"enable": False},
    }


def _trainer_command(
    built: ControllerBuild, info: ClusterInfo, workdir: Path, ports: Ports, cert_dir: Path
) -> list[str]:
    # The webhook server looks for tls.crt/tls.key in $TMPDIR/k8s-webhook-server/serving-certs
    # (where a Deployment mounts its Secret); a TMPDIR of its own points that at the
    # harness's directory without touching the machine's /tmp.
    tmp = workdir / "trainer-tmp"
    serving = tmp / "k8s-webhook-server" / "serving-certs"
    serving.parent.mkdir(parents=True, exist_ok=True)
    if not serving.exists():
        serving.symlink_to(cert_dir.resolve(), target_is_directory=True)
    return [
        "/usr/bin/env",
        f"TMPDIR={tmp}",
        str(built.binary),
        f"--kubeconfig={info.kubeconfig}",
        f"--config={_write_config(workdir, 'trainer', trainer_config(ports))}",
        "--zap-log-level=2",
    ]


_TRAINER_PROBE_PATH = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs?dryRun=All"
_TRAINER_PROBE = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {"name": "trainer-webhook-probe", "namespace": "default"},
    "spec": {
        "runtimeRef": {"name": "torch-distributed"},
        "runtimePatches": [{"manager": "kuota.test/webhook-probe"}],
    },
}


def _trainer_probe(client: AdminClient) -> bool:
    """Only Trainer's defaulting webhook stamps a runtime patch's ``time`` (the CRD does not);
    the object is admitted only once its validating webhook accepts it as well."""
    reply = client.call("POST", _TRAINER_PROBE_PATH, _TRAINER_PROBE)
    patches = (reply.body.get("spec") or {}).get("runtimePatches") or [{}]
    return reply.status == 201 and bool(patches[0].get("time"))


TRAINER = Framework(
    module=ControllerModule(
        name="trainer",
        module="github.com/kubeflow/trainer/v2",
        version="v2.2.1",
        main="github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager",
        files=_TRAINER_CRDS + _TRAINER_WEBHOOKS + _TRAINER_RUNTIMES,
    ),
    crds=_TRAINER_CRDS,
    command=_trainer_command,
    # Upstream's patches (they apply to every configuration of a kind; the harness matches
    # by name and so leaves them out) only rename the registrations and their Service for
    # its certificate rotator, which is off: the registrations go by URL under our names.
    webhook_dir="manifests/base/webhook",
    probe=_trainer_probe,
    module_objects=tuple(
        ("/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes", runtime)
        for runtime in _TRAINER_RUNTIMES
    ),
    # It makes a JobSet per TrainJob and watches them: the JobSet controller
    # (``up --jobset``) comes first.
    needs=("jobset",),
)

FRAMEWORKS: dict[str, Framework] = {
    framework.name: framework
    for framework in (LWS, KUBERAY, MPI_OPERATOR, TRAINING_OPERATOR, APPWRAPPER, TRAINER)
}
"""Every framework controller the end-to-end tests can run, by short name."""
