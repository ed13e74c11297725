"""The scenario files of tests/scenarios run through ``kuota simulate --json``.

Each ``<name>/input.yaml`` is a cluster described in manifests; its
``expected.json`` was written by hand from docs/scheduling.md (the heading is
named at the top of each input) — not recorded from the engine — and the
report must equal it exactly.  Legacy forms of a scenario must report the
same as the current API.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from scheduler.cli.main import main

HERE = Path(__file__).parent
SCENARIOS = sorted(path.name for path in HERE.iterdir() if (path / "input.yaml").exists())
SAME_AS = {
    "research-pool-v1beta2": "research-pool",
    "cohort-borrowing-v1alpha1": "cohort-borrowing",
}


def simulate(*paths: Path) -> tuple[int, dict, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["simulate", "--json", *map(str, paths)], stdout=out, stderr=err)
    return code, json.loads(out.getvalue()) if out.getvalue() else {}, err.getvalue()


def test_every_seed_scenario_is_present() -> None:
    assert set(SCENARIOS) >= {
        "research-pool",
        "cohort-borrowing",
        "cohort-nominal-first",
        "borrowing-limit",
        "lending-limit",
        "strict-fifo",
        "best-effort-fifo",
        "codependent-resources",
        "credits",
        "inactive-missing-flavor",
    }


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario_reports_what_the_spec_says(name: str) -> None:
    code, report, err = simulate(HERE / name / "input.yaml")
    expected = json.loads((HERE / name / "expected.json").read_text())
    assert code == 0, err
    assert report == expected


@pytest.mark.parametrize("legacy,current", sorted(SAME_AS.items()))
def test_legacy_versions_report_the_same_as_v1beta2(legacy: str, current: str) -> None:
    legacy_code, legacy_report, _ = simulate(HERE / legacy / "input.yaml")
    current_code, current_report, _ = simulate(HERE / current / "input.yaml")
    assert (legacy_code, legacy_report) == (current_code, current_report)
    assert (HERE / legacy / "expected.json").read_text() == (
        HERE / current / "expected.json"
    ).read_text()
