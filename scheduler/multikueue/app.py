"""``kuota-multikueue`` (``python -m scheduler.multikueue``): the MultiKueue controller process.

Runs on the manager cluster next to the scheduler.  It reads the same Kueue
Configuration file as the scheduler, checked at start as every process
checks it (:mod:`scheduler.api.config_file`: an invalid file is one log line
and exit code 1; the settings kuota does not act on are logged):
``namespace`` (where the workers' kubeconfig Secrets are), the
``multiKueue`` block (``origin``, ``workerLostTimeout``, ``gcInterval``,
``dispatcherName`` and ``incrementalDispatcherConfig``), ``clientConnection``
(the API client's rate limit), ``controller.cacheSyncTimeout`` and
``leaderElection``, whose ``resourceName`` names this process's Lease with
``-multikueue`` added (the scheduler holds the Lease of that name itself).
Every replica watches the manager (a standby is warm); only the holder of
the Lease connects to the workers and writes, and no write leaves unless
the Lease is held at that instant (:mod:`scheduler.kube.fence`), so two
replicas never dispatch twice.  A leader that loses its Lease (or whose
write was fenced) drops its workers and campaigns again.  SIGTERM stops it
and releases the Lease.  Its Prometheus series (Kueue's
``multikueue_workloads_dispatched_total`` and
``multikueue_workloads_admitted_total``) are served on
``--metrics-bind-address`` over HTTPS to callers the cluster allows, as the
scheduler's are (docs/metrics.md).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
from pathlib import Path

from prometheus_client import REGISTRY, generate_latest

from scheduler import logs
from scheduler.api.config import Configuration
from scheduler.api.config_file import ConfigurationError, LoadedConfiguration, read_configuration
from scheduler.api.operational import (
    LeaderElection,
    LeaseSettings,
    cache_sync_timeout,
    client_connection,
    leader_election,
    lease_problem,
    lease_settings,
    multikueue,
)
from scheduler.kube import secure_serving
from scheduler.kube.access_review import AccessReviewer
from scheduler.kube.client import new_api_client
from scheduler.kube.kueue_metrics import RECORDER
from scheduler.kube.leader import AlwaysLeader, Leadership, LeaseElection
from scheduler.kube.ownership import adopt_lease, read_deployment_reference
from scheduler.kube.rate_limit import rate_limiter
from scheduler.kube.rest import Rest, RestError
from scheduler.kube.secure_serving import (
    Endpoint,
    add_metrics_arguments,
    metrics_app,
    metrics_endpoint,
)
from scheduler.multikueue.controller import Controller, MultiKueueSettings
from scheduler.multikueue.decisions import DEFAULT_ORIGIN, DEFAULT_WORKER_LOST_TIMEOUT
from scheduler.version import kuota_version

log = logging.getLogger("kuota.multikueue")
DEFAULT_LEASE_NAME = "kuota-multikueue"
LEASE_SUFFIX = "-multikueue"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kuota-multikueue",
        description="kuota's MultiKueue controller: dispatches admitted Workloads to worker "
        "clusters and reports the workers' connection status.",
    )
    parser.add_argument(
        "--version", action="version", version=f"kuota-multikueue {kuota_version()}"
    )
    parser.add_argument(
        "--kubeconfig", help="kubeconfig of the manager (default: $KUBECONFIG, else in-cluster)"
    )
    parser.add_argument(
        "--config",
        type=Path,
        help="a config.kueue.x-k8s.io Configuration file (namespace, multiKueue, "
        "leaderElection, ...), checked at start",
    )
    parser.add_argument(
        "--interval",
        type=float,
        default=2.0,
        help="seconds between two probes of an unreachable worker (default 2)",
    )
    parser.add_argument(
        "--resync",
        type=float,
        default=30.0,
        help="seconds between two full passes: every worker probed, every Workload decided "
        "again (default 30; changes are acted on as they are watched)",
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
        help="namespace of the Lease (default: leaderElection.resourceNamespace, else the "
        "Configuration's namespace)",
    )
    parser.add_argument(
        "--lease-name",
        default=None,
        help=f"name of the Lease (default: leaderElection.resourceName{LEASE_SUFFIX}, else "
        f"{DEFAULT_LEASE_NAME})",
    )
    parser.add_argument(
        "--lease-duration",
        type=float,
        default=None,
        help="seconds (default: leaderElection.leaseDuration, else 15)",
    )
    parser.add_argument(
        "--renew-deadline",
        type=float,
        default=None,
        help="seconds (default: leaderElection.renewDeadline, else 10)",
    )
    parser.add_argument(
        "--retry-period",
        type=float,
        default=None,
        help="seconds (default: leaderElection.retryPeriod, else 2)",
    )
    parser.add_argument(
        "--identity",
        default=f"{socket.gethostname()}-{os.getpid()}",
        help="this replica's name in the Lease",
    )
    parser.add_argument(
        "--owner-deployment",
        metavar="NAME",
        help="the Deployment (in the Lease's namespace) that owns the Lease: deleting it "
        "deletes the Lease (the chart sets it; scheduler.kube.ownership)",
    )
    add_metrics_arguments(parser, default_address="", default_help="none")
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"]
    )
    return parser


def settings_from(
    config: Configuration | None, interval: float, resync: float = 30.0
) -> MultiKueueSettings:
    """The controller's settings from a checked Configuration (None: defaults): pure."""
    if config is None:
        return MultiKueueSettings(interval=interval, resync=resync)
    options = multikueue(config)
    return MultiKueueSettings(
        namespace=config.namespace,
        origin=options.origin or DEFAULT_ORIGIN,
        worker_lost_timeout=options.worker_lost_timeout or DEFAULT_WORKER_LOST_TIMEOUT,
        gc_interval=options.gc_interval,
        dispatcher=options.dispatcher,
        step_size=options.step_size,
        respect_config_order=options.respect_config_order,
        interval=interval,
        resync=resync,
    )


