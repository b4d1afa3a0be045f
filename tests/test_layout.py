"""The layout a newcomer reads: no import cycles, imports only along the layers, torch only where it runs,
one meaning per name within a package, the docs list every module.

The layers, their allowed same-layer edges and the modules that may import torch at their top are the
two tables of the "## Layers" section of the docs' architecture page (docs/explanation/architecture.md);
the module list is its "## Layout" block. The tests read them there, so the page says what is enforced.

Imports are read with ``ast`` (nothing is imported), including those inside functions, since a
function-level import that closes a circle is still a circle: it only hides until that function runs.
The layer check also counts lazy imports named by a string constant (``"specmath.x"`` or
``"specmath.x:attr"``, as ``importlib`` and ``specmath.registry`` load them).
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


# -- layers ------------------------------------------------------------------------------------------

def _section(title: str) -> str:
    return ARCHITECTURE.read_text().split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _table_rows(text: str, header: str) -> list[list[str]]:
    """The cells of the Markdown table whose header row starts with ``| header |``, header and rule left out."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header} |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def documented_layers() -> tuple[dict[str, int], set[tuple[str, str]], set[int]]:
    """(unit -> layer number, allowed same-layer edges (a, b), layers whose units import one another freely)."""
    layer_of, edges, free = {}, set(), set()
    for layer, units, same_layer in _table_rows(_section("Layers"), "layer"):
        number = int(layer.split()[0])
        for unit in _ticked(units):
            assert unit not in layer_of, f"{unit} is in two layers of {ARCHITECTURE.name}"
            layer_of[unit] = number
        if same_layer.startswith("any"):
            free.add(number)
        for edge in _ticked(same_layer):
            a, arrow, b = edge.partition(" -> ")
            assert arrow, f"a same-layer edge reads `a -> b`, got {edge!r}"
            edges.add((a, b))
    return layer_of, edges, free


def documented_torch_modules() -> list[str]:
    """The paths (``lm/`` or ``x/y.py``, under specmath/) the page allows to import torch at module top."""
    return [_ticked(row[0])[0] for row in _table_rows(_section("Layers"), "imports torch at module top")]


def unit_of(module: str) -> str:
    """The layer table's unit of a module: its package under specmath/, or its own name at the top."""
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1]


#: a string constant naming a specmath module, or a module and an attribute (a lazy import)
LAZY_NAME = re.compile(r"specmath(\.\w+)+(:\w+)?")


def lazily_imported_modules(name: str, path: Path) -> set[str]:
    """specmath modules that string constants of ``name`` name whole (``"specmath.x.y"``, ``"specmath.x:attr"``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and LAZY_NAME.fullmatch(node.value):
            module = node.value.partition(":")[0]
            assert module in MODULES, f"{name} names {node.value!r}, but there is no module {module}"
            if module != name:
                found.add(module)
    return found


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every edge a -> b of ``graph`` that goes to a later layer, or across units of one layer unlisted."""
    layer_of, allowed, free = documented_layers()
    bad = []
    for a in sorted(graph):
        for b in sorted(graph[a]):
            ua, ub = unit_of(a), unit_of(b)
            if ua not in layer_of or ub not in layer_of:
                continue  # a unit the table lacks: test_every_unit_of_specmath_has_one_layer names it
            la, lb = layer_of[ua], layer_of[ub]
            if lb > la or (lb == la and ua != ub and la not in free and (ua, ub) not in allowed):
                why = "a later layer" if lb > la else "the same layer, an edge the table does not list"
                bad.append(f"{a} -> {b}: {ua} (layer {la}) imports {ub} ({why}, layer {lb})")
    return bad


def layered_graph() -> dict[str, set[str]]:
    return {name: imported_modules(name, path) | lazily_imported_modules(name, path) for name, path in MODULES.items()}


