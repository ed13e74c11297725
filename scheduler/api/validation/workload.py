"""Workload rules (docs/validation.md#workload): the spec rules live here, the
status rules and the update-only rules in ``workload_status``.

``validate_workload`` runs everything for the main resource;
``validate_workload_status`` is for the ``workloads/status`` subresource,
where the API server ignores spec changes, so only the status rules (and the
status update rules) apply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from scheduler.api import rule_text as text
from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.refs import ELASTIC_JOB_ANNOTATION as ELASTIC_JOB
from scheduler.api.refs import PRIORITY_BOOST_ANNOTATION as PRIORITY_BOOST
from scheduler.api.validation.admission_gates import check_gated_by, check_gates_only_shrink
from scheduler.api.validation.common import (
    FeatureGates,
    gate,
    in_rule_order,
    numbered,
    prepare,
    prepare_old,
)
from scheduler.api.validation.formats import (
    QUALIFIED_NAME_HINT,
    as_dict,
    check_enum,
    check_label_map,
    check_max,
    check_metadata,
    check_quantity,
    duplicate_key,
    is_label,
    is_qualified_name,
    is_subdomain,
    mappings,
    negative,
    not_label,
    not_subdomain,
    required,
)
from scheduler.api.validation.known_fields import WORKLOAD
from scheduler.api.validation.workload_status import check_status
from scheduler.api.validation.workload_updates import check_spec_update, check_status_update

SPEC = FieldPath(("spec",))
POD_SETS = SPEC.child("podSets")
RULE_ORDER = (
    numbered("WL", 21)
    + [f"WL-{n}" for n in range(30, 42)]
    + [f"WL-{n}" for n in range(50, 63)]
    + ["UNKNOWN-FIELD"]
)

PRIORITY_GROUPS = ("kueue.x-k8s.io", "scheduling.k8s.io")
PRIORITY_KINDS = ("WorkloadPriorityClass", "PriorityClass")
KIND_OF_GROUP = {"kueue.x-k8s.io": "WorkloadPriorityClass", "scheduling.k8s.io": "PriorityClass"}
RESERVED_RESOURCE = "pods"
MAX_ANNOTATION_BYTES = 262144
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
_INT_RE = re.compile(r"[+-]?[0-9]+")


def is_elastic(obj: Mapping[str, Any]) -> bool:
    """Annotation ``kueue.x-k8s.io/elastic-job: "true"``: pure."""
    return as_dict(as_dict(obj.get("metadata")).get("annotations")).get(ELASTIC_JOB) == "true"


def _check_resources(
    resources: object, at: FieldPath, errors: list[FieldError], non_negative: bool
) -> None:
    """WL-11, WL-12 on one ``resources`` block (container or pod level)."""
    for field in ("requests", "limits"):
        amounts = as_dict(as_dict(resources).get(field))
        for name, raw in amounts.items():
            here = at.child(field).key(name)
            if name == RESERVED_RESOURCE:
                errors.append(
                    error(
                        here,
                        'the resource name "pods" is reserved: kuota counts pods itself; remove '
                        'it from the pod template (a ClusterQueue may still set a "pods" quota)',
                        rule="WL-11",
                    )
                )
            quantity = check_quantity(raw, here, errors, rule="WL-12")
            if non_negative and quantity is not None and quantity.is_negative():
                errors.append(error(here, negative(raw), rule="WL-12"))


def _check_template_metadata(
    template: dict[str, Any], at: FieldPath, errors: list[FieldError]
) -> None:
    """WL-13."""
    metadata = as_dict(template.get("metadata"))
    check_label_map(
        metadata.get("labels"), at.child("labels"), errors, rule="WL-13", keyed_paths=False
    )
    annotations = metadata.get("annotations")
    if isinstance(annotations, dict):
        for key in annotations:
            if not is_qualified_name(key):
                errors.append(
                    error(
                        at.child("annotations"),
                        f'invalid annotation key "{key}": {QUALIFIED_NAME_HINT}',
                        rule="WL-13",
                    )
                )
        size = sum(
            len(key.encode()) + len(str(value).encode()) for key, value in annotations.items()
        )
        if size > MAX_ANNOTATION_BYTES:
            errors.append(
                error(
                    at.child("annotations"),
                    f"annotations are larger than {MAX_ANNOTATION_BYTES} bytes",
                    rule="WL-13",
                )
            )


def _check_pod_sets(
    obj: dict[str, Any], spec: dict[str, Any], gates: FeatureGates | None, errors: list[FieldError]
) -> None:
    """WL-1 … WL-13."""
    pod_sets = spec.get("podSets")
    if pod_sets is None or pod_sets == []:
        errors.append(
            error(
                POD_SETS,
                text.AT_LEAST_ONE_POD_SET,
                origin="K" if pod_sets is None else "S",
                rule="WL-1",
            )
        )
    check_max(pod_sets, 18, POD_SETS, errors, rule="WL-2")
    names: set[str] = set()
    with_min_count = 0
    non_negative = gate(gates, "WorkloadValidateResourcesAreNonNegative")
    for i, pod_set in mappings(pod_sets):
        at = POD_SETS.index(i)
        name = pod_set.get("name")
        if isinstance(name, str):
            if not is_label(name):
                errors.append(
                    error(
                        at.child("name"), not_label(name, "pod set name"), origin="S", rule="WL-3"
                    )
                )
            if name in names:
                errors.append(
                    error(
                        at.child("name"),
                        f'duplicate pod set name "{name}"; give every pod set its own name (an '
                        "unnamed pod set is called main)",
                        origin="S",
                        rule="WL-4",
                    )
                )
            names.add(name)
        template = pod_set.get("template")
        hint = "a pod set needs a pod template with at least one container"
        if template is None:
            errors.append(error(at.child("template"), required(hint), origin="S", rule="WL-5"))
        elif isinstance(template, dict):
            containers = as_dict(template.get("spec")).get("containers")
            if containers is None or containers == []:
                errors.append(
                    error(
                        at.child("template", "spec", "containers"),
                        required(hint),
                        origin="S",
                        rule="WL-5",
                    )
                )
        count, min_count = pod_set.get("count"), pod_set.get("minCount")
        if isinstance(count, int) and count < 0:
            errors.append(
                error(at.child("count"), text.COUNT_NOT_NEGATIVE, origin="S", rule="WL-6")
            )
        if "minCount" in pod_set:
            with_min_count += 1
        if isinstance(min_count, int) and min_count < 1:
            errors.append(
                error(at.child("minCount"), text.MIN_COUNT_AT_LEAST_ONE, origin="S", rule="WL-7")
            )
        if isinstance(min_count, int) and isinstance(count, int) and min_count > count:
            errors.append(
                error(
                    at.child("minCount"),
                    text.MIN_COUNT_ABOVE_COUNT.format(count=count),
                    origin="C",
                    rule="WL-8",
                )
            )
        if isinstance(template, dict):
            pod_spec = as_dict(template.get("spec"))
            template_spec_at = at.child("template", "spec")
            for field in ("containers", "initContainers"):
                for c, container in mappings(pod_spec.get(field)):
                    _check_resources(
                        container.get("resources"),
                        template_spec_at.child(field).index(c).child("resources"),
                        errors,
                        non_negative,
                    )
            _check_resources(
                pod_spec.get("resources"), template_spec_at.child("resources"), errors, non_negative
            )
            if gate(gates, "WorkloadValidationForPodSetMetadata"):
                _check_template_metadata(template, at.child("template", "metadata"), errors)
    if with_min_count > 1:
        errors.append(
            error(
                POD_SETS,
                text.MIN_COUNT_TWICE.format(count=with_min_count),
                rule="WL-9",
            )
        )
    if with_min_count and is_elastic(obj):
        errors.append(
            error(
                POD_SETS,
                "partial admission (minCount) and elastic jobs cannot be combined",
                rule="WL-10",
            )
        )


def _check_priority(spec: dict[str, Any], errors: list[FieldError]) -> None:
    """WL-14 … WL-19."""
    queue = spec.get("queueName")
    if isinstance(queue, str) and queue != "" and not is_subdomain(queue):
        errors.append(
            error(
                SPEC.child("queueName"),
                not_subdomain(queue, "LocalQueue name"),
                origin="S",
                rule="WL-14",
            )
        )
    ref = spec.get("priorityClassRef")
    at = SPEC.child("priorityClassRef")
    if isinstance(ref, dict):
        for field, hint in (
            ("group", "use kueue.x-k8s.io or scheduling.k8s.io"),
            ("kind", "use WorkloadPriorityClass or PriorityClass"),
            ("name", "name the priority class"),
        ):
            if ref.get(field) in (None, ""):
                errors.append(error(at.child(field), required(hint), origin="S", rule="WL-15"))
        group, kind, name = ref.get("group"), ref.get("kind"), ref.get("name")
        if group:
            check_enum(group, PRIORITY_GROUPS, at.child("group"), errors, rule="WL-15")
        if kind:
            check_enum(kind, PRIORITY_KINDS, at.child("kind"), errors, rule="WL-15")
        if isinstance(name, str) and name != "" and not is_subdomain(name):
            errors.append(
                error(
                    at.child("name"),
                    not_subdomain(name, "priority class name"),
                    origin="S",
                    rule="WL-15",
                )
            )
        if group in KIND_OF_GROUP and kind in PRIORITY_KINDS and KIND_OF_GROUP[group] != kind:
            errors.append(
                error(
                    at.child("kind"),
                    text.KIND_NOT_OF_GROUP.format(kind=kind, group=group),
                    origin="C",
                    rule="WL-16",
                )
            )
        if "priority" not in spec:
            errors.append(
                error(
                    SPEC.child("priority"),
                    text.PRIORITY_NEEDED,
                    origin="C",
                    rule="WL-17",
                )
            )
    limit = spec.get("maximumExecutionTimeSeconds")
    if isinstance(limit, int) and limit < 1:
        errors.append(
            error(
                SPEC.child("maximumExecutionTimeSeconds"),
                text.EXECUTION_TIME_AT_LEAST_ONE,
                origin="S",
                rule="WL-18",
            )
        )
    gates_list = spec.get("preemptionGates")
    check_max(gates_list, 8, SPEC.child("preemptionGates"), errors, rule="WL-19")
    seen: set[str] = set()
    for k, item in mappings(gates_list):
        name = item.get("name")
        here = SPEC.child("preemptionGates").index(k).child("name")
        if name is None or (isinstance(name, str) and not 1 <= len(name) <= 63):
            errors.append(error(here, text.GATE_NAME_LENGTH, origin="S", rule="WL-19"))
        if isinstance(name, str):
            if name in seen:
                errors.append(error(here, duplicate_key("gate", name), origin="S", rule="WL-19"))
            seen.add(name)


def _check_annotations(
    obj: dict[str, Any], gates: FeatureGates | None, errors: list[FieldError]
) -> None:
    """WL-20, WL-21."""
    annotations = as_dict(obj.get("metadata")).get("annotations")
    if gate(gates, "AdmissionGatedBy"):
        check_gated_by(annotations, errors, rule="WL-20")
    boost = as_dict(annotations).get(PRIORITY_BOOST)
    if gate(gates, "PriorityBoost") and isinstance(boost, str) and not _is_int32(boost):
        errors.append(
            error(
                FieldPath(("metadata", "annotations")).key(PRIORITY_BOOST),
                'must be a signed integer such as 10 or -5 (write "0", not an empty string)',
                rule="WL-21",
            )
        )


def _is_int32(text: str) -> bool:
    return _INT_RE.fullmatch(text) is not None and INT32_MIN <= int(text) <= INT32_MAX


def validate_workload(
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
    *,
    gates: FeatureGates | None = None,
) -> list[FieldError]:
    """Every Workload rule, spec and status (CREATE, or UPDATE when ``old`` is given):
    pure, never raises.
    """
    errors: list[FieldError] = []
    obj = prepare(new, WORKLOAD, errors)
    if obj is None:
        return errors
    old_obj = prepare_old(old, WORKLOAD)
    check_metadata(obj, errors, namespaced=True)
    spec = as_dict(obj.get("spec"))
    _check_pod_sets(obj, spec, gates, errors)
    _check_priority(spec, errors)
    _check_annotations(obj, gates, errors)
    check_status(obj, old_obj, errors)
    if old_obj is not None:
        check_spec_update(
            obj,
            old_obj,
            elastic_slices=gate(gates, "ElasticJobsViaWorkloadSlices") and is_elastic(obj),
            errors=errors,
        )
        check_status_update(obj, old_obj, errors)
        check_gates_only_shrink(
            as_dict(old_obj.get("metadata")).get("annotations"),
            as_dict(obj.get("metadata")).get("annotations"),
            errors,
            rule="WL-62",
        )
    return in_rule_order(errors, RULE_ORDER)


def validate_workload_status(
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
    *,
    gates: FeatureGates | None = None,
) -> list[FieldError]:
    """The rules that apply to the ``workloads/status`` subresource (status rules, and
    the update-only rules for status): pure.
    """
    errors: list[FieldError] = []
    obj = prepare(new, WORKLOAD, errors)
    if obj is None:
        return errors
    errors = [item for item in errors if item.field.startswith("status")]
    old_obj = prepare_old(old, WORKLOAD)
    check_status(obj, old_obj, errors)
    if old_obj is not None:
        check_status_update(obj, old_obj, errors)
    return in_rule_order(errors, RULE_ORDER)
