"""Running the built helm binary on the chart, for the render tests and the e2e chart test.

helm is one of the control-plane tools that ``make test`` builds before the
tests run (``e2e.cluster.tools``), so these helpers never skip: a missing
binary is an error that says how to build it.  Each call gets its own
``HELM_*_HOME`` directories, so nothing of the user's helm setup leaks in.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from e2e.cluster.tools import ToolPaths

REPO_ROOT = Path(__file__).resolve().parents[2]
CHART = REPO_ROOT / "charts" / "kuota"
RELEASE = "kuota"
NAMESPACE = "kueue-system"


def helm_binary() -> Path:
    return ToolPaths.resolve(build_if_missing=False).binary("helm")


def helm_env(home: Path) -> dict[str, str]:
    """A clean environment for helm: its own config, cache and data homes under ``home``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("HELM_")}
    for name in ("CONFIG", "CACHE", "DATA"):
        env[f"HELM_{name}_HOME"] = str(home / name.lower())
    return env


def run_helm(
    *args: str, check: bool = True, kubeconfig: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run helm with fresh homes; raise with its output when ``check`` and it fails."""
    with tempfile.TemporaryDirectory(prefix="kuota-helm-") as home:
        argv = [str(helm_binary()), *args]
        if kubeconfig is not None:
            argv += ["--kubeconfig", str(kubeconfig)]
        done = subprocess.run(
            argv, capture_output=True, text=True, env=helm_env(Path(home)), timeout=timeout
        )
    if check and done.returncode != 0:
        raise AssertionError(
            f"helm {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
        )
    return done


def set_args(values: Mapping[str, Any]) -> list[str]:
    """``--set-json key=<json>`` for each value (types kept exactly)."""
    import json

    args: list[str] = []
    for key, value in values.items():
        args += ["--set-json", f"{key}={json.dumps(value)}"]
    return args


def render_text(
    values: Mapping[str, Any] | None = None,
    *,
    release: str = RELEASE,
    namespace: str = NAMESPACE,
    value_files: Iterable[Path] = (),
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    files = [arg for path in value_files for arg in ("-f", str(path))]
    return run_helm(
        "template",
        release,
        str(CHART),
        "-n",
        namespace,
        *files,
        *set_args(values or {}),
        check=check,
    )


def render(values: Mapping[str, Any] | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    """Every object ``helm template`` renders for ``values`` (empty documents dropped)."""
    return [doc for doc in yaml.safe_load_all(render_text(values, **kwargs).stdout) if doc]


def by_kind(objects: Iterable[Mapping[str, Any]], kind: str) -> list[Mapping[str, Any]]:
    return [obj for obj in objects if obj["kind"] == kind]


def one(objects: Iterable[Mapping[str, Any]], kind: str, name: str) -> Mapping[str, Any]:
    found = [obj for obj in objects if obj["kind"] == kind and obj["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]
