"""Resource arithmetic: quantities as exact integers, and back to canonical text.

Scheduling compares quantities as integers (docs/scheduling.md#quantities): ``cpu``
in milli-cores, every other resource in its base unit with a fraction rounded
**up** (``0.5`` GPU counts as one).  The engine converts once, at the border,
and works with plain ``int`` everywhere inside (no overflow, no floats).  An FR
is a ``(flavor, resource)`` pair, the unit every quota is kept in.
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler.api.quantity import Quantity

FlavorResource = tuple[str, str]
"""``(flavor, resource)``: the unit of quota and usage."""

FRValues = dict[FlavorResource, int]
"""Integer amounts per FR."""

_BINARY_RESOURCES = ("memory", "ephemeral-storage")
_BINARY_PREFIXES = ("hugepages-",)


def is_binary(resource: str) -> bool:
    """Whether ``resource`` prints in binary SI (``1Gi``): pure."""
    return resource in _BINARY_RESOURCES or resource.startswith(_BINARY_PREFIXES)


def to_int(resource: str, value: Quantity) -> int:
    """The integer the scheduler compares: pure.

    Milli-cores for cpu, base units (rounded up) otherwise.
    """
    return value.milli_value() if resource == "cpu" else value.value()


def to_quantity(resource: str, amount: int) -> Quantity:
    """The quantity for an integer amount of ``resource`` (inverse of ``to_int``): pure."""
    if resource == "cpu":
        return Quantity.from_milli(amount)
    return Quantity.from_units(amount, "BinarySI" if is_binary(resource) else "DecimalSI")


def format_amount(resource: str, amount: int) -> str:
    """Canonical Kubernetes text of an integer amount of ``resource``: pure."""
    return str(to_quantity(resource, amount))


def format_quantity(resource: str, value: Quantity) -> str:
    """Canonical Kubernetes text of ``value`` as the engine prints it: pure.

    For example cpu ``500m``, memory ``1Gi``.
    """
    return format_amount(resource, to_int(resource, value))


def to_ints(requests: Mapping[str, Quantity]) -> dict[str, int]:
    """``to_int`` over a resource list: pure."""
    return {name: to_int(name, value) for name, value in requests.items()}


def to_quantities(amounts: Mapping[str, int]) -> dict[str, Quantity]:
    """``to_quantity`` over integer amounts: pure."""
    return {name: to_quantity(name, amount) for name, amount in amounts.items()}


__all__ = [
    "FRValues",
    "FlavorResource",
    "format_amount",
    "format_quantity",
    "is_binary",
    "to_int",
    "to_ints",
    "to_quantities",
    "to_quantity",
]
