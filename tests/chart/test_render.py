"""Render tests of charts/kuota over its main toggles, with the built helm binary.

Each test renders the chart as an admin would configure it and checks the
objects that decide whether kuota works and is safe: the webhook
registrations equal what ``webhook/configurations.py`` builds, the CRDs equal
``scheduler/api/crds``, the Configuration parses with kuota's own parser,
pods meet the restricted Pod Security Standard, and a Configuration change
rolls the Deployments.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from scheduler.api.config import parse_configuration
from scheduler.api.crds import (
    LEGACY_VERSIONS,
    SERVED_LEGACY_VERSIONS,
    load_crds,
    serving_legacy_versions,
)
from scheduler.jobs import frameworks
from webhook.configurations import mutating_configuration, validating_configuration

from .helm import CHART, NAMESPACE, by_kind, one, render, render_text, run_helm

SERVICE = "kuota-webhook-service"
CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n").decode()
EXTERNAL = "https://127.0.0.1:9443"


@pytest.fixture(scope="module")
def default() -> list[dict[str, Any]]:
    return render()


def _config(objects: list[dict[str, Any]]) -> dict[str, Any]:
    data = one(objects, "ConfigMap", "kuota-config")["data"]["controller_manager_config.yaml"]
    return yaml.safe_load(data)


def _container(deployment: Mapping[str, Any]) -> Mapping[str, Any]:
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container


def _service_client() -> dict[str, Any]:
    return {"service": {"name": SERVICE, "namespace": NAMESPACE, "port": 443}}


# -- helm lint and the schema -------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        [],
        ["--set", "certManager.enabled=true"],
        ["--set", f"webhook.externalURL={EXTERNAL}", "--set", f"webhook.caBundle={CA}"],
        ["--set", "multikueue.enabled=true"],
    ],
)
def test_helm_lint_is_clean(values: list[str]) -> None:
    done = run_helm("lint", "--strict", str(CHART), *values)
    assert "0 chart(s) failed" in done.stdout


def test_a_misspelled_value_fails_with_the_schema_message() -> None:
    done = render_text({"webhook.replcas": 3}, check=False)
    assert done.returncode != 0
    assert "additional properties 'replcas' not allowed" in done.stderr


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"scheduler.logLevel": "verbose"}, "/scheduler/logLevel"),
        ({"webhook.externalURL": "http://127.0.0.1:9443"}, "/webhook/externalURL"),
        (
            {"containerSecurityContext.allowPrivilegeEscalation": True},
            "/containerSecurityContext/allowPrivilegeEscalation",
        ),
        (
            {"config.integrations.frameworks": ["sparkoperator.k8s.io/sparkapplication"]},
            "/config/integrations/frameworks/0",
        ),
        ({"webhook.maxConnections": 0}, "/webhook/maxConnections"),
        ({"webhook.idleTimeoutSeconds": 0}, "/webhook/idleTimeoutSeconds"),
        ({"webhook.tlsHandshakeTimeoutSeconds": -1}, "/webhook/tlsHandshakeTimeoutSeconds"),
    ],
)
def test_the_schema_refuses_wrong_values(values: dict[str, Any], message: str) -> None:
    done = render_text(values, check=False)
    assert done.returncode != 0 and message in done.stderr, done.stderr


def test_external_url_without_a_ca_bundle_is_refused() -> None:
    done = render_text({"webhook.externalURL": EXTERNAL}, check=False)
    assert done.returncode != 0 and "webhook.externalURL needs webhook.caBundle" in done.stderr


def test_every_value_in_values_yaml_is_documented() -> None:
    lines = (CHART / "values.yaml").read_text().splitlines()
    undocumented = []
    for number, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "-")) or ":" not in stripped:
            continue
        indent = len(line) - len(line.lstrip())
        previous = lines[number - 1].strip() if number else ""
        parent_documented = any(
            lines[back].strip().startswith("# --") for back in range(max(0, number - 8), number)
        )
        if indent == 0 and not previous.startswith("#"):
            undocumented.append(stripped)
        elif (
            indent > 0
            and not previous.startswith("#")
            and not parent_documented
            and not previous.endswith(":")
        ):
            undocumented.append(stripped)
    assert not undocumented, undocumented


# -- default: self-managed certificates -------------------------------------------------


def test_default_renders_the_whole_installation(default: list[dict[str, Any]]) -> None:
    kinds = {(obj["kind"], obj["metadata"]["name"]) for obj in default}
    for expected in [
        ("Deployment", "kuota-scheduler"),
        ("Deployment", "kuota-webhook"),
        ("Deployment", "kuota-cert-bootstrap"),
        ("Service", SERVICE),
        ("PodDisruptionBudget", "kuota-webhook"),
        ("ServiceAccount", "kuota-scheduler"),
        ("ServiceAccount", "kuota-webhook"),
        ("ConfigMap", "kuota-config"),
        ("MutatingWebhookConfiguration", "kuota-mutating-webhook-configuration"),
        ("ValidatingWebhookConfiguration", "kuota-validating-webhook-configuration"),
    ]:
        assert expected in kinds
    assert not by_kind(default, "Namespace"), "the namespace is left to --create-namespace"
    assert not by_kind(default, "ServiceMonitor") and not by_kind(default, "Certificate")


def test_the_webhook_configurations_are_the_webhook_issues_safe_ones(
    default: list[dict[str, Any]],
) -> None:
    mutating = one(default, "MutatingWebhookConfiguration", "kuota-mutating-webhook-configuration")
    validating = one(
        default, "ValidatingWebhookConfiguration", "kuota-validating-webhook-configuration"
    )
    assert (
        mutating["webhooks"]
        == mutating_configuration(_service_client(), kuota_namespace=NAMESPACE)["webhooks"]
    )
    assert (
        validating["webhooks"]
        == validating_configuration(_service_client(), kuota_namespace=NAMESPACE)["webhooks"]
    )
    unqueued = next(
        entry for entry in mutating["webhooks"] if entry["name"] == "unqueued-jobs.mutate.kuota.io"
    )
    assert unqueued["failurePolicy"] == "Ignore"
    assert "caBundle" not in json.dumps(mutating), "the bootstrap injects the CA bundle"


def test_the_crds_are_scheduler_api_crds_converted_by_the_webhook_service(
    default: list[dict[str, Any]],
) -> None:
    rendered = {
        crd["metadata"]["name"]: crd for crd in by_kind(default, "CustomResourceDefinition")
    }
    source = {
        crd["metadata"]["name"]: serving_legacy_versions(crd, SERVED_LEGACY_VERSIONS)
        for crd in load_crds()
    }
    assert rendered.keys() == source.keys()
    for name, crd in rendered.items():
        expected = {
            key: value for key, value in source[name]["spec"].items() if key != "conversion"
        }
        assert {
            key: value for key, value in crd["spec"].items() if key != "conversion"
        } == expected, name
        assert crd["spec"]["conversion"] == {
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {
                    "service": {
                        "name": SERVICE,
                        "namespace": NAMESPACE,
                        "path": "/convert",
                        "port": 443,
                    }
                },
                "conversionReviewVersions": ["v1"],
            },
        }
        assert crd["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"}


def _served(objects: list[dict[str, Any]]) -> dict[str, list[str]]:
    return {
        crd["metadata"]["name"]: [v["name"] for v in crd["spec"]["versions"] if v["served"]]
        for crd in by_kind(objects, "CustomResourceDefinition")
    }


def test_by_default_the_crds_serve_what_kueue_v0_19_serves(default: list[dict[str, Any]]) -> None:
    """v1beta2 (storage) and v1beta1; the alpha versions only when asked."""
    served = _served(default)
    assert len(served) == 10
    assert set(map(tuple, served.values())) == {("v1beta1", "v1beta2")}
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert tuple(values["crds"]["servedLegacyVersions"]) == SERVED_LEGACY_VERSIONS == ("v1beta1",)


def test_an_admin_can_serve_the_alpha_versions_too() -> None:
    every = _served(render({"crds": {"servedLegacyVersions": list(LEGACY_VERSIONS)}}))
    assert every["clusterqueues.kueue.x-k8s.io"] == ["v1alpha1", "v1alpha2", "v1beta1", "v1beta2"]
    assert every["workloads.kueue.x-k8s.io"] == ["v1alpha1", "v1alpha2", "v1beta1", "v1beta2"]
    # Kinds that never had an alpha version serve only their beta ones.
    assert every["cohorts.kueue.x-k8s.io"] == ["v1beta1", "v1beta2"]


def test_an_admin_can_serve_fewer_legacy_versions() -> None:
    only_beta = _served(render({"crds": {"servedLegacyVersions": ["v1beta1"]}}))
    assert only_beta["workloads.kueue.x-k8s.io"] == ["v1beta1", "v1beta2"]
    assert only_beta["cohorts.kueue.x-k8s.io"] == ["v1beta1", "v1beta2"]
    none = _served(render({"crds": {"servedLegacyVersions": []}}))
    assert set(map(tuple, none.values())) == {("v1beta2",)}
    failed = render_text({"crds": {"servedLegacyVersions": ["v2"]}}, check=False)
    assert failed.returncode != 0 and "servedLegacyVersions" in failed.stderr


def test_the_generated_templates_match_their_sources() -> None:
    """Drift guard: regenerating the CRD and webhook templates changes nothing."""
    check = subprocess.run(
        [sys.executable, str(CHART / "hack" / "generate.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr


def test_the_configuration_parses_with_kuotas_parser(default: list[dict[str, Any]]) -> None:
    config = parse_configuration(_config(default))
    assert config.namespace == NAMESPACE
    assert config.manage_jobs_without_queue_name is False
    assert config.fair_sharing is None
    # As Kueue's shipped configuration: every kind kuota manages is enabled (the kinds of a CRD
    # are managed once it is installed), in the registry's order.
    assert config.integrations.frameworks == frameworks()


def test_the_scheduler_runs_two_replicas_with_leader_election(
    default: list[dict[str, Any]],
) -> None:
    deployment = one(default, "Deployment", "kuota-scheduler")
    assert deployment["spec"]["replicas"] == 2
    container = _container(deployment)
    assert container["command"] == ["kuota-scheduler"]
    args = container["args"]
    assert "--leader-elect" in args and f"--lease-namespace={NAMESPACE}" in args
    assert (
        "--lease-name=kuota-scheduler" in args
        and "--config=/etc/kuota/controller_manager_config.yaml" in args
    )
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "kuota-scheduler"
    assert "checksum/config" in deployment["spec"]["template"]["metadata"]["annotations"]


def test_the_webhook_runs_two_spread_replicas_and_trusts_the_scheduler(
    default: list[dict[str, Any]],
) -> None:
    deployment = one(default, "Deployment", "kuota-webhook")
    assert deployment["spec"]["replicas"] == 2
    spec = deployment["spec"]["template"]["spec"]
    required = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required[0]["topologyKey"] == "kubernetes.io/hostname"
    assert (
        required[0]["labelSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    )
    args = _container(deployment)["args"]
    assert f"--scheduler-identity=system:serviceaccount:{NAMESPACE}:kuota-scheduler" in args
    assert f"--kuota-namespace={NAMESPACE}" in args and "--cert-dir=/etc/kuota/certs" in args
    assert spec["volumes"][0]["secret"]["secretName"] == "kuota-webhook-server-cert"
    pdb = one(default, "PodDisruptionBudget", "kuota-webhook")
    assert pdb["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    service = one(default, "Service", SERVICE)
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]


def _webhook_settings(objects: list[dict[str, Any]]) -> Any:
    """The settings the webhook container's arguments give, parsed by the webhook itself."""
    from webhook.settings import build_parser, settings_from_args

    args = [
        arg
        for arg in _container(one(objects, "Deployment", "kuota-webhook"))["args"]
        if not arg.startswith("--config=")  # the ConfigMap's file is not on this machine
    ]
    return settings_from_args(build_parser().parse_args(args))


