"""What the live commands (``kuota status``, ``kuota explain``, ``kuota list``) share.

They read a running cluster, but only one module talks to it
(``scheduler.cli.cluster_reader``, which returns raw dicts); everything here is
pure or reads local files, so the commands can be unit-tested with raw dicts.

The cluster's objects reach the scheduling engine exactly the way ``kuota
simulate`` feeds it manifests (``scheduler.cli.cluster.build_cluster``): the
same admission pipeline and parser, Workloads whose status holds an admission
count against quota.  Decisions that make a live picture safe to load:

- Jobs are not fed to the engine when they already have a Workload (the
  scheduler made it); a queued, suspended Job without one yet becomes its
  Workload the way the scheduler would make it, so it is counted too.
- An object the pipeline rejects is left out with a note (a live cluster may
  hold objects older than today's validation); it never stops the command.
- The engine's clock is the wall clock of the command, never earlier than
  the newest object.
"""

from __future__ import annotations

import argparse
import io
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from scheduler.api import objects as raw_objects

# Re-exported for the live commands (explain, list, status): raw objects are
# read through scheduler.api.objects, the one reader.
from scheduler.api.objects import condition as condition
from scheduler.api.objects import is_true as is_true
from scheduler.api.objects import metadata as metadata
from scheduler.api.objects import owner_job_uid as owner_job_uid
from scheduler.api.objects import parse_time as parse_time
from scheduler.api.refs import JOB_UID_LABEL as JOB_UID_LABEL
from scheduler.api.refs import QUEUE_NAME_LABEL as QUEUE_NAME_LABEL
from scheduler.api.refs import V1BETA2
from scheduler.cli.cluster import Cluster, InvalidInput, build_cluster
from scheduler.cli.loader import Document

DEFAULT_NAMESPACE = "default"


@dataclass
class ClusterObjects:
    """Everything the live commands read from a cluster, as raw API dicts."""

    resource_flavors: list[dict[str, Any]] = field(default_factory=list)
    cohorts: list[dict[str, Any]] = field(default_factory=list)
    cluster_queues: list[dict[str, Any]] = field(default_factory=list)
    local_queues: list[dict[str, Any]] = field(default_factory=list)
    workload_priority_classes: list[dict[str, Any]] = field(default_factory=list)
    admission_checks: list[dict[str, Any]] = field(default_factory=list)
    multikueue_clusters: list[dict[str, Any]] = field(default_factory=list)
    workloads: list[dict[str, Any]] = field(default_factory=list)
    jobs: list[dict[str, Any]] = field(default_factory=list)
    """Jobs of every integration (a Job, a JobSet, with its apiVersion and kind) carrying the
    queue-name label."""
    pods: list[dict[str, Any]] = field(default_factory=list)
    """The pods kuota started for a job (``STARTED_PODS_SELECTOR``): what an evicted job still
    runs."""
    namespaces: list[dict[str, Any]] = field(default_factory=list)
    priority_classes: list[dict[str, Any]] = field(default_factory=list)
    limit_ranges: list[dict[str, Any]] = field(default_factory=list)
    """What a pending Workload is charged besides its requests: defaults and pod overhead."""
    runtime_classes: list[dict[str, Any]] = field(default_factory=list)
    topologies: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    """Read only when a ResourceFlavor names a Topology
    (docs/concepts.md#topology-aware-scheduling)."""
    bound_pods: list[dict[str, Any]] = field(default_factory=list)
    """Every pod bound to a node, when a ResourceFlavor names a Topology: the room they take."""


ClusterFetcher = Callable[[str | None], ClusterObjects]
"""Reads a cluster through the kubeconfig at the given path (None: the default)."""


def key_of(raw: Mapping[str, Any]) -> str:
    """``namespace/name`` of a namespaced object: pure (an empty namespace keeps its slash)."""
    return f"{raw_objects.namespace(raw) or ''}/{raw_objects.name(raw)}"


def age(moment: datetime | None, now: datetime) -> str:
    """kubectl's short age (``45s``, ``3m``, ``5h``, ``2d``): pure."""
    if moment is None:
        return "-"
    seconds = max(0, int((now - moment).total_seconds()))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 3600 * 2:
        return f"{seconds // 60}m"
    if seconds < 86400 * 2:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


# --- the engine's input ----------------------------------------------------------


