"""The webhook's answer for a list of violations (docs/validation.md#error-format).

422 ``Invalid`` when at least one violation comes from a rule that upstream
Kueue enforces before its webhook runs (schema, CEL, generic API-server
rules), a legacy rule or a kuota addition; 403 ``Forbidden`` when every
violation is a webhook (W) rule.  The message lists every violation as
``<field.path>: <message>`` joined by ``"; "``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from scheduler.api.field import FieldError

_INVALID_ORIGINS = frozenset({"S", "C", "A", "L", "K"})


class Cause(TypedDict):
    field: str
    message: str


class StatusDetails(TypedDict):
    causes: list[Cause]


class AdmissionStatus(TypedDict):
    code: int
    reason: str
    message: str
    details: StatusDetails


def admission_status(errors: Sequence[FieldError]) -> AdmissionStatus:
    """The ``status`` of a denied AdmissionReview response: pure.

    Meant for a non-empty list; an empty list yields an empty 403 message.
    """
    invalid = any(item.origin in _INVALID_ORIGINS for item in errors)
    return {
        "code": 422 if invalid else 403,
        "reason": "Invalid" if invalid else "Forbidden",
        "message": "; ".join(item.render() for item in errors),
        "details": {"causes": [{"field": item.field, "message": item.message} for item in errors]},
    }
