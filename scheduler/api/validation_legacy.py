"""The rules Kueue enforced on the legacy (v1alpha1/v1alpha2) shapes, and CQ-V3/CQ-V4.

A legacy object is checked *before* it is converted
(docs/validation.md#order-of-processing): the conversion of a ClusterQueue
relies on its flavor lists being pairwise identical or disjoint, so an object
that breaks a legacy rule is reported at its legacy paths and never converted.
The rules are those of Kueue's 2022 webhooks (LEG-*;
docs/validation.md#legacy-objects), plus CQ-V4 (a v1beta2 field in a legacy
ClusterQueue) and, for v1beta1 input, CQ-V3 (both admission-check forms).

Violations come back in the order of the rule tables, and within one rule in
array order; nothing stops at the first one.  Every function here is pure.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from scheduler.api import rule_text
from scheduler.api.field import FieldError, FieldPath, Origin, error
from scheduler.api.quantity import Quantity
from scheduler.api.validation import formats

GROUP: Final = "kueue.x-k8s.io"
LEGACY_VERSIONS: Final = ("v1alpha1", "v1alpha2")


def _sub(value: Any) -> bool:
    return isinstance(value, str) and formats.is_subdomain(value)


def _qn(value: Any) -> bool:
    return isinstance(value, str) and formats.is_qualified_name(value)


def _lv(value: Any) -> bool:
    return isinstance(value, str) and formats.is_label_value(value)


def _sub_message(value: Any, what: str = "name") -> str:
    return formats.not_subdomain(formats.render_value(value), what)


def _qn_message(value: Any) -> str:
    return formats.not_qualified_name(formats.render_value(value))


TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")
QUEUEING_STRATEGIES: Final = ("StrictFIFO", "BestEffortFIFO")


class _Collector:
    """Accumulates violations with one origin default; the only mutable helper here."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def add(self, path: FieldPath | str, message: str, rule: str, origin: Origin = "L") -> None:
        self.errors.append(error(path, message, origin=origin, rule=rule))


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _as_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _type_check(out: _Collector, value: Any, path: FieldPath, expected: type, what: str) -> None:
    if value is not None and not isinstance(value, expected):
        out.add(path, f"must be {what}", "TYPE", origin="S")


# --- entry points ---------------------------------------------------------------------------------


def validate_legacy(obj: Mapping[str, Any]) -> list[FieldError]:
    """Legacy rules for a v1alpha1/v1alpha2 object; CQ-V3 for a v1beta1 ClusterQueue.

    Objects of other versions have no legacy rules and give ``[]``.  Pure.
    """
    version = _version(obj)
    kind = obj.get("kind")
    if version == "v1beta1":
        return _cq_v3(obj) if kind == "ClusterQueue" else []
    if version not in LEGACY_VERSIONS:
        return []
    checks: dict[str, Callable[[Mapping[str, Any], str], list[FieldError]]] = {
        "ClusterQueue": _cluster_queue,
        "ResourceFlavor": _resource_flavor,
        "LocalQueue": _local_queue,
        "Queue": _local_queue,
        "Workload": _workload,
    }
    check = checks.get(str(kind))
    return check(obj, version) if check is not None else []


