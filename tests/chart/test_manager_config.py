"""The chart's Configuration: rendered from ``config`` values, or a whole Kueue Configuration
given as ``managerConfig.controllerManagerConfigYaml`` (Kueue's chart value), which every
process then reads and checks at start (scheduler.api.config_file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from scheduler.api.config_file import load_configuration

from .helm import by_kind, one, render, render_text

KUEUE_CHART_DEFAULT = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "kueue_v0.19.2"
    / "chart_controller_manager_config.yaml"
).read_text()
QUEUED, UNQUEUED = "queued-jobs.mutate.kuota.io", "unqueued-jobs.mutate.kuota.io"


def _file(objects: list[dict[str, Any]]) -> str:
    return str(one(objects, "ConfigMap", "kuota-config")["data"]["controller_manager_config.yaml"])


def _entries(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    (mutating,) = by_kind(objects, "MutatingWebhookConfiguration")
    return {str(entry["name"]): dict(entry) for entry in mutating["webhooks"]}


def test_the_default_configuration_starts_every_process_without_a_warning() -> None:
    loaded = load_configuration(yaml.safe_load(_file(render())))
    assert loaded.warnings == ()
    assert loaded.raw["metrics"] == {"enableClusterQueueResources": True}, (
        "the chart keeps exporting the quota gauges"
    )


def test_kueues_own_chart_configuration_is_the_file_unchanged() -> None:
    objects = render({"managerConfig.controllerManagerConfigYaml": KUEUE_CHART_DEFAULT})
    text = _file(objects)
    assert text.rstrip("\n") == KUEUE_CHART_DEFAULT.rstrip("\n"), "verbatim, comments included"
    loaded = load_configuration(yaml.safe_load(text))
    assert loaded.config.integrations.frameworks[0] == "batch/job"
    assert loaded.warnings[0].startswith("controller.groupKindConcurrency: ")
    unmanaged = [w.split("kuota does not manage ")[1].split(":")[0] for w in loaded.warnings[1:]]
    assert unmanaged == [], "every framework Kueue enables is one kuota manages"
    deployment = one(objects, "Deployment", "kuota-scheduler")
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert (
        annotations["checksum/config"]
        != one(render(), "Deployment", "kuota-scheduler")["spec"]["template"]["metadata"][
            "annotations"
        ]["checksum/config"]
    ), "a change rolls the pods"


def test_the_webhook_registrations_follow_the_given_configuration() -> None:
    given = (
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
        "manageJobsWithoutQueueName: true\n"
        "managedJobsNamespaceSelector:\n  matchLabels:\n    team: ml\n"
    )
    objects = render(
        {
            "managerConfig.controllerManagerConfigYaml": given,
            "config.manageJobsWithoutQueueName": False,
        }
    )
    entries, default = _entries(objects), _entries(render())
    assert default[UNQUEUED]["failurePolicy"] == "Ignore"
    assert entries[UNQUEUED]["failurePolicy"] == "Fail", (
        "manageJobsWithoutQueueName from the given file, not from config"
    )
    assert entries[QUEUED]["namespaceSelector"]["matchLabels"] == {"team": "ml"}
    assert "matchLabels" not in default[QUEUED]["namespaceSelector"]


def test_a_given_configuration_that_is_not_one_is_refused_at_install() -> None:
    done = render_text(
        {"managerConfig.controllerManagerConfigYaml": "kind: ConfigMap\n"}, check=False
    )
    assert done.returncode != 0
    assert (
        "managerConfig.controllerManagerConfigYaml must be a config.kueue.x-k8s.io" in done.stderr
    )
    broken = render_text({"managerConfig.controllerManagerConfigYaml": "a: [\n"}, check=False)
    assert broken.returncode != 0 and "is not YAML" in broken.stderr
