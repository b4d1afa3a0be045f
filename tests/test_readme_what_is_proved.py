"""README "What is proved" lists exactly the proofs of ``specmath verify`` with their exact costs."""

import re
from fractions import Fraction
from pathlib import Path

from specmath.proofs import VERIFIERS, verify

ROOT = Path(__file__).resolve().parents[1]


def section() -> str:
    text = (ROOT / "README.md").read_text()
    return text.split("\n## What is proved", 1)[1].split("\n## ", 1)[0]


def table_rows() -> list[tuple[str, str]]:
    """(name, cost cell) of each table row, in order."""
    rows = []
    for line in section().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 3:
            rows.append((cells[0].strip("`"), cells[2]))
    return rows


def test_the_table_lists_every_proof_once_and_the_count_is_stated():
    names = [name for name, _ in table_rows()]
    assert len(names) == len(set(names)), f"a proof is listed twice: {names}"
    assert set(names) == set(VERIFIERS), (
        f"README lacks {sorted(set(VERIFIERS) - set(names))}, lists unknown {sorted(set(names) - set(VERIFIERS))}"
    )
    assert f"runs {len(VERIFIERS)} exact verifications" in section()


def test_each_stated_cost_is_the_proofs_exact_expected_cost():
    for name, cell in table_rows():
        stated = re.match(r"(\d+)/(\d+)", cell)
        cost = verify(name).expected_cost
        if stated is None:
            assert cost is None, f"{name}: README gives no cost, the proof computes {cost}"
        else:
            assert Fraction(int(stated[1]), int(stated[2])) == cost, f"{name}: README says {cell}, the proof {cost}"
