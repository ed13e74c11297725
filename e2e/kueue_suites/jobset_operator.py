"""JobSet installed as Kueue's e2e installs it, for the singlecluster/extended suite.

The suite's BeforeSuite waits for the Deployment ``jobset-system/jobset-controller-manager``
to be Available with no container restarts (``util.WaitForJobSetAvailability``), as Kueue's
CI installs JobSet's release manifests (``hack/testing/e2e-common.sh``: ``JOBSET_MANIFEST``).
Here the same: JobSet's own ``config/default`` rendered by kustomize, its manager in an
image on the real node.  Both are built from Go modules, nothing is downloaded prebuilt:

- the manager: the pinned JobSet build of :mod:`e2e.cluster.jobset_tools` (the one kuota's
  own e2e runs), in a one-file OCI image named as JobSet's release image
  (``registry.k8s.io/jobset/jobset:<version>``, ``/manager`` run as 65532), loaded into the
  real node's containerd;
- the manifests: ``kustomize build`` of the module's ``config/default`` (kustomize built
  with ``go install`` from the module proxy), with the image's pull policy ``IfNotPresent``
  and the pods placed on the real node (its selector and toleration), nothing else changed.

Both land in the Kueue e2e build's directory, under the tools cache's lock.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import yaml

from e2e.cluster.jobset_tools import JOBSET, MODULE, JobSetTools
from e2e.cluster.tools import _exclusive_lock, _go_env, _step, cache_root
from e2e.image import oci

from .tools import version_dir

KUSTOMIZE = "v5.8.1"
IMAGE = f"registry.k8s.io/jobset/jobset:{JOBSET}"
NAMESPACE = "jobset-system"
DEPLOYMENT = "jobset-controller-manager"


def directory() -> Path:
    return version_dir() / "jobset"


def image_archive() -> Path:
    return directory() / f"jobset-{JOBSET}.oci.tar"


def manifests_file() -> Path:
    return directory() / f"jobset-{JOBSET}.yaml"


def _image(manager: Path, target: Path, workdir: Path) -> None:
    layer = workdir / "layer.tar"
    with tarfile.open(layer, "w") as tar:
        info = tar.gettarinfo(str(manager), arcname="manager")
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mode = 0o755
        with open(manager, "rb") as handle:
            tar.addfile(info, handle)
    config = oci.ImageConfig(
        reference=IMAGE,
        env={},
        cmd=(),
        entrypoint=("/manager",),
        user="65532:65532",
        workdir="/",
    )
    oci.write_layout(layer, config, workdir / "layout")
    oci.archive(workdir / "layout", target)


def placed(
    documents: list[dict[str, Any]], selector: dict[str, str], toleration: dict[str, str]
) -> list[dict[str, Any]]:
    """JobSet's objects with its manager on the given node and its image used as loaded (pure)."""
    out = []
    for document in documents:
        if document.get("kind") == "Deployment":
            document = json.loads(json.dumps(document))
            pod = document["spec"]["template"]["spec"]
            pod["nodeSelector"] = {**pod.get("nodeSelector", {}), **selector}
            pod["tolerations"] = [*pod.get("tolerations", []), dict(toleration)]
            for container in pod["containers"]:
                container["image"] = IMAGE
                container["imagePullPolicy"] = "IfNotPresent"
        out.append(document)
    return out


def _module_dir(env: dict[str, str], cwd: Path) -> Path:
    out = subprocess.run(
        ["go", "mod", "download", "-json", f"{MODULE}@{JOBSET}"],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return Path(json.loads(out)["Dir"])


def build() -> tuple[Path, Path]:
    """(the image archive, the rendered manifests), built once into the cache."""
    with _exclusive_lock(cache_root()):
        if image_archive().is_file() and manifests_file().is_file():
            return image_archive(), manifests_file()
        jobset = JobSetTools.resolve()
        target = directory()
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="kuota-jobset-") as scratch:
            work = Path(scratch)
            env = _go_env({"GOBIN": str(work / "bin")})
            _step(
                "go install kustomize",
                [
                    "go",
                    "install",
                    "-trimpath",
                    "-ldflags",
                    "-s -w",
                    f"sigs.k8s.io/kustomize/kustomize/v5@{KUSTOMIZE}",
                ],
                cwd=work,
                env=env,
            )
            config = work / "config"
            shutil.copytree(_module_dir(env, work) / "config", config)
            rendered = subprocess.run(
                [str(work / "bin" / "kustomize"), "build", str(config / "default")],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            partial = manifests_file().with_suffix(".partial")
            partial.write_text(rendered)
            _image(jobset.manager, image_archive().with_suffix(".partial"), work)
            image_archive().with_suffix(".partial").rename(image_archive())
            partial.rename(manifests_file())
        return image_archive(), manifests_file()


def documents(selector: dict[str, str], toleration: dict[str, str]) -> list[dict[str, Any]]:
    """The objects to apply (reads the rendered manifests)."""
    loaded = [doc for doc in yaml.safe_load_all(manifests_file().read_text()) if doc]
    return placed(loaded, selector, toleration)
