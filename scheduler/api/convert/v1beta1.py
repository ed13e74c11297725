"""``v1beta1`` ⇄ ``v1beta2``: the renames Kueue itself converts.

See docs/api-differences.md#v1beta1-and-v1beta2.

The two versions share almost every shape; the differences are a handful of
renamed or regrouped fields.  Where v1beta1 had two spellings for one v1beta2
value (``Borrow`` and ``MayStopSearch``), a list form and a strategy form for
admission checks, or a field v1beta2 dropped (``retryDelayMinutes``), the
v1beta1 spelling is kept in ``conversion.kuota.io/v1beta1-fields`` so that
v1beta1 → v1beta2 → v1beta1 gives the object back.  Going down, v1beta2-only
data (``MultiKueueConfig.spec.quotaManagement``) is kept in
``conversion.kuota.io/v1beta2-fields``.  Status fields that v1beta2 dropped
(``pendingWorkloadsStatus``, the LocalQueue ``flavors`` list) are dropped, as
Kueue does; the controller recomputes status.

The topology assignment of an admitted pod set changed from a list of domains
to compressed slices; :func:`slices_from_domains` and
:func:`domains_from_slices` convert between the two.

The v1beta1 form of admission checks (``list`` or ``empty``) reshapes the
v1beta2 ``admissionChecksStrategy`` on the way down, so the annotation records
the strategy's fingerprint as converting up wrote it, and the form is applied
only while no v1beta2 write changed the strategy.  Otherwise a list the user
wrote long ago would come back in place of the strategy set since, and a
v1beta1 manifest that sets a strategy would carry both forms (annotation_store:
a stash never overrides what a request sets).  The other entries need no
fingerprint: they have no v1beta2 counterpart (``retryDelayMinutes``,
``quotaManagement``) or are applied only where v1beta2 still says the same
thing (``Borrow``/``Preempt`` where it says ``MayStopSearch``, a priority class
name and source where there is no ``priorityClassRef``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from scheduler.api import topology_assignment
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
)
from scheduler.api.field import FieldPath

V1BETA1: Final = "v1beta1"
OLD_FUNGIBILITY: Final[Mapping[str, str]] = {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}
PRIORITY_SOURCES: Final[Mapping[str, tuple[str, str]]] = {
    "kueue.x-k8s.io/workloadpriorityclass": ("kueue.x-k8s.io", "WorkloadPriorityClass"),
    "scheduling.k8s.io/priorityclass": ("scheduling.k8s.io", "PriorityClass"),
}
SAME_SHAPE_KINDS: Final = (
    "ResourceFlavor",
    "Cohort",
    "WorkloadPriorityClass",
    "Topology",
    "ProvisioningRequestConfig",
)
STRATEGY: Final = "spec.admissionChecksStrategy"  # fingerprinted (annotation_store.record)
WRONG_EXECUTION_SPELLING: Final = "accumulatedPastExexcutionTimeSeconds"
RIGHT_EXECUTION_SPELLING: Final = "accumulatedPastExecutionTimeSeconds"

Converter = Callable[[Obj, dict[str, Any], dict[str, Any], Warnings], None]


def v1beta1_up(
    obj: Mapping[str, Any], kind: str, warnings: Warnings, *, owned: bool = False
) -> Obj:
    """Convert a v1beta1 object of any kind to v1beta2 (``owned``: see ``base_object``)."""
    out = base_object(obj, api_version(HUB_VERSION), owned=owned)
    hub_fields = store.take(out, store.HUB_FIELDS, warnings)
    store.take(out, store.fields_key(V1BETA1), warnings)
    old_fields: dict[str, Any] = {}
    converter = _UP.get(kind)
    if converter is None and kind not in SAME_SHAPE_KINDS:
        raise ConversionError(
            "kind", f'kind "{kind}" is not a kueue.x-k8s.io/v1beta1 kind kuota converts'
        )
    if converter is not None:
        converter(out, old_fields, hub_fields, warnings)
    store.put(out, store.fields_key(V1BETA1), old_fields)
    return out


def v1beta1_down(
    obj: Mapping[str, Any], kind: str, warnings: Warnings, *, owned: bool = False
) -> Obj:
    """Convert a v1beta2 object of any kind to v1beta1 (``owned``: see ``base_object``)."""
    out = base_object(obj, api_version(V1BETA1), owned=owned)
    old_fields = store.take(out, store.fields_key(V1BETA1), warnings)
    store.take(out, store.HUB_FIELDS, warnings)
    hub_fields: dict[str, Any] = {}
    converter = _DOWN.get(kind)
    if converter is None and kind not in SAME_SHAPE_KINDS:
        raise ConversionError(
            "kind", f'kind "{kind}" is not a kueue.x-k8s.io/v1beta2 kind kuota converts'
        )
    if converter is not None:
        converter(out, hub_fields, old_fields, warnings)
    store.put(out, store.HUB_FIELDS, hub_fields)
    return out


def _spec(out: Obj) -> dict[str, Any] | None:
    spec = out.get("spec")
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise ConversionError("spec", "must be an object")
    return spec


def _status(out: Obj) -> dict[str, Any] | None:
    status = out.get("status")
    if status is None:
        return None
    if not isinstance(status, dict):
        raise ConversionError("status", "must be an object")
    return status


# --- ClusterQueue ------------------------------------------------------------------


def _cluster_queue_up(
    out: Obj, old_fields: dict[str, Any], hub_fields: dict[str, Any], warnings: Warnings
) -> None:
    spec = _spec(out)
    if spec is not None:
        if "cohortName" in spec:
            raise ConversionError(
                "spec.cohortName", 'unknown field "cohortName"; v1beta1 calls it spec.cohort'
            )
        if "cohort" in spec:
            spec["cohortName"] = spec.pop("cohort")
        if "admissionChecks" in spec:
            checks = list_at(spec.pop("admissionChecks"), FieldPath(("spec", "admissionChecks")))
            if checks:
                # Kueue's converter: a non-empty list replaces any strategy.
                spec["admissionChecksStrategy"] = {
                    "admissionChecks": [{"name": name} for name in checks]
                }
                old_fields["admissionChecks"] = "list"
            else:
                old_fields["admissionChecks"] = "empty"
            store.record(old_fields, {STRATEGY: spec.get("admissionChecksStrategy")})
        fungibility = spec.get("flavorFungibility")
        if isinstance(fungibility, dict):
            for field, old_value in OLD_FUNGIBILITY.items():
                if fungibility.get(field) == old_value:
                    fungibility[field] = "MayStopSearch"
                    old_fields.setdefault("flavorFungibility", {})[field] = old_value
    status = _status(out)
    if status is not None:
        status.pop("pendingWorkloadsStatus", None)


def _cluster_queue_down(
    out: Obj, hub_fields: dict[str, Any], old_fields: dict[str, Any], warnings: Warnings
) -> None:
    spec = _spec(out)
    if spec is None:
        return
    if "cohort" in spec:
        raise ConversionError(
            "spec.cohort", 'unknown field "cohort"; v1beta2 calls it spec.cohortName'
        )
    if "cohortName" in spec:
        spec["cohort"] = spec.pop("cohortName")
    strategy = spec.get("admissionChecksStrategy")
    shadows = store.shadowed(old_fields, store.fields_key(V1BETA1), warnings)
    # The v1beta1 form applies only while no v1beta2 write changed the strategy since.
    form = None if shadows.changed(STRATEGY, strategy) else old_fields.get("admissionChecks")
    if form == "list" and isinstance(strategy, Mapping):
        rules = strategy.get("admissionChecks")
        if (
            set(strategy) == {"admissionChecks"}
            and isinstance(rules, list)
            and rules
            and all(isinstance(rule, Mapping) and set(rule) == {"name"} for rule in rules)
        ):
            spec["admissionChecks"] = [rule["name"] for rule in rules]
            del spec["admissionChecksStrategy"]
    elif form == "empty":
        spec["admissionChecks"] = []
    fungibility = spec.get("flavorFungibility")
    old_spelling = old_fields.get("flavorFungibility")
    if isinstance(fungibility, dict) and isinstance(old_spelling, Mapping):
        for field, old_value in old_spelling.items():
            if field in OLD_FUNGIBILITY and fungibility.get(field) == "MayStopSearch":
                fungibility[field] = old_value


# --- LocalQueue -------------------------------------------------------------------------


def _local_queue_up(
    out: Obj, old_fields: dict[str, Any], hub_fields: dict[str, Any], warnings: Warnings
) -> None:
    status = _status(out)
    if status is None:
        return
    status.pop("flavors", None)
    if "flavorUsage" in status:
        status["flavorsUsage"] = status.pop("flavorUsage")


def _local_queue_down(
    out: Obj, hub_fields: dict[str, Any], old_fields: dict[str, Any], warnings: Warnings
) -> None:
    status = _status(out)
    if status is not None and "flavorsUsage" in status:
        status["flavorUsage"] = status.pop("flavorsUsage")


# --- Workload ------------------------------------------------------------------------------


def _workload_up(
    out: Obj, old_fields: dict[str, Any], hub_fields: dict[str, Any], warnings: Warnings
) -> None:
    spec = _spec(out)
    if spec is not None:
        if "priorityClassRef" in spec:
            raise ConversionError(
                "spec.priorityClassRef",
                'unknown field "priorityClassRef"; v1beta1 uses priorityClassName and '
                "priorityClassSource",
            )
        name = spec.pop("priorityClassName", None)
        has_source = "priorityClassSource" in spec
        source = spec.pop("priorityClassSource", None)
        mapped = PRIORITY_SOURCES.get(source) if isinstance(source, str) else None
        if mapped is not None and name:
            spec["priorityClassRef"] = {"group": mapped[0], "kind": mapped[1], "name": name}
        else:
            if name is not None:
                old_fields["priorityClassName"] = name
            if has_source:
                old_fields["priorityClassSource"] = source
    status = _status(out)
    if status is None:
        return
    if WRONG_EXECUTION_SPELLING in status:
        status[RIGHT_EXECUTION_SPELLING] = status.pop(WRONG_EXECUTION_SPELLING)
    _map_topology_assignments(status, slices_from_domains)


def _workload_down(
    out: Obj, hub_fields: dict[str, Any], old_fields: dict[str, Any], warnings: Warnings
) -> None:
    spec = _spec(out)
    if spec is not None:
        ref = spec.pop("priorityClassRef", None)
        if ref is not None:
            ref = mapping_at(ref, FieldPath(("spec", "priorityClassRef")))
            for source, (group, kind) in PRIORITY_SOURCES.items():
                if ref.get("group") == group and ref.get("kind") == kind:
                    spec["priorityClassName"] = ref.get("name")
                    spec["priorityClassSource"] = source
                    break
            else:
                raise ConversionError(
                    "spec.priorityClassRef.kind",
                    f"kind {ref.get('kind')} does not belong to group {ref.get('group')}: use "
                    "PriorityClass with scheduling.k8s.io, WorkloadPriorityClass with "
                    "kueue.x-k8s.io",
                )
        else:
            for field in ("priorityClassName", "priorityClassSource"):
                if field in old_fields and field not in spec:
                    spec[field] = old_fields[field]
    status = _status(out)
    if status is None:
        return
    if RIGHT_EXECUTION_SPELLING in status:
        status[WRONG_EXECUTION_SPELLING] = status.pop(RIGHT_EXECUTION_SPELLING)
    _map_topology_assignments(status, domains_from_slices)


def _map_topology_assignments(
    status: dict[str, Any], convert: Callable[[Mapping[str, Any], FieldPath], Obj]
) -> None:
    admission = status.get("admission")
    if not isinstance(admission, dict):
        return
    path = FieldPath(("status", "admission", "podSetAssignments"))
    for index, assignment in enumerate(list_at(admission.get("podSetAssignments"), path)):
        if isinstance(assignment, dict) and assignment.get("topologyAssignment") is not None:
            assignment_path = path.index(index).child("topologyAssignment")
            assignment["topologyAssignment"] = convert(
                mapping_at(assignment["topologyAssignment"], assignment_path), assignment_path
            )


def slices_from_domains(assignment: Mapping[str, Any], path: FieldPath) -> Obj:
    """v1beta1 ``{levels, domains: [{values, count}]}`` → v1beta2 ``{levels, slices}``: pure.

    The slices are Kueue's encoding (:func:`scheduler.api.topology_assignment.encode`),
    so a converted assignment compares equal to the one Kueue writes.
    """
    out: Obj = {key: deep(value) for key, value in assignment.items() if key != "domains"}
    levels = [str(level) for level in list_at(assignment.get("levels"), path.child("levels"))]
    domains = []
    for index, item in enumerate(list_at(assignment.get("domains"), path.child("domains"))):
        domain_path = path.child("domains").index(index)
        domain = mapping_at(item, domain_path)
        values = tuple(str(value) for value in list_at(domain.get("values"), domain_path))
        if len(values) != len(levels):
            raise ConversionError(str(domain_path.child("values")), "must have one value per level")
        domains.append(topology_assignment.DomainAssignment(values, int(domain.get("count", 0))))
    out["slices"] = topology_assignment.encode(levels, domains)["slices"]
    return out


def domains_from_slices(assignment: Mapping[str, Any], path: FieldPath) -> Obj:
    """v1beta2 ``{levels, slices}`` → v1beta1 ``{levels, domains}`` (expanded): pure."""
    out: Obj = {key: deep(value) for key, value in assignment.items() if key != "slices"}
    try:
        _, domains = topology_assignment.decode(assignment)
    except (AttributeError, TypeError, ValueError) as bad:
        raise ConversionError(str(path.child("slices")), str(bad)) from bad
    out["domains"] = [{"values": list(d.values), "count": d.count} for d in domains]
    return out


# --- AdmissionCheck, MultiKueueCluster, MultiKueueConfig ----------------------------------


def _admission_check_up(
    out: Obj, old_fields: dict[str, Any], hub_fields: dict[str, Any], warnings: Warnings
) -> None:
    spec = _spec(out)
    if spec is not None and "retryDelayMinutes" in spec:
        old_fields["retryDelayMinutes"] = spec.pop("retryDelayMinutes")


def _admission_check_down(
    out: Obj, hub_fields: dict[str, Any], old_fields: dict[str, Any], warnings: Warnings
) -> None:
    spec = _spec(out)
    if spec is not None and "retryDelayMinutes" in old_fields and "retryDelayMinutes" not in spec:
        spec["retryDelayMinutes"] = old_fields["retryDelayMinutes"]


def _multikueue_cluster_up(
    out: Obj, old_fields: dict[str, Any], hub_fields: dict[str, Any], warnings: Warnings
) -> None:
    spec = _spec(out)
    if spec is None:
        return
    moved = {key: spec.pop(key) for key in ("kubeConfig", "clusterProfileRef") if key in spec}
    if moved:
        if "clusterSource" in spec:
            raise ConversionError(
                "spec.clusterSource",
                'unknown field "clusterSource"; v1beta1 sets spec.kubeConfig or '
                "spec.clusterProfileRef",
            )
        spec["clusterSource"] = moved


def _multikueue_cluster_down(
    out: Obj, hub_fields: dict[str, Any], old_fields: dict[str, Any], warnings: Warnings
) -> None:
    spec = _spec(out)
    if spec is None or "clusterSource" not in spec:
        return
    source = dict(mapping_at(spec.pop("clusterSource"), FieldPath(("spec", "clusterSource"))))
    spec.update(source)


def _multikueue_config_up(
    out: Obj, old_fields: dict[str, Any], hub_fields: dict[str, Any], warnings: Warnings
) -> None:
    spec = _spec(out)
    if "quotaManagement" in hub_fields:
        if spec is None:
            spec = out["spec"] = {}
        spec.setdefault("quotaManagement", hub_fields["quotaManagement"])


def _multikueue_config_down(
    out: Obj, hub_fields: dict[str, Any], old_fields: dict[str, Any], warnings: Warnings
) -> None:
    spec = _spec(out)
    if spec is not None and "quotaManagement" in spec:
        hub_fields["quotaManagement"] = spec.pop("quotaManagement")


_UP: Final[Mapping[str, Converter]] = {
    "ClusterQueue": _cluster_queue_up,
    "LocalQueue": _local_queue_up,
    "Workload": _workload_up,
    "AdmissionCheck": _admission_check_up,
    "MultiKueueCluster": _multikueue_cluster_up,
    "MultiKueueConfig": _multikueue_config_up,
}
_DOWN: Final[Mapping[str, Converter]] = {
    "ClusterQueue": _cluster_queue_down,
    "LocalQueue": _local_queue_down,
    "Workload": _workload_down,
    "AdmissionCheck": _admission_check_down,
    "MultiKueueCluster": _multikueue_cluster_down,
    "MultiKueueConfig": _multikueue_config_down,
}


def v1beta1_report_path(original: Mapping[str, Any], path: str) -> str:
    """Where to report a v1beta2 violation found on a converted v1beta1 object.

    ``spec.cohortName`` is reported as ``spec.cohort``, and strategy entries
    built from ``spec.admissionChecks`` at ``spec.admissionChecks[i]``
    (docs/validation.md#order-of-processing).  Pure.
    """
    if path == "spec.cohortName" or path.startswith("spec.cohortName."):
        return "spec.cohort" + path[len("spec.cohortName") :]
    spec = original.get("spec")
    strategy_prefix = "spec.admissionChecksStrategy.admissionChecks"
    if (
        isinstance(spec, Mapping)
        and spec.get("admissionChecks")
        and path.startswith(strategy_prefix)
    ):
        rest = path[len(strategy_prefix) :]
        if rest.startswith("[") and "]" in rest:
            index, _, tail = rest[1:].partition("]")
            return f"spec.admissionChecks[{index}]" + ("" if tail in ("", ".name") else tail)
        return "spec.admissionChecks" + rest
    return path
