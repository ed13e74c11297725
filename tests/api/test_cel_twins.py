"""The CRDs' CEL rules and their Python twins
(docs/validation.md#rules-enforced-by-the-api-server).

On every sample of ``cel_samples``, the Python twins fire exactly as
the sample says (the real API server is held to the same samples in
e2e/test_crd_cel.py); every CEL rule in the CRD has a twin, and the
samples make each twin fire at least once.
"""

from __future__ import annotations

import pytest

from scheduler.api.crds import cel_other, cel_workload
from scheduler.api.pipeline import Review, review
from tests.api.cel_samples import CEL_TWINS, SAMPLES, Sample


def review_sample(sample: Sample) -> Review:
    """``sample`` as ``kuota validate`` judges it (a status sample: as that update)."""
    if sample.status is not None or sample.update_spec is not None:
        return review(
            sample.new(), old=sample.old(), operation="UPDATE", default_namespace="default"
        )
    return review(sample.object, default_namespace="default")


def twin_errors(sample: Sample) -> set[tuple[str, str, str]]:
    """(rule, field, message) of the CEL twins that fire on ``sample``."""
    return {
        (e.rule, e.field, e.message) for e in review_sample(sample).errors if e.rule in CEL_TWINS
    }


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda sample: sample.name)
def test_the_python_twins_fire_as_the_sample_says(sample: Sample) -> None:
    assert {rule for rule, _, _ in twin_errors(sample)} == sample.fires


def test_every_cel_rule_has_a_twin_the_samples_make_fire() -> None:
    twins = {rule.twin for rule in (*cel_workload.EVERY_RULE, *cel_other.EVERY_RULE)}
    # WL-2 and WL-41 are maxItems/maxLength bounds, answered in the API server's words.
    assert twins == CEL_TWINS
    fired = set().union(*(sample.fires for sample in SAMPLES))
    assert fired == CEL_TWINS


def test_no_sample_is_refused_for_anything_but_its_twins() -> None:
    # The samples differ from a valid Workload only where a twin looks, so the API
    # server's answer can be compared with the twins' alone.
    for sample in SAMPLES:
        assert {e.rule for e in review_sample(sample).errors} == sample.fires, sample.name
