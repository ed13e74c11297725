"""Files the harness writes: kwok's stages, the kubeconfig, the PKI, the nodes."""

from __future__ import annotations

import base64
import ssl
from pathlib import Path

import yaml
from cryptography import x509

from e2e.cluster import kubeconfig, kwok_config, nodes, pki

COMPLETE_STAGE = {
    "apiVersion": "kwok.x-k8s.io/v1alpha1",
    "kind": "Stage",
    "metadata": {"name": "pod-complete"},
    "spec": {
        "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
        "selector": {
            "matchExpressions": [{"key": ".status.phase", "operator": "In", "values": ["Running"]}]
        },
        "next": {"statusTemplate": "phase: Succeeded\n"},
    },
}


def write_stages(directory: Path) -> None:
    for name in kwok_config.STAGE_FILES:
        stage = (
            COMPLETE_STAGE
            if name == "pod-complete.yaml"
            else {
                "apiVersion": "kwok.x-k8s.io/v1alpha1",
                "kind": "Stage",
                "metadata": {"name": name.removesuffix(".yaml")},
                "spec": {"next": {}},
            }
        )
        (directory / name).write_text(yaml.safe_dump(stage))


def complete_delay(stage: dict) -> dict:
    return dict(stage["spec"]["delay"])


def test_kwok_config_delays_completion_and_adds_a_failure_stage(tmp_path: Path) -> None:
    write_stages(tmp_path)
    documents = list(yaml.safe_load_all(kwok_config.render(tmp_path)))
    assert documents[0]["kind"] == "KwokConfiguration"
    by_name = {doc["metadata"]["name"]: doc for doc in documents[1:]}
    assert set(by_name) == {
        "node-initialize",
        "node-heartbeat-with-lease",
        "pod-ready",
        "pod-complete",
        "pod-fail",
        "pod-complete-managed",
        "pod-complete-framework",
        "pod-delete",
        "pod-delete-delayed",
    }
    framework = by_name["pod-complete-framework"]["spec"]
    assert framework["delay"] == complete_delay(by_name["pod-complete"])
    assert {
        "key": ".metadata.ownerReferences.[].kind",
        "operator": "In",
        "values": ["PyTorchJob", "JAXJob"],
    } in framework["selector"]["matchExpressions"]
    managed = by_name["pod-complete-managed"]["spec"]
    assert managed["delay"] == complete_delay(by_name["pod-complete"])
    assert {
        "key": '.metadata.labels["kueue.x-k8s.io/managed"]',
        "operator": "In",
        "values": ["true"],
    } in managed["selector"]["matchExpressions"]
    assert all(
        e["key"] != ".metadata.ownerReferences.[].kind"
        for e in managed["selector"]["matchExpressions"]
    ), "plain Pods have no Job owner"
    complete, fail = by_name["pod-complete"], by_name["pod-fail"]
    delay_key = f'.metadata.annotations["{kwok_config.DELAY_ANNOTATION}"]'
    assert complete["spec"]["delay"]["durationFrom"]["expressionFrom"] == delay_key
    fail_key = f'.metadata.annotations["{kwok_config.FAIL_ANNOTATION}"]'
    assert {"key": fail_key, "operator": "DoesNotExist"} in complete["spec"]["selector"][
        "matchExpressions"
    ]
    assert {"key": fail_key, "operator": "In", "values": ["true"]} in fail["spec"]["selector"][
        "matchExpressions"
    ]
    assert "phase: Failed" in fail["spec"]["next"]["statusTemplate"]
    delete_key = f'.metadata.annotations["{kwok_config.DELETE_DELAY_ANNOTATION}"]'
    prompt, delayed = by_name["pod-delete"]["spec"], by_name["pod-delete-delayed"]["spec"]
    assert {"key": delete_key, "operator": "DoesNotExist"} in prompt["selector"]["matchExpressions"]
    assert {"key": delete_key, "operator": "Exists"} in delayed["selector"]["matchExpressions"]
    assert delayed["delay"]["durationFrom"]["expressionFrom"] == delete_key
    ready_key = f'.metadata.annotations["{kwok_config.READY_DELAY_ANNOTATION}"]'
    assert by_name["pod-ready"]["spec"]["delay"]["durationFrom"]["expressionFrom"] == ready_key


def test_pki_serving_certificate_verifies_for_loopback_and_names_the_service(
    tmp_path: Path,
) -> None:
    made = pki.generate(tmp_path, cluster_name="t")
    cert = x509.load_pem_x509_certificate(made.apiserver_cert.read_bytes())
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "kubernetes.default.svc" in sans.get_values_for_type(x509.DNSName)
    assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == ["127.0.0.1", "10.0.0.1"]
    # The chain verifies with the standard library's TLS stack.
    context = ssl.create_default_context(cafile=str(made.ca_cert))
    context.load_cert_chain(str(made.admin_cert), str(made.admin_key))
    assert made.sa_key.stat().st_mode & 0o777 == 0o600
    assert made.admin_key.stat().st_mode & 0o777 == 0o600


def test_admin_certificate_is_in_system_masters(tmp_path: Path) -> None:
    made = pki.generate(tmp_path, cluster_name="t")
    cert = x509.load_pem_x509_certificate(made.admin_cert.read_bytes())
    orgs = [a.value for a in cert.subject.get_attributes_for_oid(x509.NameOID.ORGANIZATION_NAME)]
    assert orgs == ["system:masters"]


def test_kubeconfig_embeds_credentials_and_names_the_cluster(tmp_path: Path) -> None:
    made = pki.generate(tmp_path, cluster_name="c1")
    config = yaml.safe_load(
        kubeconfig.render(cluster_name="c1", server="https://127.0.0.1:1234", pki=made)
    )
    assert config["current-context"] == "c1"
    cluster = config["clusters"][0]["cluster"]
    assert cluster["server"] == "https://127.0.0.1:1234"
    assert base64.b64decode(cluster["certificate-authority-data"]) == made.ca_cert.read_bytes()


def test_default_fleet_has_the_documented_shape() -> None:
    fleet = nodes.default_fleet()
    by_type: dict[str, list[nodes.NodeSpec]] = {}
    for node in fleet:
        by_type.setdefault(node.labels.get("instance-type", "gpu"), []).append(node)
    assert len(by_type["ondemand"]) >= 2 and len(by_type["spot"]) >= 2
    assert all(node.taints == (nodes.SPOT_TAINT,) for node in by_type["spot"])
    assert all(not node.taints for node in by_type["ondemand"])
    gpu = by_type["gpu"][0].manifest()
    assert gpu["metadata"]["labels"]["cloud.provider.com/accelerator"] == "nvidia-a100"
    assert gpu["status"]["capacity"]["nvidia.com/gpu"] == "8"


def test_a_node_is_usable_only_when_ready_and_untainted() -> None:
    ready = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}, "spec": {}}
    assert nodes.is_usable(ready)
    tainted = {
        **ready,
        "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]},
    }
    assert not nodes.is_usable(tainted)
    spot = {**ready, "spec": {"taints": [nodes.SPOT_TAINT]}}
    assert nodes.is_usable(spot)
    assert not nodes.is_usable({"status": {"conditions": [{"type": "Ready", "status": "False"}]}})
