"""The certificate bootstrap's API calls, against an in-memory API server."""

from __future__ import annotations

import base64
from datetime import timedelta
from typing import Any

from certs import files
from certs.bootstrap import (
    API_SERVICES,
    CRDS,
    MUTATING_CONFIGURATIONS,
    MUTATING_NAME,
    SECRETS,
    BootstrapOptions,
    bootstrap_once,
)
from certs.inject import ca_bundle
from tests.kube.fake_api import FakeApi

OPTIONS = BootstrapOptions(
    namespace="kueue-system",
    secret="kuota-webhook-server-cert",
    dns_names=("kuota-webhook-service.kueue-system.svc",),
    ip_addresses=(),
)
SECRET = SECRETS.object_path(OPTIONS.secret, namespace=OPTIONS.namespace)


def crd(name: str, group: str, strategy: str = "Webhook") -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "group": group,
            "conversion": {"strategy": strategy, "webhook": {"clientConfig": {"url": "https://x"}}},
        },
    }


def cluster() -> FakeApi:
    api = FakeApi()
    api.put(
        MUTATING_CONFIGURATIONS.object_path(MUTATING_NAME),
        {"metadata": {"name": MUTATING_NAME}, "webhooks": [{"name": "a", "clientConfig": {}}]},
    )
    api.put(
        CRDS.object_path("workloads.kueue.x-k8s.io"),
        crd("workloads.kueue.x-k8s.io", "kueue.x-k8s.io"),
    )
    api.put(CRDS.object_path("widgets.example.com"), crd("widgets.example.com", "example.com"))
    return api


async def test_a_missing_secret_is_created_and_the_ca_injected_where_needed() -> None:
    api = cluster()
    changed = await bootstrap_once(api, OPTIONS)

    secret = api.store[SECRET]
    assert secret["type"] == "kubernetes.io/tls"
    assert set(secret["data"]) == {"ca.crt", "ca.key", "tls.crt", "tls.key"}
    assert changed == [MUTATING_NAME, "workloads.kueue.x-k8s.io"], "not the other group's CRD"
    bundle = ca_bundle(base64.b64decode(secret["data"]["ca.crt"]))
    webhooks = api.store[MUTATING_CONFIGURATIONS.object_path(MUTATING_NAME)]["webhooks"]
    assert webhooks[0]["clientConfig"]["caBundle"] == bundle
    merges = [call for call in api.calls if call.verb == "MERGE"]
    assert [call.path for call in merges] == [
        MUTATING_CONFIGURATIONS.object_path(MUTATING_NAME),
        CRDS.object_path("workloads.kueue.x-k8s.io"),
    ]

    writes = len(api.calls)
    assert await bootstrap_once(api, OPTIONS) == [], "a second run changes nothing"
    # The Secret, both webhook configurations, the CRDs, both visibility APIServices.
    assert [call.verb for call in api.calls[writes:]] == ["GET", "GET", "GET", "LIST", "GET", "GET"]


async def test_the_visibility_apiservices_get_the_bundle_unless_they_skip_verification() -> None:
    api = cluster()
    v1beta2 = API_SERVICES.object_path("v1beta2.visibility.kueue.x-k8s.io")
    v1beta1 = API_SERVICES.object_path("v1beta1.visibility.kueue.x-k8s.io")
    api.put(v1beta2, {"metadata": {"name": "v1beta2.visibility.kueue.x-k8s.io"}, "spec": {}})
    api.put(v1beta1, {"spec": {"insecureSkipTLSVerify": True}})
    changed = await bootstrap_once(api, OPTIONS)
    assert changed[-1] == "v1beta2.visibility.kueue.x-k8s.io"
    bundle = ca_bundle(base64.b64decode(api.store[SECRET]["data"]["ca.crt"]))
    assert api.store[v1beta2]["spec"]["caBundle"] == bundle
    assert "caBundle" not in api.store[v1beta1]["spec"]


