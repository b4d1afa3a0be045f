"""Opening and saving a notebook in JupyterLab leaves the repository clean.

JupyterLab sets the notebook's ``kernelspec`` from the kernel spec (ipykernel's display name "Python 3
(ipykernel)") and ``language_info`` from the kernel's reply when the kernel starts, and saves through
jupytext, which rewrites the paired ``.py`` from the notebook. So the committed files must already be
what that save writes: the metadata as ipykernel reports it, the ``.ipynb`` in nbformat's own layout,
and the ``.py`` exactly as jupytext writes it from the ``.ipynb``. (Checked once by hand with a real
JupyterLab in headless Chromium: open, let the kernel start, Ctrl+S, then ``git status``.)
A kernel of another Python version writes its own ``language_info.version`` on save; the notebooks
carry the version of the Python that environment.yml names.
"""

import re
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))


def _kernel_metadata():
    from ipykernel.ipkernel import IPythonKernel
    from ipykernel.kernelspec import get_kernel_dict

    spec = get_kernel_dict()
    return ({"display_name": spec["display_name"], "language": spec["language"], "name": "python3"},
            dict(IPythonKernel.language_info))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_metadata_is_what_jupyterlab_writes_when_its_kernel_starts(path):
    kernelspec, language_info = _kernel_metadata()
    meta = nbformat.read(path, as_version=4).metadata
    assert meta.kernelspec == kernelspec
    assert {k: v for k, v in meta.language_info.items() if k != "version"} == {
        k: v for k, v in language_info.items() if k != "version"}
    assert meta.jupytext == {"formats": "ipynb,py:percent"}


def test_every_notebook_names_the_python_version_of_environment_yml():
    pinned = re.search(r"^\s*- python=(\d+\.\d+)", (ROOT / "environment.yml").read_text(), re.M).group(1)
    versions = {nbformat.read(p, as_version=4).metadata.language_info["version"] for p in NOTEBOOKS}
    assert len(versions) == 1 and versions.pop().startswith(pinned + ".")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_save_rewrites_the_same_ipynb_and_py(path):
    nb = nbformat.read(path, as_version=4)
    assert nbformat.writes(nb) + "\n" == path.read_text(encoding="utf-8"), f"{path.name} is not in nbformat's own layout"
    assert jupytext.writes(nb, fmt="py:percent") == path.with_suffix(".py").read_text(encoding="utf-8"), (
        f"{path.with_suffix('.py').name} is not what jupytext writes from {path.name}: run jupytext --sync")