def validate_legacy_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """Update-only legacy rules (LEG-LQ-2, LEG-WL-7) plus every create rule on ``new``: pure."""
    errors = validate_legacy(new)
    if _version(new) not in LEGACY_VERSIONS:
        return errors
    kind = new.get("kind")
    new_spec, old_spec = _as_map(new.get("spec")), _as_map(old.get("spec"))
    out = _Collector()
    if kind in ("LocalQueue", "Queue"):
        before = old_spec.get("clusterQueue")
        if before and new_spec.get("clusterQueue") != before:
            out.add(
                "spec.clusterQueue",
                f'is immutable; it was "{before}": create a new LocalQueue to point at another '
                "ClusterQueue",
                "LEG-LQ-2",
            )
    elif kind == "Workload":
        if new_spec.get("podSets") != old_spec.get("podSets"):
            out.add("spec.podSets", "is immutable", "LEG-WL-7")
        both_admitted = (
            old_spec.get("admission") is not None and new_spec.get("admission") is not None
        )
        if both_admitted and new_spec.get("queueName") != old_spec.get("queueName"):
            out.add(
                "spec.queueName",
                "is immutable while spec.admission is set; it was "
                f'"{old_spec.get("queueName") or ""}"',
                "LEG-WL-7",
            )
        if both_admitted and new_spec.get("admission") != old_spec.get("admission"):
            out.add(
                "spec.admission",
                "is immutable while set; it was "
                + json.dumps(old_spec.get("admission"), separators=(",", ":"))
                + ": clear it and set it again instead",
                "LEG-WL-7",
            )
    return errors + out.errors


def _version(obj: Mapping[str, Any]) -> str:
    api_version = obj.get("apiVersion")
    if not isinstance(api_version, str):
        return ""
    group, _, version = api_version.partition("/")
    return version if group == GROUP else ""


# --- CQ-V3 (v1beta1) ------------------------------------------------------------------------------


def _cq_v3(obj: Mapping[str, Any]) -> list[FieldError]:
    spec = _as_map(obj.get("spec"))
    if spec.get("admissionChecks") and spec.get("admissionChecksStrategy") is not None:
        return [
            error(
                "spec",
                "set either admissionChecks or admissionChecksStrategy, not both",
                origin="W",
                rule="CQ-V3",
            )
        ]
    return []


# --- ClusterQueue --------------------------------------------------------------------------------


