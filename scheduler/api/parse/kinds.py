"""One parser per ``kueue.x-k8s.io/v1beta2`` kind: raw map → model, defaults applied.

Each parser is bound (``binding.py``) from the kind's root model and the
``v1beta2`` description the CRD schema is generated from, so the schema
defaults (queueing strategy, stop policy, preemption, flavor fungibility,
pod set name and count, ``active``, kubeconfig location type, fair-sharing
weight) are the models' defaults, checked equal when binding.  The pod
template is the one part read by hand (``workload.py``): the description
keeps it free-form.  Binding happens at import, so a model that drifts from
its description stops the import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api.crds.catalog import hub_schema
from scheduler.api.field import FieldPath
from scheduler.api.models import (
    AdmissionCheck,
    ClusterQueue,
    Cohort,
    LocalQueue,
    MultiKueueCluster,
    MultiKueueConfig,
    PodTemplate,
    ResourceFlavor,
    Topology,
    Workload,
    WorkloadPriorityClass,
)
from scheduler.api.parse.binding import Build, bind
from scheduler.api.parse.reader import Reader
from scheduler.api.parse.workload import parse_pod_template

MODELS: Mapping[str, type] = {
    "ResourceFlavor": ResourceFlavor,
    "ClusterQueue": ClusterQueue,
    "LocalQueue": LocalQueue,
    "Cohort": Cohort,
    "Workload": Workload,
    "WorkloadPriorityClass": WorkloadPriorityClass,
    "AdmissionCheck": AdmissionCheck,
    "MultiKueueConfig": MultiKueueConfig,
    "MultiKueueCluster": MultiKueueCluster,
    "Topology": Topology,
}
"""The model of every kind kuota parses."""

CUSTOM: Mapping[type, Build] = {PodTemplate: parse_pod_template}
"""Builders of the models kept in free-form nodes."""

_BOUND: dict[str, Build] = {
    kind: bind(model, hub_schema(kind), custom=CUSTOM, root=True) for kind, model in MODELS.items()
}
ROOT = FieldPath()


def build(kind: str, reader: Reader, raw: Mapping[str, Any]) -> Any:
    """The model of ``kind`` read out of ``raw`` (errors go to ``reader``): pure."""
    return _BOUND[kind](reader, raw, ROOT)
