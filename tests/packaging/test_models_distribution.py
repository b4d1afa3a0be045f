"""specmath-models (models/): its build backend puts every weight file of the clone into the wheel, byte for byte,
with a valid RECORD; the sdist rebuilds the same wheel; the build is reproducible; and each file sits at the path
under ``specmath_models/`` that it has under ``specmath/lm/``, where specmath.lm.weight_files looks first."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import tarfile
import zipfile
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
CONFIG = tomllib.loads((MODELS / "pyproject.toml").read_text())
FILES = CONFIG["tool"]["specmath-models"]["files"]


def load_backend(folder: Path, name: str):
    """models/build_models.py (or an unpacked sdist's copy) as a module of its own."""
    spec = importlib.util.spec_from_file_location(name, folder / "build_models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def clone_files() -> dict[str, bytes]:
    """path inside the wheel -> bytes, for every mapped file of the clone."""
    out = {}
    for relative, repo_path in FILES.items():
        source = ROOT / repo_path
        paths = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
        for path in paths:
            inside = relative if path == source else f"{relative}/{path.relative_to(source).as_posix()}"
            out[f"specmath_models/{inside}"] = path.read_bytes()
    return out


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    return out / load_backend(MODELS, "build_models_repo").build_wheel(str(out))


def test_each_file_has_the_path_under_specmath_models_that_it_has_under_specmath_lm():
    assert FILES and all(repo_path == f"specmath/lm/{relative}" for relative, repo_path in FILES.items()), FILES
    # the weights specmath loads are among them
    assert {"bundled", "smollm2_draft/ngram.safetensors"} <= set(FILES)


def test_the_wheel_holds_every_weight_file_of_the_clone_byte_for_byte(wheel):
    archive = zipfile.ZipFile(wheel)
    package = {n: archive.read(n) for n in archive.namelist() if n.startswith("specmath_models/")}
    expected = clone_files()
    assert "specmath_models/bundled/target/model.safetensors" in expected
    assert package.pop("specmath_models/__init__.py") == (MODELS / "specmath_models" / "__init__.py").read_bytes()
    assert package.keys() == expected.keys()
    assert all(package[n] == expected[n] for n in expected), [n for n in expected if package[n] != expected[n]]


def test_the_wheel_metadata_and_record_are_valid(wheel):
    archive = zipfile.ZipFile(wheel)
    project = CONFIG["project"]
    assert wheel.name == f"specmath_models-{project['version']}-py3-none-any.whl"
    dist_info = f"specmath_models-{project['version']}.dist-info"
    metadata = archive.read(f"{dist_info}/METADATA").decode()
    assert f"Name: {project['name']}\n" in metadata and f"Version: {project['version']}\n" in metadata
    assert project["version"] == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert "Root-Is-Purelib: true" in archive.read(f"{dist_info}/WHEEL").decode()
    record = archive.read(f"{dist_info}/RECORD").decode().splitlines()
    assert record[-1] == f"{dist_info}/RECORD,,"
    listed = {}
    for line in record[:-1]:
        name, digest, size = line.rsplit(",", 2)
        listed[name] = (digest, int(size))
    assert listed.keys() == set(archive.namelist()) - {f"{dist_info}/RECORD"}
    for name, (digest, size) in listed.items():
        data = archive.read(name)
        expected = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert (digest, size) == (expected, len(data)), name


def test_the_build_is_reproducible(wheel, tmp_path):
    again = tmp_path / load_backend(MODELS, "build_models_again").build_wheel(str(tmp_path))
    assert again.read_bytes() == wheel.read_bytes()


def test_the_sdist_carries_the_weights_and_builds_the_same_wheel(wheel, tmp_path):
    sdist = tmp_path / load_backend(MODELS, "build_models_sdist").build_sdist(str(tmp_path))
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    (folder,) = (tmp_path / "unpacked").iterdir()
    assert (folder / "specmath_models" / "bundled" / "target" / "model.safetensors").is_file()
    out = tmp_path / "from-sdist"
    out.mkdir()
    rebuilt = out / load_backend(folder, "build_models_unpacked").build_wheel(str(out))
    assert rebuilt.read_bytes() == wheel.read_bytes()