def test_the_connection_bounds_default_to_the_webhooks_own(
    default: list[dict[str, Any]],
) -> None:
    """The chart passes every connection bound, and its defaults are the measured ones."""
    from webhook.settings import WebhookSettings

    settings, defaults = _webhook_settings(default), WebhookSettings()
    assert (
        settings.max_connections,
        settings.idle_timeout_seconds,
        settings.tls_handshake_timeout_seconds,
    ) == (
        defaults.max_connections,
        defaults.idle_timeout_seconds,
        defaults.tls_handshake_timeout_seconds,
    )


def test_the_connection_bounds_reach_the_webhook() -> None:
    settings = _webhook_settings(
        render(
            {
                "webhook.maxConnections": 64,
                "webhook.idleTimeoutSeconds": 95.5,
                "webhook.tlsHandshakeTimeoutSeconds": 3,
            }
        )
    )
    assert (
        settings.max_connections,
        settings.idle_timeout_seconds,
        settings.tls_handshake_timeout_seconds,
    ) == (64, 95.5, 3.0)


def test_the_default_scheduler_identity_is_the_webhooks_default() -> None:
    from webhook.settings import DEFAULT_SCHEDULER_IDENTITY

    args = _container(one(render(), "Deployment", "kuota-webhook"))["args"]
    assert f"--scheduler-identity={DEFAULT_SCHEDULER_IDENTITY}" in args