def test_every_unit_of_specmath_has_one_layer():
    layer_of, allowed, _ = documented_layers()
    units = {unit_of(name) for name in MODULES}
    assert not units - set(layer_of), f"{ARCHITECTURE.name}'s layer table lacks: {sorted(units - set(layer_of))}"
    assert not set(layer_of) - units, f"{ARCHITECTURE.name}'s layer table names units that do not exist: {sorted(set(layer_of) - units)}"
    for a, b in allowed:
        assert layer_of[a] == layer_of[b], f"the same-layer edge {a} -> {b} joins layers {layer_of[a]} and {layer_of[b]}"


def test_every_import_goes_to_an_earlier_layer_or_along_a_listed_edge():
    bad = layer_violations(layered_graph())
    assert not bad, "imports against the layers of docs/explanation/architecture.md:\n" + "\n".join(bad)


def test_an_import_against_the_layers_is_found_and_named():
    graph = layered_graph()
    # the core importing the bug zoo (a later layer), inside a function: the test must name it
    upward = graph | {"specmath.laws": graph["specmath.laws"] | {"specmath.bugzoo.zoo"}}
    assert layer_violations(upward) == [
        "specmath.laws -> specmath.bugzoo.zoo: laws (layer 1) imports bugzoo (a later layer, layer 3)"]
    # proofs and the bug zoo share a layer, and no edge between them is listed
    sideways = graph | {"specmath.proofs": graph["specmath.proofs"] | {"specmath.bugzoo"}}
    assert layer_violations(sideways) == [
        "specmath.proofs -> specmath.bugzoo: proofs (layer 3) imports bugzoo (the same layer, an edge the table "
        "does not list, layer 3)"]
    # a lazy import by name is an edge: the command table names its command modules
    name = "specmath.cli"
    assert "specmath.commands.verify_command" in lazily_imported_modules(name, MODULES[name])


# -- torch -------------------------------------------------------------------------------------------

#: the packages a torch-free path must not load
TORCH = ("torch", "transformers")


def _top_level_statements(tree: ast.Module):
    """The statements run when the module is imported: the body, and into if/try/with blocks
    (``if TYPE_CHECKING:`` blocks left out: they never run)."""
    pending = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.If):
            test = node.test
            if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
                    (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
                pending += node.orelse
                continue
            pending += node.body + node.orelse
        elif isinstance(node, (ast.Try, ast.With)):
            pending += node.body + getattr(node, "handlers", []) + getattr(node, "orelse", []) + getattr(node, "finalbody", [])
        elif isinstance(node, ast.ExceptHandler):
            pending += node.body
        else:
            yield node


def top_level_imports(name: str, path: Path, source: str | None = None) -> tuple[set[str], set[str]]:
    """(third-party top-level packages, specmath modules) that importing ``name`` runs an import of."""
    is_package = path.name == "__init__.py"
    outside, inside = set(), set()
    tree = ast.parse(source if source is not None else path.read_text(), filename=str(path))
    for node in _top_level_statements(tree):
        if isinstance(node, ast.Import):
            dotted = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            dotted = [stem] + [f"{stem}.{alias.name}" for alias in node.names]
        else:
            continue
        for candidate in dotted:
            if candidate.split(".")[0] != "specmath":
                outside.add(candidate.split(".")[0])
                continue
            while candidate and candidate not in MODULES:
                candidate = candidate.rpartition(".")[0]
            # importing a.b.c runs a/__init__, a/b/__init__ and a/b/c
            parts = candidate.split(".")
            inside |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)} - {name}
    return outside, inside


def torch_at_top(sources: dict[str, str] | None = None) -> dict[str, set[str]]:
    """module -> the torch packages it imports at its top (modules that import none left out)."""
    found = {}
    for name, path in MODULES.items():
        outside, _ = top_level_imports(name, path, (sources or {}).get(name))
        if hit := outside & set(TORCH):
            found[name] = hit
    return found


def torch_allowed(name: str) -> bool:
    """Whether the architecture page lets module ``name`` import torch at its top."""
    path = str(MODULES[name].relative_to(PACKAGE))
    return any(path.startswith(allowed) if allowed.endswith("/") else path == allowed
               for allowed in documented_torch_modules())