def _cluster_queue(obj: Mapping[str, Any], version: str) -> list[FieldError]:
    out = _Collector()
    spec_path = FieldPath(("spec",))
    spec = _as_map(obj.get("spec"))
    _type_check(out, obj.get("spec"), spec_path, Mapping, "an object")
    resources_path = spec_path.child("resources")
    _type_check(out, spec.get("resources"), resources_path, list, "a list")
    resources = _as_list(spec.get("resources"))
    if "resourceGroups" in spec:
        out.add(
            spec_path.child("resourceGroups"),
            f'unknown field "resourceGroups"; {version} ClusterQueues use spec.resources (see '
            'kuota\'s docs/api-differences.md, "Legacy versions and conversion")',
            "CQ-V4",
            origin="K",
        )
    # LEG-CQ-1
    if len(resources) > 16:
        out.add(resources_path, formats.too_many(len(resources), 16), "LEG-CQ-1")
    entries = [(i, _as_map(resource)) for i, resource in enumerate(resources)]
    # LEG-CQ-2
    for i, resource in entries:
        name = resource.get("name")
        if name is None or name == "":
            out.add(
                resources_path.index(i).child("name"),
                "required: give the resource name",
                "LEG-CQ-2",
            )
        elif not _qn(name):
            out.add(resources_path.index(i).child("name"), _qn_message(name), "LEG-CQ-2")
    # LEG-CQ-3
    seen: set[Any] = set()
    for i, resource in entries:
        name = resource.get("name")
        if name in seen and name:
            out.add(
                resources_path.index(i).child("name"),
                formats.duplicate_key("resource", name, "resource"),
                "LEG-CQ-3",
                origin="S",
            )
        seen.add(name if isinstance(name, str) else None)
    # LEG-CQ-4 / LEG-CQ-5
    for i, resource in entries:
        flavors = resource.get("flavors")
        path = resources_path.index(i).child("flavors")
        if flavors is not None and not isinstance(flavors, list):
            out.add(path, "must be a list", "TYPE", origin="S")
        elif not flavors:
            out.add(path, "must list at least 1 flavor", "LEG-CQ-4", origin="K")
        elif len(flavors) > 16:
            out.add(path, formats.too_many(len(flavors), 16), "LEG-CQ-5")
    flavor_entries = [
        (i, j, _as_map(flavor))
        for i, resource in entries
        for j, flavor in enumerate(_as_list(resource.get("flavors")))
    ]

    def flavor_path(i: int, j: int) -> FieldPath:
        return resources_path.index(i).child("flavors").index(j)

    # LEG-CQ-6
    for i, j, flavor in flavor_entries:
        name = flavor.get("name") or "default"
        if not _sub(name):
            out.add(flavor_path(i, j).child("name"), _sub_message(name, "flavor name"), "LEG-CQ-6")
    # LEG-CQ-7
    for i, resource in entries:
        names_seen: set[str] = set()
        for j, flavor in enumerate(_as_list(resource.get("flavors"))):
            name = str(_as_map(flavor).get("name") or "default")
            if name in names_seen:
                out.add(
                    flavor_path(i, j).child("name"),
                    formats.duplicate_key("flavor", name, "flavor"),
                    "LEG-CQ-7",
                    origin="S",
                )
            names_seen.add(name)
    # LEG-CQ-8
    for i, j, flavor in flavor_entries:
        if flavor.get("quota") is None:
            out.add(
                flavor_path(i, j).child("quota"),
                "required: give quota.min (and optionally quota.max)",
                "LEG-CQ-8",
                origin="S",
            )
        else:
            _type_check(
                out, flavor.get("quota"), flavor_path(i, j).child("quota"), Mapping, "an object"
            )
    # LEG-CQ-9
    parsed: dict[tuple[int, int, str], Quantity] = {}
    for i, j, flavor in flavor_entries:
        quota = _as_map(flavor.get("quota"))
        for bound in ("min", "max"):
            if quota.get(bound) is None:
                continue
            amount = formats.parse_quantity(quota[bound])
            if amount is None:
                out.add(
                    flavor_path(i, j).child("quota", bound),
                    f'"{formats.render_value(quota[bound])}" is not a valid quantity (examples: '
                    "9, 500m, 36Gi)",
                    "LEG-CQ-9",
                    origin="S",
                )
            else:
                parsed[(i, j, bound)] = amount
    # LEG-CQ-10
    for i, j, flavor in flavor_entries:
        quota = _as_map(flavor.get("quota"))
        for bound in ("min", "max"):
            amount = parsed.get((i, j, bound))
            if amount is not None and amount.is_negative():
                out.add(
                    flavor_path(i, j).child("quota", bound),
                    f"must be greater than or equal to 0, got {formats.render_value(quota[bound])}",
                    "LEG-CQ-10",
                )
    # LEG-CQ-11
    for i, j, flavor in flavor_entries:
        quota = _as_map(flavor.get("quota"))
        maximum = parsed.get((i, j, "max"))
        minimum = parsed.get((i, j, "min"), Quantity.zero() if quota.get("min") is None else None)
        if maximum is not None and minimum is not None and maximum < minimum:
            shown_min = formats.render_value(quota["min"]) if quota.get("min") is not None else "0"
            out.add(
                flavor_path(i, j).child("quota", "max"),
                f"max ({formats.render_value(quota['max'])}) must be greater than or equal to min "
                f"({shown_min})",
                "LEG-CQ-11",
            )
    # LEG-CQ-12 / LEG-CQ-13
    lists = [
        (
            i,
            str(resource.get("name")),
            [str(_as_map(f).get("name") or "default") for f in _as_list(resource.get("flavors"))],
        )
        for i, resource in entries
    ]
    for position, (b, _, b_flavors) in enumerate(lists):
        for _, a_name, a_flavors in lists[:position]:
            shared = [name for name in a_flavors if name in b_flavors]
            if not shared or a_flavors == b_flavors:
                continue
            path = resources_path.index(b).child("flavors")
            if set(a_flavors) == set(b_flavors) and len(a_flavors) == len(b_flavors):
                out.add(
                    path,
                    f'lists the same flavors as resource "{a_name}" in a different order; '
                    "codependent resources must list their flavors in the same order "
                    f"({', '.join(a_flavors)})",
                    "LEG-CQ-12",
                )
            else:
                out.add(
                    path,
                    f'shares flavor(s) {", ".join(shared)} with resource "{a_name}" but the lists '
                    "differ; resources either list exactly the same flavors in the same order "
                    "(codependent) or share no flavor at all",
                    "LEG-CQ-13",
                )
    # LEG-CQ-14
    cohort = spec.get("cohort")
    if cohort and not _sub(cohort):
        out.add(spec_path.child("cohort"), _sub_message(cohort), "LEG-CQ-14")
    # LEG-CQ-15
    strategy = spec.get("queueingStrategy")
    if strategy and strategy not in QUEUEING_STRATEGIES:
        out.add(
            spec_path.child("queueingStrategy"),
            formats.unsupported(strategy, QUEUEING_STRATEGIES),
            "LEG-CQ-15",
        )
    # LEG-CQ-16
    if spec.get("namespaceSelector") is not None:
        selector_path = spec_path.child("namespaceSelector")
        _type_check(out, spec["namespaceSelector"], selector_path, dict, "an object")
        formats.check_selector(
            spec["namespaceSelector"], selector_path, out.errors, rule="LEG-CQ-16", origin="L"
        )
    return out.errors


