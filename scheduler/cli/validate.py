"""``kuota validate FILE...``: the webhook's checks, offline (docs/validation.md#kuota-validate).

Exit 0 when every object is valid, 1 when at least one is not, 2 when the
input cannot be read.  Human output is one line per violation,
``<kind>/<name>: <field.path>: <message>``; ``--json`` prints the contract's
object.  Job kinds (batch/v1 Job, JobSet, ...) are checked by the rules of
their integration (``scheduler/jobs/<kind>/validation.py``), registered with
the pipeline when :mod:`scheduler.jobs` is imported.  Objects of kinds kuota
does not validate are noted on stderr and otherwise ignored.

Every served version is read, offline
(docs/api-differences.md#api-versions-served).  An object of a version a
cluster serves only when asked (``v1alpha1``, ``v1alpha2``) is validated as
any other, and gets a note saying how to apply it: ``kuota convert`` it, or
serve its version (the chart's ``crds.servedLegacyVersions``).  The note goes
to stderr, once per file and version; with ``--json``, into the object's
``warnings`` list (a field added to the contract's shape, present only on
objects that have a note).

A Configuration (``config.kueue.x-k8s.io``, ``v1beta1`` converted first) is
checked as every kuota process checks its own at start
(:func:`scheduler.api.pipeline.review`, the same rules): what kuota refuses
is an error; every field kuota accepts without acting on it, and what the
conversion of a ``v1beta1`` file dropped, is a warning (as is a field of an
API object kuota does not act on: the webhook's admission warning), one
line each on stderr (``warning: <where>: Configuration/<name>: <field>: <what kuota
does>``; with ``--json`` too) and, with ``--json``, in the object's
``warnings`` list.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import scheduler.jobs  # noqa: F401  (registers the job kinds and their rules with the pipeline)
from scheduler.api.crds import LEGACY_VERSIONS, SERVED_LEGACY_VERSIONS
from scheduler.api.pipeline import Review, UnsupportedKind, review
from scheduler.api.refs import HUB_VERSION, KUEUE_GROUP
from scheduler.cli.loader import Document, InputError, load

EXIT_VALID, EXIT_INVALID, EXIT_UNREADABLE = 0, 1, 2


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "validate",
        help="check manifests with the admission webhook's rules, offline",
        description="Check kueue.x-k8s.io manifests (every version, v1alpha1 to v1beta2), "
        "batch/v1 Jobs and the Configuration file exactly as kuota's admission webhook would "
        "on create. Exit 0: all valid; 1: some invalid; 2: unreadable input.",
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="YAML file(s); - reads standard input"
    )
    parser.add_argument("--json", action="store_true", help="print a JSON report instead of lines")
    parser.set_defaults(run=run)


@dataclass(frozen=True)
class Checked:
    """One reviewed object, where it was read, and the notes about its version."""

    document: Document
    review: Review
    warnings: tuple[str, ...]


def unserved_version(raw: dict[str, Any]) -> str | None:
    """Pure: the object's kueue.x-k8s.io version when a cluster serves it only if asked."""
    api_version = raw.get("apiVersion")
    if not isinstance(api_version, str):
        return None
    group, _, version = api_version.rpartition("/")
    if group != KUEUE_GROUP or version not in LEGACY_VERSIONS:
        return None
    return None if version in SERVED_LEGACY_VERSIONS else version


def _served_only_when_asked(version: str, source: str) -> str:
    served = " and ".join((HUB_VERSION, *SERVED_LEGACY_VERSIONS))
    path = "-" if source == "<stdin>" else source
    return (
        f"served in a cluster only when asked (kuota's CRDs serve {served} by default, as "
        f"Kueue v0.19): apply the output of `kuota convert {path}`, or serve {version} with "
        "the chart value crds.servedLegacyVersions"
    )


def unserved_version_note(version: str, source: str) -> str:
    """Pure: how to apply a manifest of ``version``, read from ``source`` (``--json``)."""
    return f"{KUEUE_GROUP}/{version} is {_served_only_when_asked(version, source)}"


def review_documents(documents: Sequence[Document], stderr: TextIO) -> list[Checked]:
    """Review every supported document; note the others on stderr."""
    reviews = []
    for document in documents:
        try:
            answer = review(document.raw, operation="CREATE", default_namespace="default")
            version = unserved_version(document.raw)
            notes = () if version is None else (unserved_version_note(version, document.source),)
            reviews.append(Checked(document, answer, notes + answer.warnings))
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


def render_notes(checked: Sequence[Checked]) -> list[str]:
    """Pure: the version notes for stderr, once per file and version, in file order."""
    counts: dict[tuple[str, str], int] = {}
    for item in checked:
        version = unserved_version(item.document.raw)
        if version is not None:
            key = (item.document.source, version)
            counts[key] = counts.get(key, 0) + 1
    return [
        f"note: {source}: {count} object(s) in {KUEUE_GROUP}/{version}, a version "
        f"{_served_only_when_asked(version, source)}"
        for (source, version), count in counts.items()
    ]


def render_warnings(checked: Sequence[Checked]) -> list[str]:
    """Pure: the warnings of Configuration documents for stderr, one line each, in order."""
    return [
        f"warning: {item.document.where}: {object_label(item.review)}: {warning}"
        for item in checked
        for warning in item.review.warnings
    ]


def render_json(checked: Sequence[Checked]) -> dict[str, Any]:
    """Pure: the ``--json`` report of the contract.

    An object with notes also has ``"warnings": [message, ...]``; the others
    keep exactly the contract's shape.
    """
    objects = []
    for item in checked:
        entry: dict[str, Any] = {
            "kind": item.review.kind,
            "name": item.review.name,
            "namespace": item.review.namespace,
            "valid": item.review.valid,
            "errors": [
                {"field": error.field, "message": error.message} for error in item.review.errors
            ],
        }
        if item.warnings:
            entry["warnings"] = list(item.warnings)
        objects.append(entry)
    return {"objects": objects}


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    try:
        documents = load(args.files, stdin)
    except InputError as unreadable:
        print(f"error: {unreadable}", file=stderr)
        return EXIT_UNREADABLE
    checked = review_documents(documents, stderr)
    reviews = [item.review for item in checked]
    for warning in render_warnings(checked):
        print(warning, file=stderr)
    if args.json:
        json.dump(render_json(checked), stdout, indent=2)
        stdout.write("\n")
    else:
        for line in render_lines(reviews):
            print(line, file=stdout)
        for note in render_notes(checked):
            print(note, file=stderr)
        invalid = sum(1 for item in reviews if not item.valid)
        print(f"{len(reviews)} object(s) checked, {invalid} invalid", file=stderr)
    return EXIT_INVALID if any(not item.valid for item in reviews) else EXIT_VALID
