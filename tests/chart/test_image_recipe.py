"""kuota's image: the Dockerfile and the Docker-free recipe describe the same image,
and the OCI archive the recipe writes is one a runtime can load.

The image itself is built and run by ``make image`` and the real-node e2e
test (e2e/test_real_node.py); these are the fast checks of the pieces.
"""

from __future__ import annotations

import hashlib
import re
import tarfile
from pathlib import Path

import pytest

from e2e.image import oci, recipe
from e2e.image.build import image_config

DOCKERFILE = recipe.REPO_ROOT / "Dockerfile"


def _stages() -> list[str]:
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    return re.split(r"^FROM ", text, flags=re.MULTILINE)[1:]


def _apt_packages(stage: str) -> set[str]:
    match = re.search(r"apt-get install [^&]*?--no-install-recommends ([\w. -]+?)\s*&&", stage)
    assert match, stage
    return set(match.group(1).split())


def test_both_stages_start_from_debian_bookworm_with_the_recipes_packages() -> None:
    build, runtime = _stages()
    assert build.startswith(f"debian:{recipe.SUITE}-slim AS build")
    assert runtime.startswith(f"debian:{recipe.SUITE}-slim\n")
    assert _apt_packages(build) == set(recipe.RUNTIME_PACKAGES + recipe.BUILD_PACKAGES)
    assert _apt_packages(runtime) == set(recipe.RUNTIME_PACKAGES)


def test_the_runtime_settings_match_the_recipes() -> None:
    runtime = " ".join(_stages()[1].split())
    for name, value in recipe.ENV.items():
        assert f"{name}={value}" in runtime, name
    assert f"USER {recipe.UID}:{recipe.GID}" in runtime
    assert f"--gid {recipe.GID} {recipe.USER_NAME}" in runtime
    assert f"--uid {recipe.UID} --gid {recipe.USER_NAME}" in runtime
    assert f"WORKDIR {recipe.WORKDIR}" in runtime
    assert "EXPOSE " + " ".join(str(p) for p in recipe.EXPOSED_PORTS) in runtime
    assert "CMD " + str(list(recipe.CMD)).replace("'", '"') in runtime
    assert f"COPY --from=build {recipe.VENV} {recipe.VENV}" in runtime


def test_the_image_is_named_as_kubelet_asks_for_the_charts_default(tmp_path: Path) -> None:
    chart = (recipe.REPO_ROOT / "charts" / "kuota" / "Chart.yaml").read_text()
    assert f'appVersion: "{recipe.version()}"' in chart
    assert recipe.reference() == f"docker.io/library/kuota:{recipe.version()}"


@pytest.fixture
def archive(tmp_path: Path) -> tuple[Path, bytes]:
    payload = tmp_path / "hello.txt"
    payload.write_text("hello\n")
    layer = tmp_path / "layer.tar"
    with tarfile.open(layer, "w") as tar:
        tar.add(payload, arcname="hello.txt")
    target = tmp_path / "image.oci.tar"
    oci.write_layout(layer, image_config(), tmp_path / "layout")
    oci.archive(tmp_path / "layout", target)
    return target, layer.read_bytes()


def test_the_archive_is_an_oci_layout_with_verifiable_digests(
    archive: tuple[Path, bytes],
) -> None:
    target, layer = archive
    index, manifest, config = oci.read_archive(target)
    with tarfile.open(target) as tar:
        names = set(tar.getnames())
        blobs = {
            name.rsplit("/", 1)[1]: tar.extractfile(name).read()  # type: ignore[union-attr]
            for name in names
            if name.startswith("blobs/sha256/") and name.count("/") == 2
        }
    assert {"oci-layout", "index.json"} <= names
    for digest, data in blobs.items():
        assert hashlib.sha256(data).hexdigest() == digest
    assert config["rootfs"]["diff_ids"] == ["sha256:" + hashlib.sha256(layer).hexdigest()]
    assert manifest["layers"][0]["mediaType"] == oci.LAYER_MEDIA_TYPE
    annotations = index["manifests"][0]["annotations"]
    assert annotations["io.containerd.image.name"] == recipe.reference()
    assert annotations["org.opencontainers.image.ref.name"] == recipe.version()


def test_the_archive_config_runs_as_the_charts_user(archive: tuple[Path, bytes]) -> None:
    _, _, config = oci.read_archive(archive[0])
    runtime = config["config"]
    assert runtime["User"] == f"{recipe.UID}:{recipe.GID}"
    assert runtime["Env"][0].startswith(f"PATH={recipe.VENV}/bin:")
    assert runtime["Cmd"] == list(recipe.CMD)
