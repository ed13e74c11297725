"""What a namespace's LimitRanges and a RuntimeClass add to a Workload's requests (pure).

Kueue counts a Workload with the requests its pods will really have
(docs/scheduling.md#workload-usage, Kueue's ``workload.AdjustResources``), on a copy: the
Workload object itself keeps the pod templates its job wrote, and what was
added shows in the admission's ``resourceUsage``.  On each pod set's
template, in this order:

1. **Pod overhead**: a template naming a ``runtimeClassName`` and no
   ``overhead`` gets the RuntimeClass's ``overhead.podFixed``.
2. **LimitRange defaults**: every container and init container gets the
   ``default`` limits and ``defaultRequest`` requests of the namespace's
   ``Container`` LimitRange items for the resources it does not set; pod-level
   ``resources``, when present, those of the ``Pod`` items.  Several
   LimitRanges are summarized as Kueue does (``limitrange.Summarize``): the
   first value of a resource wins, LimitRanges taken by name.
3. **Limits as requests**: a resource with a limit and no request asks for
   its limit (the parser does that for every template, :mod:`scheduler.api.parse`).

The scheduler keeps only the summaries (:class:`LimitDefaults` per
namespace, the overhead per RuntimeClass), ``kuota simulate`` builds them from
its input files; both call :func:`adjusted_workload` before the Workload is
parsed for the engine.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from scheduler.api.models.common import frozen_map

CONTAINER: Final = "Container"
POD: Final = "Pod"
DEFAULTED_TYPES: Final = (CONTAINER, POD)
"""The LimitRange item types whose defaults reach pod templates."""

ResourceMap = Mapping[str, Any]
"""Resource name -> quantity as written (a string or a number)."""


@dataclass(frozen=True, slots=True)
class LimitDefaults:
    """The defaults of one LimitRange item type: ``default`` limits, ``defaultRequest``s."""

    default: ResourceMap = field(default_factory=frozen_map)
    default_request: ResourceMap = field(default_factory=frozen_map)

    def __bool__(self) -> bool:
        return bool(self.default or self.default_request)


def _resources(value: object) -> dict[str, Any]:
    return {str(k): v for k, v in value.items()} if isinstance(value, Mapping) else {}


def _keep_first(first: Mapping[str, Any], then: Mapping[str, Any]) -> dict[str, Any]:
    """``first`` with the resources of ``then`` it lacks (Kueue's MergeResourceListKeepFirst)."""
    return {**then, **first}


def limit_range_defaults(limit_range: Mapping[str, Any]) -> dict[str, LimitDefaults]:
    """One LimitRange's defaults by item type (``Container``, ``Pod``): pure.

    Items of one type are merged in order, the first value of a resource kept.
    A type without defaults is left out.
    """
    spec = limit_range.get("spec")
    items = spec.get("limits") if isinstance(spec, Mapping) else None
    found: dict[str, LimitDefaults] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping) or item.get("type") not in DEFAULTED_TYPES:
            continue
        kind = str(item["type"])
        before = found.get(kind, LimitDefaults())
        found[kind] = LimitDefaults(
            default=frozen_map(_keep_first(before.default, _resources(item.get("default")))),
            default_request=frozen_map(
                _keep_first(before.default_request, _resources(item.get("defaultRequest")))
            ),
        )
    return {kind: defaults for kind, defaults in found.items() if defaults}


def summarize(per_range: Iterable[Mapping[str, LimitDefaults]]) -> dict[str, LimitDefaults]:
    """The namespace's defaults from its LimitRanges' (in name order): first value wins: pure."""
    summary: dict[str, LimitDefaults] = {}
    for defaults in per_range:
        for kind, item in defaults.items():
            before = summary.get(kind, LimitDefaults())
            summary[kind] = LimitDefaults(
                default=frozen_map(_keep_first(before.default, item.default)),
                default_request=frozen_map(
                    _keep_first(before.default_request, item.default_request)
                ),
            )
    return summary


def runtime_class_overhead(runtime_class: Mapping[str, Any]) -> dict[str, Any]:
    """A RuntimeClass's ``overhead.podFixed`` (empty when it has none): pure."""
    overhead = runtime_class.get("overhead")
    return _resources(overhead.get("podFixed")) if isinstance(overhead, Mapping) else {}


def _defaulted(resources: object, defaults: LimitDefaults) -> dict[str, Any]:
    result = dict(resources) if isinstance(resources, Mapping) else {}
    limits = _keep_first(_resources(result.get("limits")), defaults.default)
    requests = _keep_first(_resources(result.get("requests")), defaults.default_request)
    if limits:
        result["limits"] = limits
    if requests:
        result["requests"] = requests
    return result


def _adjust_spec(
    spec: dict[str, Any],
    limits: Mapping[str, LimitDefaults],
    overheads: Mapping[str, Mapping[str, Any]],
) -> None:
    runtime_class = spec.get("runtimeClassName")
    if isinstance(runtime_class, str) and runtime_class and not spec.get("overhead"):
        overhead = overheads.get(runtime_class)
        if overhead:
            spec["overhead"] = dict(overhead)
    container = limits.get(CONTAINER)
    if container:
        for key in ("initContainers", "containers"):
            for item in spec.get(key) or []:
                if isinstance(item, dict):
                    item["resources"] = _defaulted(item.get("resources"), container)
    pod = limits.get(POD)
    if pod and isinstance(spec.get("resources"), Mapping):
        spec["resources"] = _defaulted(spec["resources"], pod)


def _applies(
    pod_sets: list[Any],
    limits: Mapping[str, LimitDefaults],
    overheads: Mapping[str, Mapping[str, Any]],
) -> bool:
    if limits:
        return True
    for pod_set in pod_sets:
        template = pod_set.get("template") if isinstance(pod_set, Mapping) else None
        spec = template.get("spec") if isinstance(template, Mapping) else None
        if isinstance(spec, Mapping) and spec.get("runtimeClassName") in overheads:
            return True
    return False


def adjusted_workload(
    workload: Mapping[str, Any],
    limits: Mapping[str, LimitDefaults] | None,
    overheads: Mapping[str, Mapping[str, Any]],
) -> Mapping[str, Any]:
    """``workload`` as Kueue counts it: overhead and LimitRange defaults added (module
    docstring); ``workload`` itself when neither applies: pure.

    ``limits``: the summary of the Workload's namespace (:func:`summarize`);
    ``overheads``: RuntimeClass name -> ``overhead.podFixed``.
    """
    spec = workload.get("spec")
    if not isinstance(spec, Mapping):
        return workload
    pod_sets = spec.get("podSets")
    if not isinstance(pod_sets, list) or not _applies(pod_sets, limits or {}, overheads):
        return workload
    result = dict(workload)
    adjusted_sets = copy.deepcopy(pod_sets)
    for pod_set in adjusted_sets:
        template = pod_set.get("template") if isinstance(pod_set, dict) else None
        pod_spec = template.get("spec") if isinstance(template, dict) else None
        if isinstance(pod_spec, dict):
            _adjust_spec(pod_spec, limits or {}, overheads)
    result["spec"] = {**dict(spec), "podSets": adjusted_sets}
    return result


__all__ = [
    "CONTAINER",
    "POD",
    "LimitDefaults",
    "adjusted_workload",
    "limit_range_defaults",
    "runtime_class_overhead",
    "summarize",
]
