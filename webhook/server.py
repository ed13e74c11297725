"""``kuota-webhook``: the admission webhook process (TLS, aiohttp).

It suspends queued Jobs on create, defaults and validates kuota's resources,
and converts between their API versions.  This entry point is the process
shell; the endpoints arrive with the webhook issue.
"""

from __future__ import annotations

import argparse
import sys

from scheduler.version import kuota_version


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kuota-webhook",
        description="kuota's admission and CRD-conversion webhook server.",
    )
    parser.add_argument("--version", action="version", version=f"kuota-webhook {kuota_version()}")
    return parser


def main(argv: list[str] | None = None) -> int:
    build_parser().parse_args(argv)
    print("kuota-webhook: the server is not implemented yet (see issue: the admission webhook)",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
