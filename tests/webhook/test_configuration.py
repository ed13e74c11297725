"""``kuota-webhook`` and its Configuration: checked at start, the server's address,
certificates and TLS options, the feature gates its rules read, external frameworks."""

from __future__ import annotations

import copy
import json
import ssl
from pathlib import Path
from typing import Any

import jsonpatch
import pytest

from webhook.lookup import StaticLookup
from webhook.server import main, tls_context
from webhook.settings import WebhookSettings, build_parser, settings_from_args

from .conftest import ClientFactory, patch_of, post_review
from .reviews import QUEUE, admission_review, job


def applied(obj: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = jsonpatch.apply_patch(copy.deepcopy(obj), patch_of(response))
    return result


HEAD = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
KUEUE_SHIPPED = Path(__file__).resolve().parents[1] / "data" / "kueue_v0.19.2"


def from_file(tmp_path: Path, body: str, *argv: str) -> WebhookSettings:
    config = tmp_path / "config.yaml"
    config.write_text(HEAD + body)
    return settings_from_args(build_parser().parse_args(["--config", str(config), *argv]))


def test_the_file_gives_the_address_and_the_certificates(tmp_path: Path) -> None:
    settings = from_file(tmp_path, "webhook:\n  port: 9555\n  host: 127.0.0.2\n  certDir: /c\n")
    assert (settings.host, settings.port) == ("127.0.0.2", 9555)
    assert (settings.cert_file, settings.key_file) == (Path("/c/tls.crt"), Path("/c/tls.key"))
    flagged = from_file(
        tmp_path,
        "webhook:\n  port: 9555\n  certDir: /c\n",
        "--port=9600",
        "--host=127.0.0.3",
        "--cert-dir=/mine",
    )
    assert (flagged.host, flagged.port, flagged.cert_file) == (
        "127.0.0.3",
        9600,
        Path("/mine/tls.crt"),
    )


def test_without_cert_dir_the_file_means_kueues_default_directory(tmp_path: Path) -> None:
    settings = from_file(tmp_path, "")
    assert settings.cert_file == Path("/tmp/k8s-webhook-server/serving-certs/tls.crt")
    assert (settings.host, settings.port) == ("127.0.0.1", 9443)


def test_kueues_shipped_configuration_starts_the_webhook_with_its_warnings() -> None:
    args = ["--config", str(KUEUE_SHIPPED / "controller_manager_config.yaml")]
    settings = settings_from_args(build_parser().parse_args(args))
    assert settings.port == 9443 and "batch/job" in settings.frameworks
    assert len(settings.config_warnings) == 1, "one setting not acted on (every framework is)"
    assert settings.config_warnings[0].startswith("controller.groupKindConcurrency: ")


def test_tls_options_restrict_the_server(tmp_path: Path) -> None:
    settings = from_file(
        tmp_path,
        "tls:\n  minVersion: VersionTLS12\n  cipherSuites:\n"
        "  - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n  - TLS_AES_128_GCM_SHA256\n",
    )
    context = tls_context(settings)
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
    tls12 = [c["name"] for c in context.get_ciphers() if c["protocol"] == "TLSv1.2"]
    assert tls12 == ["ECDHE-RSA-AES128-GCM-SHA256"]
    only13 = tls_context(from_file(tmp_path, "tls:\n  minVersion: VersionTLS13\n"))
    assert only13.minimum_version == ssl.TLSVersion.TLSv1_3
    off = from_file(
        tmp_path, "tls:\n  minVersion: VersionTLS13\nfeatureGates:\n  TLSOptions: false\n"
    )
    assert tls_context(off).minimum_version == ssl.TLSVersion.TLSv1_2, "gate off: no tls section"
    assert tls_context(WebhookSettings()).minimum_version == ssl.TLSVersion.TLSv1_2


def test_an_invalid_configuration_stops_the_webhook_in_one_log_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], restore_logging: None
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(HEAD + "featureGates:\n  NoSuchGate: true\n")
    assert main(["--config", str(config), "--cert-dir", str(tmp_path)]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line]
    assert len(lines) == 1 and lines[0]["level"] == "error"
    assert 'featureGates: unknown feature gate "NoSuchGate"' in lines[0]["msg"]


WORKLOAD = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "Workload",
    "metadata": {
        "name": "w",
        "namespace": "team-a",
        "annotations": {"kueue.x-k8s.io/priority-boost": "not-a-number"},
    },
    "spec": {
        "queueName": "q",
        "podSets": [
            {
                "name": "main",
                "count": 1,
                "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
            }
        ],
    },
}


