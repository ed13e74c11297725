"""Each kind is described once; the CRD schema, the webhook's shapes and the models follow.

The CRD files are rendered from the descriptions (``test_crds.py`` checks
they are up to date); these tests cover the two other readers: the
webhook's known-field shapes, converted from the same trees, and the models,
bound to them when the parser is built, which must refuse a model and a
description that disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pytest

from scheduler.api import config
from scheduler.api.config_fields import CONFIGURATION
from scheduler.api.crds.catalog import hub_schema
from scheduler.api.crds.schema_kit import (
    array,
    enum,
    free_form,
    int32,
    known,
    list_map,
    obj,
    quantity,
    renamed,
    string,
    timestamp,
    top_level,
    unchecked,
    unread,
)
from scheduler.api.defaults import _apply, _plan
from scheduler.api.field import FieldPath
from scheduler.api.models.common import read_from
from scheduler.api.parse.binding import BindingError, bind
from scheduler.api.parse.kinds import MODELS
from scheduler.api.parse.reader import Reader
from scheduler.api.quantity import Quantity
from scheduler.api.refs import KUEUE_KINDS
from scheduler.api.validation.known_fields import KNOWN_FIELDS, shape_of
from scheduler.api.validation.shape import Foreign, ListOf, Obj, Scalar

# --- the webhook's shapes -------------------------------------------------------------


def test_every_kind_has_a_model_and_a_shape_from_its_description() -> None:
    assert sorted(MODELS) == sorted(KUEUE_KINDS)
    for kind in KUEUE_KINDS:
        assert KNOWN_FIELDS[kind] == shape_of(hub_schema(kind))


def test_leaves_become_scalars_and_timestamps_any_value() -> None:
    node = obj(
        {"name": string(), "count": int32(), "at": timestamp(), "weight": quantity()},
        foreign={"cohort": renamed("cohort", "v1beta1", "spec.cohortName")},
    )
    assert shape_of(node) == Obj(
        {"name": Scalar.STR, "count": Scalar.INT, "at": Scalar.ANY, "weight": Scalar.QTY},
        foreign={
            "cohort": Foreign(
                "UNKNOWN-FIELD",
                'unknown field "cohort"; this is the v1beta1 name; v1beta2 uses spec.cohortName',
            )
        },
    )


def test_unchecked_free_form_and_tolerated_fields() -> None:
    root = top_level(
        {
            "spec": obj(
                {
                    "threshold": unchecked(int32()),
                    "blob": free_form(),
                    "template": free_form(typed=known({"names": array(string())})),
                }
            )
        },
        "A kind without a status.",
    )
    shape = shape_of(root)
    assert isinstance(shape, Obj)
    assert shape.fields["status"] is Scalar.ANY  # tolerated: a kind with a spec and no status
    spec = shape.fields["spec"]
    assert isinstance(spec, Obj)
    assert spec.fields["threshold"] is Scalar.ANY
    assert spec.fields["blob"] is Scalar.ANY
    assert spec.fields["template"] == Obj({"names": ListOf(Scalar.STR)}, open=True)


def test_only_a_checked_status_is_typed() -> None:
    status = obj({"count": int32()})
    unchecked_root = shape_of(top_level({"status": status}, "x"))
    checked_root = shape_of(top_level({"status": status}, "x", checked_status=True))
    assert isinstance(unchecked_root, Obj) and isinstance(checked_root, Obj)
    assert unchecked_root.fields["status"] is Scalar.ANY
    assert checked_root.fields["status"] == Obj({"count": Scalar.INT})


# --- the models -----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Spec:
    cohort_name: str | None = None
    weight: Quantity = field(default_factory=lambda: Quantity.from_units(1))


SPEC = obj({"cohortName": string(), "weight": quantity(default=1)})


def test_a_bound_model_reads_its_fields() -> None:
    reader = Reader()
    built = bind(Spec, SPEC, custom={})(reader, {"cohortName": "team"}, FieldPath())
    assert built == Spec(cohort_name="team") and reader.errors == []


def test_a_model_field_the_description_lacks_is_refused() -> None:
    @dataclass(frozen=True, kw_only=True)
    class Surprised(Spec):
        surprise_field: int = 0

    with pytest.raises(BindingError, match=r"Surprised.surprise_field \(surpriseField\)"):
        bind(Surprised, SPEC, custom={})


def test_a_described_field_the_model_lacks_is_refused_unless_unread() -> None:
    with pytest.raises(BindingError, match="Spec keeps no field for extra"):
        bind(Spec, obj({**SPEC.properties, "extra": int32()}), custom={})
    bind(Spec, obj({**SPEC.properties, "extra": unread(int32())}), custom={})


def test_types_enum_values_and_defaults_must_agree() -> None:
    with pytest.raises(BindingError, match="cohort_name"):
        bind(Spec, obj({"cohortName": int32(), "weight": quantity(default=1)}), custom={})
    with pytest.raises(BindingError, match="the schema defaults to 2"):
        bind(Spec, obj({"cohortName": string(), "weight": quantity(default=2)}), custom={})

    @dataclass(frozen=True, kw_only=True)
    class Policy:
        mode: Literal["Never", "Always"] = "Never"

    bind(Policy, obj({"mode": enum(["Never", "Always"])}), custom={})
    with pytest.raises(BindingError, match="are not the enum's"):
        bind(Policy, obj({"mode": enum(["Never", "Sometimes"])}), custom={})


def test_a_flattened_field_is_read_from_below() -> None:
    @dataclass(frozen=True, kw_only=True)
    class Status:
        share: int | None = field(default=None, metadata=read_from("fairSharing", "share"))

    node = obj({"fairSharing": obj({"share": int32(), "history": unread(free_form())})})
    build = bind(Status, node, custom={})
    assert build(Reader(), {"fairSharing": {"share": 3}}, FieldPath()) == Status(share=3)
    assert build(Reader(), {}, FieldPath()) == Status()


# --- the schema defaults --------------------------------------------------------------


def test_the_schema_defaults_are_the_descriptions() -> None:
    node = obj(
        {
            "spec": obj(
                {
                    "mode": enum(["A", "B"], default="A"),
                    "count": int32(default=1),
                    "inner": obj({"x": string(default="y")}, default={}),
                    "items": list_map(obj({"name": string(default="main")}), ["name"]),
                    "plain": obj({"x": string()}),
                }
            )
        }
    )
    plan = _plan(node)
    assert plan is not None
    value = {"spec": {"mode": "", "count": 0, "items": [{}, {"name": "b"}]}}
    _apply(plan, value)
    # An empty string counts as absent, a zero does not; scalars come before objects.
    assert value == {
        "spec": {
            "mode": "A",
            "count": 0,
            "items": [{"name": "main"}, {"name": "b"}],
            "inner": {"x": "y"},
        }
    }
    assert list(value["spec"]) == ["mode", "count", "items", "inner"]


# --- the Configuration ----------------------------------------------------------------


def test_the_configuration_shape_and_sections_come_from_its_description() -> None:
    assert KNOWN_FIELDS["Configuration"] == shape_of(CONFIGURATION)
    # The sections the dataclass keeps raw are the described ones it does not type.
    assert config._OPERATIONAL == (
        "multiKueue",
        "webhook",
        "metrics",
        "health",
        "leaderElection",
        "clientConnection",
        "internalCertManagement",
        "controller",
        "pprofBindAddress",
        "tls",
        "visibilityServer",
    )
    # metadata passes validation's shape pass but is no field of a Configuration.
    assert "metadata" in CONFIGURATION.properties and "metadata" not in config._KEPT
