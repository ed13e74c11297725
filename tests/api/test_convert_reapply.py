"""Conversion never lets a stale round-trip value override what a request sets (issue 12, 9).

Each test plays what ``kubectl apply`` of an older-version manifest does to a
stored v1beta2 object: convert it down, change only what the manifest
changes (everything else the down-conversion wrote, annotations included,
stays as it was), convert it back up, and check what v1beta2 then says.
"""

from __future__ import annotations

from typing import Any

from scheduler.api.convert import annotation_store as store

HUB_FIELDS = "conversion.kuota.io/v1beta2-fields"


# --- the annotation store ----------------------------------------------------------------------


def test_a_fingerprint_ignores_key_order_and_tells_values_apart() -> None:
    assert store.fingerprint({"a": "1", "b": "2"}) == store.fingerprint({"b": "2", "a": "1"})
    assert store.fingerprint({"a": "1"}) != store.fingerprint({"a": "2"})
    assert store.fingerprint(None) != store.fingerprint({})
    assert len(store.fingerprint({"a": "1"})) == 16


def test_a_recorded_field_is_unchanged_only_with_the_same_value() -> None:
    stash: dict[str, Any] = {"tolerations": []}
    store.record(stash, {"nodeSelector": {"pool": "a"}})
    warnings: list[str] = []
    shadows = store.shadowed(stash, HUB_FIELDS, warnings)
    assert stash == {"tolerations": []}, "the record is split off the stash"
    assert shadows.unchanged("nodeSelector", {"pool": "a"})
    assert not shadows.changed("nodeSelector", {"pool": "a"})
    assert shadows.changed("nodeSelector", {"pool": "b"})
    assert not shadows.unchanged("nodeSelector", {"pool": "b"})
    # Never recorded: neither (a stash written before fingerprints keeps its meaning).
    assert not shadows.changed("metadata.labels", {"x": "y"})
    assert not shadows.unchanged("metadata.labels", {"x": "y"})
    assert warnings == []


def test_an_unreadable_record_is_reported_and_counts_every_field_as_changed() -> None:
    stash: dict[str, Any] = {"shadowed": ["not", "a", "map"]}
    warnings: list[str] = []
    shadows = store.shadowed(stash, HUB_FIELDS, warnings)
    assert stash == {}
    assert shadows.changed("spec.preemption", None)
    assert not shadows.unchanged("nodeSelector", {})
    assert len(warnings) == 1 and "unreadable 'shadowed' record" in warnings[0]
