"""The ``kuota`` command: tools for people who write queues and jobs.

``validate`` and ``simulate`` run the same pure code as the live system
(validation, the scheduling engine) without a cluster; their contract is in
docs/validation.md#kuota-validate
and docs/validation.md#kuota-simulate.  ``convert`` rewrites manifests of any Kueue
version as ``v1beta2`` with the webhook's conversion, also offline.
``status``, ``explain`` and ``list`` read a live cluster through the user's
kubeconfig (read-only) and show it through that same engine; ``stop`` and
``resume`` hold and release queues and workloads, as kueuectl does
(:mod:`scheduler.cli.control`).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from scheduler.cli import control, convert, explain, listing, simulate, status, validate
from scheduler.version import kuota_version


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kuota",
        description="Kubernetes-native batch job queueing (the Kueue API, kueue.x-k8s.io).",
    )
    parser.add_argument("--version", action="version", version=f"kuota {kuota_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    validate.add_parser(commands)
    simulate.add_parser(commands)
    convert.add_parser(commands)
    status.add_parser(commands)
    explain.add_parser(commands)
    listing.add_parser(commands)
    control.add_parsers(commands)
    return parser


def main(
    argv: list[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    return int(args.run(args, stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr))


if __name__ == "__main__":
    sys.exit(main())
