"""pytest wiring for the end-to-end suites: the cluster fixture, kuota
installed on it (``kuota``: the same installation as ``python -m e2e.cluster
up --kuota``; ``legacy_versions_served`` adds the alpha versions for one
module), the real JobSet controller (``jobset``: as ``up --jobset``, started
only when a test asks for it), the other frameworks' controllers
(``framework_controllers``: each started by the first test that asks for
it), a client and a namespace per test, and component log tails on every
failure."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client, config

from scheduler.api.crds import LEGACY_VERSIONS, SERVED_LEGACY_VERSIONS

from .cluster.frameworks import FRAMEWORKS, FrameworkController, install_framework
from .cluster.jobset import JobSetController, install_jobset
from .cluster.pki import ClusterPki
from .cluster.tools import ToolPaths
from .fixtures import ClusterHandle, SessionCluster
from .kuota_install import KuotaWebhook, install_kuota, serve_legacy_versions, uninstall_kuota
from .kuota_scheduler import SchedulerFleet, SchedulerReplica, start_schedulers
from .kuota_visibility import registered, visibility_certs

_SESSION = SessionCluster()


@pytest.fixture(scope="session")
def cluster() -> Iterator[ClusterHandle]:
    handle = _SESSION.acquire()
    yield handle
    _SESSION.release()


@pytest.fixture(scope="session")
def kuota(cluster: ClusterHandle) -> Iterator[KuotaWebhook]:
    """kuota installed for the rest of the session: CRDs, webhook process, registrations by URL.

    Torn down in the safe order (registrations and CRD conversion first, the
    webhook last) before the cluster stops.
    """
    if not cluster.local:
        pytest.skip(
            "the webhook runs on this machine's 127.0.0.1; an external API server cannot call it"
        )
    kubectl_binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    workdir = cluster.workdir or Path(tempfile.mkdtemp(prefix="kuota-webhook-"))
    webhook = install_kuota(kubectl_binary, cluster.kubeconfig, workdir)
    yield webhook
    uninstall_kuota(kubectl_binary, cluster.kubeconfig, webhook)


@pytest.fixture(scope="module")
def legacy_versions_served(cluster: ClusterHandle, kuota: KuotaWebhook) -> Iterator[None]:
    """``v1alpha1`` and ``v1alpha2`` served too, for the tests of one module (the chart's
    ``crds.servedLegacyVersions: [v1alpha1, v1alpha2, v1beta1]``); by default kuota's
    CRDs serve ``v1beta2`` and ``v1beta1`` only, restored afterwards.
    """
    kubectl_binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    serve_legacy_versions(kubectl_binary, cluster.kubeconfig, kuota, LEGACY_VERSIONS)
    yield
    serve_legacy_versions(kubectl_binary, cluster.kubeconfig, kuota, SERVED_LEGACY_VERSIONS)


@pytest.fixture(scope="session")
def jobset(cluster: ClusterHandle) -> Iterator[JobSetController]:
    """The JobSet controller for the rest of the session: CRD, manager, webhooks by URL.

    Lazy: only sessions with a test that needs JobSets start it.  Its
    registrations are deleted before the process stops, before the cluster does.
    """
    if not cluster.local or cluster.info is None or cluster.workdir is None:
        pytest.skip(
            "JobSet's webhooks run on this machine's 127.0.0.1; "
            "an external API server cannot call them"
        )
    controller = install_jobset(cluster.info, cluster.workdir)
    yield controller
    controller.uninstall()


class FrameworkControllers:
    """The framework controllers this session started (each at most once, on first use)."""

    def __init__(self, cluster: ClusterHandle) -> None:
        self.cluster = cluster
        self.running: dict[str, FrameworkController] = {}

    def start(self, name: str) -> FrameworkController:
        if name not in self.running:
            info, workdir = self.cluster.info, self.cluster.workdir
            assert info is not None and workdir is not None
            self.running[name] = install_framework(FRAMEWORKS[name], info, workdir)
        return self.running[name]

    def stop(self) -> None:
        for controller in reversed(list(self.running.values())):
            controller.uninstall()
        self.running.clear()


@pytest.fixture(scope="session")
def framework_controllers(cluster: ClusterHandle) -> Iterator[FrameworkControllers]:
    """The real controllers of the job frameworks (``e2e/cluster/frameworks.py``), started
    lazily by the tests that need one; their registrations go before their processes, and
    all before the cluster stops."""
    if not cluster.local or cluster.info is None or cluster.workdir is None:
        pytest.skip(
            "the frameworks' webhooks run on this machine's 127.0.0.1; "
            "an external API server cannot call them"
        )
    controllers = FrameworkControllers(cluster)
    yield controllers
    controllers.stop()


@pytest.fixture(scope="session")
def scheduler_fleet(cluster: ClusterHandle, kuota: KuotaWebhook) -> Iterator[SchedulerFleet]:
    """kuota-scheduler replicas for the rest of the session, after the webhook (complete kuota)."""
    assert cluster.workdir is not None and cluster.info is not None
    kubectl_binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    (replica,) = start_schedulers(
        kubectl_binary,
        cluster.kubeconfig,
        ClusterPki(cluster.workdir / "pki"),
        cluster.info.server,
        cluster.workdir,
        replicas=1,
    )
    fleet = SchedulerFleet(cluster.workdir / "kuota-scheduler.kubeconfig", cluster.workdir, replica)
    _FLEETS.append(fleet)
    yield fleet
    _FLEETS.remove(fleet)
    fleet.stop()


_FLEETS: list[SchedulerFleet] = []
"""The session's fleet once a test asked for it (none before)."""