def test_the_self_managed_certificates_match_the_bootstrap(default: list[dict[str, Any]]) -> None:
    container = _container(one(default, "Deployment", "kuota-cert-bootstrap"))
    assert container["command"] == ["python", "-m", "certs", "bootstrap"]
    assert (
        "--watch" in container["args"] and "--secret=kuota-webhook-server-cert" in container["args"]
    )
    assert f"--dns={SERVICE}.{NAMESPACE}.svc" in container["args"]


def test_every_pod_can_be_placed_on_chosen_nodes() -> None:
    """A dedicated node pool (or the e2e real node) needs all three Deployments selectable."""
    selector = {"pool": "system"}
    toleration = [{"key": "pool", "operator": "Exists", "effect": "NoSchedule"}]
    objects = render(
        {
            f"{component}.{field}": value
            for component in ("scheduler", "webhook", "certBootstrap", "multikueue")
            for field, value in (("nodeSelector", selector), ("tolerations", toleration))
        }
        | {"multikueue.enabled": True}
    )
    deployments = by_kind(objects, "Deployment")
    assert len(deployments) == 4
    for deployment in deployments:
        pod = deployment["spec"]["template"]["spec"]
        assert pod["nodeSelector"] == selector, deployment["metadata"]["name"]
        assert pod["tolerations"] == toleration, deployment["metadata"]["name"]


