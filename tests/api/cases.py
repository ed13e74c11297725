"""The rule-case tables of the validation tests: a failing case (``bad``) names the rule,
the object (a builder of ``tests.builders`` or a raw dict), the field and the words of the
message; a passing case (``good``) has no violation at all.  ``find`` is the one way a
test looks for a violation.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from scheduler.api.field import FieldError
from tests.builders import raw

# --- assertions ---------------------------------------------------------------------


def find(errors: list[FieldError], field: str, *words: str, rule: str | None = None) -> FieldError:
    """The violation at ``field`` whose message holds every word (and rule, when given)."""
    for item in errors:
        if (
            item.field == field
            and all(word in item.message for word in words)
            and (rule is None or item.rule == rule)
        ):
            return item
    rendered = "\n  ".join(f"{item.rule}: {item.render()}" for item in errors) or "(none)"
    raise AssertionError(
        f"no violation at {field!r} with {words!r} (rule {rule}); got:\n  {rendered}"
    )


def without_rule(errors: list[FieldError], rule: str) -> bool:
    return all(item.rule != rule for item in errors)


# --- table-driven rule cases -------------------------------------------------------


@dataclass
class Bad:
    """A failing case: ``new`` (and ``old`` for UPDATE) must violate ``rule`` at ``path``."""

    rule: str
    new: dict[str, Any]
    path: str
    words: tuple[str, ...]
    old: dict[str, Any] | None = None
    options: dict[str, Any] = dataclass_field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.rule}:{self.path}:{self.words[0] if self.words else ''}"[:90]


@dataclass
class Good:
    """A passing case for ``rule``: the object (or update) has no violation at all."""

    rule: str
    new: dict[str, Any]
    old: dict[str, Any] | None = None
    options: dict[str, Any] = dataclass_field(default_factory=dict)
    note: str = ""

    @property
    def id(self) -> str:
        return f"{self.rule}:{self.note}"[:90]


def bad(
    rule: str,
    new: Any,
    path: str,
    *words: str,
    old: Any = None,
    **options: Any,
) -> Bad:
    """A failing case; ``new`` and ``old`` are builders or raw dicts."""
    return Bad(rule, raw(new), path, words, raw(old), options)


def good(
    rule: str,
    new: Any,
    *,
    old: Any = None,
    note: str = "",
    **options: Any,
) -> Good:
    """A passing case; ``new`` and ``old`` are builders or raw dicts."""
    return Good(rule, raw(new), raw(old), options, note)


def check_bad(validator: Any, case: Bad) -> None:
    errors = validator(case.new, case.old, **case.options)
    found = find(errors, case.path, *case.words, rule=case.rule)
    assert found.origin in ("S", "C", "A", "W", "L", "K")


def check_good(validator: Any, case: Good) -> None:
    errors = validator(case.new, case.old, **case.options)
    assert errors == [], "\n".join(f"{item.rule}: {item.render()}" for item in errors)