async def test_the_rules_read_the_files_feature_gates(make_client: ClientFactory) -> None:
    path = "/validate-kueue-x-k8s-io-v1beta2-workload"
    default = await make_client()
    response = await post_review(default, path, admission_review(WORKLOAD))
    assert response["allowed"] is True, "PriorityBoost is off by default: the annotation is inert"
    boosted = await make_client(WebhookSettings(feature_gates={"PriorityBoost": True}))
    response = await post_review(boosted, path, admission_review(WORKLOAD))
    assert response["allowed"] is False
    assert "kueue.x-k8s.io/priority-boost" in response["status"]["message"]


async def test_a_job_owned_by_an_external_framework_is_left_to_its_owner(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    owner: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "MyJob",
        "metadata": {"name": "mine", "namespace": "team-a", "uid": "u-1", "labels": {QUEUE: "q"}},
    }
    lookup.objects[("example.com/v1", "MyJob", "team-a", "mine")] = owner
    reference = {
        "apiVersion": "example.com/v1",
        "kind": "MyJob",
        "name": "mine",
        "uid": "u-1",
        "controller": True,
    }
    child = job(labels={QUEUE: "q"}, ownerReferences=[reference])
    unlisted = await make_client()
    response = await post_review(unlisted, "/mutate-batch-v1-job", admission_review(child))
    assert "patch" in response, "an owner of an unknown kind: the Job is queued on its own"
    listed = await make_client(WebhookSettings(external_frameworks=(("example.com/v1", "MyJob"),)))
    response = await post_review(listed, "/mutate-batch-v1-job", admission_review(child))
    assert "patch" not in response, "integrations.externalFrameworks: left to its owner"


def test_external_frameworks_come_from_the_file(tmp_path: Path) -> None:
    settings = from_file(
        tmp_path,
        "integrations:\n  frameworks: [batch/job]\n  externalFrameworks: [MyJob.v1.example.com]\n",
    )
    assert settings.external_frameworks == (("example.com/v1", "MyJob"),)
    assert settings.feature_gates == {}


DEFAULT_PRIORITY = ("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass", "", "default")
PRIORITY = "kueue.x-k8s.io/priority-class"


async def test_priority_class_defaulting_labels_jobs_when_the_gate_is_on(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    gated = await make_client(
        WebhookSettings(feature_gates={"WorkloadPriorityClassDefaulting": True})
    )
    sent = job(labels={QUEUE: "q"})
    response = await post_review(gated, "/mutate-batch-v1-job", admission_review(sent))
    assert {"op": "add", "path": f"/metadata/labels/{PRIORITY.replace('/', '~1')}"} not in [
        {k: v for k, v in op.items() if k != "value"} for op in patch_of(response)
    ], "no WorkloadPriorityClass named default: nothing to default to"
    lookup.objects[DEFAULT_PRIORITY] = {"metadata": {"name": "default"}, "value": 100}
    response = await post_review(gated, "/mutate-batch-v1-job", admission_review(sent))
    assert applied(sent, response)["metadata"]["labels"][PRIORITY] == "default"
    unqueued = job()
    assert applied(
        unqueued, await post_review(gated, "/mutate-batch-v1-job", admission_review(unqueued))
    )["metadata"]["labels"] == {PRIORITY: "default"}, "as Kueue: every new Job, queued or not"
    chosen = job(labels={QUEUE: "q", PRIORITY: "high"})
    response = await post_review(gated, "/mutate-batch-v1-job", admission_review(chosen))
    assert applied(chosen, response)["metadata"]["labels"][PRIORITY] == "high"
    off = await make_client()
    response = await post_review(off, "/mutate-batch-v1-job", admission_review(sent))
    assert PRIORITY not in applied(sent, response)["metadata"]["labels"], "off by default"


async def test_a_job_owned_by_a_managed_kind_keeps_its_owners_priority(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    lookup.objects[DEFAULT_PRIORITY] = {"metadata": {"name": "default"}, "value": 100}
    gated = await make_client(
        WebhookSettings(
            frameworks=("batch/job", "jobset.x-k8s.io/jobset"),
            feature_gates={"WorkloadPriorityClassDefaulting": True},
        )
    )
    reference = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "name": "js",
        "uid": "u-9",
        "controller": True,
    }
    child = job(ownerReferences=[reference])
    response = await post_review(gated, "/mutate-batch-v1-job", admission_review(child))
    assert "patch" not in response


async def test_a_field_kuota_does_not_act_on_is_an_admission_warning(webhook: Any) -> None:
    config = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "MultiKueueConfig",
        "metadata": {"name": "mk"},
        "spec": {"clusters": ["worker"], "quotaManagement": "Automated"},
    }
    path = "/validate-kueue-x-k8s-io-v1beta2-multikueueconfig"
    response = await post_review(webhook, path, admission_review(config))
    assert response["allowed"] is True
    assert response["warnings"][0].startswith("spec.quotaManagement: Automated: kuota does not")
