"""Putting the CA bundle where the API server reads it: pure edits.

The API server verifies kuota's webhook with the ``caBundle`` of each entry of
kuota's webhook configurations and of each CRD's conversion webhook, and
kuota's visibility API with the ``caBundle`` of its APIServices.  When
the CA changes (first bootstrap, CA rotation) every one of them must carry
the new bundle.  These functions compute the merge patches; applying them
is :mod:`certs.bootstrap`'s job.  A CRD whose conversion strategy is not
``Webhook`` is left alone: switching strategies is an install decision.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any


def ca_bundle(ca_pem: bytes) -> str:
    """Pure: the base64 form the API server expects in ``caBundle``."""
    return base64.b64encode(ca_pem).decode()


def webhook_configuration_patch(
    configuration: Mapping[str, Any], bundle: str
) -> dict[str, Any] | None:
    """Pure: a merge patch setting ``caBundle`` on every entry; None when all already carry it.

    ``webhooks`` is a plain list for merge patches, so the whole list is sent
    back with only ``clientConfig.caBundle`` changed.
    """
    entries = configuration.get("webhooks") or []
    if all(entry.get("clientConfig", {}).get("caBundle") == bundle for entry in entries):
        return None
    updated = []
    for entry in entries:
        copy = dict(entry)
        copy["clientConfig"] = {**entry.get("clientConfig", {}), "caBundle": bundle}
        updated.append(copy)
    return {"webhooks": updated}


def crd_conversion_patch(crd: Mapping[str, Any], bundle: str) -> dict[str, Any] | None:
    """Pure: a merge patch for a CRD's conversion ``caBundle``; None when nothing changes."""
    conversion = crd.get("spec", {}).get("conversion") or {}
    if conversion.get("strategy") != "Webhook":
        return None
    client_config = conversion.get("webhook", {}).get("clientConfig", {})
    if client_config.get("caBundle") == bundle:
        return None
    return {"spec": {"conversion": {"webhook": {"clientConfig": {"caBundle": bundle}}}}}


def api_service_patch(api_service: Mapping[str, Any], bundle: str) -> dict[str, Any] | None:
    """Pure: a merge patch for an APIService's ``caBundle``; None when nothing changes or the
    APIService skips verification (the two exclude each other)."""
    spec = api_service.get("spec") or {}
    if spec.get("insecureSkipTLSVerify") or spec.get("caBundle") == bundle:
        return None
    return {"spec": {"caBundle": bundle}}