def test_torch_is_imported_at_module_top_only_where_the_page_allows_it():
    for allowed in documented_torch_modules():
        assert (PACKAGE / allowed).exists(), f"{ARCHITECTURE.name} allows torch in {allowed}, which does not exist"
    bad = sorted(f"{name} imports {', '.join(sorted(hit))}" for name, hit in torch_at_top().items() if not torch_allowed(name))
    assert not bad, ("torch at module top outside the modules docs/explanation/architecture.md allows "
                     "(import it in the function that needs it):\n" + "\n".join(bad))


def test_a_torch_import_at_module_top_is_found_inside_if_and_try_blocks_but_not_type_checking():
    name = "specmath.laws"
    source = MODULES[name].read_text()
    for added in ("import torch\n", "try:\n    import torch\nexcept ImportError:\n    torch = None\n",
                  "if True:\n    from transformers import AutoModel\n"):
        assert name in torch_at_top({name: source + added})
    assert not torch_allowed(name) and torch_allowed("specmath.lm.cache") and torch_allowed("specmath.audit.engines.pairs")
    assert name not in torch_at_top({name: source + "if TYPE_CHECKING:\n    import torch\n"})
    assert name not in torch_at_top({name: source + "def f():\n    import torch\n"})


def modules_that_load_torch(sources: dict[str, str] | None = None) -> dict[str, list[str]]:
    """module -> a chain of top-level imports from it to a module that imports torch at its top."""
    direct = set(torch_at_top(sources))
    edges = {name: top_level_imports(name, path, (sources or {}).get(name))[1] for name, path in MODULES.items()}
    chains: dict[str, list[str]] = {}
    for start in sorted(MODULES):
        # breadth first: the shortest chain
        seen, frontier = {start: [start]}, [start]
        while frontier and start not in chains:
            nxt = []
            for module in frontier:
                if module in direct:
                    chains[start] = seen[module]
                    break
                for dep in sorted(edges[module]):
                    if dep not in seen:
                        seen[dep] = seen[module] + [dep]
                        nxt.append(dep)
            frontier = nxt
    return chains


def _may_load_torch(name: str) -> bool:
    return torch_allowed(name) or name.startswith(("specmath.lm.", "specmath.audit.engines."))


def test_importing_a_module_outside_lm_and_the_engines_loads_no_torch():
    bad = sorted(" -> ".join(chain) for name, chain in modules_that_load_torch().items() if not _may_load_torch(name))
    assert not bad, "importing these loads torch, through top-level imports:\n" + "\n".join(bad)


def test_a_chain_of_top_level_imports_to_torch_is_found():
    # the testing API importing the torch layer's accept/reject at its top: found, with its chain
    name = "specmath.testing"
    source = MODULES[name].read_text() + "from specmath.lm.accept_reject import accept_reject\n"
    assert modules_that_load_torch({name: source})[name] == [name, "specmath.lm.accept_reject"]
    # and the plugin, which imports the testing API at its top only inside a function, does not
    assert "specmath.pytest_plugin" not in modules_that_load_torch({name: source})


def test_each_package_says_its_layer_in_its_docstring():
    # "Layer N (name)": the number and the name of the architecture page's table
    layer_of, _, _ = documented_layers()
    names = {int(row[0].split()[0]): row[0].split(" ", 1)[1] for row in _table_rows(_section("Layers"), "layer")}
    for name, path in MODULES.items():
        if path.name != "__init__.py" or name.count(".") > 1:
            continue
        unit = unit_of(name)
        said = re.search(r"Layer (\d) \(([^)]+)\)", ast.get_docstring(ast.parse(path.read_text())) or "")
        layer = layer_of[unit]
        assert said and (int(said[1]), said[2]) == (layer, names[layer]), (
            f"{path.relative_to(ROOT)}'s docstring must say 'Layer {layer} ({names[layer]})', as the layer table does")