@pytest.mark.parametrize(
    "values",
    [{}, {"certManager.enabled": True}, {"multikueue.enabled": True}, {"kueueCompatible": True}],
)
def test_every_pod_meets_the_restricted_pod_security_standard(values: dict[str, Any]) -> None:
    for deployment in by_kind(render(values), "Deployment"):
        spec = deployment["spec"]["template"]["spec"]
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        for container in spec["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False
            assert context["readOnlyRootFilesystem"] is True
            assert context["capabilities"] == {"drop": ["ALL"]}
            assert container["resources"]["requests"] and container["resources"]["limits"]
        assert not any("hostPath" in volume for volume in spec.get("volumes", []))


def test_a_configuration_change_rolls_both_deployments_and_nothing_else_does() -> None:
    def checksums(values: dict[str, Any]) -> dict[str, str]:
        return {
            d["metadata"]["name"]: d["spec"]["template"]["metadata"]["annotations"][
                "checksum/config"
            ]
            for d in by_kind(render(values), "Deployment")
            if d["metadata"]["name"] != "kuota-cert-bootstrap"
        }

    base = checksums({})
    changed = checksums({"config.fairSharing.enabled": True})
    assert base.keys() == changed.keys() == {"kuota-scheduler", "kuota-webhook"}
    assert all(base[name] != changed[name] for name in base)
    assert checksums({"scheduler.replicas": 3}) == base


# -- cert-manager --------------------------------------------------------------------------


def test_cert_manager_renders_issuer_certificate_and_ca_injection() -> None:
    objects = render({"certManager.enabled": True})
    certificate = one(objects, "Certificate", "kuota-webhook-cert")
    assert certificate["spec"]["secretName"] == "kuota-webhook-server-cert"
    assert certificate["spec"]["dnsNames"] == [
        f"{SERVICE}.{NAMESPACE}.svc",
        f"{SERVICE}.{NAMESPACE}.svc.cluster.local",
        f"kuota-scheduler-metrics.{NAMESPACE}.svc",
        f"kuota-webhook-metrics.{NAMESPACE}.svc",
        f"kuota-visibility.{NAMESPACE}.svc",
        f"kuota-visibility.{NAMESPACE}.svc.cluster.local",
    ]
    assert certificate["spec"]["issuerRef"] == {
        "name": "kuota-selfsigned",
        "kind": "Issuer",
        "group": "cert-manager.io",
    }
    assert one(objects, "Issuer", "kuota-selfsigned")["spec"] == {"selfSigned": {}}
    injected = f"{NAMESPACE}/kuota-webhook-cert"
    for obj in [
        *by_kind(objects, "CustomResourceDefinition"),
        *by_kind(objects, "MutatingWebhookConfiguration"),
        *by_kind(objects, "ValidatingWebhookConfiguration"),
        *by_kind(objects, "APIService"),
    ]:
        assert obj["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == injected, obj[
            "metadata"
        ]["name"]
    names = {obj["metadata"]["name"] for obj in objects}
    assert "kuota-cert-bootstrap" not in names, "no self-managed certificates beside cert-manager"


def test_cert_manager_with_a_given_issuer_renders_no_issuer() -> None:
    objects = render(
        {
            "certManager.enabled": True,
            "certManager.issuerRef": {"name": "corp-ca", "kind": "ClusterIssuer"},
        }
    )
    assert not by_kind(objects, "Issuer")
    assert one(objects, "Certificate", "kuota-webhook-cert")["spec"]["issuerRef"] == {
        "name": "corp-ca",
        "kind": "ClusterIssuer",
    }


# -- manageJobsWithoutQueueName, fair sharing, CRDs off, external URL ------------------------


def test_manage_jobs_without_queue_name_reaches_config_and_registrations() -> None:
    selector = {
        "matchLabels": {"team": "ml"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["batch"]}],
    }
    objects = render(
        {"config.manageJobsWithoutQueueName": True, "config.managedJobsNamespaceSelector": selector}
    )
    config = parse_configuration(_config(objects))
    assert config.manage_jobs_without_queue_name is True
    assert config.managed_jobs_namespace_selector.match_labels == {"team": "ml"}
    kwargs = {
        "kuota_namespace": NAMESPACE,
        "manage_jobs_without_queue_name": True,
        "managed_namespace_selector": selector,
    }
    mutating = one(objects, "MutatingWebhookConfiguration", "kuota-mutating-webhook-configuration")
    validating = one(
        objects, "ValidatingWebhookConfiguration", "kuota-validating-webhook-configuration"
    )
    assert mutating["webhooks"] == mutating_configuration(_service_client(), **kwargs)["webhooks"]
    assert (
        validating["webhooks"] == validating_configuration(_service_client(), **kwargs)["webhooks"]
    )
    policies = {
        entry["name"]: entry["failurePolicy"]
        for entry in mutating["webhooks"] + validating["webhooks"]
    }
    assert (
        policies["unqueued-jobs.mutate.kuota.io"]
        == policies["unqueued-jobs.validate.kuota.io"]
        == "Fail"
    )


