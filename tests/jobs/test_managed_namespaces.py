"""The managed-namespace rule: one answer for the webhook and the scheduler.

See docs/concepts.md#managed-namespaces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from scheduler.api.config import parse_configuration
from scheduler.api.validation.formats import selector_matches
from scheduler.jobs.managed_namespaces import (
    NAME_LABEL,
    ManagedNamespaces,
    is_managed_namespace,
)

TEAM = {"matchLabels": {"kuota.io/managed": "yes"}}


def labels(namespace: str, **extra: str) -> dict[str, str]:
    return {NAME_LABEL: namespace, **extra}


@dataclass(frozen=True)
class Case:
    name: str
    namespace: str
    labels: dict[str, str]
    settings: ManagedNamespaces
    want_managed: bool


CASES = [
    Case(
        "default selector: a user namespace", "team-a", labels("team-a"), ManagedNamespaces(), True
    ),
    Case(
        "default selector: kube-system",
        "kube-system",
        labels("kube-system"),
        ManagedNamespaces(),
        False,
    ),
    Case(
        "default selector: kuota's namespace",
        "kueue-system",
        labels("kueue-system"),
        ManagedNamespaces(),
        False,
    ),
    Case(
        "kuota's namespace moved",
        "kuota",
        labels("kuota"),
        ManagedNamespaces(kuota_namespace="kuota"),
        False,
    ),
    Case(
        "kueue-system is a user namespace once kuota lives elsewhere",
        "kueue-system",
        labels("kueue-system"),
        ManagedNamespaces(kuota_namespace="kuota"),
        True,
    ),
    Case(
        "selector matches",
        "team-a",
        labels("team-a", **{"kuota.io/managed": "yes"}),
        ManagedNamespaces(selector=TEAM),
        True,
    ),
    Case(
        "selector does not match: not managed, queue name or not",
        "team-b",
        labels("team-b"),
        ManagedNamespaces(selector=TEAM),
        False,
    ),
    Case(
        "a selector that matches kube-system still does not manage it",
        "kube-system",
        labels("kube-system", **{"kuota.io/managed": "yes"}),
        ManagedNamespaces(selector=TEAM),
        False,
    ),
    Case(
        "the empty selector selects everything but the two",
        "team-c",
        labels("team-c"),
        ManagedNamespaces(selector={}),
        True,
    ),
    Case(
        "the empty selector and kuota's namespace",
        "kueue-system",
        labels("kueue-system"),
        ManagedNamespaces(selector={}),
        False,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_the_rule(case: Case) -> None:
    assert is_managed_namespace(case.namespace, case.labels, case.settings) is case.want_managed


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_the_registration_selector_says_the_same(case: Case) -> None:
    """What the API server decides from the registration equals what the function decides."""
    selector: dict[str, Any] = case.settings.registration_selector()
    assert selector_matches(selector, case.labels) is case.want_managed


def test_settings_from_a_kueue_configuration() -> None:
    config = parse_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "namespace": "kuota",
            "managedJobsNamespaceSelector": {
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["batch"]}]
            },
        }
    )
    settings = ManagedNamespaces.from_configuration(config)
    assert settings == ManagedNamespaces(
        kuota_namespace="kuota",
        selector={"matchExpressions": [{"key": "tier", "operator": "In", "values": ["batch"]}]},
    )
    assert settings.never_managed == ("kube-system", "kuota")
    assert is_managed_namespace("ml", labels("ml", tier="batch"), settings)
    assert not is_managed_namespace("web", labels("web", tier="serving"), settings)


def test_kueues_default_configuration_manages_every_namespace_but_the_two() -> None:
    config = parse_configuration(
        {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    )
    settings = ManagedNamespaces.from_configuration(config)
    assert [
        name
        for name in ("default", "team-a", "kube-system", "kueue-system")
        if is_managed_namespace(name, labels(name), settings)
    ] == ["default", "team-a"]


def test_the_registration_selector_keeps_the_configured_terms() -> None:
    settings = ManagedNamespaces(
        kuota_namespace="kuota",
        selector={
            "matchLabels": {"team": "a"},
            "matchExpressions": [{"key": "tier", "operator": "Exists"}],
        },
    )
    assert settings.registration_selector() == {
        "matchLabels": {"team": "a"},
        "matchExpressions": [
            {"key": NAME_LABEL, "operator": "NotIn", "values": ["kube-system", "kuota"]},
            {"key": "tier", "operator": "Exists"},
        ],
    }


def test_a_selector_on_the_name_alone_needs_no_lookup_of_the_labels() -> None:
    from scheduler.jobs.managed_namespaces import NAME_LABEL, name_only_labels

    by_name = ManagedNamespaces(
        selector={
            "matchExpressions": [
                {"key": NAME_LABEL, "operator": "NotIn", "values": ["kube-system"]}
            ]
        }
    )
    assert name_only_labels("ml", by_name) == {NAME_LABEL: "ml"}
    assert name_only_labels("ml", ManagedNamespaces()) == {NAME_LABEL: "ml"}
    by_label = ManagedNamespaces(selector={"matchLabels": {"team": "a"}})
    assert name_only_labels("ml", by_label) is None
