"""ClusterQueue rules (docs/validation.md#clusterqueue).

The resource-group rules a ClusterQueue shares with Cohorts are
``resource_groups``; the limit rules that need a cohort (CQ-18, CQ-21, CQ-22)
are here, applied to each quota entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.validation.common import (
    FeatureGates,
    check_admission_check_name,
    check_weight,
    gate,
    in_rule_order,
    numbered,
    prepare,
    prepare_old,
)
from scheduler.api.validation.formats import (
    as_dict,
    check_enum,
    check_max,
    check_metadata,
    check_selector,
    is_subdomain,
    mappings,
    not_subdomain,
    render_value,
    required,
    strings,
)
from scheduler.api.validation.known_fields import CLUSTER_QUEUE
from scheduler.api.validation.resource_groups import (
    GROUPS,
    check_resource_groups,
    check_totals,
    flavor_names,
    quantity_or_none,
    quota_entries,
)

SPEC = FieldPath(("spec",))

RULE_ORDER = numbered("CQ", 45) + ["CQ-V1", "CQ-V2", "CQ-V3", "CQ-V4", "UNKNOWN-FIELD"]

QUEUEING_STRATEGIES = ("StrictFIFO", "BestEffortFIFO")
STOP_POLICIES = ("None", "Hold", "HoldAndDrain")
WITHIN_CLUSTER_QUEUE = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
RECLAIM_WITHIN_COHORT = ("Never", "LowerPriority", "Any")
BORROW_WITHIN_COHORT = ("Never", "LowerPriority")
FUNGIBILITY = ("MayStopSearch", "TryNextFlavor")
PREFERENCES = ("BorrowingOverPreemption", "PreemptionOverBorrowing")
ADMISSION_MODES = ("UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing")
MIGRATION_MODES = ("TryPreferredFlavors", "RetainFirstAdmission")
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


# --- ClusterQueue only -----------------------------------------------------------


def _check_limits(spec: dict[str, Any], errors: list[FieldError]) -> None:
    """CQ-18, CQ-21, CQ-22."""
    cohort = spec.get("cohortName")
    no_cohort = cohort is None or cohort == ""
    for at, quota in quota_entries(spec.get("resourceGroups")):
        if no_cohort and "borrowingLimit" in quota:
            errors.append(
                error(
                    at.child("borrowingLimit"),
                    "a borrowing limit needs a cohort: set spec.cohortName or remove "
                    "borrowingLimit",
                    origin="C",
                    rule="CQ-18",
                )
            )
        if no_cohort and "lendingLimit" in quota:
            errors.append(
                error(
                    at.child("lendingLimit"),
                    "a lending limit needs a cohort: set spec.cohortName or remove lendingLimit",
                    origin="W",
                    rule="CQ-21",
                )
            )
        nominal, lending = (
            quantity_or_none(quota.get("nominalQuota")),
            quantity_or_none(quota.get("lendingLimit")),
        )
        if nominal is not None and lending is not None and lending > nominal:
            errors.append(
                error(
                    at.child("lendingLimit"),
                    "must be less than or equal to nominalQuota "
                    f"({render_value(quota.get('nominalQuota'))}); a queue cannot lend more than "
                    "it owns",
                    origin="W",
                    rule="CQ-22",
                )
            )


def _check_preemption(preemption: object, errors: list[FieldError]) -> None:
    """CQ-29, CQ-30."""
    if not isinstance(preemption, dict):
        return
    at = SPEC.child("preemption")
    check_enum(
        preemption.get("withinClusterQueue"),
        WITHIN_CLUSTER_QUEUE,
        at.child("withinClusterQueue"),
        errors,
        rule="CQ-29",
    )
    check_enum(
        preemption.get("reclaimWithinCohort"),
        RECLAIM_WITHIN_COHORT,
        at.child("reclaimWithinCohort"),
        errors,
        rule="CQ-29",
    )
    borrow = as_dict(preemption.get("borrowWithinCohort"))
    check_enum(
        borrow.get("policy"),
        BORROW_WITHIN_COHORT,
        at.child("borrowWithinCohort", "policy"),
        errors,
        rule="CQ-29",
    )
    threshold = borrow.get("maxPriorityThreshold")
    if threshold is not None and (
        isinstance(threshold, bool)
        or not isinstance(threshold, int)
        or not INT32_MIN <= threshold <= INT32_MAX
    ):
        errors.append(
            error(
                at.child("borrowWithinCohort", "maxPriorityThreshold"),
                "must be a 32-bit integer",
                origin="S",
                rule="CQ-29",
            )
        )
    policy = borrow.get("policy")
    if (
        preemption.get("reclaimWithinCohort") == "Never"
        and isinstance(policy, str)
        and policy != "Never"
    ):
        errors.append(
            error(
                at,
                f"borrowWithinCohort.policy {policy} needs reclaimWithinCohort LowerPriority or "
                "Any; with reclaimWithinCohort Never, set borrowWithinCohort.policy to Never",
                origin="C",
                rule="CQ-30",
            )
        )


_OLD_SPELLINGS = {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}


def _check_fungibility(fungibility: object, errors: list[FieldError]) -> None:
    """CQ-31, CQ-32, CQ-33."""
    if not isinstance(fungibility, dict):
        return
    at = SPEC.child("flavorFungibility")
    for field, old in _OLD_SPELLINGS.items():
        value = fungibility.get(field)
        suffix = f'; "{old}" is the old v1beta1 spelling, use MayStopSearch' if value == old else ""
        check_enum(value, FUNGIBILITY, at.child(field), errors, rule="CQ-31", suffix=suffix)
    preference = fungibility.get("preference")
    if preference == "":
        return
    check_enum(preference, PREFERENCES, at.child("preference"), errors, rule="CQ-32")
    if isinstance(preference, str) and (
        fungibility.get("whenCanBorrow") != "TryNextFlavor"
        or fungibility.get("whenCanPreempt") != "TryNextFlavor"
    ):
        errors.append(
            error(
                at.child("preference"),
                f'preference "{preference}" applies only when whenCanBorrow and whenCanPreempt '
                "are both TryNextFlavor",
                origin="C",
                rule="CQ-33",
            )
        )


def _check_admission_checks(
    spec: dict[str, Any], old_spec: dict[str, Any] | None, errors: list[FieldError]
) -> None:
    """CQ-38 … CQ-41."""
    strategy = spec.get("admissionChecksStrategy")
    if not isinstance(strategy, dict):
        return
    at = SPEC.child("admissionChecksStrategy", "admissionChecks")
    rules = strategy.get("admissionChecks")
    if rules is None or rules == []:
        errors.append(
            error(
                at,
                "must list at least 1 admission check (or remove admissionChecksStrategy)",
                origin="S",
                rule="CQ-38",
            )
        )
    check_max(rules, 64, at, errors, rule="CQ-39")
    own_flavors = flavor_names(spec.get("resourceGroups"))
    lenient = _onflavors_leniency(spec, old_spec)
    seen: set[str] = set()
    for k, rule in mappings(rules):
        here = at.index(k)
        name = rule.get("name")
        check_admission_check_name(name, here, seen, errors, rule="CQ-39")
        on_flavors = rule.get("onFlavors")
        check_max(on_flavors, 64, here.child("onFlavors"), errors, rule="CQ-40")
        listed: set[str] = set()
        skip_membership = isinstance(name, str) and lenient.get(name) == frozenset(
            item for _, item in strings(on_flavors)
        )
        for position, flavor in strings(on_flavors):
            item_at = here.child("onFlavors").index(position)
            if not is_subdomain(flavor):
                errors.append(
                    error(item_at, not_subdomain(flavor, "flavor name"), origin="S", rule="CQ-40")
                )
            if flavor in listed:
                errors.append(
                    error(item_at, f'flavor "{flavor}" is listed twice', origin="S", rule="CQ-40")
                )
            listed.add(flavor)
            if flavor not in own_flavors and not skip_membership:
                known = ", ".join(sorted(set(own_flavors))) or "none"
                errors.append(
                    error(
                        item_at,
                        f'flavor "{flavor}" is not one of this queue\'s flavors ({known}); '
                        "onFlavors may only name flavors from spec.resourceGroups",
                        origin="W",
                        rule="CQ-41",
                    )
                )


def _onflavors_leniency(
    spec: dict[str, Any], old_spec: dict[str, Any] | None
) -> dict[str, frozenset[str]]:
    """CQ-41 on update: rule name → old onFlavors set, when the flavors are unchanged."""
    if old_spec is None or not isinstance(old_spec.get("admissionChecksStrategy"), dict):
        return {}
    if set(flavor_names(old_spec.get("resourceGroups"))) != set(
        flavor_names(spec.get("resourceGroups"))
    ):
        return {}
    old_rules = as_dict(old_spec["admissionChecksStrategy"]).get("admissionChecks")
    return {
        rule["name"]: frozenset(item for _, item in strings(rule.get("onFlavors")))
        for _, rule in mappings(old_rules)
        if isinstance(rule.get("name"), str)
    }


def _check_scope_and_policy(spec: dict[str, Any], errors: list[FieldError]) -> None:
    """CQ-42, CQ-43."""
    scope = spec.get("admissionScope")
    if isinstance(scope, dict):
        mode = scope.get("admissionMode")
        at = SPEC.child("admissionScope", "admissionMode")
        if mode is None or mode == "":
            errors.append(
                error(
                    at,
                    required("use UsageBasedAdmissionFairSharing or NoAdmissionFairSharing"),
                    origin="S",
                    rule="CQ-42",
                )
            )
        check_enum(mode or None, ADMISSION_MODES, at, errors, rule="CQ-42")
    policy = spec.get("concurrentAdmissionPolicy")
    if isinstance(policy, dict):
        migration = as_dict(policy.get("migration"))
        at = SPEC.child("concurrentAdmissionPolicy", "migration")
        mode = migration.get("mode")
        if mode is None or mode == "":
            errors.append(
                error(
                    at.child("mode"),
                    required("use TryPreferredFlavors or RetainFirstAdmission"),
                    origin="S",
                    rule="CQ-43",
                )
            )
        check_enum(mode or None, MIGRATION_MODES, at.child("mode"), errors, rule="CQ-43")
        last = as_dict(migration.get("constraints")).get("lastAcceptableFlavorName")
        if isinstance(last, str) and not is_subdomain(last):
            errors.append(
                error(
                    at.child("constraints", "lastAcceptableFlavorName"),
                    not_subdomain(last, "flavor name"),
                    origin="S",
                    rule="CQ-43",
                )
            )


def _check_concurrent_admission(
    spec: dict[str, Any],
    old_spec: dict[str, Any] | None,
    gates: FeatureGates | None,
    errors: list[FieldError],
) -> None:
    """CQ-44 (update) and CQ-45 (gate ConcurrentAdmission)."""
    policy = spec.get("concurrentAdmissionPolicy")
    if old_spec is not None and old_spec.get("concurrentAdmissionPolicy") != policy:
        errors.append(
            error(
                SPEC.child("concurrentAdmissionPolicy"),
                "is immutable: it can only be set when the ClusterQueue is created",
                rule="CQ-44",
            )
        )
    if not gate(gates, "ConcurrentAdmission") or not isinstance(policy, dict):
        return
    groups = spec.get("resourceGroups")
    group_list = groups if isinstance(groups, list) else []
    if len(group_list) != 1:
        errors.append(
            error(
                GROUPS,
                "must have exactly one resource group when concurrentAdmissionPolicy is set",
                rule="CQ-45",
            )
        )
    elif (
        isinstance(group_list[0], dict)
        and isinstance(group_list[0].get("flavors"), list)
        and len(group_list[0]["flavors"]) > 16
    ):
        errors.append(
            error(
                GROUPS.index(0).child("flavors"),
                "at most 16 flavors when concurrentAdmissionPolicy is set",
                rule="CQ-45",
            )
        )
    migration = as_dict(policy.get("migration"))
    at = SPEC.child("concurrentAdmissionPolicy", "migration", "constraints")
    constraints = migration.get("constraints")
    if isinstance(constraints, dict) and migration.get("mode") not in (
        None,
        "",
        "TryPreferredFlavors",
    ):
        errors.append(
            error(at, "constraints are allowed only with mode TryPreferredFlavors", rule="CQ-45")
        )
    last = as_dict(constraints).get("lastAcceptableFlavorName")
    own = flavor_names(groups)
    if isinstance(last, str) and last and last not in own:
        errors.append(
            error(
                at.child("lastAcceptableFlavorName"),
                f"must be one of this queue's flavors: {', '.join(own) or 'none'}",
                rule="CQ-45",
            )
        )
    if spec.get("queueingStrategy") == "StrictFIFO":
        errors.append(
            error(
                SPEC.child("queueingStrategy"),
                "StrictFIFO cannot be combined with concurrentAdmissionPolicy",
                rule="CQ-45",
            )
        )


def validate_cluster_queue(
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
    *,
    gates: FeatureGates | None = None,
) -> list[FieldError]:
    """Every ClusterQueue rule (CREATE, or UPDATE when ``old`` is given): pure, never raises."""
    errors: list[FieldError] = []
    obj = prepare(new, CLUSTER_QUEUE, errors)
    if obj is None:
        return errors
    old_obj = prepare_old(old, CLUSTER_QUEUE)
    old_spec = as_dict(old_obj.get("spec")) if old_obj is not None else None
    check_metadata(obj, errors, namespaced=False)
    spec = as_dict(obj.get("spec"))
    groups = spec.get("resourceGroups")
    check_resource_groups(groups, errors)
    _check_limits(spec, errors)
    check_totals(groups, errors)
    cohort = spec.get("cohortName")
    if isinstance(cohort, str) and cohort != "" and not is_subdomain(cohort):
        errors.append(
            error(SPEC.child("cohortName"), not_subdomain(cohort), origin="S", rule="CQ-26")
        )
    check_enum(
        spec.get("queueingStrategy"),
        QUEUEING_STRATEGIES,
        SPEC.child("queueingStrategy"),
        errors,
        rule="CQ-27",
    )
    check_selector(
        spec.get("namespaceSelector"), SPEC.child("namespaceSelector"), errors, rule="CQ-28"
    )
    _check_preemption(spec.get("preemption"), errors)
    _check_fungibility(spec.get("flavorFungibility"), errors)
    check_enum(
        spec.get("stopPolicy"), STOP_POLICIES, SPEC.child("stopPolicy"), errors, rule="CQ-34"
    )
    check_weight(
        spec.get("fairSharing"),
        SPEC.child("fairSharing"),
        errors,
        rules=("CQ-35", "CQ-36", "CQ-37"),
    )
    _check_admission_checks(spec, old_spec, errors)
    _check_scope_and_policy(spec, errors)
    _check_concurrent_admission(spec, old_spec, gates, errors)
    return in_rule_order(errors, RULE_ORDER)


__all__ = ["validate_cluster_queue"]