# --- ResourceFlavor ------------------------------------------------------------------------------


def _resource_flavor(obj: Mapping[str, Any], version: str) -> list[FieldError]:
    out = _Collector()
    if version == "v1alpha1":
        labels, labels_path = obj.get("labels"), FieldPath(("labels",))
    elif "nodeSelector" in obj:
        labels, labels_path = obj.get("nodeSelector"), FieldPath(("nodeSelector",))
    else:
        labels, labels_path = (
            _as_map(obj.get("metadata")).get("labels"),
            FieldPath(("metadata", "labels")),
        )
    _type_check(out, labels, labels_path, Mapping, "an object")
    labels = _as_map(labels)
    # LEG-RF-1
    if len(labels) > 8:
        out.add(labels_path, formats.too_many(len(labels), 8), "LEG-RF-1")
    # LEG-RF-2
    for label, value in labels.items():
        if not _qn(label):
            out.add(
                labels_path.key(str(label)),
                f'invalid label key "{label}": {formats.QUALIFIED_NAME_HINT}',
                "LEG-RF-2",
            )
        elif not _lv(value):
            out.add(
                labels_path.key(str(label)),
                f'invalid label value "{value}" for key "{label}": {formats.LABEL_VALUE_HINT}',
                "LEG-RF-2",
            )
    taints_path = FieldPath(("taints",))
    _type_check(out, obj.get("taints"), taints_path, list, "a list")
    taints = _as_list(obj.get("taints"))
    # LEG-RF-3
    if len(taints) > 8:
        out.add(taints_path, formats.too_many(len(taints), 8), "LEG-RF-3")
    # LEG-RF-4
    seen: set[tuple[str, str]] = set()
    for index, taint in enumerate(taints):
        taint = _as_map(taint)
        path = taints_path.index(index)
        key, effect = taint.get("key"), taint.get("effect")
        if not key:
            out.add(path.child("key"), "required: give the taint key", "LEG-RF-4")
        elif not _qn(key):
            out.add(path.child("key"), _qn_message(key), "LEG-RF-4")
        if taint.get("value") is not None and not _lv(taint["value"]):
            out.add(
                path.child("value"),
                f'"{taint["value"]}" is not a valid label value: {formats.LABEL_VALUE_HINT}',
                "LEG-RF-4",
            )
        if effect is None:
            out.add(
                path.child("effect"),
                "required: use NoSchedule, PreferNoSchedule or NoExecute",
                "LEG-RF-4",
            )
        elif effect not in TAINT_EFFECTS:
            out.add(path.child("effect"), formats.unsupported(effect, TAINT_EFFECTS), "LEG-RF-4")
        identity = (str(key), str(effect))
        if key and effect in TAINT_EFFECTS and identity in seen:
            out.add(
                path,
                f'duplicate taint "{key}:{effect}": taints must be unique by key and effect',
                "LEG-RF-4",
            )
        seen.add(identity)
    return out.errors


