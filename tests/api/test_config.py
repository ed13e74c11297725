"""The Configuration file: Kueue's v1beta2 defaults, strictness, v1beta1 leftovers."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from scheduler.api.config import Configuration, parse_configuration, parse_duration
from scheduler.api.field import ParseError
from scheduler.api.parse import parse_object
from scheduler.api.quantity import Quantity

HEADER = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}


def config(**fields: Any) -> Configuration:
    parsed = parse_object({**HEADER, **fields})
    assert isinstance(parsed, Configuration)
    return parsed


def test_defaults() -> None:
    cfg = config()
    assert cfg.namespace == "kueue-system"
    assert cfg.manage_jobs_without_queue_name is False
    assert cfg.integrations.frameworks == ("batch/job",)
    assert cfg.fair_sharing is None  # classical preemption
    assert cfg.wait_for_pods_ready is not None  # v1beta2 defaulting always creates it
    assert cfg.wait_for_pods_ready.timeout == timedelta(minutes=30)
    assert cfg.wait_for_pods_ready.recovery_timeout == timedelta(minutes=30)
    assert cfg.wait_for_pods_ready.block_admission is False
    strategy = cfg.wait_for_pods_ready.requeuing_strategy
    assert (strategy.timestamp, strategy.backoff_base_seconds, strategy.backoff_max_seconds) == (
        "Eviction",
        60,
        3600,
    )
    (expression,) = cfg.managed_jobs_namespace_selector.match_expressions
    assert (expression.operator, expression.values) == ("NotIn", ("kube-system", "kueue-system"))


def test_namespace_feeds_the_default_selector() -> None:
    (expression,) = config(namespace="kuota").managed_jobs_namespace_selector.match_expressions
    assert expression.values == ("kube-system", "kuota")


def test_spec_example() -> None:
    cfg = config(
        manageJobsWithoutQueueName=False,
        fairSharing={
            "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
        },
        resources={"transformations": [{"input": "cpu", "outputs": {"cpu_credits": "1"}}]},
        integrations={"frameworks": ["batch/job", "jobset.x-k8s.io/jobset"]},
        waitForPodsReady={"timeout": "5m", "blockAdmission": True},
        featureGates={"PartialAdmission": False},
    )
    assert cfg.fair_sharing is not None and len(cfg.fair_sharing.preemption_strategies) == 2
    assert cfg.resources is not None
    (transformation,) = cfg.resources.transformations
    assert transformation.strategy == "Retain"
    assert transformation.outputs["cpu_credits"] == Quantity.parse("1")
    assert cfg.integrations.frameworks == ("batch/job", "jobset.x-k8s.io/jobset")
    assert cfg.wait_for_pods_ready is not None and cfg.wait_for_pods_ready.timeout == timedelta(
        minutes=5
    )
    assert cfg.wait_for_pods_ready.recovery_timeout == timedelta(minutes=5)
    assert cfg.feature_gates == {"PartialAdmission": False}


def test_v1beta1_fair_sharing_enable_is_tolerated_with_a_warning() -> None:
    enabled = config(fairSharing={"enable": True})
    assert enabled.fair_sharing is not None
    assert enabled.fair_sharing.preemption_strategies == (
        "LessThanOrEqualToFinalShare",
        "LessThanInitialShare",
    )
    assert any("v1beta1" in warning for warning in enabled.warnings)
    assert config(fairSharing={"enable": False}).fair_sharing is None


def test_unknown_fields_and_bad_types_are_errors() -> None:
    with pytest.raises(ParseError) as caught:
        parse_configuration(
            {
                **HEADER,
                "queueVisibility": {},
                "waitForPodsReady": {"timeout": "soon"},
                "featureGates": {"A": "yes"},
            }
        )
    fields = [item.field for item in caught.value.errors]
    assert fields == ["queueVisibility", "featureGates[A]", "waitForPodsReady.timeout"]
    assert "unknown field" in caught.value.errors[0].message


def test_operational_sections_are_kept() -> None:
    cfg = config(webhook={"port": 9443}, metrics={"bindAddress": ":8443"})
    assert cfg.operational["webhook"] == {"port": 9443}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30m", timedelta(minutes=30)),
        ("1h30m", timedelta(minutes=90)),
        ("90s", timedelta(seconds=90)),
        ("1.5h", timedelta(minutes=90)),
        ("300ms", timedelta(milliseconds=300)),
        ("0", timedelta(0)),
        ("-1m", timedelta(minutes=-1)),
    ],
)
def test_go_durations(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "5", "m", "1x", "1h 30m", "."])
def test_bad_durations(text: str) -> None:
    assert parse_duration(text) is None
