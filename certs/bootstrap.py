"""Self-managed webhook certificates on a cluster (when cert-manager is not used).

``python -m certs bootstrap`` keeps one TLS Secret (``ca.crt``, ``ca.key``,
``tls.crt``, ``tls.key``) as the source of truth:

1. read the Secret; if it is missing, holds no usable pair, or the serving
   certificate expires within ``--renew-before`` or lacks one of the ``--dns``
   names, issue a new one (keeping the CA while it is itself far from expiry)
   and write the Secret;
2. optionally mirror the four files into a directory the webhook reads
   (``--out``; the webhook reloads them without a restart);
3. inject the CA bundle into kuota's webhook configurations, into the
   conversion settings of every ``kueue.x-k8s.io`` CRD that uses a webhook
   and into the visibility API's APIServices (when they are registered);
4. with ``--watch``, repeat on every change of the webhook configurations,
   CRDs and APIServices (a caBundle someone cleared is put back within a
   second, as Kueue's certificate controller does), and every ``--interval``
   seconds, so renewal happens before expiry.

This module talks to the API server through kuota's one client factory and
REST layer (:mod:`scheduler.kube.client`, :mod:`scheduler.kube.rest`: raw
JSON, no model classes); the decisions (what to renew, what to patch) are
the pure functions of :mod:`certs.files` and :mod:`certs.inject`.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from certs import files
from certs.generate import KeyPair
from certs.inject import (
    api_service_patch,
    ca_bundle,
    crd_conversion_patch,
    webhook_configuration_patch,
)
from scheduler.api import objects
from scheduler.api.refs import KUEUE_GROUP
from scheduler.kube.client import connect
from scheduler.kube.informer import Informer
from scheduler.kube.ownership import adopt, read_deployment_reference
from scheduler.kube.rest import NotFound, Resource, Rest, RestClient
from scheduler.kube.source import KubeSource

log = logging.getLogger("kuota.certs")
WEBHOOK_CONFIGURATION_PREFIX = "kuota"
MUTATING_NAME = f"{WEBHOOK_CONFIGURATION_PREFIX}-mutating-webhook-configuration"
VALIDATING_NAME = f"{WEBHOOK_CONFIGURATION_PREFIX}-validating-webhook-configuration"
SECRETS = Resource("", "v1", "secrets")
MUTATING_CONFIGURATIONS = Resource(
    "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"
)
VALIDATING_CONFIGURATIONS = Resource(
    "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"
)
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
API_SERVICES = Resource("apiregistration.k8s.io", "v1", "apiservices")
VISIBILITY_API_SERVICES = (
    "v1beta2.visibility.kueue.x-k8s.io",
    "v1beta1.visibility.kueue.x-k8s.io",
)


@dataclass(frozen=True)
class BootstrapOptions:
    namespace: str
    secret: str
    dns_names: tuple[str, ...]
    ip_addresses: tuple[str, ...]
    out: Path | None = None
    valid_days: int = 90
    renew_before: timedelta = timedelta(days=30)
    kubeconfig: Path | None = None
    owner_deployment: str | None = None
    """The Deployment (in ``namespace``) owning the Secret: deleting it deletes the Secret."""
    webhook_configuration_prefix: str = WEBHOOK_CONFIGURATION_PREFIX
    """The webhook configurations are ``<prefix>-mutating/validating-webhook-configuration``
    (``kueue`` in the chart's Kueue-compatible install)."""


def _pair(data: dict[str, Any], cert_key: str, key_key: str) -> KeyPair | None:
    try:
        cert = x509.load_pem_x509_certificate(base64.b64decode(data[cert_key]))
        key = serialization.load_pem_private_key(base64.b64decode(data[key_key]), password=None)
    except (KeyError, ValueError, TypeError):
        return None
    return KeyPair(cert=cert, key=key)  # type: ignore[arg-type]


def _encode(pem: bytes) -> str:
    return base64.b64encode(pem).decode()


def _secret_data(certificates: files.WebhookCertificates) -> dict[str, str]:
    encode = _encode
    return {
        files.CA_CERT: encode(certificates.ca.cert_pem),
        files.CA_KEY: encode(certificates.ca.key_pem),
        files.TLS_CERT: encode(certificates.serving.cert_pem),
        files.TLS_KEY: encode(certificates.serving.key_pem),
    }


async def ensure_secret(rest: RestClient, options: BootstrapOptions) -> files.WebhookCertificates:
    """The certificates of the Secret, renewed (and written back) when due."""
    path = SECRETS.object_path(options.secret, namespace=options.namespace)
    secret: dict[str, Any] | None
    try:
        secret = await rest.get(path)
    except NotFound:
        secret = None
    data = secret.get("data") if secret is not None else None
    data = data if isinstance(data, dict) else {}
    ca = _pair(data, files.CA_CERT, files.CA_KEY)
    serving = _pair(data, files.TLS_CERT, files.TLS_KEY)
    if ca is not None and files.needs_renewal(ca.cert_pem, before=options.renew_before * 2):
        ca = None  # the CA itself is close to expiry: rotate everything
    owner = (
        await read_deployment_reference(rest, options.namespace, options.owner_deployment)
        if options.owner_deployment
        else None
    )
    if (
        ca is not None
        and serving is not None
        and not files.needs_renewal(serving.cert_pem, before=options.renew_before)
        and files.covers(serving.cert_pem, options.dns_names)
    ):
        if owner is not None and secret is not None:  # a Secret from before the flag
            await adopt(rest, path, secret, owner)
        return files.WebhookCertificates(ca=ca, serving=serving)
    certificates = files.make(
        dns_names=options.dns_names,
        ip_addresses=options.ip_addresses,
        ca=ca,
        valid_days=options.valid_days,
    )
    metadata: dict[str, Any] = {
        "name": options.secret,
        "namespace": options.namespace,
        "labels": {"app.kubernetes.io/name": "kuota"},
    }
    if owner is not None:
        metadata["ownerReferences"] = [owner]
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata,
        "type": "kubernetes.io/tls",
        "data": _secret_data(certificates),
    }
    if secret is None:
        await rest.create(SECRETS.collection_path(options.namespace), body)
    else:
        # Optimistic concurrency: a replica that renewed meanwhile wins, this one retries.
        metadata["resourceVersion"] = objects.resource_version(secret)
        await rest.replace(path, body)
    log.info(
        "webhook certificate issued",
        extra={
            "secret": f"{options.namespace}/{options.secret}",
            "expires": files.expires_at(certificates.serving.cert_pem).isoformat(),
        },
    )
    return certificates


