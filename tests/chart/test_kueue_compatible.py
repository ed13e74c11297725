"""The chart's Kueue-compatible install (``kueueCompatible: true``), rendered.

kuota under Kueue's names, so that what Kueue's users and its end-to-end
suites look for is there (``test/util/e2e.go`` of Kueue v0.19.2): the
Deployment ``kueue-controller-manager`` whose Ready pods are behind the
Service ``kueue-webhook-service``, the leader Lease ``c1f6bfd2.kueue.x-k8s.io``,
the ConfigMap ``kueue-manager-config`` with the key
``controller_manager_config.yaml`` that both processes read at start, the
webhook configurations ``kueue-mutating/validating-webhook-configuration``.
The RBAC stays the processes' own rules, bound to the one ServiceAccount.
The live install is ``e2e/test_kueue_compatible.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from scheduler.api.config import parse_configuration

from .helm import NAMESPACE, by_kind, one, render, render_text

NAME = "kueue-controller-manager"
SERVICE = "kueue-webhook-service"
LEASE = "c1f6bfd2.kueue.x-k8s.io"
CONFIG = "kueue-manager-config"


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    return render({"kueueCompatible": True})


@pytest.fixture(scope="module")
def default() -> list[dict[str, Any]]:
    return render()


def _pod(objects: list[dict[str, Any]]) -> Mapping[str, Any]:
    return one(objects, "Deployment", NAME)["spec"]["template"]


def _containers(objects: list[dict[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {c["name"]: c for c in _pod(objects)["spec"]["containers"]}


def _grants(objects: list[dict[str, Any]], account: str) -> set[tuple[str, str, str, str]]:
    """(group, resource, verb, resourceName or '*') of every role bound to ``account``."""
    roles = {
        (obj["kind"], obj["metadata"]["name"]): obj
        for obj in by_kind(objects, "ClusterRole") + by_kind(objects, "Role")
    }
    grants: set[tuple[str, str, str, str]] = set()
    for binding in by_kind(objects, "ClusterRoleBinding") + by_kind(objects, "RoleBinding"):
        if not any(s["name"] == account for s in binding["subjects"]):
            continue
        role = roles.get((binding["roleRef"]["kind"], binding["roleRef"]["name"]))
        if role is None:
            # A role the cluster provides (system:auth-delegator, ...): named, not rendered.
            grants.add(("builtin", binding["roleRef"]["kind"], binding["roleRef"]["name"], "*"))
            continue
        for rule in role["rules"]:
            for name in rule.get("resourceNames") or ["*"]:
                grants |= {
                    (group, resource, verb, name)
                    for group in rule["apiGroups"]
                    for resource in rule["resources"]
                    for verb in rule["verbs"]
                }
    return grants


def test_one_deployment_under_kueues_name_runs_the_webhook_and_the_scheduler(
    objects: list[dict[str, Any]],
) -> None:
    assert [d["metadata"]["name"] for d in by_kind(objects, "Deployment")] == [
        "kueue-cert-bootstrap",
        NAME,
    ]
    containers = _containers(objects)
    assert list(containers) == ["manager", "scheduler"], "Kueue's container name first"
    assert containers["manager"]["command"] == ["kuota-webhook"]
    assert containers["scheduler"]["command"] == ["kuota-scheduler"]
    pod = _pod(objects)["spec"]
    assert pod["serviceAccountName"] == NAME
    deployment = one(objects, "Deployment", NAME)
    assert deployment["spec"]["replicas"] == 2, "webhook.replicas"
    assert deployment["metadata"]["namespace"] == NAMESPACE


def test_the_webhook_service_selects_the_pods_on_kueues_port(
    objects: list[dict[str, Any]],
) -> None:
    labels = _pod(objects)["metadata"]["labels"]
    for name, port, target in (
        (SERVICE, 443, "https"),
        ("kueue-controller-manager-metrics-service", 8443, "metrics"),
    ):
        service = one(objects, "Service", name)["spec"]
        assert service["selector"].items() <= labels.items(), name
        ((only,),) = [service["ports"]]
        assert (only["port"], only["targetPort"]) == (port, target)
    named_ports = {
        port["name"] for container in _containers(objects).values() for port in container["ports"]
    }
    assert {"https", "metrics"} <= named_ports
    assert labels["control-plane"] == "controller-manager"


def test_the_schedulers_elect_their_leader_on_kueues_lease(
    objects: list[dict[str, Any]],
) -> None:
    args = _containers(objects)["scheduler"]["args"]
    assert f"--lease-name={LEASE}" in args
    assert f"--lease-namespace={NAMESPACE}" in args
    assert f"--owner-deployment={NAME}" in args
    assert "--identity=$(POD_NAME)" in args, "Kueue's failover reads the pod from the holder"
    role = one(objects, "Role", "kueue-scheduler-leader-election")
    named = {
        resource: rule["resourceNames"]
        for rule in role["rules"]
        if rule.get("resourceNames")
        for resource in rule["resources"]
    }
    assert named == {"leases": [LEASE], "deployments": [NAME]}


def test_both_processes_read_the_configuration_of_kueues_configmap(
    objects: list[dict[str, Any]],
) -> None:
    configmap = one(objects, "ConfigMap", CONFIG)
    text = configmap["data"]["controller_manager_config.yaml"]
    assert parse_configuration(yaml.safe_load(text)).namespace == NAMESPACE
    pod = _pod(objects)["spec"]
    (volume,) = [v for v in pod["volumes"] if "configMap" in v]
    assert volume["configMap"]["name"] == CONFIG
    for container in _containers(objects).values():
        (mount,) = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
        (config,) = [a for a in container["args"] if a.startswith("--config=")]
        assert config.removeprefix("--config=") == (
            mount["mountPath"] + "/controller_manager_config.yaml"
        ), container["name"]
    assert not [c for c in by_kind(objects, "ConfigMap") if c["metadata"]["name"] != CONFIG]


def test_the_webhook_configurations_and_conversions_use_kueues_names(
    objects: list[dict[str, Any]],
) -> None:
    for kind, name in (
        ("MutatingWebhookConfiguration", "kueue-mutating-webhook-configuration"),
        ("ValidatingWebhookConfiguration", "kueue-validating-webhook-configuration"),
    ):
        configuration = one(objects, kind, name)
        for webhook in configuration["webhooks"]:
            service = webhook["clientConfig"]["service"]
            assert (service["name"], service["namespace"]) == (SERVICE, NAMESPACE)
    for crd in by_kind(objects, "CustomResourceDefinition"):
        service = crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]
        assert service["name"] == SERVICE, crd["metadata"]["name"]


def test_pods_without_a_queue_name_reach_the_webhook_as_in_kueue(
    objects: list[dict[str, Any]], default: list[dict[str, Any]]
) -> None:
    """So that manageJobsWithoutQueueName turned on in the ConfigMap holds Pods back at the
    next restart, with no new registration; failing open while it is off."""
    mutating = {
        w["name"]: w
        for w in one(
            objects, "MutatingWebhookConfiguration", "kueue-mutating-webhook-configuration"
        )["webhooks"]
    }
    pods = mutating["unqueued-pods.mutate.kuota.io"]
    assert pods["failurePolicy"] == "Ignore" and "objectSelector" not in pods
    assert [c["name"] for c in pods["matchConditions"]] == [
        "has-no-queue-name",
        "not-suspended-by-parent",
    ]
    assert mutating["parent-suspended-pods.mutate.kuota.io"]["failurePolicy"] == "Fail"
    own = one(default, "MutatingWebhookConfiguration", "kuota-mutating-webhook-configuration")
    assert "unqueued-pods.mutate.kuota.io" not in {w["name"] for w in own["webhooks"]}
    managing = render({"kueueCompatible": True, "config.manageJobsWithoutQueueName": True})
    closed = one(managing, "MutatingWebhookConfiguration", "kueue-mutating-webhook-configuration")
    entry = next(w for w in closed["webhooks"] if w["name"] == "unqueued-pods.mutate.kuota.io")
    assert entry["failurePolicy"] == "Fail"


def test_the_certificate_bootstrap_serves_and_injects_under_kueues_names(
    objects: list[dict[str, Any]],
) -> None:
    (container,) = one(objects, "Deployment", "kueue-cert-bootstrap")["spec"]["template"]["spec"][
        "containers"
    ]
    args = container["args"]
    assert "--secret=kueue-webhook-server-cert" in args
    assert f"--dns={SERVICE}.{NAMESPACE}.svc" in args
    assert "--webhook-configuration-prefix=kueue" in args
    secrets = {v["secret"]["secretName"] for v in _pod(objects)["spec"]["volumes"] if "secret" in v}
    assert secrets == {"kueue-webhook-server-cert"}, "the webhook's and /metrics' pair: one Secret"
    grants = _grants(objects, "kueue-cert-bootstrap")
    for kind in ("mutating", "validating"):
        configuration = f"kueue-{kind}-webhook-configuration"
        resource = f"{kind}webhookconfigurations"
        assert ("admissionregistration.k8s.io", resource, "patch", configuration) in grants


def _renamed(grants: set[tuple[str, str, str, str]]) -> set[tuple[str, str, str, str]]:
    """The default install's grants with its names replaced by Kueue's."""
    names = {"kuota-scheduler": LEASE}
    return {
        (group, resource, verb, NAME if resource == "deployments" else names.get(name, name))
        for group, resource, verb, name in grants
    }


def test_the_one_service_account_gets_the_two_processes_rules_and_no_more(
    objects: list[dict[str, Any]], default: list[dict[str, Any]]
) -> None:
    grants = _grants(objects, NAME)
    expected = _renamed(_grants(default, "kuota-scheduler") | _grants(default, "kuota-webhook"))
    assert grants == expected
    assert all("*" not in (group, resource, verb) for group, resource, verb, _ in grants)
    bound = {
        (binding["roleRef"]["name"], subject["name"])
        for binding in by_kind(objects, "ClusterRoleBinding") + by_kind(objects, "RoleBinding")
        for subject in binding["subjects"]
    }
    assert not [role for role, _ in bound if role in ("cluster-admin", "admin", "edit")]
    accounts = {sa["metadata"]["name"] for sa in by_kind(objects, "ServiceAccount")}
    assert accounts == {NAME, "kueue-cert-bootstrap"}
    assert {subject for _, subject in bound} == accounts


def test_the_webhook_trusts_the_pods_own_identity_to_unsuspend(
    objects: list[dict[str, Any]],
) -> None:
    args = _containers(objects)["manager"]["args"]
    assert f"--scheduler-identity=system:serviceaccount:{NAMESPACE}:{NAME}" in args


def test_a_configuration_change_rolls_the_controller_manager() -> None:
    def checksum(values: dict[str, Any]) -> str:
        pod = _pod(render({"kueueCompatible": True} | values))
        return str(pod["metadata"]["annotations"]["checksum/config"])

    assert checksum({}) != checksum({"config.fairSharing.enabled": True})


def test_one_pod_disruption_budget_for_the_controller_manager(
    objects: list[dict[str, Any]],
) -> None:
    (budget,) = by_kind(objects, "PodDisruptionBudget")
    assert budget["metadata"]["name"] == NAME
    assert (
        budget["spec"]["selector"]["matchLabels"].items()
        <= _pod(objects)["metadata"]["labels"].items()
    )
    assert not by_kind(
        render({"kueueCompatible": True, "webhook.replicas": 1}), "PodDisruptionBudget"
    )


def test_the_pods_follow_the_webhooks_placement() -> None:
    selector = {"pool": "system"}
    toleration = [{"key": "pool", "operator": "Exists", "effect": "NoSchedule"}]
    pod = _pod(
        render(
            {"kueueCompatible": True, "webhook.nodeSelector": selector}
            | {"webhook.tolerations": toleration}
        )
    )["spec"]
    assert pod["nodeSelector"] == selector and pod["tolerations"] == toleration


def test_it_needs_the_webhook() -> None:
    done = render_text({"kueueCompatible": True, "webhook.enabled": False}, check=False)
    assert done.returncode != 0
    assert "kueueCompatible needs webhook.enabled=true" in done.stderr


def test_the_default_install_keeps_its_own_names(default: list[dict[str, Any]]) -> None:
    names = {(obj["kind"], obj["metadata"]["name"]) for obj in default}
    assert ("Deployment", "kuota-scheduler") in names and ("Deployment", "kuota-webhook") in names
    assert not [name for _, name in names if name.startswith("kueue-")]
