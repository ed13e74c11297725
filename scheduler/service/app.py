"""``kuota-scheduler``: the live scheduler process (composition root).

Every replica runs the informers (so a standby is warm); only the holder of
the ``coordination.k8s.io`` Lease runs the scheduling loop and writes, and
no write leaves the process unless the Lease is held at that instant
(:mod:`scheduler.kube.fence`).  A leader that cannot renew its Lease in
time, or whose write was fenced, *steps down*: its loop stops, its engine is
rebuilt from the informers' stores, and it campaigns again; meanwhile a
standby takes over within the lease duration.  Nothing about the API server
(a restart, a timeout, a lost Lease) ends the process; only a bug in a main
task does.  On SIGTERM the leader releases the Lease, so a standby takes
over at once.

The Configuration (``--config``) is checked at start with the rules of
``kuota validate`` (:mod:`scheduler.api.config_file`): an invalid one ends
the process with exit code 1 and one log line naming every field at fault;
the fields kuota does not act on are logged as warnings.  Besides
scheduling, the file sets what Kueue's manager takes from it
(docs/configuration.md), each overridden by its flag when given:
``leaderElection`` (the Lease and its timings), ``clientConnection`` (the
API client's rate limit), ``metrics.bindAddress`` (``/metrics``),
``health`` (``/healthz`` and ``/readyz``: their address and paths),
``metrics.enableClusterQueueResources`` and ``localQueueMetrics`` (which of
Kueue's series are exported), ``controller.cacheSyncTimeout`` (the process
exits when its informers have not listed by then) and ``visibilityServer``
(where the visibility API listens; docs/visibility.md).

``/metrics`` is served as Kueue's are: HTTPS, and only to a bearer token
the API server authenticates (TokenReview) for an identity that may ``get``
the non-resource URL ``/metrics`` (SubjectAccessReview;
:mod:`scheduler.kube.secure_serving`, docs/metrics.md#access).  The probes
are plain HTTP on their own address; given the same address as
``/metrics``, they are served beside it, unauthenticated.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from scheduler import logs
from scheduler.api.config_file import ConfigurationError, LoadedConfiguration, read_configuration
from scheduler.api.operational import (
    Endpoints,
    LeaderElection,
    LeaseSettings,
    cache_sync_timeout,
    client_connection,
    endpoints,
    leader_election,
    lease_problem,
    lease_settings,
)
from scheduler.kube import secure_serving
from scheduler.kube.access_review import AccessReviewer
from scheduler.kube.client import new_api_client
from scheduler.kube.leader import AlwaysLeader, Leadership, LeaseElection
from scheduler.kube.ownership import adopt_lease, read_deployment_reference
from scheduler.kube.rate_limit import rate_limiter
from scheduler.kube.rest import Rest, RestError
from scheduler.kube.secure_serving import Endpoint, Reviewer, add_metrics_arguments, endpoint_for
from scheduler.service import heap
from scheduler.service.loop import LoopSettings, SchedulerLoop
from scheduler.service.observability import add_probes, health_app, scheduler_metrics_app
from scheduler.version import kuota_version
from scheduler.visibility.server import VisibilityServer, VisibilitySettings
from scheduler.visibility.settings import InvalidAddress, Listen, cert_dir_of, listen_address
from scheduler.visibility.source import SchedulerSource

log = logging.getLogger("kuota.scheduler")
EVENT_FLUSH_SECONDS = 5.0
"""How long a stopping scheduler waits for its queued Events."""
DEFAULT_LEASE_NAME = "kuota-scheduler"
DEFAULT_LEASE_NAMESPACE = "kuota-system"
DEFAULT_METRICS_ADDRESS = "127.0.0.1:8443"
"""Kueue's metrics port, on loopback: the chart binds every interface."""
DEFAULT_HEALTH_ADDRESS = "127.0.0.1:8081"
"""Kueue's probe port, on loopback."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kuota-scheduler",
        description="kuota's scheduler: admits queued workloads by quota, flavor and priority.",
    )
    parser.add_argument("--version", action="version", version=f"kuota-scheduler {kuota_version()}")
    parser.add_argument(
        "--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, else in-cluster config)"
    )
    parser.add_argument(
        "--config",
        type=Path,
        help="a config.kueue.x-k8s.io Configuration file (v1beta2, or v1beta1 converted), checked "
        "at start; it also gives the defaults of the Lease and address flags below",
    )
    parser.add_argument(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="hold a Lease before acting, so only one replica writes (default: "
        "leaderElection.leaderElect, else on)",
    )
    parser.add_argument(
        "--lease-namespace",
        default=None,
        help="namespace of the Lease (default: leaderElection.resourceNamespace, else "
        f"{DEFAULT_LEASE_NAMESPACE})",
    )
    parser.add_argument(
        "--lease-name",
        default=None,
        help=f"name of the Lease (default: leaderElection.resourceName, else {DEFAULT_LEASE_NAME})",
    )
    parser.add_argument(
        "--lease-duration",
        type=float,
        default=None,
        help="seconds a standby waits before taking over (default: leaderElection.leaseDuration, "
        "else 15)",
    )
    parser.add_argument(
        "--renew-deadline",
        type=float,
        default=None,
        help="seconds after a renewal was sent during which the leader may write; "
        "past it, writes are fenced and it steps down (default: leaderElection.renewDeadline, "
        "else 10)",
    )
    parser.add_argument(
        "--retry-period",
        type=float,
        default=None,
        help="seconds between Lease attempts (default: leaderElection.retryPeriod, else 2)",
    )
    parser.add_argument(
        "--identity",
        default=f"{socket.gethostname()}-{os.getpid()}",
        help="this replica's name in the Lease",
    )
    parser.add_argument(
        "--owner-deployment",
        metavar="NAME",
        help="the Deployment (in --lease-namespace) that owns the Lease: deleting it deletes the"
        " Lease (the chart sets it; scheduler.kube.ownership)",
    )
    add_metrics_arguments(
        parser,
        default_address=None,
        default_help=f"metrics.bindAddress, else {DEFAULT_METRICS_ADDRESS}",
    )
    parser.add_argument(
        "--health-probe-bind-address",
        default=None,
        help="HOST:PORT of /healthz and /readyz, plain HTTP (default: "
        f"health.healthProbeBindAddress, else {DEFAULT_HEALTH_ADDRESS}; the address of "
        '/metrics serves them beside it; "0" serves none)',
    )
    parser.add_argument(
        "--status-writes-per-second",
        type=float,
        default=20.0,
        help="upper bound on pending-status writes per second (default 20)",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"]
    )
    parser.add_argument(
        "--visibility-bind-address",
        metavar="HOST:PORT",
        help="where the visibility API (visibility.kueue.x-k8s.io) listens (default: "
        "visibilityServer.bindAddress and .bindPort, else 0.0.0.0:8082); the feature gate "
        "VisibilityOnDemand=false turns the API off",
    )
    parser.add_argument(
        "--visibility-cert-dir",
        metavar="DIR",
        help="directory with tls.crt and tls.key for the visibility API, reloaded when they"
        " change (default: a self-signed pair for localhost and 127.0.0.1)",
    )
    return parser


@dataclass(frozen=True)
class Startup:
    """What the process runs with: flags first, then the Configuration, then the defaults."""

    lease: LeaseSettings
    metrics_address: str | None
    """``HOST:PORT`` of ``/metrics``; None: not served (``"0"``)."""
    metrics: Endpoint | None
    """How ``/metrics`` is served (None: not at all)."""
    health_address: str | None
    """``HOST:PORT`` of the probes; None: not served."""
    endpoints: Endpoints
    qps: float | None
    burst: int | None
    cache_sync_timeout: float | None
    visibility: Listen | None = None
    """Where the visibility API listens; None: off (``VisibilityOnDemand: false``)."""
    problem: str | None = None
    """What is wrong with the flags and file together (the process then exits 1)."""


def _address(value: str) -> str | None:
    return None if value in ("0", "") else value


def startup(args: argparse.Namespace, loaded: LoadedConfiguration | None) -> Startup:
    """The settings of :class:`Startup` from the command line and the Configuration: pure.

    Raises :class:`~scheduler.visibility.settings.InvalidAddress` for a visibility address
    that cannot be listened on.
    """
    config = loaded.config if loaded is not None else None
    flags = LeaderElection(
        leader_elect=args.leader_elect,
        lease_duration=args.lease_duration,
        renew_deadline=args.renew_deadline,
        retry_period=args.retry_period,
        resource_name=args.lease_name,
        resource_namespace=args.lease_namespace,
    )
    file = leader_election(config) if config is not None else LeaderElection()
    served = endpoints(config) if config is not None else Endpoints()
    metrics = args.metrics_bind_address or served.metrics_bind_address or DEFAULT_METRICS_ADDRESS
    health = (
        args.health_probe_bind_address or served.health_probe_bind_address or DEFAULT_HEALTH_ADDRESS
    )
    metrics_address = _address(metrics)
    endpoint = (
        endpoint_for(
            metrics_address,
            secure=args.metrics_secure,
            cert_dir=args.metrics_cert_dir,
            flag="--metrics-bind-address (or metrics.bindAddress)",
        )
        if metrics_address is not None
        else None
    )
    connection = client_connection(config) if config is not None else None
    return Startup(
        lease=lease_settings(
            flags, file, name=DEFAULT_LEASE_NAME, namespace=DEFAULT_LEASE_NAMESPACE
        ),
        metrics_address=metrics_address,
        metrics=endpoint if isinstance(endpoint, Endpoint) else None,
        health_address=_address(health),
        endpoints=served,
        qps=connection.qps if connection is not None else None,
        burst=connection.burst if connection is not None else None,
        cache_sync_timeout=cache_sync_timeout(config) if config is not None else None,
        visibility=listen_address(config, args.visibility_bind_address),
        problem=endpoint if isinstance(endpoint, str) else None,
    )


def _host_port(address: str) -> tuple[str | None, int]:
    """``HOST:PORT`` as Go reads it: an empty host is every interface."""
    host, _, port = address.rpartition(":")
    return (host.strip("[]") or None), int(port)


async def serve(
    args: argparse.Namespace, settings: Startup, loaded: LoadedConfiguration | None = None
) -> int:
    lease = settings.lease
    api = await new_api_client(args.kubeconfig)
    rest = Rest(api, limiter=rate_limiter(settings.qps, settings.burst))
    leadership: Leadership = (
        LeaseElection(
            # A bucket of its own: the renewals never queue behind the scheduler's writes.
            Rest(api, limiter=rate_limiter(settings.qps, settings.burst)),
            name=lease.name,
            namespace=lease.namespace,
            identity=args.identity,
            lease_duration=lease.lease_duration,
            renew_deadline=lease.renew_deadline,
            retry_period=lease.retry_period,
        )
        if lease.leader_elect
        else AlwaysLeader(args.identity)
    )
    if isinstance(leadership, LeaseElection) and args.owner_deployment:
        try:
            leadership.lock.owner = await read_deployment_reference(
                rest, lease.namespace, args.owner_deployment
            )
        except RestError as failure:  # adopted at the next term start instead
            log.warning(
                "could not read the Deployment that owns the Lease",
                extra={"deployment": args.owner_deployment, "error": str(failure)},
            )
    scheduler = SchedulerLoop(
        rest,
        LoopSettings(
            config=loaded.config if loaded is not None else None,
            status_writes_per_second=args.status_writes_per_second,
            leader_elect=lease.leader_elect,
        ),
        fence=leadership.fence,
    )
    scheduler.writer.events.instance = args.identity  # reportingInstance: this replica, as leased
    served = await _serve_endpoints(
        settings,
        ready=scheduler.ready,
        alive=lambda: scheduler.alive,
        reviewer=AccessReviewer(rest),
    )
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    watching = asyncio.create_task(scheduler.watch(), name="informers")
    visibility = visibility_server(scheduler, rest, settings.visibility, args.visibility_cert_dir)
    serving: list[asyncio.Task[None]] = [
        asyncio.create_task(heap.keep_settled(scheduler.ready), name="heap")
    ]
    if visibility is not None:
        serving.append(asyncio.create_task(visibility.run(), name="visibility"))

    async def stepped_down() -> None:
        scheduler.rebuild()
        heap.settle("state rebuilt")
        log.info(
            "stepped down: state rebuilt from the informers, campaigning again",
            extra={"identity": args.identity},
        )

    async def lead() -> None:
        if lease.leader_elect and args.owner_deployment:
            try:
                await adopt_lease(rest, lease.namespace, lease.name, args.owner_deployment)
            except RestError as failure:  # the Lease stays; only `helm uninstall` would miss it
                log.warning(
                    "could not add the owner reference to the Lease",
                    extra={"error": str(failure)},
                )
        await scheduler.lead()

    acting = asyncio.create_task(leadership.run(lead, stepped_down), name="leading")
    syncing = asyncio.create_task(
        _synced_in_time(scheduler.ready, settings.cache_sync_timeout), name="cache-sync"
    )
    log.info(
        "kuota-scheduler started",
        extra={
            "identity": args.identity,
            "leader_elect": lease.leader_elect,
            "lease": f"{lease.namespace}/{lease.name}" if lease.leader_elect else None,
            "metrics": settings.metrics_address,
            "probes": settings.health_address,
            "version": kuota_version(),
        },
    )
    main_tasks = [acting, watching, syncing, *serving]
    done, _ = await asyncio.wait(
        [asyncio.create_task(stopping.wait()), *main_tasks],
        return_when=asyncio.FIRST_COMPLETED,
    )
    for task in main_tasks:
        if task in done and not task.cancelled() and task.exception() is not None:
            log.error(
                "a main task failed", exc_info=task.exception(), extra={"task": task.get_name()}
            )
    # Only a bug ends a main task (or, with --no-leader-elect, a failed loop), or caches that
    # did not sync within controller.cacheSyncTimeout, or the visibility API's port taken.
    code = 1 if any(t in done for t in main_tasks) else 0
    for task in main_tasks:  # leading: the work stops, then the Lease is released
        task.cancel()
    await asyncio.gather(*main_tasks, return_exceptions=True)
    try:  # Events queued and not written yet are fenced now: say so
        await asyncio.wait_for(scheduler.writer.events_sent(), timeout=EVENT_FLUSH_SECONDS)
    except TimeoutError:
        log.warning(
            "stopping with Events not written", extra={"queued": scheduler.writer.events.queued}
        )
    scheduler.alive = False
    for runner, watcher in served:
        await secure_serving.stop(runner, watcher)
    await api.close()
    log.info("kuota-scheduler stopped", extra={"exit_code": code})
    return code


def visibility_server(
    scheduler: SchedulerLoop, rest: Rest, listen: Listen | None, cert_dir: str | None
) -> VisibilityServer | None:
    """The visibility API over this replica's queues (docs/visibility.md); None when off."""
    if listen is None:
        log.info("visibility API off (feature gate VisibilityOnDemand=false)")
        return None
    if listen.overridden:
        log.info(
            "--visibility-bind-address overrides the Configuration's visibilityServer",
            extra={"address": f"{listen.host}:{listen.port}"},
        )
    source = SchedulerSource(lambda: scheduler.engine, lambda: scheduler.state.stored("Workload"))
    return VisibilityServer(
        source,
        rest,
        VisibilitySettings(host=listen.host, port=listen.port, cert_dir=cert_dir_of(cert_dir)),
    )


