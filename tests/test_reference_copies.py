"""The reference documents copied into ``tests/reference`` must match their
source in ``shared/`` (beside the repository, where CI always has it), so the
suite never tests against a stale copy."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "tests" / "reference"
SHARED = Path(os.environ.get("KUOTA_SHARED_DIR", ROOT.parent / "shared"))
COPIES = [
    *[(f"seeds/{p.name}", f"seeds/{p.name}") for p in sorted((REFERENCE / "seeds").glob("*.txt"))],
    ("validation.md", "spec/validation.md"),
]


@pytest.mark.parametrize(("copy", "source"), COPIES, ids=[copy for copy, _ in COPIES])
def test_copy_matches_shared(copy: str, source: str) -> None:
    if not SHARED.is_dir():
        pytest.skip(f"shared/ is not beside the repository ({SHARED}); nothing to compare against")
    assert (REFERENCE / copy).read_bytes() == (SHARED / source).read_bytes(), (
        f"tests/reference/{copy} differs from shared/{source}: copy it again"
    )


def test_every_shared_seed_has_a_copy() -> None:
    if not SHARED.is_dir():
        pytest.skip(f"shared/ is not beside the repository ({SHARED}); nothing to compare against")
    shared = {p.name for p in (SHARED / "seeds").glob("*.txt")}
    copied = {p.name for p in (REFERENCE / "seeds").glob("*.txt")}
    assert shared == copied
