"""Quantities: the Kubernetes grammar, exact values and the canonical text."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api.quantity import Quantity, QuantityError

CANONICAL = [
    ("1000m", "1"),
    ("1.5", "1500m"),
    ("1536Mi", "1536Mi"),
    ("1024Mi", "1Gi"),
    ("1e3", "1e3"),
    ("1E3", "1e3"),
    ("0.5Gi", "512Mi"),
    ("2k", "2k"),
    ("100m", "100m"),
    ("0", "0"),
    ("-1", "-1"),
    (".5", "500m"),
    ("5.", "5"),
    ("2e-3", "2e-3"),
    ("1e1", "10"),
    ("1.5e3", "1500"),
    ("+1", "1"),
    ("1.0", "1"),
    ("0Gi", "0"),
    ("-0", "0"),
    ("12Gi", "12Gi"),
    ("36Gi", "36Gi"),
    ("64Gi", "64Gi"),
    ("1Ki", "1Ki"),
    ("1.5Ki", "1536"),  # whole bytes but not a multiple of 1024: decimal
    ("0.5Ki", "512"),  # below 1024 prints decimal
    ("0.1Ki", "102400m"),
    ("-0.5Gi", "-512Mi"),
    ("1n", "1n"),
    ("1u", "1u"),
    ("1500u", "1500u"),
    ("0.0000000001", "1n"),  # below 1n rounds up
    ("1e-10", "1e-9"),
    ("-1e-20", "-1e-9"),  # rounds away from zero
    ("1000k", "1M"),
    ("1000E", "1000E"),
    ("8Ei", "9223372036854775807"),  # binary SI is capped at 2^63-1
    ("2000000", "2M"),
    ("1200", "1200"),
    ("1.2k", "1200"),
    ("10Gi", "10Gi"),
    ("0.25", "250m"),
]


@pytest.mark.parametrize(("text", "canonical"), CANONICAL)
def test_canonical_form_matches_the_api_server(text: str, canonical: str) -> None:
    assert str(Quantity.parse(text)) == canonical


@pytest.mark.parametrize(
    "text",
    [
        "",
        "-",
        "+",
        ".",
        "1e",
        "e3",
        "1e1.5",
        "abc",
        " 1",
        "1 ",
        "1KiB",
        "1ki",
        "1Kii",
        "1.2.3",
        "--1",
        "1m1",
        "0x10",
        "1_000",
        "∞",
    ],
)
def test_bad_syntax_is_rejected(text: str) -> None:
    with pytest.raises(QuantityError):
        Quantity.parse(text)


def test_quantity_error_is_a_value_error() -> None:
    assert issubclass(QuantityError, ValueError)


def test_absurdly_large_values_are_refused_quickly() -> None:
    with pytest.raises(QuantityError):
        Quantity.parse("1e999999999")


def test_tiny_exponent_rounds_up_to_one_nano() -> None:
    assert Quantity.parse("1e-999999999") == Quantity.parse("1n")


@pytest.mark.parametrize("value", [True, None, [1], {"a": 1}, float("nan"), float("inf")])
def test_non_quantity_values_are_rejected(value: object) -> None:
    with pytest.raises(QuantityError):
        Quantity.parse(value)  # type: ignore[arg-type]


def test_numbers_from_yaml() -> None:
    assert str(Quantity.parse(9)) == "9"
    assert str(Quantity.parse(1.5)) == "1500m"
    assert Quantity.parse(0.1) == Quantity.parse("100m")


def test_equality_is_by_value_not_spelling() -> None:
    assert Quantity.parse("1000m") == Quantity.parse("1")
    assert Quantity.parse("1Ki") == Quantity.parse("1024")
    assert hash(Quantity.parse("1000m")) == hash(Quantity.parse("1"))
    assert len({Quantity.parse("1Gi"), Quantity.parse("1024Mi")}) == 1


def test_ordering() -> None:
    assert Quantity.parse("500m") < Quantity.parse("1")
    assert Quantity.parse("1Gi") > Quantity.parse("1G")
    assert sorted(Quantity.parse(v) for v in ["2", "1Ki", "-1", "500m"]) == [
        Quantity.parse(v) for v in ["-1", "500m", "2", "1Ki"]
    ]


def test_arithmetic_is_exact() -> None:
    tenth = Quantity.parse("100m")
    total = sum((tenth for _ in range(10)), Quantity.zero())
    assert total == Quantity.parse("1")
    assert str(Quantity.parse("1.5") + Quantity.parse("500m")) == "2"
    assert str(Quantity.parse("1Gi") - Quantity.parse("512Mi")) == "512Mi"
    assert str(Quantity.parse("1536Mi") * 2) == "3Gi"
    assert str(3 * Quantity.parse("500m")) == "1500m"
    assert (Quantity.parse("1") - Quantity.parse("2")).is_negative()
    assert sum([Quantity.parse("1"), Quantity.parse("2")]) == Quantity.parse("3")


def test_sum_starting_from_zero_takes_the_first_format() -> None:
    assert str(Quantity.zero() + Quantity.parse("1Gi")) == "1Gi"


def test_milli_value_rounds_up_like_kubernetes() -> None:
    assert Quantity.parse("1").milli_value() == 1000
    assert Quantity.parse("1.5").milli_value() == 1500
    assert Quantity.parse("1n").milli_value() == 1
    assert Quantity.parse("1500500n").milli_value() == 2
    assert Quantity.parse("-1n").milli_value() == -1
    assert Quantity.parse("1Ki").milli_value() == 1024000
    assert Quantity.parse("1500m").value() == 2


def test_immutable() -> None:
    quantity = Quantity.parse("1")
    with pytest.raises(AttributeError):
        quantity.nanos = 5  # type: ignore[misc]


def test_comparison_with_other_types_is_not_supported() -> None:
    assert Quantity.parse("1") != 1
    with pytest.raises(TypeError):
        _ = Quantity.parse("1") < 1  # type: ignore[operator]


# --- properties ---------------------------------------------------------------

_SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]


@st.composite
def quantity_texts(draw: st.DrawFn) -> str:
    sign = draw(st.sampled_from(["", "+", "-"]))
    whole = draw(st.text("0123456789", min_size=0, max_size=8))
    fraction = draw(st.none() | st.text("0123456789", min_size=0, max_size=10))
    if not whole and not fraction:
        whole = "0"
    number = whole + ("" if fraction is None else "." + fraction)
    if draw(st.booleans()):
        suffix = draw(st.sampled_from(_SUFFIXES))
    else:
        suffix = draw(st.sampled_from("eE")) + str(draw(st.integers(-15, 15)))
    return sign + number + suffix


@settings(max_examples=400)
@given(quantity_texts())
def test_canonical_text_parses_back_to_the_same_value(text: str) -> None:
    quantity = Quantity.parse(text)
    again = Quantity.parse(str(quantity))
    assert again == quantity
    assert str(again) == str(quantity)  # canonical form is a fixed point


@settings(max_examples=300)
@given(quantity_texts(), quantity_texts())
def test_ordering_agrees_with_the_decimal_value(a: str, b: str) -> None:
    qa, qb = Quantity.parse(a), Quantity.parse(b)
    da, db = qa.as_decimal(), qb.as_decimal()
    assert (qa < qb) == (da < db)
    assert (qa == qb) == (da == db)


@settings(max_examples=300)
@given(
    st.decimals(min_value=Decimal("-1e12"), max_value=Decimal("1e12"), places=9, allow_nan=False)
)
def test_decimal_values_are_kept_exactly(value: Decimal) -> None:
    assert Quantity.parse(value).as_decimal() == value


@settings(max_examples=200)
@given(st.integers(-(10**15), 10**15), st.integers(-(10**15), 10**15), st.integers(-50, 50))
def test_arithmetic_matches_integers(a: int, b: int, k: int) -> None:
    qa, qb = Quantity.from_milli(a), Quantity.from_milli(b)
    assert (qa + qb).milli_value() == a + b
    assert (qa - qb).milli_value() == a - b
    assert (qa * k).milli_value() == a * k
