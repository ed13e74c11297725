"""Kubernetes resource quantities: one exact value type and one canonical formatter.

Every quota, request and usage in the Kueue API is a *quantity* (``9``,
``500m``, ``36Gi``, ``1e3``).  Comparisons decide admissions, so they must be
exact: a quantity is held as an integer count of nano-units (10⁻⁹), the
smallest amount Kubernetes can represent, and never touches binary floating
point.  Parsing follows apimachinery's ``ParseQuantity``:

* the text must match the CRD's quantity pattern, and the exponent of the
  ``e``/``E`` form must be an integer (apimachinery cannot parse ``1e1.5``);
* a non-zero value finer than ``1n`` is rounded *up* in magnitude to the next
  nano-unit ("if you ask for some resource you get some");
* a binary-suffixed value is capped at 2⁶³-1, and one between 0 and 1 is
  re-labelled decimal, as apimachinery does.

The quantity remembers the *format family* of its suffix (decimal SI, binary
SI, decimal exponent) because the canonical text depends on it, exactly as in
``Quantity.String()``:

* zero prints ``0``;
* binary SI prints ``<integer><Ki|Mi|…>`` with the largest power of 1024 that
  divides the value, unless the value is below 1024 in magnitude or not a
  whole number, in which case it prints as decimal SI (``0.5Gi`` → ``512Mi``,
  ``1.5Ki`` → ``1536``);
* decimal SI and decimal exponent move trailing zeros into the exponent, then
  lower the exponent to a multiple of three, and print the suffix
  (``1500m``, ``2k``) or ``e<exp>`` (``1e3``, ``2e-3``).

Equality, hashing and ordering use the value only: ``1000m == 1``.

**kuota decision:** values of 10⁵⁵ units or more are refused
(``QuantityError``), so that a hostile ``1e999999999`` cannot exhaust memory;
apimachinery has no such bound for decimal quantities but no real resource
comes near it.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

QuantityFormat = Literal["DecimalSI", "BinarySI", "DecimalExponent"]

NANOS_PER_UNIT = 10**9
_NANOS_PER_MILLI = 10**6
_MAX_BINARY_SI_NANOS = (2**63 - 1) * NANOS_PER_UNIT
_MAX_DIGITS = 64  # nano-units: |value| < 10**55 units

_QUANTITY_PATTERN = re.compile(
    r"(?P<sign>[+-])?"
    r"(?:(?P<whole>[0-9]+)(?:\.(?P<fraction>[0-9]*))?|\.(?P<fraction_only>[0-9]+))"
    r"(?:(?P<binary>[KMGTPE]i)|(?P<decimal>[numkMGTPE])|[eE](?P<exponent>[+-]?[0-9]+))?"
)

_DECIMAL_SUFFIX_EXPONENTS: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_DECIMAL_SUFFIX_BY_EXPONENT: dict[int, str] = {
    exponent: suffix for suffix, exponent in _DECIMAL_SUFFIX_EXPONENTS.items()
}
_BINARY_SUFFIX_POWERS: dict[str, int] = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_BINARY_SUFFIX_BY_POWER: dict[int, str] = {
    0: "",
    **{power: suffix for suffix, power in _BINARY_SUFFIX_POWERS.items()},
}


class QuantityError(ValueError):
    """Text (or number) that is not a Kubernetes quantity."""


def _divide_rounding_away_from_zero(numerator: int, denominator: int) -> int:
    """Exact integer division, rounding a remainder away from zero: pure."""
    quotient, remainder = divmod(abs(numerator), denominator)
    if remainder:
        quotient += 1
    return quotient if numerator >= 0 else -quotient


def _strip_factors(value: int, factor: int, limit: int | None = None) -> tuple[int, int]:
    """Divide ``value`` by ``factor`` as often as it divides exactly: pure.

    Returns the remaining value and how many times it was divided (at most
    ``limit`` times when a limit is given).
    """
    times = 0
    while value != 0 and value % factor == 0 and (limit is None or times < limit):
        value //= factor
        times += 1
    return value, times


@functools.total_ordering
@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Quantity:
    """An exact Kubernetes quantity (immutable, hashable, totally ordered).

    ``nanos`` is the exact value in nano-units (10⁻⁹); ``format`` is the
    suffix family its canonical text uses.
    """

    nanos: int
    format: QuantityFormat = "DecimalSI"

    def __post_init__(self) -> None:
        if isinstance(self.nanos, bool) or not isinstance(self.nanos, int):
            raise TypeError("Quantity takes an integer count of nano-units")

    # --- construction -----------------------------------------------------

    @classmethod
    def parse(cls, value: str | int | float | Decimal | Quantity) -> Quantity:
        """Parse a quantity the way apimachinery does (see the module docstring): pure.

        Accepts the text form, a YAML/JSON integer, or a YAML/JSON float
        (read through its shortest decimal spelling, which is what the user
        wrote). Raises ``QuantityError`` on anything else.
        """
        if isinstance(value, Quantity):
            return value
        if isinstance(value, bool):
            raise QuantityError(f"{value!r} is not a quantity")
        if isinstance(value, int):
            return cls(value * NANOS_PER_UNIT, "DecimalSI")
        if isinstance(value, float):
            if not math.isfinite(value):
                raise QuantityError(f"{value!r} is not a quantity")
            return _parse_text(repr(value))
        if isinstance(value, Decimal):
            if not value.is_finite():
                raise QuantityError(f"{value!r} is not a quantity")
            return _parse_text(format(value, "f"))
        if isinstance(value, str):
            return _parse_text(value)
        raise QuantityError(f"{value!r} is not a quantity")

    @classmethod
    def zero(cls) -> Quantity:
        """The zero quantity (prints ``0``): pure."""
        return cls(0, "DecimalSI")

    @classmethod
    def from_milli(cls, milli: int, format: QuantityFormat = "DecimalSI") -> Quantity:
        """A quantity of ``milli`` thousandths of a unit: pure."""
        return cls(milli * _NANOS_PER_MILLI, format)

    @classmethod
    def from_units(cls, units: int, format: QuantityFormat = "DecimalSI") -> Quantity:
        """A quantity of whole units (bytes, CPUs, GPUs…): pure."""
        return cls(units * NANOS_PER_UNIT, format)

    # --- accessors --------------------------------------------------------

    def is_zero(self) -> bool:
        return self.nanos == 0

    def is_negative(self) -> bool:
        return self.nanos < 0

    def milli_value(self) -> int:
        """The value in milli-units, a fraction rounded away from zero: pure.

        Kubernetes' ``MilliValue``.
        """
        return _divide_rounding_away_from_zero(self.nanos, _NANOS_PER_MILLI)

    def value(self) -> int:
        """The value in whole units, a fraction rounded away from zero: pure.

        Kubernetes' ``Value``.
        """
        return _divide_rounding_away_from_zero(self.nanos, NANOS_PER_UNIT)

    def as_decimal(self) -> Decimal:
        """The exact value as a ``Decimal`` of units: pure."""
        return Decimal(self.nanos).scaleb(-9)

    # --- arithmetic -------------------------------------------------------

    def __add__(self, other: object) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        return Quantity(self.nanos + other.nanos, _sum_format(self, other))

    def __radd__(self, other: object) -> Quantity:
        # Lets ``sum(quantities)`` start from the integer 0.
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self
        return NotImplemented

    def __sub__(self, other: object) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        return Quantity(self.nanos - other.nanos, _sum_format(self, other))

    def __mul__(self, factor: object) -> Quantity:
        if isinstance(factor, bool) or not isinstance(factor, int):
            return NotImplemented
        return Quantity(self.nanos * factor, self.format)

    __rmul__ = __mul__

    def __neg__(self) -> Quantity:
        return Quantity(-self.nanos, self.format)

    # --- comparison: by value only (``total_ordering`` derives <=, >, >=) ---

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.nanos == other.nanos

    def __hash__(self) -> int:
        return hash(("Quantity", self.nanos))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.nanos < other.nanos

    # --- canonical text ---------------------------------------------------

    def __str__(self) -> str:
        return canonical_text(self.nanos, self.format)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


def _sum_format(receiver: Quantity, other: Quantity) -> QuantityFormat:
    """The format of ``receiver ± other``: apimachinery's Add/Sub keep the receiver's
    format unless it is zero: pure."""
    return other.format if receiver.nanos == 0 else receiver.format


def _parse_text(text: str) -> Quantity:
    """A quantity's text form, parsed as apimachinery's ``ParseQuantity``: pure."""
    match = _QUANTITY_PATTERN.fullmatch(text)
    if match is None:
        raise QuantityError(f"{text!r} is not a quantity")
    if match["fraction_only"] is not None:
        whole, fraction = "", match["fraction_only"]
    else:
        whole, fraction = match["whole"], match["fraction"] or ""
    mantissa = int((whole + fraction) or "0")
    exponent10 = -len(fraction)
    power1024 = 0
    fmt: QuantityFormat
    if match["binary"] is not None:
        fmt = "BinarySI"
        power1024 = _BINARY_SUFFIX_POWERS[match["binary"]]
    elif match["exponent"] is not None:
        fmt = "DecimalExponent"
        exponent_text = match["exponent"]
        if len(exponent_text.lstrip("+-").lstrip("0")) > 12:
            raise QuantityError(f"{text!r} is out of range")
        exponent10 += int(exponent_text)
    else:
        fmt = "DecimalSI"
        exponent10 += _DECIMAL_SUFFIX_EXPONENTS[match["decimal"] or ""]
    if match["sign"] == "-":
        mantissa = -mantissa
    nanos = _to_nanos(text, mantissa * 1024**power1024, exponent10 + 9)
    if fmt == "BinarySI":
        if abs(nanos) > _MAX_BINARY_SI_NANOS:
            nanos = _MAX_BINARY_SI_NANOS if nanos > 0 else -_MAX_BINARY_SI_NANOS
        if 0 < abs(nanos) < NANOS_PER_UNIT:
            fmt = "DecimalSI"
    return Quantity(nanos, fmt)


def _to_nanos(text: str, mantissa: int, exponent10: int) -> int:
    """``mantissa × 10**exponent10`` rounded away from zero to an integer: pure."""
    if mantissa == 0:
        return 0
    digits = len(str(abs(mantissa)))
    if exponent10 >= 0:
        if digits + exponent10 > _MAX_DIGITS:
            raise QuantityError(f"{text!r} is too large")
        # typeshed types int ** int as Any (a negative exponent gives a float); here
        # the exponent is not negative, so the power is an int.
        scale: int = 10**exponent10
        return mantissa * scale
    if -exponent10 > digits:
        return 1 if mantissa > 0 else -1
    return _divide_rounding_away_from_zero(mantissa, 10**-exponent10)


def canonical_text(nanos: int, fmt: QuantityFormat) -> str:
    """The text apimachinery's ``Quantity.String()`` prints for this value: pure."""
    if nanos == 0:
        return "0"
    if fmt == "BinarySI":
        whole, remainder = divmod(abs(nanos), NANOS_PER_UNIT)
        if remainder == 0 and whole >= 1024:
            amount, power = _strip_factors(whole, 1024, limit=max(_BINARY_SUFFIX_BY_POWER))
            sign = "-" if nanos < 0 else ""
            return f"{sign}{amount}{_BINARY_SUFFIX_BY_POWER[power]}"
        fmt = "DecimalSI"
    mantissa, exponent = _strip_factors(nanos, 10)
    exponent -= 9
    lower_by = exponent % 3  # Python's modulo is non-negative: floor to a multiple of 3
    mantissa *= 10**lower_by
    exponent -= lower_by
    if fmt == "DecimalExponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    largest = max(_DECIMAL_SUFFIX_BY_EXPONENT)
    if exponent > largest:  # beyond E: keep the largest suffix, widen the mantissa
        mantissa *= 10 ** (exponent - largest)
        exponent = largest
    return f"{mantissa}{_DECIMAL_SUFFIX_BY_EXPONENT[exponent]}"


def parse_quantity(value: str | int | float) -> Quantity:
    """Shorthand for ``Quantity.parse``: pure."""
    return Quantity.parse(value)