def _documents(objects: ClusterObjects) -> list[Document]:
    """The objects in an order that makes sense to an engine (queues before workloads): pure."""
    have_workload = {uid for uid in (owner_job_uid(w) for w in objects.workloads) if uid}
    waiting_jobs = [
        job
        for job in objects.jobs
        if raw_objects.uid(job) not in have_workload
        and raw_objects.spec(job).get("suspend") is True
    ]
    groups: list[tuple[str, Sequence[dict[str, Any]], str, str]] = [
        ("Namespace", objects.namespaces, "v1", "Namespace"),
        ("PriorityClass", objects.priority_classes, "scheduling.k8s.io/v1", "PriorityClass"),
        ("LimitRange", objects.limit_ranges, "v1", "LimitRange"),
        ("RuntimeClass", objects.runtime_classes, "node.k8s.io/v1", "RuntimeClass"),
        (
            "WorkloadPriorityClass",
            objects.workload_priority_classes,
            V1BETA2,
            "WorkloadPriorityClass",
        ),
        ("AdmissionCheck", objects.admission_checks, V1BETA2, "AdmissionCheck"),
        ("Topology", objects.topologies, V1BETA2, "Topology"),
        ("Node", objects.nodes, "v1", "Node"),
        ("Pod", objects.bound_pods, "v1", "Pod"),
        ("ResourceFlavor", objects.resource_flavors, V1BETA2, "ResourceFlavor"),
        ("Cohort", objects.cohorts, V1BETA2, "Cohort"),
        ("ClusterQueue", objects.cluster_queues, V1BETA2, "ClusterQueue"),
        ("LocalQueue", objects.local_queues, V1BETA2, "LocalQueue"),
        ("Workload", objects.workloads, V1BETA2, "Workload"),
    ]
    documents = []
    for label, items, api_version, kind in groups:
        for index, raw in enumerate(items):
            typed = {"apiVersion": api_version, "kind": kind, **raw}
            documents.append(Document(f"cluster {label}", index + 1, typed))
    for index, job in enumerate(waiting_jobs):  # each carries its own apiVersion and kind
        typed = {"apiVersion": "batch/v1", "kind": "Job", **job}
        documents.append(Document(f"cluster {typed['kind']}", index + 1, typed))
    return documents


def load_cluster(objects: ClusterObjects, notes: list[str]) -> Cluster:
    """The engine's input made from a live picture; rejected objects are left out with a note: pure.

    ``notes`` collects one line per object left out (or otherwise remarked on).
    """
    documents = _documents(objects)
    quiet = io.StringIO()
    try:
        return build_cluster(documents, quiet)
    except InvalidInput:
        pass
    kept = []
    for document in documents:
        try:
            build_cluster([document], io.StringIO())
        except InvalidInput as invalid:
            notes.extend(f"left out: {line}" for line in invalid.lines)
            continue
        kept.append(document)
    return build_cluster(kept, quiet)


def new_live_engine(
    objects: ClusterObjects, now: datetime, notes: list[str]
) -> tuple[Any, Cluster, datetime]:
    """An engine holding the live picture, no cycle run yet; (engine, cluster, its clock): pure."""
    from scheduler.cli.simulate import new_engine

    cluster = load_cluster(objects, notes)
    engine = new_engine(cluster, pods_observed=True)
    return engine, cluster, max(now, cluster.start_time)


# --- where the cluster is ------------------------------------------------------------


def kubeconfig_path(explicit: str | None, environ: Mapping[str, str], home: Path) -> str:
    """``--kubeconfig``, else ``$KUBECONFIG`` (a ``:``-list too), else ``~/.kube/config``: pure."""
    if explicit:
        return explicit
    from_env = environ.get("KUBECONFIG", "")
    if from_env.strip(os.pathsep):
        return from_env
    return str(home / ".kube" / "config")


def context_namespace(path: str) -> str:
    """The namespace of the kubeconfig's current context, else ``default`` (reads the file)."""
    for candidate in path.split(os.pathsep):
        try:
            config = yaml.safe_load(Path(candidate).expanduser().read_text())
        except (OSError, yaml.YAMLError):
            continue
        if not isinstance(config, dict):
            continue
        current = config.get("current-context")
        for context in config.get("contexts") or []:
            if isinstance(context, dict) and context.get("name") == current:
                namespace = (context.get("context") or {}).get("namespace")
                return str(namespace) if namespace else DEFAULT_NAMESPACE
        if current:
            break
    return DEFAULT_NAMESPACE


def add_connection_arguments(
    parser: argparse.ArgumentParser, *, namespaced: bool, all_namespaces: bool = True
) -> None:
    """``--kubeconfig``; for namespaced commands ``-n/--namespace`` and (unless told not) ``-A``."""
    parser.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)",
    )
    if namespaced:
        parser.add_argument(
            "-n",
            "--namespace",
            metavar="NS",
            help="namespace (default: the current context's, else 'default')",
        )
        if all_namespaces:
            parser.add_argument(
                "-A", "--all-namespaces", action="store_true", help="every namespace"
            )


def fetch(
    args: argparse.Namespace, stderr: Any, fetcher: ClusterFetcher | None = None
) -> tuple[ClusterObjects | None, str]:
    """Read the cluster through ``fetcher`` (default: the real reader).

    Returns (the objects, or None on failure; the kubeconfig path).
    """
    path = kubeconfig_path(getattr(args, "kubeconfig", None), os.environ, Path.home())
    if fetcher is None:
        from scheduler.cli.cluster_reader import read_cluster

        fetcher = read_cluster
    try:
        return fetcher(path), path
    except Exception as failure:  # any failure to reach or read the cluster is the user's answer
        print(f"error: cannot read the cluster through {path}: {_reason(failure)}", file=stderr)
        return None, path


def _reason(failure: Exception) -> str:
    text = str(failure).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(failure).__name__}: {first}" if first else type(failure).__name__


def chosen_namespace(args: argparse.Namespace, kubeconfig: str) -> str | None:
    """The namespace a namespaced command looks at; None for ``-A``."""
    if getattr(args, "all_namespaces", False):
        return None
    return args.namespace or context_namespace(kubeconfig)


def utc_now() -> datetime:
    return datetime.now(UTC)