def lease_from(args: argparse.Namespace, config: Configuration | None) -> LeaseSettings:
    """The Lease: flags, else ``leaderElection`` (its name + ``-multikueue``), else defaults."""
    flags = LeaderElection(
        leader_elect=args.leader_elect,
        lease_duration=args.lease_duration,
        renew_deadline=args.renew_deadline,
        retry_period=args.retry_period,
        resource_name=args.lease_name,
        resource_namespace=args.lease_namespace,
    )
    file = leader_election(config) if config is not None else LeaderElection()
    namespace = config.namespace if config is not None else MultiKueueSettings().namespace
    return lease_settings(
        flags, file, name=DEFAULT_LEASE_NAME, namespace=namespace, suffix=LEASE_SUFFIX
    )


async def serve(
    args: argparse.Namespace,
    lease: LeaseSettings,
    loaded: LoadedConfiguration | None = None,
    endpoint: Endpoint | None = None,
) -> int:
    config = loaded.config if loaded is not None else None
    settings = settings_from(config, args.interval, args.resync)
    connection = client_connection(config) if config is not None else None
    qps, burst = (connection.qps, connection.burst) if connection is not None else (None, None)
    api = await new_api_client(args.kubeconfig)
    rest = Rest(api, timeout=30, limiter=rate_limiter(qps, burst))
    leadership: Leadership = (
        LeaseElection(
            Rest(api, timeout=30, limiter=rate_limiter(qps, burst)),
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
    controller = Controller(rest, settings, fence=leadership.fence)
    RECORDER.role = "follower" if lease.leader_elect else "standalone"
    serving = None
    if endpoint is not None:
        reviewer = AccessReviewer(rest) if endpoint.secure else None
        serving = await secure_serving.serve(
            metrics_app(lambda: generate_latest(REGISTRY), reviewer), endpoint, name="metrics"
        )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)

    async def stepped_down() -> None:
        RECORDER.role = "follower"
        log.info("stepped down: workers dropped, campaigning again")

    async def lead() -> None:
        if lease.leader_elect and args.owner_deployment:
            try:
                await adopt_lease(rest, lease.namespace, lease.name, args.owner_deployment)
            except RestError as failure:  # the Lease stays; only `helm uninstall` would miss it
                log.warning(
                    "could not add the owner reference to the Lease",
                    extra={"error": str(failure)},
                )
        RECORDER.role = "leader" if lease.leader_elect else "standalone"
        await controller.lead()

    watching = asyncio.create_task(controller.watch(), name="informers")
    acting = asyncio.create_task(leadership.run(lead, stepped_down), name="leading")
    timeout = cache_sync_timeout(config) if config is not None else None
    syncing = asyncio.create_task(_synced_in_time(controller, timeout), name="cache-sync")
    log.info(
        "multikueue controller started",
        extra={
            "namespace": settings.namespace,
            "origin": settings.origin,
            "worker_lost_timeout": settings.worker_lost_timeout.total_seconds(),
            "gc_interval": settings.gc_interval.total_seconds(),
            "dispatcher": settings.dispatcher,
            "identity": args.identity,
            "leader_elect": lease.leader_elect,
            "lease": f"{lease.namespace}/{lease.name}" if lease.leader_elect else None,
        },
    )
    done, _ = await asyncio.wait(
        [asyncio.create_task(stop.wait()), acting, watching, syncing],
        return_when=asyncio.FIRST_COMPLETED,
    )
    for task in (acting, watching):
        if task in done and not task.cancelled() and task.exception() is not None:
            log.error(
                "a main task failed", exc_info=task.exception(), extra={"task": task.get_name()}
            )
    code = 1 if any(t in done for t in (acting, watching, syncing)) else 0
    for task in (acting, watching, syncing):  # leading: the work stops, then the Lease is released
        task.cancel()
    await asyncio.gather(acting, watching, syncing, return_exceptions=True)
    await controller.close()
    if serving is not None:
        await secure_serving.stop(*serving)
    await api.close()
    log.info("multikueue controller stopped", extra={"exit_code": code})
    return code


async def _synced_in_time(controller: Controller, timeout: float | None) -> None:
    """Returns only when the informers have not listed within ``timeout`` s (logged)."""
    if timeout is not None:
        synced = asyncio.gather(*(informer.synced.wait() for informer in controller.informers))
        try:
            await asyncio.wait_for(synced, timeout=timeout)
        except TimeoutError:
            log.error(
                "the informers did not list within controller.cacheSyncTimeout; stopping",
                extra={"timeout_seconds": timeout},
            )
            return
    await asyncio.Event().wait()  # synced (or no limit): never ends by itself


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logs.configure(args.log_level)
    try:
        loaded = read_configuration(args.config) if args.config is not None else None
    except ConfigurationError as invalid:
        log.error(invalid.render(), extra={"config": invalid.source})
        return 1
    lease = lease_from(args, loaded.config if loaded is not None else None)
    problem = lease_problem(lease)
    endpoint = metrics_endpoint(args)
    if isinstance(endpoint, str):
        problem = problem or endpoint
    if problem:
        log.error(problem)
        return 1
    if loaded is not None:
        for warning in loaded.warnings:
            log.warning(f"{loaded.source}: {warning}", extra={"config": loaded.source})
    return asyncio.run(
        serve(args, lease, loaded, endpoint if isinstance(endpoint, Endpoint) else None)
    )


if __name__ == "__main__":
    sys.exit(main())
