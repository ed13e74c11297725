"""``kuota convert FILE...``: manifests of any Kueue version, rewritten as ``v1beta2``.

What ``kubectl convert`` does for built-in kinds, for kuota's: a cluster
serves ``v1beta2`` and ``v1beta1`` by default
(docs/api-differences.md#api-versions-served), so a ``v1alpha1``
or ``v1alpha2`` manifest is applied after this command rewrites it (or with
the legacy versions served, the chart's ``crds.servedLegacyVersions``).

* Every ``kueue.x-k8s.io`` object goes through
  :func:`scheduler.api.convert.convert_with_warnings`, the function the
  webhook's ``/convert`` answers the API server with, so the output is what
  the cluster itself would store.  One difference, deliberate: the legacy
  rules are checked first (``check=True``, as the admission webhook does
  before storing a legacy object), since conversion needs a valid legacy
  object (docs/validation.md#order-of-processing); the webhook's ``/convert``
  skips them because a stored object must always be readable.
* A ``config.kueue.x-k8s.io/v1beta1`` Configuration becomes ``v1beta2``
  (:func:`scheduler.api.convert.configuration_to_v1beta2`).
* ``v1beta2`` objects are written as they were.  Objects of any other group
  (Namespaces, Jobs, ...) are copied unchanged, with a note on standard
  error, so the output replaces the whole input file; ``kind: List``
  documents are written as their items.

The output is multi-document YAML (``-o json``: one object, or a ``List``
when there are several) on standard output; warnings and notes go to
standard error.  Exit 0 when every object was written; 1 when one cannot be
converted (each is named with the field at fault, and nothing is written);
2 when the input cannot be read (file and line), as ``kuota validate``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, TextIO

import yaml

from scheduler.api.convert import (
    HUB_VERSION,
    ConversionError,
    configuration_to_v1beta2,
    convert_with_warnings,
    legacy_form_warning,
)
from scheduler.api.field import FieldError
from scheduler.api.refs import CONFIG_GROUP, KUEUE_GROUP
from scheduler.cli.loader import Document, InputError, load

EXIT_CONVERTED, EXIT_UNCONVERTIBLE, EXIT_UNREADABLE = 0, 1, 2


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "convert",
        help="rewrite Kueue manifests of any version as v1beta2, offline",
        description="Rewrite kueue.x-k8s.io manifests of any version (v1alpha1, v1alpha2, "
        "v1beta1, v1beta2) and config.kueue.x-k8s.io Configurations as v1beta2, with the "
        "conversion of kuota's webhook; other objects are copied unchanged. Prints the result "
        "on standard output. Exit 0: converted; 1: an object cannot be converted (nothing "
        "printed); 2: unreadable input.",
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="YAML file(s); - reads standard input"
    )
    parser.add_argument(
        "-o",
        "--output",
        choices=("yaml", "json"),
        default="yaml",
        help="output format (default yaml: one document per object)",
    )
    parser.set_defaults(run=run)


@dataclass(frozen=True)
class Outcome:
    """What became of one input object."""

    document: Document
    object: dict[str, Any] | None
    """The object to write; None when it could not be converted."""
    warnings: list[str] = field(default_factory=list)
    errors: list[FieldError] = field(default_factory=list)
    state: str = "converted"
    """``converted``, ``current`` (already v1beta2), ``foreign`` (not Kueue's) or ``failed``."""

    @property
    def label(self) -> str:
        raw = self.document.raw
        metadata = raw.get("metadata")
        name = metadata.get("name") if isinstance(metadata, dict) else None
        return f"{raw.get('kind')}/{name if isinstance(name, str) else '(unnamed)'}"


def json_ready(value: Any) -> Any:
    """``value`` as JSON would carry it (what kubectl sends the API server): pure.

    YAML reads an unquoted ``2024-05-01T10:00:00Z`` as a timestamp; the API
    and the converters know it as an RFC 3339 string.
    """
    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_ready(item) for item in value]
    if isinstance(value, datetime):
        # YAML 1.1: a timestamp without a zone is UTC.
        if value.tzinfo is None or value.utcoffset() == UTC.utcoffset(None):
            return value.replace(tzinfo=None).isoformat() + "Z"
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return value


def convert_document(document: Document) -> Outcome:
    """Convert one object (see the module docstring): pure."""
    raw = json_ready(document.raw)
    api_version = raw.get("apiVersion")
    group = api_version.rpartition("/")[0] if isinstance(api_version, str) else ""
    try:
        if group == KUEUE_GROUP:
            result = convert_with_warnings(raw, HUB_VERSION, check=True)
        elif group == CONFIG_GROUP:
            result = configuration_to_v1beta2(raw)
        else:
            return Outcome(document, raw, state="foreign")
    except ConversionError as failed:
        return Outcome(document, None, errors=failed.errors, state="failed")
    if result.object.get("apiVersion") == api_version:
        return Outcome(document, result.object, warnings=list(result.warnings), state="current")
    # "it was converted" is what this command was asked to do: not worth a line.
    said = legacy_form_warning(api_version.rpartition("/")[2], str(raw.get("kind")))
    warnings = [warning for warning in result.warnings if warning != said]
    return Outcome(document, result.object, warnings=warnings, state="converted")


def render_yaml(objects: Sequence[dict[str, Any]], stdout: TextIO) -> None:
    yaml.safe_dump_all(objects, stdout, sort_keys=False, allow_unicode=True, width=float("inf"))


def render_json(objects: Sequence[dict[str, Any]], stdout: TextIO) -> None:
    """One object as itself; several (or none) as a ``v1`` List, as kubectl prints them."""
    document: dict[str, Any] = (
        objects[0]
        if len(objects) == 1
        else {"apiVersion": "v1", "kind": "List", "items": list(objects)}
    )
    json.dump(document, stdout, indent=2, ensure_ascii=False)
    stdout.write("\n")


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    try:
        documents = load(args.files, stdin)
    except InputError as unreadable:
        print(f"error: {unreadable}", file=stderr)
        return EXIT_UNREADABLE
    outcomes = [convert_document(document) for document in documents]
    for outcome in outcomes:
        where = outcome.document.where
        for error in outcome.errors:
            print(f"error: {where}: {outcome.label}: {error.render()}", file=stderr)
        for warning in outcome.warnings:
            print(f"warning: {where}: {outcome.label}: {warning}", file=stderr)
        if outcome.state == "foreign":
            raw = outcome.document.raw
            print(
                f"note: {where}: copied apiVersion {raw.get('apiVersion')!r} kind "
                f"{raw.get('kind')!r} unchanged (not a Kueue object)",
                file=stderr,
            )
    failed = [outcome for outcome in outcomes if outcome.state == "failed"]
    if failed:
        print(
            f"{len(failed)} of {len(outcomes)} object(s) cannot be converted; nothing written",
            file=stderr,
        )
        return EXIT_UNCONVERTIBLE
    objects = [outcome.object for outcome in outcomes if outcome.object is not None]
    if args.output == "json":
        render_json(objects, stdout)
    else:
        render_yaml(objects, stdout)
    counts = {
        state: sum(1 for outcome in outcomes if outcome.state == state)
        for state in ("converted", "current", "foreign")
    }
    print(
        f"{len(outcomes)} object(s): {counts['converted']} converted to {HUB_VERSION}, "
        f"{counts['current']} already {HUB_VERSION}, {counts['foreign']} not Kueue's "
        "(copied unchanged)",
        file=stderr,
    )
    return EXIT_CONVERTED