Served = tuple[web.AppRunner, "asyncio.Task[None] | None"]
"""A running endpoint, and the task that reloads its certificate (None: plain HTTP)."""


async def _serve_endpoints(
    settings: Startup,
    *,
    ready: Callable[[], bool],
    alive: Callable[[], bool],
    reviewer: Reviewer,
) -> list[Served]:
    """``/metrics`` (behind ``reviewer``'s checks when secure) and the probes, on one
    address or two (none when ``"0"``)."""
    paths = (settings.endpoints.readiness_endpoint, settings.endpoints.liveness_endpoint)
    together = settings.metrics_address == settings.health_address
    served: list[Served] = []
    if settings.metrics is not None:
        app = scheduler_metrics_app(reviewer if settings.metrics.secure else None)
        if together:
            add_probes(app, ready=ready, alive=alive, probes=paths)
        served.append(await secure_serving.serve(app, settings.metrics, name="metrics"))
    if settings.health_address is not None and not together:
        runner = web.AppRunner(health_app(ready=ready, alive=alive, probes=paths))
        await runner.setup()
        host, port = _host_port(settings.health_address)
        await web.TCPSite(runner, host, port).start()
        served.append((runner, None))
    return served


async def _synced_in_time(ready: Callable[[], bool], timeout: float | None) -> None:
    """Returns only when the informers have not listed within ``timeout`` s (logged)."""
    if timeout is not None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not ready():
            if loop.time() >= deadline:
                log.error(
                    "the informers did not list within controller.cacheSyncTimeout; stopping",
                    extra={"timeout_seconds": timeout},
                )
                return
            await asyncio.sleep(0.1)
    await asyncio.Event().wait()  # synced (or no limit): never ends by itself


def log_configuration(loaded: LoadedConfiguration) -> None:
    """One warning per setting of the file that kuota does not act on."""
    for warning in loaded.warnings:
        log.warning(f"{loaded.source}: {warning}", extra={"config": loaded.source})


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logs.configure(args.log_level)
    try:
        loaded = read_configuration(args.config) if args.config is not None else None
    except ConfigurationError as invalid:
        log.error(invalid.render(), extra={"config": invalid.source})
        return 1
    try:
        settings = startup(args, loaded)
    except InvalidAddress as invalid:
        log.error(str(invalid))
        return 1
    problem = settings.problem or lease_problem(settings.lease)
    if problem:
        log.error(problem)
        return 1
    if loaded is not None:
        log_configuration(loaded)
    return asyncio.run(serve(args, settings, loaded))


if __name__ == "__main__":
    sys.exit(main())