def test_the_managed_namespace_selector_scopes_queued_jobs_too() -> None:
    """A queued Job outside config.managedJobsNamespaceSelector is not kuota's."""
    selector = {"matchLabels": {"kuota.io/managed": "true"}}
    objects = render({"config.managedJobsNamespaceSelector": selector})
    kwargs = {"kuota_namespace": NAMESPACE, "managed_namespace_selector": selector}
    mutating = one(objects, "MutatingWebhookConfiguration", "kuota-mutating-webhook-configuration")
    validating = one(
        objects, "ValidatingWebhookConfiguration", "kuota-validating-webhook-configuration"
    )
    assert mutating["webhooks"] == mutating_configuration(_service_client(), **kwargs)["webhooks"]
    assert (
        validating["webhooks"] == validating_configuration(_service_client(), **kwargs)["webhooks"]
    )
    queued = [
        entry
        for entry in mutating["webhooks"] + validating["webhooks"]
        if entry["name"].startswith("queued-jobs.")
    ]
    assert len(queued) == 2
    for entry in queued:
        assert entry["namespaceSelector"] == {
            "matchLabels": {"kuota.io/managed": "true"},
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "NotIn",
                    "values": sorted({"kube-system", NAMESPACE}),
                }
            ],
        }


def test_fair_sharing_and_resource_transformations_reach_the_configuration() -> None:
    transformation = {
        "input": "nvidia.com/mig-1g.5gb",
        "strategy": "Replace",
        "outputs": {"example.com/accelerator-memory": "5Gi"},
    }
    objects = render(
        {
            "config.fairSharing.enabled": True,
            "config.resources.transformations": [transformation],
            "config.resources.excludeResourcePrefixes": ["example.org/"],
        }
    )
    config = parse_configuration(_config(objects))
    assert config.fair_sharing is not None
    assert tuple(config.fair_sharing.preemption_strategies) == (
        "LessThanOrEqualToFinalShare",
        "LessThanInitialShare",
    )
    assert config.resources is not None and config.resources.exclude_resource_prefixes == (
        "example.org/",
    )
    assert config.resources.transformations[0].input == "nvidia.com/mig-1g.5gb"


