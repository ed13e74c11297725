"""LocalQueue rules (docs/validation.md#localqueue).

LQ-2 is stricter than Kueue (kuota decision): clearing ``clusterQueue`` is
rejected as well as changing it; setting it on a queue that had none is
allowed, as in Kueue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api import rule_text as text
from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.validation.clusterqueue import STOP_POLICIES
from scheduler.api.validation.common import (
    check_weight,
    in_rule_order,
    numbered,
    prepare,
    prepare_old,
)
from scheduler.api.validation.formats import (
    as_dict,
    check_enum,
    check_metadata,
    is_subdomain,
    not_subdomain,
)
from scheduler.api.validation.known_fields import LOCAL_QUEUE

SPEC = FieldPath(("spec",))
RULE_ORDER = numbered("LQ", 5) + ["UNKNOWN-FIELD"]


def validate_local_queue(
    new: Mapping[str, Any], old: Mapping[str, Any] | None = None
) -> list[FieldError]:
    """Every LocalQueue rule (CREATE, or UPDATE when ``old`` is given): pure, never raises."""
    errors: list[FieldError] = []
    obj = prepare(new, LOCAL_QUEUE, errors)
    if obj is None:
        return errors
    check_metadata(obj, errors, namespaced=True)
    spec = as_dict(obj.get("spec"))
    cluster_queue = spec.get("clusterQueue")
    if isinstance(cluster_queue, str) and cluster_queue != "" and not is_subdomain(cluster_queue):
        errors.append(
            error(SPEC.child("clusterQueue"), not_subdomain(cluster_queue), origin="S", rule="LQ-1")
        )
    old_obj = prepare_old(old, LOCAL_QUEUE)
    if old_obj is not None:
        previous = as_dict(old_obj.get("spec")).get("clusterQueue")
        if isinstance(previous, str) and previous != "" and cluster_queue != previous:
            errors.append(
                error(
                    SPEC.child("clusterQueue"),
                    text.CLUSTER_QUEUE_IMMUTABLE.format(old=previous),
                    origin="C",
                    rule="LQ-2",
                )
            )
    check_enum(spec.get("stopPolicy"), STOP_POLICIES, SPEC.child("stopPolicy"), errors, rule="LQ-3")
    check_weight(
        spec.get("fairSharing"),
        SPEC.child("fairSharing"),
        errors,
        rules=("LQ-4", "LQ-5", "LQ-5"),
        origins=("S", "K", "K"),
    )
    return in_rule_order(errors, RULE_ORDER)
