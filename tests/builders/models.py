"""The one place test objects become the engine's typed models.

The core tests drive the same :class:`~scheduler.core.engine.Engine` as the scheduler,
which takes parsed records; :func:`model` parses a builder (or a raw dict) with the
product's own parser (:func:`scheduler.api.parse.parse_object`), so a test never
re-implements parsing and a builder that writes a malformed object fails the same way
a user's manifest would.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api.parse import parse_object
from scheduler.core.engine import Engine
from tests.builders.base import Built


def model(obj: Built | Mapping[str, Any]) -> Any:
    """The typed model of a builder's object or a raw dict (Kueue kinds, Configuration)."""
    return parse_object(obj.build() if isinstance(obj, Built) else obj)


def engine_with(*objects: Any, config: Any = None, **options: Any) -> Engine:
    """An :class:`Engine` (``config``: a Configuration builder or model) holding ``objects``:
    builders, raw dicts or models, applied in order."""
    if isinstance(config, Built):
        config = model(config)
    engine = Engine(config, **options)
    for obj in objects:
        engine.apply(model(obj) if isinstance(obj, Built | Mapping) else obj)
    return engine
