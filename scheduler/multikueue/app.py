"""``kuota-multikueue`` (``python -m scheduler.multikueue``): the MultiKueue controller process.

Runs on the manager cluster next to the scheduler.  It reads the same Kueue
Configuration file as the scheduler: ``namespace`` (where the workers'
kubeconfig Secrets are) and the ``multiKueue`` block (``origin``,
``workerLostTimeout``).  One replica: its writes are idempotent and guarded
by resourceVersions, so a second one would only repeat them.  SIGTERM stops
it after the pass in progress.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from scheduler import logs
from scheduler.api.config import parse_configuration, parse_duration
from scheduler.kube.client import new_api_client
from scheduler.kube.rest import Rest
from scheduler.multikueue.controller import Controller, Settings
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
        help="seconds between two passes over clusters and Workloads (default 2)",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"]
    )
    return parser


def settings_from(raw: Mapping[str, Any] | None, interval: float) -> Settings:
    """The controller's settings from a Configuration as read (None: defaults): pure."""
    if raw is None:
        return Settings(interval=interval)
    config = parse_configuration(raw)
    block = config.operational.get("multiKueue")
    block = block if isinstance(block, Mapping) else {}
    lost = block.get("workerLostTimeout")
    timeout = parse_duration(lost) if isinstance(lost, str) else None
    return Settings(
        namespace=config.namespace,
        origin=str(block.get("origin") or DEFAULT_ORIGIN),
        worker_lost_timeout=timeout if timeout is not None else DEFAULT_WORKER_LOST_TIMEOUT,
        interval=interval,
    )


async def serve(args: argparse.Namespace) -> int:
    raw = yaml.safe_load(args.config.read_text()) if args.config else None
    settings = settings_from(raw, args.interval)
    api = await new_api_client(args.kubeconfig)
    controller = Controller(Rest(api, timeout=30), settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    log.info(
        "multikueue controller started",
        extra={
            "namespace": settings.namespace,
            "origin": settings.origin,
            "worker_lost_timeout": settings.worker_lost_timeout.total_seconds(),
        },
    )
    try:
        await controller.run(stop)
    finally:
        await controller.close()
        await api.close()
    log.info("multikueue controller stopped")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logs.configure(args.log_level)
    return asyncio.run(serve(args))


if __name__ == "__main__":
    sys.exit(main())
