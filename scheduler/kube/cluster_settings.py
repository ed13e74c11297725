"""The cluster-wide objects that shape how a job is managed and its Workload counted.

Part of the scheduler's picture of the cluster (:class:`~scheduler.kube.state.ClusterState`,
which holds one as ``settings``), fed by the Namespace, PriorityClass, LimitRange and
RuntimeClass watches:

- **Namespaces**: their labels, which say whose jobs are kuota's
  (``managedJobsNamespaceSelector``); a job left alone in a namespace is
  decided again when that namespace's labels change.  The engine gets each
  namespace's labels too (a ClusterQueue's ``namespaceSelector``).
- **PriorityClasses**: their values go to the engine; the names of the
  ``globalDefault`` ones are kept here (the engine keeps values, not that
  flag), for the priority classes a new Workload is resolved against
  (:meth:`ClusterSettings.classes`).
- **LimitRanges and RuntimeClasses** are kept only as what they add to a
  Workload's requests (their defaults per namespace, the pod overhead per
  class: :mod:`scheduler.api.pod_overhead`); a Workload goes to the engine
  with them added, as Kueue counts it (docs/scheduling.md#workload-usage)
  (:meth:`ClusterSettings.engine_record`), and a change of either applies
  the pending Workloads it concerns again (admitted ones keep the usage their
  admission recorded).
- **Flavors**: what a job started on a flavor receives (its node labels and
  tolerations), read from the engine's records as a live view
  (:meth:`ClusterSettings.flavor_placements`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.defaults import apply_schema_defaults
from scheduler.api.field import ParseError, error
from scheduler.api.models import ResourceFlavorSpec, Toleration
from scheduler.api.parse import parse_object
from scheduler.api.pod_overhead import (
    LimitDefaults,
    adjusted_workload,
    limit_range_defaults,
    runtime_class_overhead,
    summarize,
)
from scheduler.core.engine import Engine, NamespaceInfo, PriorityClassInfo
from scheduler.core.engine_types import EngineObject
from scheduler.jobs.start_placement import FlavorPlacement
from scheduler.jobs.workload_from_job import PriorityClasses
from scheduler.kube.informer import Event
from scheduler.kube.worklist import WorkList

ENGINE_TYPES: Final = EngineObject.__args__
"""The record types the engine takes (a parsed object of another kind is not its business)."""

ApplyPending = Callable[[Callable[[Mapping[str, Any]], bool], str | None], None]
"""Applies again the unfinished Workloads without quota that a test picks, of one namespace
when given (the cluster state's, which holds the Workloads)."""


def toleration_json(toleration: Toleration) -> dict[str, Any]:
    """A toleration as the API serializes it (empty fields omitted): pure."""
    raw: dict[str, Any] = {}
    if toleration.key:
        raw["key"] = toleration.key
    if toleration.operator:
        raw["operator"] = toleration.operator
    if toleration.value:
        raw["value"] = toleration.value
    if toleration.effect:
        raw["effect"] = toleration.effect
    if toleration.toleration_seconds is not None:
        raw["tolerationSeconds"] = toleration.toleration_seconds
    return raw


def flavor_placement(spec: ResourceFlavorSpec) -> FlavorPlacement:
    """What a Job started on this flavor receives: its node labels and tolerations: pure."""
    return FlavorPlacement(
        node_labels=dict(spec.node_labels),
        tolerations=tuple(toleration_json(t) for t in spec.tolerations),
    )


class _FlavorPlacements(Mapping[str, FlavorPlacement]):
    """A read-only view of the engine's flavors as placements (converted on access)."""

    def __init__(self, flavors: Mapping[str, ResourceFlavorSpec]) -> None:
        self._flavors = flavors

    def __getitem__(self, name: str) -> FlavorPlacement:
        return flavor_placement(self._flavors[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._flavors)

    def __len__(self) -> int:
        return len(self._flavors)


def engine_record(raw: Mapping[str, Any]) -> EngineObject:
    """A kuota object as the engine's record: defaulted and parsed (raises ParseError): pure."""
    model = parse_object(apply_schema_defaults(raw))
    if not isinstance(model, ENGINE_TYPES):
        raise ParseError([error("kind", f"{raw.get('kind')} is not a kind the engine holds")])
    return model  # type: ignore[no-any-return]


class ClusterSettings:
    """Namespaces, PriorityClasses, LimitRanges, RuntimeClasses and flavors' placements
    (module docstring)."""

    def __init__(
        self, engine: Engine, *, jobs_to_decide: WorkList, apply_pending: ApplyPending
    ) -> None:
        self.engine = engine
        self._jobs_to_decide = jobs_to_decide
        """The cluster state's work list of jobs to decide again."""
        self._apply_pending = apply_pending
        self._default_priority_classes: set[str] = set()
        self._limit_defaults: dict[str, dict[str, dict[str, LimitDefaults]]] = {}
        """Namespace -> LimitRange name -> its defaults by item type (ranges with some)."""
        self._overheads: dict[str, dict[str, Any]] = {}
        """RuntimeClass name -> its ``overhead.podFixed`` (only classes that have one)."""
        self._namespace_labels: dict[str, dict[str, str]] = {}
        """Namespace -> its labels (which namespaces' jobs are kuota's)."""
        self._unmanaged_jobs: dict[str, set[str]] = {}
        """Namespace -> the jobs left alone there, as it is not managed."""

    # -- feeding: informer events -------------------------------------------------------

    def on_namespace(self, event: Event) -> None:
        name = objects.name(event.object)
        before = self._namespace_labels.get(name)
        if event.type == "DELETED":
            self.engine.remove("Namespace", name)
            self._namespace_labels.pop(name, None)
        else:
            labels = dict(objects.labels(event.object))
            self.engine.apply(NamespaceInfo(name=name, labels=labels))
            self._namespace_labels[name] = labels
        if before != self._namespace_labels.get(name):
            # Whether its jobs are kuota's may have changed (managedJobsNamespaceSelector): the
            # ones left alone are decided again; the others see their namespace on their turn.
            self._jobs_to_decide.update(self._unmanaged_jobs.pop(name, set()))

    def on_priority_class(self, event: Event) -> None:
        obj = event.object
        name = objects.name(obj)
        self._default_priority_classes.discard(name)
        if event.type == "DELETED":
            self.engine.remove("PriorityClass", name)
            return
        value = obj.get("value")
        if not isinstance(value, int):
            return
        if obj.get("globalDefault"):
            self._default_priority_classes.add(name)
        self.engine.apply(
            PriorityClassInfo(name=name, value=value, global_default=bool(obj.get("globalDefault")))
        )

    def on_limit_range(self, event: Event) -> None:
        """A LimitRange: its defaults kept; the namespace's pending Workloads counted again."""
        namespace, name = objects.namespace(event.object) or "", objects.name(event.object)
        ranges = self._limit_defaults.setdefault(namespace, {})
        before = self.limit_defaults(namespace)
        defaults = {} if event.type == "DELETED" else limit_range_defaults(event.object)
        if defaults:
            ranges[name] = defaults
        else:
            ranges.pop(name, None)
        if not ranges:
            del self._limit_defaults[namespace]
        if self.limit_defaults(namespace) != before:
            self._apply_pending(lambda workload: True, namespace)

    def on_runtime_class(self, event: Event) -> None:
        """A RuntimeClass: its pod overhead kept; pending Workloads that name it counted again."""
        name = objects.name(event.object)
        before = self._overheads.get(name)
        overhead = {} if event.type == "DELETED" else runtime_class_overhead(event.object)
        if overhead:
            self._overheads[name] = overhead
        else:
            self._overheads.pop(name, None)
        if self._overheads.get(name) != before:
            self._apply_pending(lambda workload: name in _runtime_classes(workload), None)

    # -- what the job controller and the engine's records are made with ---------------------

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """The labels of a namespace as the watch says ({} when not seen)."""
        return self._namespace_labels.get(namespace, {})

    def left_alone(self, namespace: str, job_key: str) -> None:
        """A job was left alone, its namespace not kuota's: decided again if that changes."""
        self._unmanaged_jobs.setdefault(namespace, set()).add(job_key)

    def classes(self) -> PriorityClasses:
        """The priority classes a new Workload is resolved against.

        See docs/concepts.md#from-job-to-workload.
        """
        values = self.engine.view.priority_class_values("PriorityClass")
        defaults = ((n, values[n]) for n in self._default_priority_classes if n in values)
        default = min(defaults, key=lambda item: (item[1], item[0]), default=None)
        return PriorityClasses(
            workload=self.engine.view.priority_class_values("WorkloadPriorityClass"),
            pod=values,
            global_default=default,
        )

    def flavor_placements(self) -> Mapping[str, FlavorPlacement]:
        """The node labels and tolerations of every flavor the engine knows (a live view)."""
        return _FlavorPlacements(self.engine.view.flavor_specs())

    def limit_defaults(self, namespace: str) -> dict[str, LimitDefaults]:
        """The summary of the namespace's LimitRange defaults (by name, first value wins)."""
        ranges = self._limit_defaults.get(namespace, {})
        return summarize(ranges[name] for name in sorted(ranges))

    def engine_record(self, raw: Mapping[str, Any]) -> EngineObject:
        """A kuota object as the engine's record; a Workload with what its namespace's
        LimitRanges and its RuntimeClass add (raises ParseError)."""
        if raw.get("kind") == "Workload" and (self._limit_defaults or self._overheads):
            raw = adjusted_workload(
                raw, self.limit_defaults(objects.namespace(raw) or ""), self._overheads
            )
        return engine_record(raw)


def _runtime_classes(workload: Mapping[str, Any]) -> set[str]:
    """The RuntimeClasses the Workload's pod templates name: pure."""
    names = set()
    for pod_set in objects.spec(workload).get("podSets") or []:
        template = pod_set.get("template") if isinstance(pod_set, Mapping) else None
        spec = template.get("spec") if isinstance(template, Mapping) else None
        name = spec.get("runtimeClassName") if isinstance(spec, Mapping) else None
        if isinstance(name, str):
            names.add(name)
    return names
