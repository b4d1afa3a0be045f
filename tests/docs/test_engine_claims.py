"""Every sentence of the docs, the README and the notebooks that says an engine does something wrong names its claim.

A unit of text (a paragraph, a list item or a table row) with a sentence that names a third-party engine
and a word of defect (bug, lossy, a crash, fixed by, an issue or PR number...) must name a claim record, as
"claim KEY" or a link to engine-findings.md#KEY, so that the reader finds the version, the date, the
status and the evidence (specmath.bugzoo.claims). And what the unit says must fit the record: a rule
lossy by design is not called a bug, and a fixed one is said to be fixed, with the change that fixed it.

Left out: the dated measurement pages (each names its versions and date), the findings page itself
(written from the records, tests/bugzoo/test_claim_pages.py), code blocks and the generated tables of
engine runs (their rows are the measurement's).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from specmath.bugzoo.claims import CLAIMS

ROOT = Path(__file__).resolve().parents[2]
ENGINES = re.compile(r"(?<![\w/.-])(SGLang|sglang|TensorRT-LLM|Medusa|vLLM|vllm|vllm-ascend|vLLM Ascend|node-llama-cpp|"
                     r"llama\.cpp|transformers|Hugging Face|HF|EAGLE(?:-\d(?:/\d)?)?|lattice|mlx-node|mlxcel)(?![\w-])")
DEFECT = re.compile(r"(?<![-\w])(bug|defects?|lossy|fails|crash(?:es)?|TypeError|RuntimeError|broke|over-samples?|shipped|"
                    r"(?:was|were|has been|have been) fixed|fixed (?:by|in|upstream|since))(?![\w-])"
                    r"|(?:issue|PR) #\d+|#\d{3,}", re.I)
CLAIM_REF = re.compile(r"\bclaim[: ]+`?([a-z0-9]+(?:-[a-z0-9]+)+)`?|engine-findings(?:\.md)?#([a-z0-9]+(?:-[a-z0-9]+)+)")
# "bug" as a word, but not the zoo's name, an audit name (bug:NAME) or a denial
BUG_WORD = re.compile(r"(?<![-\w])bugs?(?![-\w:])(?! zoo)", re.I)
NO_CLAIM = re.compile(r"\bno engine (?:is )?claimed\b", re.I)
DENIAL = re.compile(r"\bnot (?:a |an engine )?bugs?\b", re.I)


def _markdown_pages() -> list[Path]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    skip = (ROOT / "docs" / "measurements", ROOT / "docs" / "tutorials")
    return [p for p in pages if not any(s in p.parents for s in skip) and p.name != "engine-findings.md"]


def _notebook_markdown(path: Path) -> str:
    """The Markdown cells of a jupytext percent file, uncommented."""
    cells, inside = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# %%"):
            inside = "[markdown]" in line
            cells.append("")
        elif inside:
            cells.append(re.sub(r"^# ?", "", line))
    return "\n".join(cells)


def _units(text: str) -> list[str]:
    """Paragraphs, list items and table rows, without code blocks and generated engine tables."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"<!-- engine-table:(\w+) -->.*?<!-- /engine-table:\1 -->", "", text, flags=re.S)
    units: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        current: list[str] = []
        for line in paragraph.splitlines():
            starts_item = re.match(r"\s*(?:[-*+]|\d+\.)\s+|\s*\|", line)
            if starts_item and current:
                units.append(" ".join(current))
                current = []
            current.append(line.strip())
            if line.lstrip().startswith("|"):
                units.append(" ".join(current))
                current = []
        if current:
            units.append(" ".join(current))
    return units


def _sources() -> list[tuple[str, str]]:
    out = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in _markdown_pages()]
    out += [(str(p.relative_to(ROOT)), _notebook_markdown(p)) for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))]
    return out


def _names_a_defect_of_an_engine(unit: str) -> bool:
    """An engine and a word of defect in one sentence of the unit."""
    sentences = re.split(r"(?<=[.;!?])\s+(?=[A-Z(`*])", unit)
    return any(ENGINES.search(s) and DEFECT.search(s) for s in sentences)


def _claim_units() -> list[tuple[str, str]]:
    return [(where, unit) for where, text in _sources() for unit in _units(text) if _names_a_defect_of_an_engine(unit)]


def _refs(unit: str) -> list[str]:
    return [a or b for a, b in CLAIM_REF.findall(unit)]


def test_the_scanner_sees_the_pages_and_the_notebooks_and_finds_engine_claims_in_them():
    where = {w for w, _ in _claim_units()}
    assert "docs/explanation/token-trees.md" in where and "docs/how-to/audit-engines-beyond-python.md" in where
    assert any(w.startswith("notebooks/") for w in where)
    assert len(_claim_units()) >= 10


@pytest.mark.parametrize("where,unit", _claim_units(), ids=lambda x: x[:60] if isinstance(x, str) else "")
def test_every_engine_claim_in_the_docs_names_a_claim_record_that_fits_what_it_says(where, unit):
    refs = _refs(unit)
    if not refs and NO_CLAIM.search(unit):
        return  # a variant modelled on an engine's code path, and said to claim nothing about the engine
    assert refs, f"{where}: names an engine and a defect but no claim record (add 'claim KEY'):\n  {unit}"
    unknown = [key for key in refs if key not in CLAIMS]
    assert not unknown, f"{where}: no claim record keyed {unknown} (specmath bugzoo --claims lists them)"
    for key in refs:
        claim = CLAIMS[key]
        if claim.status == "lossy by design":
            said = DENIAL.sub("", unit)
            assert not BUG_WORD.search(said), f"{where}: calls {key}, lossy by design, a bug:\n  {unit}"
        if claim.status == "fixed":
            numbers = re.findall(r"#\d+", claim.fixed_by)
            assert any(n in unit for n in numbers) if numbers else "fixed" in unit.lower(), (
                f"{where}: {key} was fixed by {claim.fixed_by}; say so:\n  {unit}")


def test_the_checks_fail_on_an_unreferenced_claim_a_by_design_bug_and_a_silent_fix():
    bad = ("SGLang's kernel is lossy with repeated children.\n\n"
           "Medusa's fast mode is a bug (claim medusa-fast-mode).\n\n"
           "TensorRT-LLM's sibling rule is lossy (claim tensorrt-llm-sibling-rule).")
    units = [u for u in _units(bad) if _names_a_defect_of_an_engine(u)]
    assert len(units) == 3 and not _refs(units[0])
    assert BUG_WORD.search(DENIAL.sub("", units[1])) and CLAIMS[_refs(units[1])[0]].status == "lossy by design"
    assert "#15098" not in units[2] and CLAIMS[_refs(units[2])[0]].status == "fixed"
    assert not BUG_WORD.search(DENIAL.sub("", "typical acceptance is lossy by design, not a bug; the bug zoo; bug:NAME"))
