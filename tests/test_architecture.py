"""The layering of docs/architecture.md#layers-and-imports, enforced: a wrong import fails CI."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    # Every contract of pyproject.toml ran and held (10: layers, client wing, the core's).
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    count = len(contracts["contracts"])
    assert count >= 10, count
    assert f"Contracts: {count} kept, 0 broken" in result.stdout, result.stdout
