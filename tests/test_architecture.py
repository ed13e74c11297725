"""The layering and the size limits of docs/architecture.md#layers-and-imports, enforced:
a wrong import, an oversized module or class fails CI."""

from __future__ import annotations

import ast
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


PRODUCT_PACKAGES = ("scheduler", "webhook", "certs")
MAX_MODULE_LINES = 600
MAX_CLASS_METHODS = 20


def _product_modules() -> list[Path]:
    return sorted(p for package in PRODUCT_PACKAGES for p in (ROOT / package).rglob("*.py"))


def test_no_product_module_over_the_line_limit() -> None:
    too_long = {
        str(path.relative_to(ROOT)): lines
        for path in _product_modules()
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not too_long, f"split by responsibility (docs/architecture.md): {too_long}"


def test_no_product_class_over_the_method_limit() -> None:
    too_big = {}
    for path in _product_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                methods = [
                    item
                    for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                ]
                if len(methods) > MAX_CLASS_METHODS:
                    too_big[f"{path.relative_to(ROOT)}:{node.name}"] = len(methods)
    assert not too_big, f"split by responsibility (docs/architecture.md): {too_big}"