def test_crds_off_renders_no_crd() -> None:
    objects = render({"crds.enabled": False})
    assert not by_kind(objects, "CustomResourceDefinition")
    assert by_kind(objects, "Deployment")


def test_crds_keep_off_drops_the_keep_annotation() -> None:
    for crd in by_kind(render({"crds.keep": False}), "CustomResourceDefinition"):
        assert "helm.sh/resource-policy" not in (crd["metadata"].get("annotations") or {})


def test_external_url_registers_everything_by_url_and_nothing_by_service() -> None:
    objects = render(
        {"webhook.externalURL": EXTERNAL + "/", "webhook.caBundle": CA},
        release="kuota-e2e",
        namespace="kuota-chart",
    )
    assert "service:" not in yaml.safe_dump(
        [
            o
            for o in objects
            if o["kind"].endswith("WebhookConfiguration") or o["kind"] == "CustomResourceDefinition"
        ]
    )
    client = {"url": EXTERNAL, "caBundle": CA}
    mutating = one(
        objects, "MutatingWebhookConfiguration", "kuota-e2e-mutating-webhook-configuration"
    )
    assert (
        mutating["webhooks"]
        == mutating_configuration(client, kuota_namespace="kuota-chart")["webhooks"]
    )
    validating = one(
        objects, "ValidatingWebhookConfiguration", "kuota-e2e-validating-webhook-configuration"
    )
    assert (
        validating["webhooks"]
        == validating_configuration(
            client,
            kuota_namespace="kuota-chart",
            # the release's own scheduler ServiceAccount skips the webhook for its status writes
            scheduler_identity="system:serviceaccount:kuota-chart:kuota-e2e-scheduler",
        )["webhooks"]
    )
    for crd in by_kind(objects, "CustomResourceDefinition"):
        assert crd["spec"]["conversion"]["webhook"]["clientConfig"] == {
            "url": f"{EXTERNAL}/convert",
            "caBundle": CA,
        }
    assert not [o for o in objects if o["metadata"]["name"].endswith("cert-bootstrap")]


def test_webhook_off_renders_no_registration_and_no_conversion() -> None:
    objects = render({"webhook.enabled": False})
    assert not by_kind(objects, "MutatingWebhookConfiguration") and not by_kind(
        objects, "ValidatingWebhookConfiguration"
    )
    assert {
        crd["spec"]["conversion"]["strategy"]
        for crd in by_kind(objects, "CustomResourceDefinition")
    } == {"None"}
    assert [d["metadata"]["name"] for d in by_kind(objects, "Deployment")] == ["kuota-scheduler"]


