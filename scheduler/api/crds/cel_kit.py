"""Helpers that write the CEL of the CRDs' rules (``cel_workload.py``, ``cel_other.py``)."""

from __future__ import annotations


def message_format(template: str, **values: str) -> str:
    """CEL: ``template`` (a rule_text message with ``{name}`` holes) filled from expressions.

    Written as ``'...%s...'.format([...])``: the API server bounds the cost of
    ``format``, while ``string(int)`` in a concatenation has an unbounded size
    estimate and breaks the CRD's cost budget.
    """
    if any(c in template for c in "'\\%"):
        raise ValueError(f"text not expressible as a plain CEL literal: {template!r}")
    names: list[str] = []
    pattern = ""
    rest = template
    while "{" in rest:
        before, _, after = rest.partition("{")
        name, _, rest = after.partition("}")
        pattern += before + "%s"
        names.append(values[name])
    pattern += rest
    return f"'{pattern}'.format([{', '.join(names)}])"


def whole_match(pattern: str) -> str:
    """CEL: ``self`` matches ``pattern`` whole (a raw string: the patterns hold backslashes)."""
    return f"self.matches(r'^{pattern}$')"
