"""MultiKueueConfig and MultiKueueCluster rules (docs/validation.md#other-kinds).

kuota stores and validates these objects; it does not dispatch to other
clusters.  Kueue enforces them with CRD rules only (K for the webhook path).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.validation.common import in_rule_order, prepare
from scheduler.api.validation.formats import (
    as_dict,
    check_enum,
    check_max,
    check_metadata,
    first_duplicates,
    required,
    strings,
    too_few,
)
from scheduler.api.validation.known_fields import MULTIKUEUE_CLUSTER, MULTIKUEUE_CONFIG

SPEC = FieldPath(("spec",))
CONFIG_RULE_ORDER = ["MKC-1", "MKC-2", "MKC-3", "UNKNOWN-FIELD"]
CLUSTER_RULE_ORDER = ["MKCL-1", "MKCL-2", "UNKNOWN-FIELD"]
QUOTA_MANAGEMENT = ("Manual", "Automated")
LOCATION_TYPES = ("Secret", "Path")


def validate_multikueue_config(
    new: Mapping[str, Any], old: Mapping[str, Any] | None = None
) -> list[FieldError]:
    """Every MultiKueueConfig rule: pure, never raises."""
    errors: list[FieldError] = []
    obj = prepare(new, MULTIKUEUE_CONFIG, errors)
    if obj is None:
        return errors
    check_metadata(obj, errors, namespaced=False)
    spec = as_dict(obj.get("spec"))
    clusters = spec.get("clusters")
    at = SPEC.child("clusters")
    if clusters is None or clusters == []:
        errors.append(error(at, too_few(1), origin="S", rule="MKC-1"))
    check_max(clusters, 20, at, errors, rule="MKC-1")
    for position, name in strings(clusters):
        if len(name) > 256:
            errors.append(
                error(
                    at.index(position), "must be at most 256 characters", origin="S", rule="MKC-1"
                )
            )
    reported: set[str] = set()
    for _, name, _ in first_duplicates(strings(clusters)):
        if name not in reported:
            errors.append(
                error(
                    at,
                    f'must not contain duplicates ("{name}" appears twice)',
                    origin="C",
                    rule="MKC-2",
                )
            )
            reported.add(str(name))
    check_enum(
        spec.get("quotaManagement"),
        QUOTA_MANAGEMENT,
        SPEC.child("quotaManagement"),
        errors,
        rule="MKC-3",
    )
    return in_rule_order(errors, CONFIG_RULE_ORDER)


def _check_name(value: object, path: FieldPath, hint: str, errors: list[FieldError]) -> None:
    if value is None or value == "":
        errors.append(error(path, required(hint), origin="S", rule="MKCL-2"))
    elif isinstance(value, str) and len(value) > 256:
        errors.append(error(path, "must be at most 256 characters", origin="S", rule="MKCL-2"))


def validate_multikueue_cluster(
    new: Mapping[str, Any], old: Mapping[str, Any] | None = None
) -> list[FieldError]:
    """Every MultiKueueCluster rule: pure, never raises."""
    errors: list[FieldError] = []
    obj = prepare(new, MULTIKUEUE_CLUSTER, errors)
    if obj is None:
        return errors
    check_metadata(obj, errors, namespaced=False)
    source = as_dict(obj.get("spec")).get("clusterSource")
    at = SPEC.child("clusterSource")
    if source is None or (
        isinstance(source, dict) and ("kubeConfig" in source) == ("clusterProfileRef" in source)
    ):
        errors.append(
            error(
                at, "set exactly one of kubeConfig or clusterProfileRef", origin="C", rule="MKCL-1"
            )
        )
    source = as_dict(source)
    kube_config = source.get("kubeConfig")
    if isinstance(kube_config, dict):
        here = at.child("kubeConfig")
        _check_name(
            kube_config.get("location"),
            here.child("location"),
            "give the Secret name or the file path of the kubeconfig",
            errors,
        )
        check_enum(
            kube_config.get("locationType"),
            LOCATION_TYPES,
            here.child("locationType"),
            errors,
            rule="MKCL-2",
        )
    profile = source.get("clusterProfileRef")
    if isinstance(profile, dict):
        _check_name(
            profile.get("name"),
            at.child("clusterProfileRef", "name"),
            "give the ClusterProfile name",
            errors,
        )
    return in_rule_order(errors, CLUSTER_RULE_ORDER)
