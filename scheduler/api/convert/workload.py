"""Workload: legacy (v1alpha1/v1alpha2) ⇄ v1beta2.

Three things moved between the versions (docs/api-differences.md#the-v1alpha1-and-v1alpha2-forms):

* a pod set carried a bare ``spec`` (a PodSpec); v1beta2 carries a
  ``template`` (a PodTemplateSpec) whose ``spec`` is that PodSpec;
* ``priorityClassName`` always named a ``scheduling.k8s.io`` PriorityClass;
  v1beta2 records the source as ``priorityClassRef``;
* the scheduler wrote ``spec.admission`` (cluster queue and a flavor per
  resource); v1beta2 keeps it in ``status.admission`` with the pod count and
  the total usage, and says "admitted" through the ``QuotaReserved`` and
  ``Admitted`` conditions.

Going up, the usage is recomputed from the pod specs (per-pod requests,
limits where a request is missing, times count) and the two conditions are
added.  Going down, what the legacy form cannot hold (``active: false``,
``maximumExecutionTimeSeconds``, preemption gates, ``minCount``, topology
requests, template metadata, a WorkloadPriorityClass reference, the other
status fields and conditions, an admission that recomputation would not give
back) goes to the ``v1beta2-fields`` annotation.

Two stashed values stand in for something the legacy form can say, and are
restored only while the legacy object still says what it said when they were
stashed (annotation_store: a stash never overrides what a request sets): the
admission and the conditions are compared with what the legacy object shows
of them, and a WorkloadPriorityClass reference is kept only while
``spec.priorityClassName``, whose fingerprint the annotation records, is
unchanged (a request that sets it, even to ``""``, chooses the class).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from scheduler.api.convert import annotation_store as store
from scheduler.api.convert._common import (
    HUB_VERSION,
    ConversionError,
    Obj,
    Warnings,
    api_version,
    base_object,
    deep,
    list_at,
    mapping_at,
    quantity_at,
)
from scheduler.api.field import FieldPath
from scheduler.api.quantity import Quantity

DEFAULT_POD_SET: Final = "main"
EPOCH: Final = "1970-01-01T00:00:00Z"
LEGACY_CONDITIONS: Final = ("Admitted", "Finished")
HUB_ONLY_POD_SET_FIELDS: Final = ("minCount", "topologyRequest")
PRIORITY_CLASS_GROUP: Final = "scheduling.k8s.io"
PRIORITY_CLASS_KIND: Final = "PriorityClass"
PRIORITY_CLASS_NAME: Final = "spec.priorityClassName"  # fingerprinted (annotation_store.record)


# --- usage --------------------------------------------------------------------


def per_pod_requests(pod_spec: Mapping[str, Any], path: FieldPath) -> dict[str, Quantity]:
    """Requests of one pod: containers summed, init containers as a floor, plus overhead.

    A container's missing request takes its limit (docs/concepts.md#pod-sets).  Pure.
    """
    total: dict[str, Quantity] = {}
    for index, container in enumerate(
        list_at(pod_spec.get("containers"), path.child("containers"))
    ):
        for name, amount in _container_requests(
            container, path.child("containers").index(index)
        ).items():
            total[name] = total.get(name, Quantity.zero()) + amount
    init_floor: dict[str, Quantity] = {}
    for index, container in enumerate(
        list_at(pod_spec.get("initContainers"), path.child("initContainers"))
    ):
        for name, amount in _container_requests(
            container, path.child("initContainers").index(index)
        ).items():
            init_floor[name] = max(init_floor.get(name, Quantity.zero()), amount)
    for name, amount in init_floor.items():
        total[name] = max(total.get(name, Quantity.zero()), amount)
    overhead_path = path.child("overhead")
    for name, amount in mapping_at(pod_spec.get("overhead"), overhead_path).items():
        total[name] = total.get(name, Quantity.zero()) + quantity_at(
            amount, overhead_path.key(name)
        )
    return total


def _container_requests(container: Any, path: FieldPath) -> dict[str, Quantity]:
    resources = mapping_at(mapping_at(container, path).get("resources"), path.child("resources"))
    requests_path = path.child("resources", "requests")
    limits_path = path.child("resources", "limits")
    result = {
        name: quantity_at(amount, limits_path.key(name))
        for name, amount in mapping_at(resources.get("limits"), limits_path).items()
    }
    for name, amount in mapping_at(resources.get("requests"), requests_path).items():
        result[name] = quantity_at(amount, requests_path.key(name))
    return result


def _pod_set_name(pod_set: Mapping[str, Any]) -> str:
    return str(pod_set.get("name") or DEFAULT_POD_SET)


# --- admission and conditions, shared by both directions ------------------------


def _admission_up(admission: Mapping[str, Any], pod_sets: list[Any]) -> Obj:
    """Legacy ``spec.admission`` → v1beta2 ``status.admission``: pure."""
    path = FieldPath(("spec", "admission"))
    by_name = {
        _pod_set_name(ps): (index, ps)
        for index, ps in enumerate(pod_sets)
        if isinstance(ps, Mapping)
    }
    assignments: list[Obj] = []
    for index, flavors in enumerate(
        list_at(admission.get("podSetFlavors"), path.child("podSetFlavors"))
    ):
        flavors = mapping_at(flavors, path.child("podSetFlavors").index(index))
        assignment: Obj = {key: deep(value) for key, value in flavors.items()}
        name = _pod_set_name(flavors)
        if name in by_name:
            pod_index, pod_set = by_name[name]
            count = pod_set.get("count", 1)
            pod_path = FieldPath(("spec", "podSets")).index(pod_index).child("spec")
            usage = per_pod_requests(mapping_at(pod_set.get("spec"), pod_path), pod_path)
            assignment["resourceUsage"] = {
                resource: str(amount * int(count)) for resource, amount in usage.items()
            }
            assignment["count"] = count
        assignments.append(assignment)
    out: Obj = {key: deep(value) for key, value in admission.items() if key != "podSetFlavors"}
    out["podSetAssignments"] = assignments
    return out


def _synthesized_conditions(
    legacy: Mapping[str, Any], conditions: list[Obj], cluster_queue: Any
) -> tuple[list[Obj], bool]:
    """Add ``QuotaReserved`` and (when missing) ``Admitted`` to an admitted legacy workload.

    Returns the new list and whether ``Admitted`` was added.  Pure.
    """
    present = {condition.get("type") for condition in conditions}
    stamp = _stamp(legacy, conditions)
    result = [deep(condition) for condition in conditions]
    if "QuotaReserved" not in present:
        result.append(
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "QuotaReserved",
                "message": f"Quota reserved in ClusterQueue {cluster_queue}",
                "lastTransitionTime": stamp,
            }
        )
    added_admitted = "Admitted" not in present
    if added_admitted:
        result.append(
            {
                "type": "Admitted",
                "status": "True",
                "reason": "Admitted",
                "message": "The workload is admitted",
                "lastTransitionTime": stamp,
            }
        )
    return result, added_admitted


def _stamp(legacy: Mapping[str, Any], conditions: list[Obj]) -> str:
    """A deterministic transition time: the legacy Admitted one, else creation, else epoch."""
    for condition in conditions:
        if condition.get("type") == "Admitted" and condition.get("lastTransitionTime"):
            return str(condition["lastTransitionTime"])
    metadata = legacy.get("metadata")
    if isinstance(metadata, Mapping) and metadata.get("creationTimestamp"):
        return str(metadata["creationTimestamp"])
    return EPOCH


def _reserved(conditions: list[Any]) -> bool:
    return any(
        isinstance(c, Mapping) and c.get("type") == "QuotaReserved" and c.get("status") == "True"
        for c in conditions
    )


# --- up: legacy → v1beta2 ------------------------------------------------------------


def workload_up(obj: Mapping[str, Any], version: str, warnings: Warnings) -> Obj:
    """Convert a (valid) legacy Workload to v1beta2: pure."""
    out = base_object(obj, api_version(HUB_VERSION), skip=("spec", "status"))
    hub_fields, shadows = store.take_guarded(out, store.HUB_FIELDS, warnings)
    store.take(out, store.fields_key(version), warnings)
    legacy_fields: dict[str, Any] = {}
    spec = mapping_at(obj.get("spec"), FieldPath(("spec",)))
    if "priorityClassRef" in hub_fields and shadows.changed(
        PRIORITY_CLASS_NAME, spec.get("priorityClassName")
    ):
        del hub_fields["priorityClassRef"]
        warnings.append(
            "spec.priorityClassName was changed since the annotation "
            f"{store.HUB_FIELDS} was written; the priority class reference kept there was dropped"
        )
    status = mapping_at(obj.get("status"), FieldPath(("status",)))
    pod_sets = list_at(spec.get("podSets"), FieldPath(("spec", "podSets")))
    new_spec: Obj = {}
    admission: Obj | None = None
    for key, value in spec.items():
        if key == "podSets":
            new_spec["podSets"] = [_pod_set_up(pod_set) for pod_set in pod_sets]
        elif key == "priorityClassName":
            if value:
                new_spec["priorityClassRef"] = {
                    "group": PRIORITY_CLASS_GROUP,
                    "kind": PRIORITY_CLASS_KIND,
                    "name": value,
                }
            else:
                legacy_fields["priorityClassName"] = value
        elif key == "admission":
            if value is not None:
                admission = _admission_up(
                    mapping_at(value, FieldPath(("spec", "admission"))), pod_sets
                )
            else:
                legacy_fields["admissionNull"] = True
        else:
            new_spec[key] = deep(value)
    added_admitted = False
    new_status: Obj = {key: deep(value) for key, value in status.items() if key != "conditions"}
    conditions = [
        deep(c) for c in list_at(status.get("conditions"), FieldPath(("status", "conditions")))
    ]
    if admission is not None:
        new_status["admission"] = admission
        conditions, added_admitted = _synthesized_conditions(
            obj, conditions, admission.get("clusterQueue")
        )
    if conditions:
        new_status["conditions"] = conditions
    if "spec" in obj:
        out["spec"] = new_spec
    if new_status:
        out["status"] = new_status
    if hub_fields:
        out = store.apply_safely(out, _restore_hub_fields, hub_fields, store.HUB_FIELDS, warnings)
    final_conditions = (out.get("status") or {}).get("conditions") or []
    if added_admitted and any(
        c.get("type") == "Admitted" and _is_synthesized_admitted(c) for c in final_conditions
    ):
        legacy_fields["admittedAdded"] = (
            True  # converting down drops the Admitted condition added here
        )
    store.put(out, store.fields_key(version), legacy_fields)
    return out


def _pod_set_up(pod_set: Any) -> Any:
    if not isinstance(pod_set, Mapping):
        return deep(pod_set)
    out: Obj = {}
    for key, value in pod_set.items():
        if key == "spec":
            out["template"] = {"spec": deep(value)}
        else:
            out[key] = deep(value)
    return out


def _restore_hub_fields(out: Obj, stored: Mapping[str, Any]) -> None:
    """Apply what an earlier down-conversion kept, where it still fits (mutates ``out``)."""
    spec = out.setdefault("spec", {})
    for name in ("active", "maximumExecutionTimeSeconds", "preemptionGates"):
        if name in stored and name not in spec:
            spec[name] = deep(stored[name])
    if "priorityClassRef" in stored and "priorityClassRef" not in spec:
        spec["priorityClassRef"] = deep(stored["priorityClassRef"])
    extras = stored.get("podSets", {})
    for pod_set in spec.get("podSets") or []:
        kept = extras.get(_pod_set_name(pod_set))
        if not kept:
            continue
        for name in HUB_ONLY_POD_SET_FIELDS:
            if name in kept and name not in pod_set:
                pod_set[name] = deep(kept[name])
        if "templateMetadata" in kept and isinstance(pod_set.get("template"), dict):
            pod_set["template"].setdefault("metadata", deep(kept["templateMetadata"]))
    status = out.get("status") or {}
    admitted = _reserved(status.get("conditions") or [])  # the legacy object carried spec.admission
    if "admission" in stored and "admission" in status:
        if _admission_down(stored["admission"]) == _admission_down(status["admission"]):
            status["admission"] = deep(stored["admission"])
    for name, value in stored.get("status", {}).items():
        if name not in status and not (name == "admission" and admitted):
            status[name] = deep(value)
    if "conditions" in stored:
        restored = _restore_conditions(
            stored["conditions"], status.get("conditions") or [], admitted
        )
        if restored is not None:
            status["conditions"] = restored
    if status and "status" not in out:
        out["status"] = status


def _restore_conditions(stored: list[Any], current: list[Any], admitted: bool) -> list[Any] | None:
    """The stored v1beta2 conditions, if the legacy object still agrees with them: pure."""

    def legacy_view(conditions: list[Any]) -> list[Any]:
        return [
            c
            for c in conditions
            if c.get("type") in LEGACY_CONDITIONS
            and not (c.get("type") == "Admitted" and _is_synthesized_admitted(c))
        ]

    if legacy_view(stored) != legacy_view(current):
        return None
    if _reserved(stored) != admitted:
        return None
    return deep(stored)


# --- down: v1beta2 → legacy ------------------------------------------------------------


def _admission_down(admission: Mapping[str, Any]) -> Obj:
    """v1beta2 ``status.admission`` → legacy ``spec.admission`` (drops usage and count): pure."""
    out: Obj = {}
    for key, value in admission.items():
        if key == "podSetAssignments":
            out["podSetFlavors"] = [
                {k: deep(v) for k, v in assignment.items() if k in ("name", "flavors")}
                for assignment in value or []
                if isinstance(assignment, Mapping)
            ]
        else:
            out[key] = deep(value)
    return out


def workload_down(obj: Mapping[str, Any], version: str, warnings: Warnings) -> Obj:
    """Convert a v1beta2 Workload to the legacy form of ``version``: pure."""
    out = base_object(obj, api_version(version), skip=("spec", "status"))
    legacy_fields = store.take(out, store.fields_key(version), warnings)
    store.take(out, store.HUB_FIELDS, warnings)
    spec = mapping_at(obj.get("spec"), FieldPath(("spec",)))
    status = mapping_at(obj.get("status"), FieldPath(("status",)))
    hub_fields: dict[str, Any] = {}
    new_spec: Obj = {}
    pod_set_extras: dict[str, Obj] = {}
    for key, value in spec.items():
        if key == "podSets":
            new_spec["podSets"] = [
                _pod_set_down(pod_set, pod_set_extras)
                for pod_set in list_at(value, FieldPath(("spec", "podSets")))
            ]
        elif key == "priorityClassRef":
            ref = mapping_at(value, FieldPath(("spec", "priorityClassRef")))
            if (
                ref.get("group") == PRIORITY_CLASS_GROUP
                and ref.get("kind") == PRIORITY_CLASS_KIND
                and ref.get("name")
            ):
                new_spec["priorityClassName"] = ref["name"]
            else:
                hub_fields["priorityClassRef"] = deep(value)
        elif key == "active":
            if value is not True:
                hub_fields["active"] = value
        elif key in ("maximumExecutionTimeSeconds", "preemptionGates"):
            hub_fields[key] = deep(value)
        else:
            new_spec[key] = deep(value)
    if "priorityClassName" in legacy_fields and "priorityClassName" not in new_spec:
        new_spec["priorityClassName"] = legacy_fields["priorityClassName"]
    if "priorityClassRef" in hub_fields:
        store.record(hub_fields, {PRIORITY_CLASS_NAME: new_spec.get("priorityClassName")})
    if pod_set_extras:
        hub_fields["podSets"] = pod_set_extras
    conditions = list_at(status.get("conditions"), FieldPath(("status", "conditions")))
    admission = status.get("admission")
    if admission is not None and _reserved(conditions):
        new_spec["admission"] = _admission_down(
            mapping_at(admission, FieldPath(("status", "admission")))
        )
    elif legacy_fields.get("admissionNull") and "admission" not in new_spec:
        new_spec["admission"] = None
    legacy_conditions = [
        deep(c) for c in conditions if isinstance(c, Mapping) and c.get("type") in LEGACY_CONDITIONS
    ]
    if legacy_fields.get("admittedAdded"):
        legacy_conditions = [c for c in legacy_conditions if not _is_synthesized_admitted(c)]
    new_status: Obj = {}
    other_status: Obj = {}
    for key, value in status.items():
        if key in ("conditions", "admission"):
            continue
        other_status[key] = deep(value)
    if admission is not None and "admission" not in new_spec:
        other_status["admission"] = deep(admission)
    if legacy_conditions:
        new_status["conditions"] = legacy_conditions
    if "spec" in obj:
        out["spec"] = new_spec
    if new_status:
        out["status"] = new_status
    # What an up-conversion of the result would rebuild; keep only what differs.
    try:
        rebuilt_status = workload_up(out, version, []).get("status") or {}
    except ConversionError:
        rebuilt_status = {}
    if (
        "admission" in new_spec
        and new_spec["admission"] is not None
        and rebuilt_status.get("admission") != admission
    ):
        hub_fields["admission"] = deep(admission)
    if (rebuilt_status.get("conditions") or []) != conditions:
        hub_fields["conditions"] = deep(conditions)
    if other_status:
        hub_fields["status"] = other_status
    store.put(out, store.HUB_FIELDS, hub_fields)
    return out


def _is_synthesized_admitted(condition: Mapping[str, Any]) -> bool:
    return (
        condition.get("status") == "True"
        and condition.get("reason") == "Admitted"
        and condition.get("message") == "The workload is admitted"
    )


def _pod_set_down(pod_set: Any, extras: dict[str, Obj]) -> Any:
    if not isinstance(pod_set, Mapping):
        return deep(pod_set)
    out: Obj = {}
    kept: Obj = {}
    for key, value in pod_set.items():
        if key == "template":
            template = value if isinstance(value, Mapping) else {}
            if "spec" in template:
                out["spec"] = deep(template["spec"])
            if "metadata" in template:
                kept["templateMetadata"] = deep(template["metadata"])
        elif key in HUB_ONLY_POD_SET_FIELDS:
            kept[key] = deep(value)
        else:
            out[key] = deep(value)
    if kept:
        extras[_pod_set_name(pod_set)] = kept
    return out
