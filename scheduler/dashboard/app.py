"""``kuota-dashboard``: a read-only dashboard of queues, quota and waiting Workloads.

The process mirrors the cluster with its own ServiceAccount (list and watch,
nothing written; :mod:`scheduler.dashboard.mirror`), reads every picture with
the scheduling engine as ``kuota explain`` does
(:mod:`scheduler.dashboard.analysis`), samples usage for the plots
(:mod:`scheduler.dashboard.history`) and serves the page and its JSON views
over HTTPS with kuota's certificate (:mod:`scheduler.dashboard.server`),
each view authorized for the viewer by the cluster itself
(:mod:`scheduler.dashboard.access`).  Plain HTTP only on a loopback address
(``--no-secure``).  SIGTERM stops it.  docs/dashboard.md says what it shows.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from scheduler import logs
from scheduler.dashboard.mirror import Mirror
from scheduler.dashboard.server import Dashboard, create_app
from scheduler.kube import secure_serving
from scheduler.kube.access_review import AccessReviewer
from scheduler.kube.client import new_api_client
from scheduler.kube.rest import Resource, Rest, RestClient, RestError
from scheduler.kube.secure_serving import Endpoint, endpoint_for
from scheduler.version import kuota_version

log = logging.getLogger("kuota.dashboard")
EVENTS = Resource("", "v1", "events")
EVENTS_SHOWN = 50


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kuota-dashboard",
        description="kuota's read-only dashboard: ClusterQueues, cohorts, LocalQueues and "
        "Workloads with their position and why they wait, usage over time, live.",
    )
    parser.add_argument("--version", action="version", version=f"kuota-dashboard {kuota_version()}")
    parser.add_argument(
        "--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, else in-cluster config)"
    )
    parser.add_argument(
        "--bind-address",
        default="127.0.0.1:8446",
        metavar="HOST:PORT",
        help="where the dashboard is served (default 127.0.0.1:8446)",
    )
    parser.add_argument(
        "--secure",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="HTTPS (default); --no-secure serves plain HTTP, on a loopback address only",
    )
    parser.add_argument(
        "--cert-dir",
        type=Path,
        help="directory with tls.crt and tls.key (default: a self-signed pair)",
    )
    parser.add_argument(
        "--history-interval",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="seconds between two usage samples for the plots (default 10)",
    )
    parser.add_argument(
        "--history-samples",
        type=int,
        default=360,
        metavar="N",
        help="usage samples kept (default 360: an hour at the default interval)",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"]
    )
    return parser


def workload_events(rest: RestClient) -> Any:
    """Reads the newest Events about one Workload (namespace, name)."""

    async def read(namespace: str, name: str) -> list[dict[str, Any]]:
        selector = f"involvedObject.kind=Workload,involvedObject.name={name}"
        try:
            listed = await rest.list(
                EVENTS.collection_path(namespace), query=[("fieldSelector", selector)]
            )
        except RestError as failure:
            log.warning("could not read Events", extra={"error": str(failure)})
            return []
        items = sorted(
            listed.get("items") or [],
            key=lambda event: str(event.get("lastTimestamp") or event.get("eventTime") or ""),
        )
        return [
            {
                "type": event.get("type"),
                "reason": event.get("reason"),
                "message": event.get("message"),
                "time": event.get("lastTimestamp") or event.get("eventTime"),
                "count": event.get("count"),
            }
            for event in items[-EVENTS_SHOWN:]
        ]

    return read


async def serve(args: argparse.Namespace, endpoint: Endpoint) -> int:
    api = await new_api_client(args.kubeconfig)
    rest = Rest(api, timeout=30)
    dashboard: Dashboard | None = None

    def changed() -> None:
        if dashboard is not None:
            dashboard.changed()

    mirror = Mirror(rest, on_change=changed)
    dashboard = Dashboard(
        mirror.snapshot,
        lambda: mirror.version,
        nodes=mirror.nodes,
        history_size=args.history_samples,
    )
    watching = asyncio.create_task(mirror.run(), name="informers")
    while not mirror.ready() and not watching.done():
        await asyncio.sleep(0.1)
    sampling = asyncio.create_task(dashboard.sample_forever(args.history_interval), name="history")
    app = create_app(dashboard, AccessReviewer(rest), workload_events(rest))
    runner, site = await secure_serving.serve(app, endpoint, name="dashboard")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    log.info("kuota-dashboard started", extra={"version": kuota_version()})
    done, _ = await asyncio.wait(
        [asyncio.create_task(stop.wait()), watching, sampling],
        return_when=asyncio.FIRST_COMPLETED,
    )
    code = 0
    for task in (watching, sampling):
        if task in done and not task.cancelled() and task.exception() is not None:
            log.error("a main task failed", exc_info=task.exception())
            code = 1
        task.cancel()
    await asyncio.gather(watching, sampling, return_exceptions=True)
    await secure_serving.stop(runner, site)
    await api.close()
    return code


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    endpoint = endpoint_for(
        args.bind_address, secure=args.secure, cert_dir=args.cert_dir, flag="--bind-address"
    )
    if not isinstance(endpoint, Endpoint):
        parser.error(endpoint or "--bind-address is required")
    if args.history_interval <= 0 or args.history_samples < 1:
        parser.error("--history-interval must be > 0 and --history-samples >= 1")
    logs.configure(args.log_level)
    return asyncio.run(serve(args, endpoint))


if __name__ == "__main__":
    sys.exit(main())
