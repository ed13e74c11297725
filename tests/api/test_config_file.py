"""The Configuration a process starts with (scheduler.api.config_file): the rules of
``kuota validate``, v1beta1 converted, warnings for what kuota does not act on, and Kueue's
own shipped Configurations accepted unchanged (tests/data/kueue_v0.19.2)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from scheduler.api.config_file import ConfigurationError, load_configuration, read_configuration
from scheduler.api.validation.configuration import check_configuration

DATA = Path(__file__).resolve().parents[1] / "data" / "kueue_v0.19.2"
KUEUE_MODULE = Path(
    os.environ.get(
        "KUEUE_MODULE_DIR", Path.home() / "go" / "pkg" / "mod" / "sigs.k8s.io" / "kueue@v0.19.2"
    )
)
SHIPPED = {
    "controller_manager_config.yaml": "config/components/manager/controller_manager_config.yaml",
    "chart_controller_manager_config.yaml": "charts/kueue/values.yaml",
}
V1BETA2 = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
UNMANAGED_IN_SHIPPED: list[str] = []
"""Every framework Kueue's shipped configurations enable is one kuota manages."""


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_the_copies_are_kueues_own_files(name: str) -> None:
    source = KUEUE_MODULE / SHIPPED[name]
    if not source.is_file():
        pytest.skip(f"Kueue's Go module is not at {KUEUE_MODULE}; nothing to compare against")
    copy = yaml.safe_load((DATA / name).read_text())
    if name.startswith("chart_"):
        shipped = yaml.safe_load(
            yaml.safe_load(source.read_text())["managerConfig"]["controllerManagerConfigYaml"]
        )
    else:
        shipped = yaml.safe_load(source.read_text())
    assert copy == shipped


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_kueues_shipped_configuration_loads_with_its_warnings_listed(name: str) -> None:
    loaded = read_configuration(DATA / name)
    config = loaded.config
    assert config.namespace == "kueue-system" and "batch/job" in config.integrations.frameworks
    assert any(w.startswith("controller.groupKindConcurrency: ") for w in loaded.warnings)
    unmanaged = [w for w in loaded.warnings if w.startswith("integrations.frameworks[")]
    assert sorted(w.split(" manage ")[1].split(":")[0] for w in unmanaged) == sorted(
        UNMANAGED_IN_SHIPPED
    )
    assert len(loaded.warnings) == 1 + len(UNMANAGED_IN_SHIPPED), loaded.warnings


def test_an_invalid_file_names_every_field_at_fault_in_one_line() -> None:
    with pytest.raises(ConfigurationError) as raised:
        load_configuration(
            {
                **V1BETA2,
                "resources": {"quotaCheckStrategy": "Bogus"},
                "fairSharing": {
                    "preemptionStrategies": ["LessThanInitialShare", "LessThanOrEqualToFinalShare"]
                },
                "featureGates": {"NoSuchGate": True},
            },
            "kueue.yaml",
        )
    line = raised.value.render()
    assert "\n" not in line and line.startswith("kueue.yaml: invalid Configuration: ")
    for field in ("resources.quotaCheckStrategy", "fairSharing.preemptionStrategies"):
        assert f"{field}: " in line
    assert 'featureGates: unknown feature gate "NoSuchGate"' in line


def test_the_processes_and_kuota_validate_judge_alike() -> None:
    raw = {
        **V1BETA2,
        "pprofBindAddress": ":8083",
        "controller": {"groupKindConcurrency": {"Job.batch": 5}},
    }
    errors, warnings = check_configuration(raw)
    with pytest.raises(ConfigurationError) as raised:
        load_configuration(raw)
    assert [e.render() for e in raised.value.errors] == [e.render() for e in errors]
    assert warnings and warnings[0].startswith("controller.groupKindConcurrency: ")


def test_a_v1beta1_file_is_converted_and_what_was_dropped_is_a_warning() -> None:
    loaded = load_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta1",
            "kind": "Configuration",
            "fairSharing": {"enable": True},
            "queueVisibility": {"updateIntervalSeconds": 5},
        }
    )
    assert loaded.config.fair_sharing is not None
    assert loaded.config.fair_sharing.preemption_strategies == (
        "LessThanOrEqualToFinalShare",
        "LessThanInitialShare",
    )
    assert loaded.raw["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    assert any(w.startswith("queueVisibility was removed") for w in loaded.warnings)


def test_a_v1beta1_file_is_judged_after_conversion() -> None:
    with pytest.raises(ConfigurationError) as raised:
        load_configuration(
            {
                "apiVersion": "config.kueue.x-k8s.io/v1beta1",
                "kind": "Configuration",
                "resources": {"quotaCheckStrategy": "Bogus"},
            }
        )
    assert [e.field for e in raised.value.errors] == ["resources.quotaCheckStrategy"]


@pytest.mark.parametrize(
    "raw",
    [
        {"apiVersion": "v1", "kind": "ConfigMap"},
        {"apiVersion": "config.kueue.x-k8s.io/v1alpha1", "kind": "Configuration"},
        {"kind": "Configuration"},
        ["not", "an", "object"],
    ],
)
def test_anything_but_a_configuration_is_refused(raw: object) -> None:
    with pytest.raises(ConfigurationError):
        load_configuration(raw)


def test_unreadable_and_malformed_files_are_refused_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="missing.yaml: invalid Configuration: cannot"):
        read_configuration(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: [\n")
    with pytest.raises(ConfigurationError, match="invalid YAML"):
        read_configuration(broken)


def test_a_name_in_metadata_is_not_a_setting() -> None:
    loaded = load_configuration({**V1BETA2, "metadata": {"name": "kueue"}})
    assert loaded.warnings == ()


def test_without_a_namespace_the_file_means_the_pods_own(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n")
    own = tmp_path / "namespace"
    own.write_text("kuota-system\n")
    assert read_configuration(config, namespace_file=own).config.namespace == "kuota-system"
    missing = tmp_path / "not-in-a-pod"
    assert read_configuration(config, namespace_file=missing).config.namespace == "kueue-system"
    config.write_text(config.read_text() + "namespace: given\n")
    assert read_configuration(config, namespace_file=own).config.namespace == "given"