async def inject_everywhere(
    rest: RestClient, ca_pem: bytes, prefix: str = WEBHOOK_CONFIGURATION_PREFIX
) -> list[str]:
    """Set the CA bundle on kuota's webhook configurations and conversion CRDs; what changed."""
    bundle = ca_bundle(ca_pem)
    changed: list[str] = []
    for name, resource in (
        (f"{prefix}-mutating-webhook-configuration", MUTATING_CONFIGURATIONS),
        (f"{prefix}-validating-webhook-configuration", VALIDATING_CONFIGURATIONS),
    ):
        try:
            current = await rest.get(resource.object_path(name))
        except NotFound:
            continue
        body = webhook_configuration_patch(current, bundle)
        if body is not None:
            await rest.merge_patch(resource.object_path(name), body)
            changed.append(name)
    crds = await rest.list(CRDS.path)
    for crd in crds.get("items") or []:
        if not isinstance(crd, dict) or objects.spec(crd).get("group") != KUEUE_GROUP:
            continue
        body = crd_conversion_patch(crd, bundle)
        if body is not None:
            name = objects.name(crd)
            await rest.merge_patch(CRDS.object_path(name), body)
            changed.append(name)
    for name in VISIBILITY_API_SERVICES:
        try:
            current = await rest.get(API_SERVICES.object_path(name))
        except NotFound:  # the visibility API is not registered by this install
            continue
        body = api_service_patch(current, bundle)
        if body is not None:
            await rest.merge_patch(API_SERVICES.object_path(name), body)
            changed.append(name)
    return changed


async def bootstrap_once(rest: RestClient, options: BootstrapOptions) -> list[str]:
    certificates = await ensure_secret(rest, options)
    if options.out is not None:
        existing = options.out / files.TLS_CERT
        if not existing.is_file() or existing.read_bytes() != certificates.serving.cert_pem:
            files.write(options.out, certificates)
    return await inject_everywhere(
        rest, certificates.ca.cert_pem, options.webhook_configuration_prefix
    )


WATCHED = (MUTATING_CONFIGURATIONS, VALIDATING_CONFIGURATIONS, CRDS, API_SERVICES)
"""What ``--watch`` watches: a caBundle taken off one of them is put back at once."""
SETTLE_SECONDS = 0.5
"""After a change, how long to let the next ones arrive before one pass handles them all."""


async def run(options: BootstrapOptions, *, watch: bool, interval: float) -> int:
    """One pass; with ``watch``, another on every change of a watched kind, and every
    ``interval`` seconds (renewal before expiry)."""
    async with connect(options.kubeconfig) as api:
        rest = Rest(api)
        if not watch:
            await _pass(rest, options)
            return 0
        changed = asyncio.Event()
        informers = [
            Informer(resource.plural, KubeSource(rest, resource), lambda _: changed.set())
            for resource in WATCHED
        ]
        tasks = [asyncio.create_task(informer.run()) for informer in informers]
        try:
            while True:
                changed.clear()
                await _pass(rest, options)
                try:
                    await asyncio.wait_for(changed.wait(), timeout=interval)
                    await asyncio.sleep(SETTLE_SECONDS)
                except TimeoutError:
                    pass
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


async def _pass(rest: RestClient, options: BootstrapOptions) -> None:
    changed = await bootstrap_once(rest, options)
    if changed:
        log.info("CA bundle injected", extra={"into": changed})
