"""Field paths and field errors: the one shape every validation result takes.

A violation names the field the way Kubernetes does
(``spec.resourceGroups[0].flavors[1].resources[0].nominalQuota``) so that the
webhook, ``kuota validate`` and the parse errors of the models all render the
same line: ``<field.path>: <message>``.  Paths are built by appending, never by
string formatting at the call site, so an index or key can never be rendered
two different ways.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Origin = Literal["S", "C", "A", "W", "L", "K"]
"""Where upstream Kueue enforces a rule.

S: the CRD's schema; C: a CEL rule of the CRD; A: the API server's generic
rules; W: Kueue's validating webhook; L: Kueue's webhook for the legacy
``v1alpha1``/``v1alpha2`` shapes; K: kuota's own addition.  S/C/A/L/K
violations make the webhook answer 422 Invalid; a response whose violations
are all W answers 403 Forbidden (docs/validation.md#error-format).
"""


@dataclass(frozen=True, slots=True)
class FieldPath:
    """An immutable path into an object, rendered like Kubernetes field paths."""

    parts: tuple[str | int, ...] = ()

    @classmethod
    def parse(cls, dotted: str) -> FieldPath:
        """Build a path from ``"spec.resourceGroups"``-style text (no indexes)."""
        return cls(tuple(part for part in dotted.split(".") if part))

    def child(self, *names: str) -> FieldPath:
        return FieldPath(self.parts + names)

    def index(self, position: int) -> FieldPath:
        return FieldPath(self.parts + (position,))

    def key(self, name: str) -> FieldPath:
        """A map key; rendered ``[name]`` like apimachinery's ``Key``."""
        return FieldPath(self.parts + (f"[{name}]",))

    def __str__(self) -> str:
        rendered = ""
        for part in self.parts:
            if isinstance(part, int):
                rendered += f"[{part}]"
            elif part.startswith("["):
                rendered += part
            else:
                rendered += f".{part}" if rendered else part
        return rendered


@dataclass(frozen=True, slots=True)
class FieldError:
    """One violation: the field it concerns, the message, and where Kueue checks it."""

    field: str
    message: str
    origin: Origin = "W"
    rule: str = ""

    def render(self) -> str:
        """The line a user reads: ``<field.path>: <message>``."""
        return f"{self.field}: {self.message}" if self.field else self.message


def error(
    path: FieldPath | str, message: str, *, origin: Origin = "W", rule: str = ""
) -> FieldError:
    """Shorthand used by validators: pure."""
    return FieldError(field=str(path), message=message, origin=origin, rule=rule)


class ParseError(ValueError):
    """A raw object that cannot become a model; carries every field error found."""

    def __init__(self, errors: list[FieldError]) -> None:
        self.errors = errors
        super().__init__("; ".join(item.render() for item in errors))