def test_service_monitor_scrapes_every_metrics_service_over_https() -> None:
    objects = render({"metrics.serviceMonitor.enabled": True, "multikueue.enabled": True})
    monitor = one(objects, "ServiceMonitor", "kuota")
    selected = monitor["spec"]["selector"]["matchLabels"]
    services = {
        s["metadata"]["name"]: s
        for s in by_kind(objects, "Service")
        if all(s["metadata"]["labels"].get(k) == v for k, v in selected.items())
    }
    assert sorted(services) == [
        "kuota-multikueue-metrics",
        "kuota-scheduler-metrics",
        "kuota-webhook-metrics",
    ]
    endpoints = monitor["spec"]["endpoints"]
    assert [e["relabelings"][0]["regex"] for e in endpoints] == [
        "kuota-scheduler-metrics",
        "kuota-webhook-metrics",
        "kuota-multikueue-metrics",
    ]
    for endpoint in endpoints:
        service = endpoint["relabelings"][0]["regex"]
        assert endpoint["scheme"] == "https" and endpoint["port"] == "metrics"
        assert endpoint["bearerTokenFile"].endswith("serviceaccount/token")
        assert endpoint["tlsConfig"] == {
            "serverName": f"{service}.{NAMESPACE}.svc",
            "ca": {"secret": {"name": "kuota-webhook-server-cert", "key": "ca.crt"}},
        }
    # The serving certificate names every Service it is verified for.
    bootstrap = _container(one(objects, "Deployment", "kuota-cert-bootstrap"))["args"]
    for service in services:
        assert f"--dns={service}.{NAMESPACE}.svc" in bootstrap


