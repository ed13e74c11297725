"""``kuota validate FILE...``: the webhook's checks, offline (cli-contract.md).

Exit 0 when every object is valid, 1 when at least one is not, 2 when the
input cannot be read.  Human output is one line per violation,
``<kind>/<name>: <field.path>: <message>``; ``--json`` prints the contract's
object.  Job kinds (batch/v1 Job, JobSet, ...) are checked by the rules of
their integration (``scheduler/jobs/<kind>/validation.py``), registered with
the pipeline when :mod:`scheduler.jobs` is imported.  Objects of kinds kuota
does not validate are noted on stderr and otherwise ignored.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any, TextIO

import scheduler.jobs  # noqa: F401  (registers the job kinds and their rules with the pipeline)
from scheduler.api.pipeline import Review, UnsupportedKind, review
from scheduler.cli.loader import Document, InputError, load

EXIT_VALID, EXIT_INVALID, EXIT_UNREADABLE = 0, 1, 2


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "validate",
        help="check manifests with the admission webhook's rules, offline",
        description="Check kueue.x-k8s.io manifests (every served version), batch/v1 Jobs and "
        "the Configuration file exactly as kuota's admission webhook would on create. "
        "Exit 0: all valid; 1: some invalid; 2: unreadable input.",
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="YAML file(s); - reads standard input"
    )
    parser.add_argument("--json", action="store_true", help="print a JSON report instead of lines")
    parser.set_defaults(run=run)


def review_documents(documents: Sequence[Document], stderr: TextIO) -> list[Review]:
    """Review every supported document; note the others on stderr."""
    reviews = []
    for document in documents:
        try:
            reviews.append(review(document.raw, operation="CREATE", default_namespace="default"))
        except UnsupportedKind:
            api_version = document.raw.get("apiVersion")
            kind = document.raw.get("kind")
            print(
                f"note: {document.where}: skipping apiVersion {api_version!r} kind {kind!r} "
                "(not a kind kuota validates)",
                file=stderr,
            )
    return reviews


def object_label(item: Review) -> str:
    return f"{item.kind}/{item.name if item.name is not None else '(unnamed)'}"


def render_lines(reviews: Sequence[Review]) -> list[str]:
    """Pure: the human report, one line per violation."""
    return [f"{object_label(item)}: {error.render()}" for item in reviews for error in item.errors]


def render_json(reviews: Sequence[Review]) -> dict[str, Any]:
    """Pure: the ``--json`` report of the contract."""
    return {
        "objects": [
            {
                "kind": item.kind,
                "name": item.name,
                "namespace": item.namespace,
                "valid": item.valid,
                "errors": [
                    {"field": error.field, "message": error.message} for error in item.errors
                ],
            }
            for item in reviews
        ]
    }


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    try:
        documents = load(args.files, stdin)
    except InputError as unreadable:
        print(f"error: {unreadable}", file=stderr)
        return EXIT_UNREADABLE
    reviews = review_documents(documents, stderr)
    if args.json:
        json.dump(render_json(reviews), stdout, indent=2)
        stdout.write("\n")
    else:
        for line in render_lines(reviews):
            print(line, file=stdout)
        invalid = sum(1 for item in reviews if not item.valid)
        print(f"{len(reviews)} object(s) checked, {invalid} invalid", file=stderr)
    return EXIT_INVALID if any(not item.valid for item in reviews) else EXIT_VALID
