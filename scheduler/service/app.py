"""``kuota-scheduler``: the live scheduler process.

It mirrors the cluster through informers, feeds the pure engine and writes
its decisions back.  This entry point is the process shell; the service
arrives with the scheduler issue.
"""

from __future__ import annotations

import argparse
import sys

from scheduler.version import kuota_version


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kuota-scheduler",
        description="kuota's scheduler: admits queued workloads by quota, flavor and priority.",
    )
    parser.add_argument("--version", action="version", version=f"kuota-scheduler {kuota_version()}")
    return parser


def main(argv: list[str] | None = None) -> int:
    build_parser().parse_args(argv)
    print("kuota-scheduler: the service is not implemented yet (see issue: the scheduler process)",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