def test_every_process_serves_metrics_over_https_with_kuotas_certificate() -> None:
    objects = render({"multikueue.enabled": True})
    for name, port in (
        ("kuota-scheduler", 8443),
        ("kuota-webhook", 8444),
        ("kuota-multikueue", 8445),
    ):
        deployment = one(objects, "Deployment", name)
        container = _container(deployment)
        assert f"--metrics-bind-address=0.0.0.0:{port}" in container["args"], name
        assert "--metrics-cert-dir=/etc/kuota/metrics-certs" in container["args"], name
        assert "--no-metrics-secure" not in container["args"]
        assert {"name": "metrics", "containerPort": port, "protocol": "TCP"} in container["ports"]
        (volume,) = [
            v
            for v in deployment["spec"]["template"]["spec"]["volumes"]
            if v["name"] == "metrics-certs"
        ]
        assert volume["secret"]["secretName"] == "kuota-webhook-server-cert"
        service = one(objects, "Service", f"{name}-metrics")
        assert service["spec"]["ports"][0]["port"] == port
    scheduler = _container(one(objects, "Deployment", "kuota-scheduler"))
    assert "--health-probe-bind-address=0.0.0.0:8080" in scheduler["args"]
    assert scheduler["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "probes"}


def test_without_kuotas_certificate_the_metrics_pair_is_self_signed_and_not_verified() -> None:
    objects = render(
        {
            "webhook.externalURL": EXTERNAL,
            "webhook.caBundle": CA,
            "metrics.serviceMonitor.enabled": True,
        }
    )
    container = _container(one(objects, "Deployment", "kuota-scheduler"))
    assert not [a for a in container["args"] if a.startswith("--metrics-cert-dir")]
    monitor = one(objects, "ServiceMonitor", "kuota")
    assert {e["tlsConfig"]["insecureSkipVerify"] for e in monitor["spec"]["endpoints"]} == {True}


def test_the_grafana_dashboard_ships_for_the_sidecar() -> None:
    import json

    assert not by_kind(render(), "ConfigMap")[1:], "only the Configuration by default"
    objects = render(
        {"metrics.grafanaDashboard.enabled": True, "metrics.grafanaDashboard.namespace": "grafana"}
    )
    dashboard = one(objects, "ConfigMap", "kuota-grafana-dashboard")
    assert dashboard["metadata"]["namespace"] == "grafana"
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(dashboard["data"]["kuota.json"])["uid"] == "kuota-queues"


def test_every_series_the_dashboard_queries_exists() -> None:
    import json
    import re

    from prometheus_client import REGISTRY

    from scheduler.kube import metrics as kuota_metrics  # noqa: F401 - registers kuota's
    from scheduler.metrics.catalog import BY_NAME, EMITTED

    from .helm import CHART

    text = (CHART / "dashboards" / "kuota.json").read_text()
    queries = [
        target["expr"]
        for panel in json.loads(text)["panels"]
        for target in panel.get("targets", [])
    ]
    named = {
        re.sub(r"_(bucket|sum|count)$", "", name)
        for query in queries
        for name in re.findall(r"\b((?:kueue|kuota|multikueue)_[a-z_]+)", query)
    }
    kuotas = {metric.name for metric in REGISTRY.collect() if metric.name.startswith("kuota_")}
    emitted = {series.name for series in EMITTED}
    kueues = {name for name in named if name.startswith("kueue_")}
    assert kueues <= emitted, kueues - set(BY_NAME)
    assert {name for name in named if name.startswith("kuota_")} <= kuotas
    assert len(queries) >= 20


def test_values_local_for_e2e_keeps_webhooks_url_based() -> None:
    from .helm import REPO_ROOT

    objects = render(
        {"webhook.caBundle": CA}, value_files=[REPO_ROOT / "e2e" / "values-local.yaml"]
    )
    for obj in objects:
        if obj["kind"].endswith("WebhookConfiguration"):
            assert all("url" in entry["clientConfig"] for entry in obj["webhooks"])
        if obj["kind"] == "CustomResourceDefinition":
            assert "url" in obj["spec"]["conversion"]["webhook"]["clientConfig"]


def test_the_image_runs_the_chart_commands_as_the_charts_user(
    default: list[dict[str, Any]],
) -> None:
    """The Dockerfile's contract with the chart (``make image`` builds the same image)."""
    import tomllib

    from .helm import REPO_ROOT

    dockerfile = (REPO_ROOT / "Dockerfile").read_text()
    scripts = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    user = f"USER {default_user(default)}:"
    assert user in dockerfile and dockerfile.count("FROM ") == 2
    for deployment in by_kind(default, "Deployment"):
        command = _container(deployment)["command"]
        assert command[0] in scripts or command[:2] == ["python", "-m"], command


def default_user(objects: list[dict[str, Any]]) -> int:
    users = {
        d["spec"]["template"]["spec"]["securityContext"]["runAsUser"]
        for d in by_kind(objects, "Deployment")
    }
    (user,) = users
    return int(user)


def test_multikueue_runs_as_its_own_deployment_when_enabled() -> None:
    assert "kuota-multikueue" not in {
        d["metadata"]["name"] for d in by_kind(render(), "Deployment")
    }
    objects = render(
        {
            "multikueue.enabled": True,
            "multikueue.intervalSeconds": 5,
            "multikueue.resyncSeconds": 45,
        }
    )
    deployment = one(objects, "Deployment", "kuota-multikueue")
    assert deployment["spec"]["replicas"] == 2, "a standby, safe: the replicas elect a leader"
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "kuota-multikueue"
    (container,) = pod["containers"]
    assert container["command"] == ["kuota-multikueue"]
    assert "--interval=5" in container["args"]
    assert "--resync=45" in container["args"]
    for arg in (
        "--leader-elect",
        "--lease-namespace=kueue-system",
        "--lease-name=kuota-multikueue",
        "--identity=$(POD_NAME)",
        "--owner-deployment=kuota-multikueue",
    ):
        assert arg in container["args"]
    from scheduler.multikueue.app import build_parser

    parsed = build_parser().parse_args(container["args"])
    assert (parsed.lease_name, parsed.resync) == ("kuota-multikueue", 45.0)
    assert "--config=/etc/kuota/controller_manager_config.yaml" in container["args"]
    (webhook,) = one(objects, "Deployment", "kuota-webhook")["spec"]["template"]["spec"][
        "containers"
    ]
    assert "--multikueue-managed-by" in webhook["args"]


def test_the_dashboard_serves_https_with_kuotas_certificate_when_enabled() -> None:
    assert not [d for d in by_kind(render(), "Deployment") if "dashboard" in d["metadata"]["name"]]
    objects = render({"dashboard.enabled": True})
    container = _container(one(objects, "Deployment", "kuota-dashboard"))
    assert container["command"] == ["kuota-dashboard"]
    assert "--bind-address=0.0.0.0:8446" in container["args"]
    assert "--cert-dir=/etc/kuota/metrics-certs" in container["args"]
    service = one(objects, "Service", "kuota-dashboard")
    assert service["spec"]["ports"][0]["port"] == 443
    bootstrap = _container(one(objects, "Deployment", "kuota-cert-bootstrap"))["args"]
    assert f"--dns=kuota-dashboard.{NAMESPACE}.svc" in bootstrap
