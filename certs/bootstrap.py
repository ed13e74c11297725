"""Self-managed webhook certificates on a cluster (when cert-manager is not used).

``python -m certs bootstrap`` keeps one TLS Secret (``ca.crt``, ``ca.key``,
``tls.crt``, ``tls.key``) as the source of truth:

1. read the Secret; if it is missing, holds no usable pair, or the serving
   certificate expires within ``--renew-before``, issue a new one (keeping
   the CA while it is itself far from expiry) and write the Secret;
2. optionally mirror the four files into a directory the webhook reads
   (``--out``; the webhook reloads them without a restart);
3. inject the CA bundle into kuota's webhook configurations and into the
   conversion settings of every ``kueue.x-k8s.io`` CRD that uses a webhook;
4. with ``--watch``, repeat every ``--interval`` seconds, so renewal happens
   before expiry.

This module talks to the API server with kubernetes_asyncio; the decisions
(what to renew, what to patch) are the pure functions of
:mod:`certs.files` and :mod:`certs.inject`.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

from certs import files
from certs.generate import KeyPair
from certs.inject import ca_bundle, crd_conversion_patch, webhook_configuration_patch

log = logging.getLogger("kuota.certs")
MUTATING_NAME = "kuota-mutating-webhook-configuration"
VALIDATING_NAME = "kuota-validating-webhook-configuration"
KUEUE_GROUP = "kueue.x-k8s.io"


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


def _pair(data: dict[str, str], cert_key: str, key_key: str) -> KeyPair | None:
    try:
        cert = x509.load_pem_x509_certificate(base64.b64decode(data[cert_key]))
        key = serialization.load_pem_private_key(base64.b64decode(data[key_key]), password=None)
    except (KeyError, ValueError, TypeError):
        return None
    return KeyPair(cert=cert, key=key)  # type: ignore[arg-type]


def _secret_data(certificates: files.WebhookCertificates) -> dict[str, str]:
    encode = lambda pem: base64.b64encode(pem).decode()  # noqa: E731
    return {
        files.CA_CERT: encode(certificates.ca.cert_pem),
        files.CA_KEY: encode(certificates.ca.key_pem),
        files.TLS_CERT: encode(certificates.serving.cert_pem),
        files.TLS_KEY: encode(certificates.serving.key_pem),
    }


async def ensure_secret(
    core: client.CoreV1Api, options: BootstrapOptions
) -> files.WebhookCertificates:
    """The certificates of the Secret, renewed (and written back) when due."""
    try:
        secret = await core.read_namespaced_secret(options.secret, options.namespace)
        data = dict(secret.data or {})
    except ApiException as failed:
        if failed.status != 404:
            raise
        secret, data = None, {}
    ca = _pair(data, files.CA_CERT, files.CA_KEY)
    serving = _pair(data, files.TLS_CERT, files.TLS_KEY)
    if ca is not None and files.needs_renewal(ca.cert_pem, before=options.renew_before * 2):
        ca = None  # the CA itself is close to expiry: rotate everything
    if (
        ca is not None
        and serving is not None
        and not files.needs_renewal(serving.cert_pem, before=options.renew_before)
    ):
        return files.WebhookCertificates(ca=ca, serving=serving)
    certificates = files.make(
        dns_names=options.dns_names,
        ip_addresses=options.ip_addresses,
        ca=ca,
        valid_days=options.valid_days,
    )
    body = client.V1Secret(
        metadata=client.V1ObjectMeta(
            name=options.secret,
            namespace=options.namespace,
            labels={"app.kubernetes.io/name": "kuota"},
        ),
        type="kubernetes.io/tls",
        data=_secret_data(certificates),
    )
    if secret is None:
        await core.create_namespaced_secret(options.namespace, body)
    else:
        body.metadata.resource_version = secret.metadata.resource_version
        await core.replace_namespaced_secret(options.secret, options.namespace, body)
    log.info(
        "webhook certificate issued",
        extra={
            "context": {
                "secret": f"{options.namespace}/{options.secret}",
                "expires": files.expires_at(certificates.serving.cert_pem).isoformat(),
            }
        },
    )
    return certificates


async def inject_everywhere(api: client.ApiClient, ca_pem: bytes) -> list[str]:
    """Set the CA bundle on kuota's webhook configurations and conversion CRDs; returns what changed."""
    bundle = ca_bundle(ca_pem)
    admission = client.AdmissionregistrationV1Api(api)
    extensions = client.ApiextensionsV1Api(api)
    changed: list[str] = []
    for name, read, patch in (
        (
            MUTATING_NAME,
            admission.read_mutating_webhook_configuration,
            admission.patch_mutating_webhook_configuration,
        ),
        (
            VALIDATING_NAME,
            admission.read_validating_webhook_configuration,
            admission.patch_validating_webhook_configuration,
        ),
    ):
        try:
            current = api.sanitize_for_serialization(await read(name))
        except ApiException as failed:
            if failed.status == 404:
                continue
            raise
        body = webhook_configuration_patch(current, bundle)
        if body is not None:
            await patch(name, body)
            changed.append(name)
    crds = await extensions.list_custom_resource_definition()
    for crd in crds.items:
        if crd.spec.group != KUEUE_GROUP:
            continue
        body = crd_conversion_patch(api.sanitize_for_serialization(crd), bundle)
        if body is not None:
            await extensions.patch_custom_resource_definition(crd.metadata.name, body)
            changed.append(crd.metadata.name)
    return changed


async def bootstrap_once(api: client.ApiClient, options: BootstrapOptions) -> list[str]:
    certificates = await ensure_secret(client.CoreV1Api(api), options)
    if options.out is not None:
        existing = options.out / files.TLS_CERT
        if not existing.is_file() or existing.read_bytes() != certificates.serving.cert_pem:
            files.write(options.out, certificates)
    return await inject_everywhere(api, certificates.ca.cert_pem)


async def run(options: BootstrapOptions, *, watch: bool, interval: float) -> int:
    configuration = client.Configuration()
    if options.kubeconfig is not None:
        await config.load_kube_config(
            config_file=str(options.kubeconfig), client_configuration=configuration
        )
    else:
        config.load_incluster_config(client_configuration=configuration)
    async with client.ApiClient(configuration=configuration) as api:
        while True:
            changed = await bootstrap_once(api, options)
            if changed:
                log.info("CA bundle injected", extra={"context": {"into": changed}})
            if not watch:
                return 0
            await asyncio.sleep(interval)
