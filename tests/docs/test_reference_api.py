"""The reference documents exactly the public API; the internals page only what is marked internal.

The rule (docs/reference/index.md): every module of a package is public unless its docstring's first
line starts with "Internal:" (or its package's does). The reference pages' ``specmath-modules``
directives are read here and expanded as ``docs/_ext/specmath_docs.py`` expands them, without Sphinx.
"""

import importlib
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

from specmath_docs import INTERNAL_MARK, is_internal, package_modules  # noqa: E402

#: a directive, its package and its option lines
DIRECTIVE = re.compile(r"^\.\. specmath-modules:: (\S+)\n((?:   :.*\n)*)", re.MULTILINE)


def documented(page: Path) -> list[tuple[str, bool]]:
    """(module, internal directive) for every module the page's directives document, as the extension picks them."""
    out = []
    for match in DIRECTIVE.finditer(page.read_text()):
        package, options = match.group(1), dict(re.findall(r"   :(\w+):[ ]?(.*)", match.group(2)))
        names = package_modules(package)
        if "only" in options:
            wanted = {n if n == package else f"{package}.{n}" for n in options["only"].split()}
            names = [n for n in names if n in wanted]
        excluded = {f"{package}.{n}" for n in options.get("exclude", "").split()}
        internal = "internal" in options
        out += [(n, internal) for n in names if n not in excluded and is_internal(n) == internal]
    return out


PAGES = sorted(REFERENCE.glob("*.rst"))
ENTRIES = [(name, internal, page.name) for page in PAGES for name, internal in documented(page)]
PUBLIC_PAGES = [(name, page) for name, internal, page in ENTRIES if not internal]
INTERNAL_PAGES = [(name, page) for name, internal, page in ENTRIES if internal]


def all_modules() -> list[str]:
    """Every module of specmath, a package as its own name (``__main__`` and empty files left out)."""
    names = []
    for path in sorted((ROOT / "specmath").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__main__" or not path.read_text().strip():
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_public_module_is_in_the_reference_once_and_no_internal_one_is():
    public = [m for m in all_modules() if not is_internal(m)]
    listed = [name for name, _ in PUBLIC_PAGES]
    assert sorted(set(public) - set(listed)) == [], "public modules the reference leaves out"
    assert [m for m in listed if listed.count(m) > 1] == [], "modules documented twice"
    assert [m for m in listed if is_internal(m)] == []


def test_the_internals_page_documents_only_internal_modules_and_only_there():
    assert {page for _, page in INTERNAL_PAGES} == {"internals.rst"}
    assert all(is_internal(name) for name, _ in INTERNAL_PAGES) and INTERNAL_PAGES
    assert not {name for name, _ in INTERNAL_PAGES} & {name for name, _ in PUBLIC_PAGES}


@pytest.mark.parametrize("package", sorted({m for m in all_modules() if (ROOT / Path(*m.split("."))).is_dir()}))
def test_a_packages_public_names_are_defined_in_public_modules(package):
    # the reference lists a package's __all__, each name linked where it is defined: a public page
    if is_internal(package):
        return
    module = importlib.import_module(package)
    homes = {name: getattr(getattr(module, name), "__module__", package) for name in getattr(module, "__all__", [])}
    assert {name: home for name, home in homes.items() if home.startswith("specmath") and is_internal(home)} == {}


def test_a_module_is_internal_when_its_docstring_or_its_packages_starts_with_the_mark():
    assert INTERNAL_MARK == "Internal:"
    assert is_internal("specmath.audit.rounds.builtin_adapters") and not is_internal("specmath.audit.rounds.runner")
    assert is_internal("specmath.commands.audit_command")  # its package is internal
    assert not is_internal("specmath") and not is_internal("specmath.sampling_options")
