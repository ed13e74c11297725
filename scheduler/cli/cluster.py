"""Manifests → the inputs of the scheduling engine, for ``kuota simulate``.

Every document goes through the same admission pipeline as ``kuota
validate`` (any served version is converted to v1beta2 and defaulted), then
through ``scheduler.api.parse``; an invalid object stops the simulation with
the validate messages (exit 2).  Kinds outside the kueue API that the engine
still needs are read here: scheduling.k8s.io PriorityClass, v1 Namespace, and
what v1 LimitRanges and node.k8s.io RuntimeClasses add to a Workload's requests
(their defaults and pod overhead, :mod:`scheduler.api.pod_overhead`), and,
for topology-aware scheduling, v1 Nodes and the pods bound to them
(:mod:`scheduler.core.tas.inputs`; a Pod without ``spec.nodeName`` is a plain
Pod job, read by its integration).
A job of any registered integration (batch/v1 Job, JobSet: found through
:func:`scheduler.jobs.for_object`) is checked by its integration's admission
rules and, with a queue name, becomes its Workload.

Decisions that make a file of manifests a deterministic cluster:

- Workloads and Jobs without ``metadata.creationTimestamp`` get one from file
  order: the n-th such object (n from 0) is ``SIMULATION_EPOCH + n`` seconds,
  so earlier objects are older.
- A Job with ``generateName`` and no name is named ``<generateName><n:05d>``
  (n counts generated names from 1), and a Job without a UID keeps an empty
  one, so its Workload name ``job-<name>-<hash>`` is predictable.
- Priority classes are resolved against every class in the input, wherever
  it appears in the files; so are LimitRanges (of a Workload's namespace) and
  RuntimeClasses: every Workload, given or made from a job, is charged with
  their defaults and overhead as the scheduler charges it.
- The Configuration (at most one is expected; the last one wins) is global
  and applies from the start.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TextIO

from scheduler.api import objects
from scheduler.api.config import Configuration
from scheduler.api.field import FieldError
from scheduler.api.parse import ObjectParseError, parse_object
from scheduler.api.pipeline import Review, UnsupportedKind, review
from scheduler.api.pod_overhead import (
    LimitDefaults,
    adjusted_workload,
    limit_range_defaults,
    runtime_class_overhead,
    summarize,
)
from scheduler.api.refs import QUEUE_NAME_LABEL
from scheduler.cli.loader import Document
from scheduler.cli.referenced_inputs import ReferencedInputs
from scheduler.core.engine import NamespaceInfo, PriorityClassInfo
from scheduler.core.tas.inputs import node_info, pod_usage
from scheduler.jobs import PriorityClasses, for_object, workload_from_job

SIMULATION_EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
ENGINE_KINDS = frozenset(
    {
        "ResourceFlavor",
        "ClusterQueue",
        "Cohort",
        "LocalQueue",
        "Workload",
        "WorkloadPriorityClass",
        "AdmissionCheck",
        "Topology",
    }
)


class InvalidInput(Exception):
    """Objects the admission webhook would reject; ``lines`` are the validate messages."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


# PriorityClass and Namespace manifests become the engine's own records directly.
PriorityClassObject = PriorityClassInfo
NamespaceObject = NamespaceInfo


@dataclass
class Cluster:
    """What the files describe, in file order, ready for an engine."""

    configuration: Configuration | None = None
    objects: list[Any] = field(default_factory=list)
    """Parsed models plus ``PriorityClassObject``/``NamespaceObject``, in file order."""
    workload_keys: list[str] = field(default_factory=list)
    """Every Workload (given or made from a Job), in file order."""
    latest_timestamp: datetime = SIMULATION_EPOCH

    @property
    def start_time(self) -> datetime:
        """A ``now`` after every object's creation."""
        return self.latest_timestamp + timedelta(seconds=1)


NAME_REQUIRED = "metadata.name: Required value: name or generateName is required"


def _metadata(raw: dict[str, Any]) -> dict[str, Any]:
    """``raw.metadata``, created when missing: the one place this module writes metadata."""
    metadata = raw.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
        raw["metadata"] = metadata
    return metadata


