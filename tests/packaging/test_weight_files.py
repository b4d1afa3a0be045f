"""specmath.lm.weight_files: a clone uses its own weight files; without them (specmath installed from its wheel)
the installed specmath_models' copies; neither gives one line saying how to install them."""

from __future__ import annotations

import importlib
import sys
import zipfile
from pathlib import Path

import pytest

from specmath.lm import weight_files
from specmath.lm.weight_files import find_weights

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_models_distribution import MODELS, load_backend  # noqa: E402


@pytest.fixture(scope="module")
def installed_models(tmp_path_factory) -> Path:
    """specmath_models as pip would install it: the backend's wheel unpacked into a folder of its own."""
    out = tmp_path_factory.mktemp("site")
    wheel = out / load_backend(MODELS, "build_models_for_weight_files").build_wheel(str(out))
    zipfile.ZipFile(wheel).extractall(out / "site-packages")
    return out / "site-packages"


@pytest.fixture
def wheel_install(monkeypatch, tmp_path, installed_models):
    """As in a wheel install: specmath/lm/ holds no weights, specmath_models is importable."""
    monkeypatch.setattr(weight_files, "SOURCE_DIR", tmp_path / "specmath" / "lm")
    monkeypatch.syspath_prepend(str(installed_models))
    monkeypatch.delitem(sys.modules, "specmath_models", raising=False)
    importlib.invalidate_caches()
    return installed_models / "specmath_models"


def test_a_clone_finds_its_own_files():
    assert find_weights("bundled", "the bundled pair") == ROOT / "specmath" / "lm" / "bundled"
    table = find_weights("smollm2_draft/ngram.safetensors", "the table")
    assert table == ROOT / "specmath" / "lm" / "smollm2_draft" / "ngram.safetensors"


def test_without_them_the_installed_specmath_models_copies_are_found(wheel_install):
    assert weight_files.installed_models_dir() == wheel_install
    bundled = find_weights("bundled", "the bundled pair")
    assert bundled == wheel_install / "bundled"
    target = ROOT / "specmath" / "lm" / "bundled" / "target" / "model.safetensors"
    assert (bundled / "target" / "model.safetensors").read_bytes() == target.read_bytes()
    table = find_weights("smollm2_draft/ngram.safetensors", "the table")
    assert table == wheel_install / "smollm2_draft" / "ngram.safetensors"


def test_a_file_neither_has_names_both_places(wheel_install):
    with pytest.raises(ValueError, match=r"^the thing not found: neither .*specmath/lm/absent.bin nor "
                                         r".*specmath_models/absent.bin exists; install specmath-models: "
                                         r"`pip install ./models`"):
        find_weights("absent.bin", "the thing")


def test_without_specmath_models_the_error_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setattr(weight_files, "SOURCE_DIR", tmp_path)
    monkeypatch.setattr(weight_files, "MODELS_PACKAGE", "specmath_models_not_installed")
    with pytest.raises(ValueError) as error:
        find_weights("bundled", "the bundled pair's weights")
    message = str(error.value)
    assert message.startswith("the bundled pair's weights not found: ") and "\n" not in message
    assert "specmath-models is not installed" in message and "pip install ./models" in message


def test_the_loaders_look_through_find_weights(wheel_install):
    pytest.importorskip("torch")
    from specmath.lm.bundled import bundled_dir
    from specmath.lm.ngram_draft import default_table_file

    assert bundled_dir() == wheel_install / "bundled"
    assert default_table_file() == wheel_install / "smollm2_draft" / "ngram.safetensors"
