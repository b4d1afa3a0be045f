"""environment.yml (conda) and pyproject.toml (pip) describe the same environment."""

import re
from pathlib import Path

import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_names_the_same_dependencies_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        wanted |= {_name(r) for r in extra}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda, pip = set(), set()
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip |= {_name(r) for r in dep["pip"] if not r.startswith("-")}
        else:
            conda.add(_name(dep))
    conda -= {"python", "pip"}
    assert conda | pip == wanted, (sorted(wanted - conda - pip), sorted((conda | pip) - wanted))
    assert not conda & pip


def test_torch_is_pinned_identically_in_both_files():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [r for r in project["optional-dependencies"]["torch"] if _name(r) == "torch"]
    assert pins == ["torch==2.13.0"]
    assert "torch==2.13.0" in (ROOT / "environment.yml").read_text()
