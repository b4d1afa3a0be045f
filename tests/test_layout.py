"""The layout a newcomer reads: no import cycles, one meaning per name within a package, the docs list every module.

The module list is the "## Layout" block of the docs' architecture page (docs/explanation/architecture.md).

Imports are read with ``ast`` (nothing is imported), including those inside functions, since a
function-level import that closes a circle is still a circle: it only hides until that function runs.
"""

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "specmath"
#: the page whose "## Layout" block lists every module with one line saying what it is
ARCHITECTURE = ROOT / "docs" / "explanation" / "architecture.md"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(name: str, path: Path) -> set[str]:
    """specmath modules that ``name`` imports anywhere in its source (top level or in functions)."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                # from .x import y: relative to this package
                base = name.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            # "from a.b import c" imports a.b, and a.b.c when c is a module
            candidates = [stem] + [f"{stem}.{alias.name}" for alias in node.names]
        else:
            continue
        for candidate in candidates:
            # the longest specmath module a dotted name refers to
            while candidate and candidate not in MODULES:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                found.add(candidate)
    return found


def import_graph() -> dict[str, set[str]]:
    return {name: imported_modules(name, path) for name, path in MODULES.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph as [a, b, ..., a], or None (depth-first search with colours)."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt in graph:
                if state.get(nxt) == 1:
                    return stack[stack.index(nxt):] + [nxt]
                if nxt not in state and (cycle := visit(nxt)):
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_import_graph_of_specmath_has_no_cycle():
    # nothing is exempt: a package whose __init__ imports a module that imports the package
    # back by name is a circle too
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_function_level_imports_are_edges_and_a_circle_is_found_and_named():
    # plot_bug_zoo_tv imports the bug zoo inside the function: it is an edge all the same
    name = "specmath.plots.beyond_plots"
    assert "specmath.bugzoo" in imported_modules(name, MODULES[name])
    # add the reverse edge: the search must report exactly that circle
    graph = import_graph()
    closed = graph | {"specmath.bugzoo": graph["specmath.bugzoo"] | {name}}
    assert find_cycle(closed) == ["specmath.bugzoo", name, "specmath.bugzoo"]


def test_module_basenames_are_unique_within_each_package():
    # one name, one meaning inside a package (``audit/rounds/runner.py`` and ``audit/trees/runner.py`` are two
    # packages' runners; two ``runner.py`` in one folder cannot exist, but ``runner.py`` beside ``runner/`` can)
    for folder in sorted({p.parent for p in PACKAGE.rglob("*.py")}):
        modules = {p.stem for p in folder.glob("*.py")}
        packages = {d.name for d in folder.iterdir() if (d / "__init__.py").is_file()}
        both = sorted(modules & packages)
        assert not both, f"{folder.relative_to(ROOT)} has a module and a package of the same name: {both}"


def documented_layout() -> list[tuple[str, str]]:
    """(path, description) for every module line of the architecture page's Layout block."""
    text = ARCHITECTURE.read_text()
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```", 2)[1]
    rows, directory = [], None
    for line in block.splitlines():
        if not line.strip():
            continue
        first, _, rest = line.strip().partition(" ")
        if not line.startswith(" "):
            directory = first if first.startswith("specmath/") else None
        elif first.endswith(".py"):
            assert directory, f"{ARCHITECTURE.name} Layout lists {first} outside a specmath/ directory line"
            rows.append((directory + first, rest.strip()))
    return rows


def test_documented_layout_lists_every_module_once_with_what_it_is():
    listed = documented_layout()
    paths = [path for path, _ in listed]
    on_disk = {str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py") if p.read_text().strip()}
    twice = sorted(path for path, n in Counter(paths).items() if n > 1)
    assert not twice, f"the Layout block lists these more than once: {twice}"
    missing = sorted(on_disk - set(paths))
    assert not missing, "the Layout block of docs/explanation/architecture.md lacks a line for: " + ", ".join(missing)
    ghosts = sorted(set(paths) - on_disk)
    assert not ghosts, f"the Layout block lists modules that do not exist: {ghosts}"
    assert all(re.search(r"\w", description) for _, description in listed), "every module line says what it is"
