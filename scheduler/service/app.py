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
over at once.  ``/healthz``, ``/readyz`` and ``/metrics`` are served on
``--metrics-bind-address``.
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

import yaml
from aiohttp import web

from scheduler import logs
from scheduler.api.config import Configuration, parse_configuration
from scheduler.jobs import not_integrated
from scheduler.kube.client import new_api_client
from scheduler.kube.leader import AlwaysLeader, Leadership, LeaseElection
from scheduler.kube.ownership import adopt_lease, read_deployment_reference
from scheduler.kube.rest import Rest, RestError
from scheduler.service.loop import LoopSettings, SchedulerLoop
from scheduler.service.observability import health_app
from scheduler.version import kuota_version

log = logging.getLogger("kuota.scheduler")
EVENT_FLUSH_SECONDS = 5.0
"""How long a stopping scheduler waits for its queued Events."""


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
        help="a config.kueue.x-k8s.io Configuration file (fairSharing, resources, ...)",
    )
    parser.add_argument(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="hold a Lease before acting, so only one replica writes (default: on)",
    )
    parser.add_argument("--lease-namespace", default="kuota-system", help="namespace of the Lease")
    parser.add_argument("--lease-name", default="kuota-scheduler", help="name of the Lease")
    parser.add_argument(
        "--lease-duration",
        type=int,
        default=15,
        help="seconds a standby waits before taking over (default 15)",
    )
    parser.add_argument(
        "--renew-deadline",
        type=int,
        default=10,
        help="seconds after a renewal was sent during which the leader may write; "
        "past it, writes are fenced and it steps down (default 10)",
    )
    parser.add_argument(
        "--retry-period", type=int, default=2, help="seconds between Lease attempts (default 2)"
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
    parser.add_argument(
        "--metrics-bind-address",
        default="127.0.0.1:8080",
        help="HOST:PORT for /healthz, /readyz and /metrics (default 127.0.0.1:8080)",
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
    return parser


def load_configuration(path: Path | None) -> Configuration | None:
    if path is None:
        return None
    raw = yaml.safe_load(path.read_text())
    return parse_configuration(raw)


async def serve(args: argparse.Namespace) -> int:
    api = await new_api_client(args.kubeconfig)
    rest = Rest(api)
    leadership: Leadership = (
        LeaseElection(
            rest,
            name=args.lease_name,
            namespace=args.lease_namespace,
            identity=args.identity,
            lease_duration=args.lease_duration,
            renew_deadline=args.renew_deadline,
            retry_period=args.retry_period,
        )
        if args.leader_elect
        else AlwaysLeader(args.identity)
    )
    if isinstance(leadership, LeaseElection) and args.owner_deployment:
        try:
            leadership.lock.owner = await read_deployment_reference(
                rest, args.lease_namespace, args.owner_deployment
            )
        except RestError as failure:  # adopted at the next term start instead
            log.warning(
                "could not read the Deployment that owns the Lease",
                extra={"deployment": args.owner_deployment, "error": str(failure)},
            )
    scheduler = SchedulerLoop(
        rest,
        LoopSettings(
            config=load_configuration(args.config),
            status_writes_per_second=args.status_writes_per_second,
        ),
        fence=leadership.fence,
    )
    scheduler.writer.events.instance = args.identity  # reportingInstance: this replica, as leased
    host, _, port = args.metrics_bind_address.rpartition(":")
    runner = web.AppRunner(health_app(ready=scheduler.ready, alive=lambda: scheduler.alive))
    await runner.setup()
    await web.TCPSite(runner, host or "127.0.0.1", int(port)).start()
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    watching = asyncio.create_task(scheduler.watch(), name="informers")

    async def stepped_down() -> None:
        scheduler.rebuild()
        log.info(
            "stepped down: state rebuilt from the informers, campaigning again",
            extra={"identity": args.identity},
        )

    async def lead() -> None:
        if args.leader_elect and args.owner_deployment:
            try:
                await adopt_lease(
                    rest, args.lease_namespace, args.lease_name, args.owner_deployment
                )
            except RestError as failure:  # the Lease stays; only `helm uninstall` would miss it
                log.warning(
                    "could not add the owner reference to the Lease",
                    extra={"error": str(failure)},
                )
        await scheduler.lead()

    acting = asyncio.create_task(leadership.run(lead, stepped_down), name="leading")
    config = scheduler.settings.config
    unmanaged = not_integrated(config.integrations.frameworks) if config else []
    if unmanaged:
        log.warning(
            "integrations.frameworks enables kinds kuota does not manage yet: their objects are"
            " not queued (they run without quota)",
            extra={"frameworks": unmanaged},
        )
    log.info(
        "kuota-scheduler started",
        extra={
            "identity": args.identity,
            "leader_elect": args.leader_elect,
            "version": kuota_version(),
        },
    )
    done, _ = await asyncio.wait(
        [asyncio.create_task(stopping.wait()), acting, watching],
        return_when=asyncio.FIRST_COMPLETED,
    )
    for task in (acting, watching):
        if task in done and not task.cancelled() and task.exception() is not None:
            log.error(
                "a main task failed", exc_info=task.exception(), extra={"task": task.get_name()}
            )
    # Only a bug ends a main task (or, with --no-leader-elect, a failed loop).
    code = 1 if any(t in done for t in (acting, watching)) else 0
    for task in (acting, watching):  # leading: the work stops, then the Lease is released
        task.cancel()
    await asyncio.gather(acting, watching, return_exceptions=True)
    try:  # Events queued and not written yet are fenced now: say so
        await asyncio.wait_for(scheduler.writer.events_sent(), timeout=EVENT_FLUSH_SECONDS)
    except TimeoutError:
        log.warning(
            "stopping with Events not written", extra={"queued": scheduler.writer.events.queued}
        )
    scheduler.alive = False
    await runner.cleanup()
    await api.close()
    log.info("kuota-scheduler stopped", extra={"exit_code": code})
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