def _timestamp_text(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _label(kind: str, name: object) -> str:
    return f"{kind}/{name if name else '(unnamed)'}"


def _priority_class(document: Document) -> tuple[PriorityClassObject | None, list[str]]:
    raw = document.raw
    name = objects.metadata(raw).get("name")
    value = raw.get("value")
    errors = []
    if not isinstance(name, str) or not name:
        errors.append(f"{_label('PriorityClass', name)}: {NAME_REQUIRED}")
    if not isinstance(value, int) or isinstance(value, bool):
        errors.append(f"{_label('PriorityClass', name)}: value: Required value: must be an integer")
    global_default = raw.get("globalDefault") is True
    if errors:
        return None, errors
    return PriorityClassObject(str(name), int(value), global_default), []  # type: ignore[arg-type]


def _namespace(document: Document) -> tuple[NamespaceObject | None, list[str]]:
    metadata = objects.metadata(document.raw)
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        return None, [f"{_label('Namespace', name)}: {NAME_REQUIRED}"]
    labels: object = metadata.get("labels")
    pairs = labels.items() if isinstance(labels, Mapping) else ()
    return NamespaceObject(name, {str(k): str(v) for k, v in pairs}), []


LIMIT_RANGE = ("v1", "LimitRange")
RUNTIME_CLASS = ("node.k8s.io/v1", "RuntimeClass")


@dataclass
class PodOverheads:
    """What the input's LimitRanges and RuntimeClasses add to a Workload's requests."""

    limits: dict[str, dict[str, dict[str, LimitDefaults]]] = field(default_factory=dict)
    """Namespace -> LimitRange name -> its defaults by item type."""
    runtime_classes: dict[str, dict[str, Any]] = field(default_factory=dict)
    """RuntimeClass name -> ``overhead.podFixed``."""

    def read(self, document: Document) -> tuple[bool, list[str]]:
        """Take ``document`` if it is a LimitRange or a RuntimeClass: (taken, problems)."""
        raw = document.raw
        kind = (raw.get("apiVersion"), raw.get("kind"))
        if kind not in (LIMIT_RANGE, RUNTIME_CLASS):
            return False, []
        metadata = objects.metadata(raw)
        name = metadata.get("name")
        if not isinstance(name, str) or not name:
            return True, [f"{_label(str(raw.get('kind')), name)}: {NAME_REQUIRED}"]
        if kind == RUNTIME_CLASS:
            self.runtime_classes[name] = runtime_class_overhead(raw)
        else:
            namespace = str(metadata.get("namespace") or "default")
            self.limits.setdefault(namespace, {})[name] = limit_range_defaults(raw)
        return True, []

    def adjusted(self, workload: dict[str, Any]) -> Mapping[str, Any]:
        """``workload`` with the defaults and overhead the scheduler would add."""
        ranges = self.limits.get(objects.namespace(workload) or "default", {})
        summary = summarize(ranges[name] for name in sorted(ranges))
        overheads = {name: found for name, found in self.runtime_classes.items() if found}
        return adjusted_workload(workload, summary, overheads)


def _review_lines(item: Review, errors: Sequence[FieldError]) -> list[str]:
    name = item.name if item.name is not None else "(unnamed)"
    return [f"{item.kind}/{name}: {error.render()}" for error in errors]


def _with_identity(
    raw: dict[str, Any], generated: list[int], timestamps: list[int]
) -> dict[str, Any]:
    """A copy with a name (for generateName) and a creation timestamp (file order)."""
    copy = dict(raw)
    metadata = dict(_metadata(copy))
    copy["metadata"] = metadata
    if not metadata.get("name") and isinstance(metadata.get("generateName"), str):
        generated[0] += 1
        metadata["name"] = f"{metadata['generateName']}{generated[0]:05d}"
    if not metadata.get("creationTimestamp"):
        metadata["creationTimestamp"] = _timestamp_text(
            SIMULATION_EPOCH + timedelta(seconds=timestamps[0])
        )
    timestamps[0] += 1
    return copy


def _note(document: Document, what: str, stderr: TextIO) -> None:
    print(f"note: {document.where}: {what}", file=stderr)


def build_cluster(documents: Sequence[Document], stderr: TextIO) -> Cluster:
    """Read every document; raises ``InvalidInput`` with the validate messages."""
    cluster = Cluster()
    problems: list[str] = []
    jobs: list[tuple[int, Document, dict[str, Any]]] = []
    pod_classes: list[PriorityClassObject] = []
    generated, timestamps = [0], [0]
    overheads = PodOverheads()
    for document in documents:
        _, errors = overheads.read(document)
        problems.extend(errors)
    referenced = ReferencedInputs(documents)
    for document in documents:
        api_version, kind = document.raw.get("apiVersion"), document.raw.get("kind")
        if (api_version, kind) in (LIMIT_RANGE, RUNTIME_CLASS) or referenced.holds(document.raw):
            continue  # read above: they apply from the start, or to the jobs naming them
        if (api_version, kind) == ("scheduling.k8s.io/v1", "PriorityClass"):
            priority_class, errors = _priority_class(document)
            problems.extend(errors)
            if priority_class is not None:
                pod_classes.append(priority_class)
                cluster.objects.append(priority_class)
            continue
        if (api_version, kind) == ("v1", "Namespace"):
            namespace, errors = _namespace(document)
            problems.extend(errors)
            if namespace is not None:
                cluster.objects.append(namespace)
            continue
        if (api_version, kind) == ("v1", "Node"):
            cluster.objects.append(node_info(document.raw))
            continue
        if (api_version, kind) == ("v1", "Pod") and objects.spec(document.raw).get("nodeName"):
            cluster.objects.append(pod_usage(document.raw))
            continue
        raw = document.raw
        integration = for_object(raw)
        if (kind == "Workload" or integration is not None) and isinstance(
            raw.get("metadata", {}), dict
        ):
            raw = _with_identity(raw, generated, timestamps)
        try:
            item = review(raw, operation="CREATE", default_namespace="default")
        except UnsupportedKind:
            _note(
                document,
                f"skipping apiVersion {api_version!r} kind {kind!r} (not a kind kuota simulates)",
                stderr,
            )
            continue
        if item.errors or item.stored is None:
            problems.extend(_review_lines(item, item.errors))
            continue
        stored = item.stored
        if integration is not None:
            # A job of any integration (a Job, a JobSet) checked like the webhook checks it;
            # its Workload is made once the priority classes are known.
            if not integration.queue_name(stored):
                _note(
                    document,
                    f"{item.kind}/{item.name} has no {QUEUE_NAME_LABEL}: not managed by kuota",
                    stderr,
                )
                continue
            jobs.append((len(cluster.objects), document, stored))
            cluster.objects.append(None)  # the Workload goes here once classes are known
            continue
        try:
            parsed = parse_object(overheads.adjusted(stored) if kind == "Workload" else stored)
        except ObjectParseError as failed:
            problems.extend(_review_lines(item, failed.errors))
            continue
        if isinstance(parsed, Configuration):
            if cluster.configuration is not None:
                _note(document, "a second Configuration replaces the first", stderr)
            cluster.configuration = parsed
        elif parsed.kind in ENGINE_KINDS:
            cluster.objects.append(parsed)
        else:
            _note(document, f"{parsed.kind}/{item.name} is not used by the simulation", stderr)
    classes = _priority_classes(cluster.objects, pod_classes)
    for position, _document, job in jobs:
        integration = for_object(job)
        assert integration is not None  # only jobs of an integration are collected
        job, missing = referenced.resolve(job, integration)
        if missing is not None:
            problems.append(missing)
            continue
        raw_workload = workload_from_job(job, priority_classes=classes, integration=integration)
        _metadata(raw_workload)["creationTimestamp"] = _metadata(job)["creationTimestamp"]
        try:
            cluster.objects[position] = parse_object(overheads.adjusted(raw_workload))
        except ObjectParseError as failed:
            problems.extend(
                f"{job.get('kind')}/{_metadata(job).get('name')}: {error.render()}"
                for error in failed.errors
            )
    if problems:
        raise InvalidInput(problems)
    cluster.objects = [item for item in cluster.objects if item is not None]
    for item in cluster.objects:
        if getattr(item, "kind", None) == "Workload":
            cluster.workload_keys.append(item.key)
            created = item.metadata.creation_timestamp
            if created is not None and created > cluster.latest_timestamp:
                cluster.latest_timestamp = created
    if timestamps[0]:
        cluster.latest_timestamp = max(
            cluster.latest_timestamp, SIMULATION_EPOCH + timedelta(seconds=timestamps[0] - 1)
        )
    return cluster


def _priority_classes(
    objects: Sequence[Any], pod_classes: Sequence[PriorityClassObject]
) -> PriorityClasses:
    workload = {
        item.metadata.name: item.value or 0
        for item in objects
        if getattr(item, "kind", None) == "WorkloadPriorityClass"
    }
    defaults = sorted((item.value, item.name) for item in pod_classes if item.global_default)
    return PriorityClasses(
        workload=workload,
        pod={item.name: item.value for item in pod_classes},
        global_default=(defaults[0][1], defaults[0][0]) if defaults else None,
    )
