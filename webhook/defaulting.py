"""Mutating kuota's own resources on create (docs/validation.md#defaulting).

Schema defaults are applied by the API server itself from the CRD
schemas before any webhook runs; what is left for the mutating webhook is
the CREATE-only part: the ``kueue.x-k8s.io/resource-in-use`` finalizer on
ClusterQueues and ResourceFlavors, and dropping ``minCount`` from Workloads
when partial admission is off.  Both come from
:func:`scheduler.api.defaults.apply_create_defaults`; this module only turns
the difference into a JSON patch.

An invalid object is not this endpoint's business: it is let through
unchanged and the validating webhook, which runs after every mutation,
denies it with the full list of violations.
"""

from __future__ import annotations

from scheduler.api.defaults import apply_create_defaults
from webhook.review import AdmissionRequest, ResponseBody, allow, json_patch
from webhook.settings import WebhookSettings
from webhook.validate_kueue import object_of


def default_kueue_request(
    request: AdmissionRequest, *, kinds: frozenset[str], settings: WebhookSettings
) -> tuple[ResponseBody, str]:
    """The answer of ``/mutate-kueue-x-k8s-io-v1beta2-<kind>``: pure."""
    if request.operation != "CREATE":
        return allow(request.uid), "allowed"
    raw = object_of(request, kinds)
    defaulted = apply_create_defaults(raw, partial_admission=settings.partial_admission)
    original = request.object or {}
    for filled_in in ("apiVersion", "kind"):
        if filled_in not in original:
            defaulted.pop(filled_in, None)  # object_of filled these in from request.kind
    patch = json_patch(original, defaulted)
    return allow(request.uid, patch=patch), ("patched" if patch else "allowed")
