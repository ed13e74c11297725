"""The chart's visibility API: registration, serving certificate, RBAC and user roles.

See docs/visibility.md#installation.  The APIServices equal what
``scheduler/visibility/registration.py`` builds; the scheduler pods mount the
certificate whose names the aggregator verifies; the roles carry Kueue's names.
"""

from __future__ import annotations

from typing import Any

from scheduler.visibility.registration import api_services

from .helm import NAMESPACE, by_kind, one, render


def _scheduler(objects: list[dict[str, Any]]) -> Any:
    return one(objects, "Deployment", "kuota-scheduler")["spec"]["template"]["spec"]


def test_the_apiservices_are_registrations_pure_form_behind_the_schedulers_service() -> None:
    objects = render()
    rendered = {o["metadata"]["name"]: o["spec"] for o in by_kind(objects, "APIService")}
    expected = api_services(
        service="kuota-visibility", namespace=NAMESPACE, port=443, ca_bundle_pem=None
    )
    for want in expected:  # the bundle is injected by the certificate bootstrap
        want["spec"].pop("insecureSkipTLSVerify")
    assert rendered == {w["metadata"]["name"]: w["spec"] for w in expected}
    service = one(objects, "Service", "kuota-visibility")
    assert service["spec"]["selector"]["app.kubernetes.io/component"] == "scheduler"
    assert service["spec"]["ports"] == [
        {"name": "https", "port": 443, "protocol": "TCP", "targetPort": 8082}
    ]
    (container,) = _scheduler(objects)["containers"]
    assert "--visibility-cert-dir=/etc/kuota/visibility-certs" in container["args"]
    assert {"name": "visibility", "containerPort": 8082, "protocol": "TCP"} in container["ports"]
    volume = next(v for v in _scheduler(objects)["volumes"] if v["name"] == "visibility-certs")
    assert volume["secret"]["secretName"] == "kuota-webhook-server-cert"
    bootstrap = one(objects, "Deployment", "kuota-cert-bootstrap")
    args = bootstrap["spec"]["template"]["spec"]["containers"][0]["args"]
    assert f"--dns=kuota-visibility.{NAMESPACE}.svc" in args


def test_the_scheduler_may_review_access_and_read_the_front_proxy_settings() -> None:
    objects = render()
    delegator = one(objects, "ClusterRoleBinding", "kuota-scheduler-auth-delegator")
    assert delegator["roleRef"]["name"] == "system:auth-delegator"
    reader = one(objects, "RoleBinding", "kuota-scheduler-auth-reader")
    assert reader["metadata"]["namespace"] == "kube-system"
    assert reader["roleRef"]["name"] == "extension-apiserver-authentication-reader"
    for binding in (delegator, reader):
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "kuota-scheduler", "namespace": NAMESPACE}
        ]
    bootstrap = one(objects, "ClusterRole", "kuota-cert-bootstrap")
    assert {
        "apiGroups": ["apiregistration.k8s.io"],
        "resources": ["apiservices"],
        "resourceNames": ["v1beta2.visibility.kueue.x-k8s.io", "v1beta1.visibility.kueue.x-k8s.io"],
        "verbs": ["get", "patch"],
    } in bootstrap["rules"]


def test_without_the_chart_certificate_the_apiservices_skip_verification() -> None:
    objects = render({"webhook.externalURL": "https://127.0.0.1:9443", "webhook.caBundle": "Y2E="})
    assert all(o["spec"]["insecureSkipTLSVerify"] is True for o in by_kind(objects, "APIService"))
    (container,) = _scheduler(objects)["containers"]
    assert not any(arg.startswith("--visibility-cert-dir") for arg in container["args"])


def test_the_feature_gate_or_the_value_turns_registration_off() -> None:
    off = render({"config.featureGates.VisibilityOnDemand": False})
    assert by_kind(off, "APIService") == []
    assert not any(o["metadata"]["name"].endswith("auth-delegator") for o in off)
    (container,) = _scheduler(off)["containers"]
    assert all(port["name"] != "visibility" for port in container["ports"])
    unregistered = render({"visibility.register": False})
    assert by_kind(unregistered, "APIService") == []
    assert one(unregistered, "ClusterRoleBinding", "kuota-scheduler-auth-delegator")


def test_the_user_roles_carry_kueues_labels_and_the_releases_names() -> None:
    roles = {o["metadata"]["name"]: o for o in by_kind(render(), "ClusterRole")}
    admin, user = roles["kuota-batch-admin-role"], roles["kuota-batch-user-role"]

    def grants(role: Any) -> set[tuple[str, str]]:
        return {(r["resources"][0], v) for r in role["rules"] for v in r["verbs"]}

    # Their members' rules, listed (not aggregated: see the template).
    assert "aggregationRule" not in admin and "aggregationRule" not in user
    assert ("localqueues/pendingworkloads", "get") in grants(user)
    assert ("clusterqueues/pendingworkloads", "get") not in grants(user)
    assert ("clusterqueues/pendingworkloads", "get") in grants(admin)
    assert ("jobs", "create") in grants(user) and ("localqueues", "create") not in grants(user)
    assert ("clusterqueues", "create") in grants(admin)

    def labelled(label: str) -> set[str]:
        return {n for n, r in roles.items() if r["metadata"]["labels"].get(label) == "true"}

    assert "kuota-pending-workloads-lq-viewer-role" in labelled("rbac.kueue.x-k8s.io/batch-user")
    assert "kuota-pending-workloads-cq-viewer-role" not in labelled(
        "rbac.kueue.x-k8s.io/batch-user"
    )
    assert "kuota-pending-workloads-cq-viewer-role" in labelled("rbac.kueue.x-k8s.io/batch-admin")
    assert "kuota-workload-viewer-role" in labelled("rbac.authorization.k8s.io/aggregate-to-view")
    assert "kuota-clusterqueue-viewer-role" not in labelled(
        "rbac.authorization.k8s.io/aggregate-to-view"
    )
    lq_viewer = roles["kuota-pending-workloads-lq-viewer-role"]
    assert lq_viewer["rules"] == [
        {
            "apiGroups": ["visibility.kueue.x-k8s.io"],
            "resources": ["localqueues/pendingworkloads"],
            "verbs": ["get", "list", "watch"],
        }
    ]
    assert not any(
        n.endswith("-role")
        for n in (o["metadata"]["name"] for o in render({"userRoles.enabled": False}))
    )
