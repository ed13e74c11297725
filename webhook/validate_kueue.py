"""Validating kuota's own resources (``kueue.x-k8s.io``, every served version).

This module adds nothing to the rules: it hands the object, exactly as the
API server sent it, to :func:`scheduler.api.pipeline.review` — the function
``kuota validate`` calls — and renders the violations with
:func:`~scheduler.api.validation.render.admission_status`.  The webhook
registrations use ``matchPolicy: Exact`` with every version, so a
``v1alpha1`` manifest reaches this code in ``v1alpha1`` and is judged by the
legacy rules first, as the CLI judges it; ``kubectl apply`` and ``kuota
validate`` therefore print the same message, byte for byte, and the same
warnings for the fields kuota accepts without acting on them
(:mod:`scheduler.api.validation.not_acted_on`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api.pipeline import UnsupportedKind, is_supported, review
from webhook.review import AdmissionRequest, BadRequest, ResponseBody, allow, deny


def object_of(request: AdmissionRequest, expected_kinds: frozenset[str]) -> dict[str, Any]:
    """The request's object with its apiVersion/kind, checked against the endpoint (pure)."""
    group, version, kind = request.kind
    if kind not in expected_kinds:
        raise BadRequest(
            f"this endpoint serves {' or '.join(sorted(expected_kinds))}, got {kind!r}"
        )
    if request.object is None:
        raise BadRequest(f"request.object is missing for {request.operation}")
    raw = dict(request.object)
    raw.setdefault("apiVersion", f"{group}/{version}" if group else version)
    raw.setdefault("kind", kind)
    if not is_supported(raw):
        raise BadRequest(
            f"kuota does not serve apiVersion {raw.get('apiVersion')!r} kind {raw.get('kind')!r}"
        )
    return raw


def validate_kueue_request(
    request: AdmissionRequest,
    *,
    kinds: frozenset[str],
    gates: Mapping[str, bool] | None = None,
) -> tuple[ResponseBody, str]:
    """The answer of ``/validate-kueue-x-k8s-io-v1beta2-<kind>``: pure.

    ``gates``: the Configuration's ``featureGates``, which some rules read
    (absent: kuota's defaults, ``scheduler/api/feature_gates.py``).
    """
    if request.operation not in ("CREATE", "UPDATE"):
        return allow(request.uid), "allowed"
    raw = object_of(request, kinds)
    old = request.old_object if request.operation == "UPDATE" else None
    try:
        result = review(
            raw,
            old=old,
            operation=request.operation,
            default_namespace=request.namespace,
            gates=gates,
        )
    except UnsupportedKind as unsupported:
        raise BadRequest(str(unsupported)) from None
    if result.errors:
        return deny(request.uid, result.errors), "denied"
    return allow(request.uid, warnings=result.warnings), "allowed"