@pytest.fixture(scope="module")
def fleet_paused() -> Iterator[None]:
    """No replica of the session's fleet runs meanwhile: a test module that starts a scheduler
    of its own (its own Configuration) must be the only one deciding.  The fleet gets a
    replica again afterwards."""
    paused = [fleet for fleet in _FLEETS if fleet.alive()]
    for fleet in paused:
        for replica in fleet.alive():
            replica.stop()
    yield
    for fleet in paused:
        fleet.add()


@pytest.fixture(scope="module")
def visibility_api(cluster: ClusterHandle, scheduler_fleet: SchedulerFleet) -> Iterator[None]:
    """kuota's visibility API registered with the API server's aggregator for one module (a
    running replica's, through an ExternalName Service naming localhost), with the chart's
    user-facing roles; both removed afterwards (e2e.kuota_visibility)."""
    assert cluster.workdir is not None
    alive = scheduler_fleet.alive()
    replica = alive[0] if alive else scheduler_fleet.add()
    kubectl_binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    with registered(
        kubectl_binary,
        cluster.kubeconfig,
        replica.visibility_port,
        visibility_certs(cluster.workdir),
    ):
        yield


@pytest.fixture
def kuota_scheduler(scheduler_fleet: SchedulerFleet) -> SchedulerReplica:
    """A running replica (one is always kept alive, even after a test killed the leader)."""
    alive = scheduler_fleet.alive()
    return alive[0] if alive else scheduler_fleet.add()


@pytest.fixture
async def api(cluster: ClusterHandle) -> AsyncIterator[client.ApiClient]:
    configuration = client.Configuration()
    await config.load_kube_config(
        config_file=str(cluster.kubeconfig), client_configuration=configuration
    )
    async with client.ApiClient(configuration=configuration) as api_client:
        yield api_client


@pytest.fixture
async def namespace(api: client.ApiClient) -> AsyncIterator[str]:
    """A fresh namespace per test, deleted afterwards (isolation without new clusters)."""
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    core = client.CoreV1Api(api)
    await core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    await core.delete_namespace(name)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """On any failure of a cluster test, show the tail of every component's log."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and _SESSION.handle is not None:
        report.sections.append(("control-plane component logs", _SESSION.handle.log_tails()))