async def test_a_secret_due_for_renewal_is_replaced_with_its_resource_version() -> None:
    api = cluster()
    await bootstrap_once(api, OPTIONS)
    first = api.store[SECRET]
    due = BootstrapOptions(**{**OPTIONS.__dict__, "renew_before": timedelta(days=91)})

    await bootstrap_once(api, due)
    (replace,) = [call for call in api.calls if call.verb == "PUT"]
    assert replace.body["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    renewed = api.store[SECRET]["data"]
    assert renewed["tls.crt"] != first["data"]["tls.crt"]
    assert renewed["ca.crt"] == first["data"]["ca.crt"], "the CA is far from expiry: kept"
    assert files.TLS_CERT == "tls.crt"


async def test_a_certificate_missing_a_requested_name_is_reissued() -> None:
    """A chart upgrade adds the metrics Services' names: the serving pair must carry them."""
    api = cluster()
    await bootstrap_once(api, OPTIONS)
    first = api.store[SECRET]["data"]
    metrics = "kuota-scheduler-metrics.kueue-system.svc"
    more = BootstrapOptions(**{**OPTIONS.__dict__, "dns_names": (*OPTIONS.dns_names, metrics)})
    await bootstrap_once(api, more)
    renewed = api.store[SECRET]["data"]
    assert renewed["tls.crt"] != first["tls.crt"] and renewed["ca.crt"] == first["ca.crt"]
    assert files.covers(base64.b64decode(renewed["tls.crt"]), more.dns_names)
    assert not files.covers(base64.b64decode(first["tls.crt"]), more.dns_names)
    writes = len(api.calls)
    await bootstrap_once(api, more)
    assert "PUT" not in [call.verb for call in api.calls[writes:]], "now it covers them"


OWNER = "kuota-cert-bootstrap"
OWNED = BootstrapOptions(**{**OPTIONS.__dict__, "owner_deployment": OWNER})


def with_deployment(api: FakeApi) -> FakeApi:
    from scheduler.kube.ownership import DEPLOYMENTS

    api.put(
        DEPLOYMENTS.object_path(OWNER, namespace=OPTIONS.namespace),
        {"metadata": {"name": OWNER, "uid": "deploy-1"}},
    )
    return api


async def test_the_secret_belongs_to_the_bootstrap_deployment_so_uninstall_removes_it() -> None:
    api = with_deployment(cluster())
    await bootstrap_once(api, OWNED)
    (reference,) = api.store[SECRET]["metadata"]["ownerReferences"]
    assert reference == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": OWNER,
        "uid": "deploy-1",
    }


async def test_a_valid_secret_from_before_the_flag_is_adopted_not_reissued() -> None:
    api = with_deployment(cluster())
    await bootstrap_once(api, OPTIONS)
    issued = api.store[SECRET]["data"]
    await bootstrap_once(api, OWNED)
    assert api.store[SECRET]["data"] == issued, "the certificates are kept"
    assert [ref["uid"] for ref in api.store[SECRET]["metadata"]["ownerReferences"]] == ["deploy-1"]


async def test_the_kueue_compatible_install_injects_into_kueues_configurations() -> None:
    api = cluster()
    kueues = "kueue-mutating-webhook-configuration"
    api.put(
        MUTATING_CONFIGURATIONS.object_path(kueues),
        {"metadata": {"name": kueues}, "webhooks": [{"name": "a", "clientConfig": {}}]},
    )
    options = BootstrapOptions(**{**OPTIONS.__dict__, "webhook_configuration_prefix": "kueue"})
    changed = await bootstrap_once(api, options)
    assert changed == [kueues, "workloads.kueue.x-k8s.io"], "kueue's, not kuota's"
    untouched = api.store[MUTATING_CONFIGURATIONS.object_path(MUTATING_NAME)]["webhooks"]
    assert "caBundle" not in untouched[0]["clientConfig"]
