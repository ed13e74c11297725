"""``kuota-multikueue`` (``python -m scheduler.multikueue``): the MultiKueue controller process.

Runs on the manager cluster next to the scheduler.  It reads the same Kueue
Configuration file as the scheduler: ``namespace`` (where the workers'
kubeconfig Secrets are) and the ``multiKueue`` block (``origin``,
``workerLostTimeout``).  Every replica watches the manager (a standby is
warm); only the holder of the ``kuota-multikueue`` Lease connects to the
workers and writes, and no write leaves unless the Lease is held at that
instant (:mod:`scheduler.kube.fence`), so two replicas never dispatch twice.
A leader that loses its Lease (or whose write was fenced) drops its workers
and campaigns again.  SIGTERM stops it and releases the Lease.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from scheduler import logs
from scheduler.api.config import parse_configuration, parse_duration
from scheduler.kube.client import new_api_client
from scheduler.kube.leader import AlwaysLeader, Leadership, LeaseElection
from scheduler.kube.ownership import adopt_lease, read_deployment_reference
from scheduler.kube.rest import Rest, RestError
from scheduler.multikueue.controller import Controller, MultiKueueSettings
from scheduler.multikueue.decisions import DEFAULT_ORIGIN, DEFAULT_WORKER_LOST_TIMEOUT
from scheduler.version import kuota_version

log = logging.getLogger("kuota.multikueue")


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
        help="a config.kueue.x-k8s.io Configuration file (namespace, multiKueue)",
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
        default=True,
        help="hold a Lease before acting, so only one replica writes (default: on)",
    )
    parser.add_argument(
        "--lease-namespace",
        help="namespace of the Lease (default: the Configuration's namespace)",
    )
    parser.add_argument("--lease-name", default="kuota-multikueue", help="name of the Lease")
    parser.add_argument("--lease-duration", type=int, default=15, help="seconds (default 15)")
    parser.add_argument("--renew-deadline", type=int, default=10, help="seconds (default 10)")
    parser.add_argument("--retry-period", type=int, default=2, help="seconds (default 2)")
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
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"]
    )
    return parser


def settings_from(
    raw: Mapping[str, Any] | None, interval: float, resync: float = 30.0
) -> MultiKueueSettings:
    """The controller's settings from a Configuration as read (None: defaults): pure."""
    if raw is None:
        return MultiKueueSettings(interval=interval, resync=resync)
    config = parse_configuration(raw)
    block = config.operational.get("multiKueue")
    block = block if isinstance(block, Mapping) else {}
    lost = block.get("workerLostTimeout")
    timeout = parse_duration(lost) if isinstance(lost, str) else None
    return MultiKueueSettings(
        namespace=config.namespace,
        origin=str(block.get("origin") or DEFAULT_ORIGIN),
        worker_lost_timeout=timeout if timeout is not None else DEFAULT_WORKER_LOST_TIMEOUT,
        interval=interval,
        resync=resync,
    )


async def serve(args: argparse.Namespace) -> int:
    raw = yaml.safe_load(args.config.read_text()) if args.config else None
    settings = settings_from(raw, args.interval, args.resync)
    api = await new_api_client(args.kubeconfig)
    rest = Rest(api, timeout=30)
    leadership: Leadership = (
        LeaseElection(
            rest,
            name=args.lease_name,
            namespace=args.lease_namespace or settings.namespace,  # as lease_namespace below
            identity=args.identity,
            lease_duration=args.lease_duration,
            renew_deadline=args.renew_deadline,
            retry_period=args.retry_period,
        )
        if args.leader_elect
        else AlwaysLeader(args.identity)
    )
    lease_namespace = args.lease_namespace or settings.namespace
    if isinstance(leadership, LeaseElection) and args.owner_deployment:
        try:
            leadership.lock.owner = await read_deployment_reference(
                rest, lease_namespace, args.owner_deployment
            )
        except RestError as failure:  # adopted at the next term start instead
            log.warning(
                "could not read the Deployment that owns the Lease",
                extra={"deployment": args.owner_deployment, "error": str(failure)},
            )
    controller = Controller(rest, settings, fence=leadership.fence)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)

    async def stepped_down() -> None:
        log.info("stepped down: workers dropped, campaigning again")

    async def lead() -> None:
        if args.leader_elect and args.owner_deployment:
            try:
                await adopt_lease(rest, lease_namespace, args.lease_name, args.owner_deployment)
            except RestError as failure:  # the Lease stays; only `helm uninstall` would miss it
                log.warning(
                    "could not add the owner reference to the Lease",
                    extra={"error": str(failure)},
                )
        await controller.lead()

    watching = asyncio.create_task(controller.watch(), name="informers")
    acting = asyncio.create_task(leadership.run(lead, stepped_down), name="leading")
    log.info(
        "multikueue controller started",
        extra={
            "namespace": settings.namespace,
            "origin": settings.origin,
            "worker_lost_timeout": settings.worker_lost_timeout.total_seconds(),
            "identity": args.identity,
            "leader_elect": args.leader_elect,
        },
    )
    done, _ = await asyncio.wait(
        [asyncio.create_task(stop.wait()), acting, watching], return_when=asyncio.FIRST_COMPLETED
    )
    for task in (acting, watching):
        if task in done and not task.cancelled() and task.exception() is not None:
            log.error(
                "a main task failed", exc_info=task.exception(), extra={"task": task.get_name()}
            )
    code = 1 if any(t in done for t in (acting, watching)) else 0
    for task in (acting, watching):  # leading: the work stops, then the Lease is released
        task.cancel()
    await asyncio.gather(acting, watching, return_exceptions=True)
    await controller.close()
    await api.close()
    log.info("multikueue controller stopped", extra={"exit_code": code})
    return code


def check_lease_timings(args: argparse.Namespace) -> str | None:
    """What is wrong with the Lease timings, if anything: pure."""
    if not args.leader_elect:
        return None
    if args.renew_deadline >= args.lease_duration:
        return "--renew-deadline must be less than --lease-duration (the gap bounds each write)"
    if args.renew_deadline <= 1.2 * args.retry_period:
        return "--renew-deadline must be more than 1.2 x --retry-period"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    problem = check_lease_timings(args)
    if problem:
        parser.error(problem)
    logs.configure(args.log_level)
    return asyncio.run(serve(args))


if __name__ == "__main__":
    sys.exit(main())
