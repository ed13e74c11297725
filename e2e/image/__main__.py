"""``python -m e2e.image build [--out FILE]``: kuota's image as an OCI archive, without Docker.

Prints the archive's path.  ``--out`` also copies it there (``make image``
puts it in ``build/``).  See :mod:`e2e.image.build` for the steps.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from .build import ImageBuildError, build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m e2e.image", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("build", help="build (or reuse) the image archive")
    run.add_argument("--out", type=Path, help="also copy the archive to this file")
    run.add_argument("--force", action="store_true", help="rebuild even on a cache hit")
    args = parser.parse_args(argv)
    try:
        archive = build(force=args.force)
    except ImageBuildError as failure:
        print(f"error: {failure}", file=sys.stderr)
        return 1
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(archive, args.out)
        archive = args.out
    print(archive)
    return 0


if __name__ == "__main__":
    sys.exit(main())