# --- LocalQueue ----------------------------------------------------------------------------------


def _local_queue(obj: Mapping[str, Any], version: str) -> list[FieldError]:
    out = _Collector()
    cluster_queue = _as_map(obj.get("spec")).get("clusterQueue")
    if not cluster_queue:
        out.add("spec.clusterQueue", "required: name the ClusterQueue", "LEG-LQ-1")
    elif not _sub(cluster_queue):
        out.add("spec.clusterQueue", _sub_message(cluster_queue), "LEG-LQ-1")
    return out.errors


# --- Workload ------------------------------------------------------------------------------------


def _workload(obj: Mapping[str, Any], version: str) -> list[FieldError]:
    out = _Collector()
    spec = _as_map(obj.get("spec"))
    pod_sets_path = FieldPath(("spec", "podSets"))
    _type_check(out, spec.get("podSets"), pod_sets_path, list, "a list")
    pod_sets = [_as_map(pod_set) for pod_set in _as_list(spec.get("podSets"))]
    # LEG-WL-1
    if not pod_sets:
        out.add(pod_sets_path, "must list at least 1 item(s)", "LEG-WL-1")
    elif len(pod_sets) > 8:
        out.add(pod_sets_path, formats.too_many(len(pod_sets), 8), "LEG-WL-1")
    # LEG-WL-2
    names = _pod_set_names(pod_sets)
    seen: set[str] = set()
    for index, name in enumerate(names):
        path = pod_sets_path.index(index).child("name")
        if not (isinstance(name, str) and formats.is_label(name)):
            out.add(path, f'"{name}" is not a valid name: {rule_text.LABEL_HINT}', "LEG-WL-2")
        elif name in seen:
            out.add(path, formats.duplicate_key("pod set name", name, "pod set"), "LEG-WL-2")
        seen.add(name)
    # LEG-WL-3
    for index, pod_set in enumerate(pod_sets):
        count = pod_set.get("count")
        path = pod_sets_path.index(index).child("count")
        if count is None:
            continue
        if isinstance(count, bool) or not isinstance(count, int):
            out.add(path, "must be an integer", "TYPE", origin="S")
        elif count <= 0:
            out.add(path, "must be greater than 0", "LEG-WL-3")
    # LEG-WL-4
    priority_class = spec.get("priorityClassName")
    if priority_class and not _sub(priority_class):
        out.add("spec.priorityClassName", _sub_message(priority_class), "LEG-WL-4")
    if priority_class and spec.get("priority") is None:
        out.add("spec.priority", "required when priorityClassName is set", "LEG-WL-4")
    # LEG-WL-5
    queue_name = spec.get("queueName")
    if queue_name and not _sub(queue_name):
        out.add("spec.queueName", _sub_message(queue_name), "LEG-WL-5")
    # LEG-WL-6
    admission = spec.get("admission")
    if admission is not None:
        admission = _as_map(admission)
        cluster_queue = admission.get("clusterQueue")
        if not _sub(cluster_queue):
            out.add("spec.admission.clusterQueue", _sub_message(cluster_queue or ""), "LEG-WL-6")
        for index, flavors in enumerate(_as_list(admission.get("podSetFlavors"))):
            name = _as_map(flavors).get("name") or "main"
            if name not in names:
                out.add(
                    FieldPath(("spec", "admission", "podSetFlavors")).index(index).child("name"),
                    f'no pod set named "{name}"',
                    "LEG-WL-6",
                )
    return out.errors


def _pod_set_names(pod_sets: list[Mapping[str, Any]]) -> list[str]:
    """Pod set names after the legacy defaulting (a single unnamed pod set is ``main``)."""
    if len(pod_sets) == 1 and not pod_sets[0].get("name"):
        return ["main"]
    return [str(pod_set.get("name") or "") for pod_set in pod_sets]
