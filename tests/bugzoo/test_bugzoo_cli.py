"""``specmath bugzoo`` prints every entry, chain and tree, by group, with its exact TV and its dated source."""

import json
import re

from specmath.bugzoo import BUGS, TREE_BUGS
from specmath.bugzoo.claims import CLAIMS
from specmath.cli import main


def _json(capsys, *args) -> list[dict]:
    assert main(["bugzoo", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_specmath_bugzoo_json_lists_every_entry_with_exact_tv_and_a_zero_tv_for_the_correct_algorithm(capsys):
    entries = _json(capsys)
    assert {e["name"] for e in entries} == set(BUGS) | {bug.name for bug in TREE_BUGS}
    for e in entries:
        assert e["correct_tv"] == "0/1" and e["tv"] != "0/1" and e["source"]
    by_name = {e["name"]: e for e in entries}
    assert by_name["accept-on-u-equal-zero"]["tv"] == f"1/{2**25}"


def test_specmath_bugzoo_json_carries_the_claim_record_of_each_entry(capsys):
    entries = {e["name"]: e for e in _json(capsys)}
    claim = entries["top-k-siblings-no-residual"]["claim"]
    assert claim["key"] == "tensorrt-llm-sibling-rule" and claim["status"] == "fixed"
    assert claim["fixed_by"].startswith("PR #15098") and claim["checked"] == "2026-12-01"
    assert set(claim) >= {"engine", "repository", "version", "checked", "status", "claim", "evidence", "where",
                          "reproducer", "fixed_by", "upstream", "report", "note"}
    assert entries["bonus-from-wrong-row"]["claim"] is None and entries["bonus-from-wrong-row"]["modelled_on"]
    for e in entries.values():
        if e["claim"] is not None:
            assert e["claim"] == CLAIMS[e["claim"]["key"]].to_json() and e["group"] == e["claim"]["group"]


def test_specmath_bugzoo_prints_the_groups_in_order_and_calls_no_by_design_rule_a_bug(capsys):
    assert main(["bugzoo"]) == 0
    out = capsys.readouterr().out
    headings = [line for line in out.splitlines() if not line.startswith(" ") and line.endswith(":")]
    assert [h.split(" (")[0] for h in headings] == ["engine bugs", "lossy by design", "fixed upstream", "modelled"]
    by_design = out.split("lossy by design (", 1)[1].split("\nfixed upstream (", 1)[0]
    assert "medusa-typical-acceptance" in by_design and "typical-acceptance-sampled-correction" in by_design
    # the heading says "not bugs"; below it, "bug" appears only in audit names (bug:NAME, tree-bug:NAME)
    assert "not bugs" in by_design.splitlines()[0]
    assert not re.findall(r"(?<![-\w])bugs?\b(?!:)", "\n".join(by_design.splitlines()[1:]), flags=re.I)
    fixed = out.split("\nfixed upstream (", 1)[1].split("\nmodelled (", 1)[0]
    assert "top-k-siblings-no-residual" in fixed and "fixed by PR #15098" in fixed


def test_specmath_bugzoo_lists_the_tree_entries_with_their_exact_tv_and_audit_name(capsys):
    trees = {e["name"]: e for e in _json(capsys) if e["kind"] == "tree"}
    assert {name: e["tv"] for name, e in trees.items()} == {
        "top-k-children-specinfer-rule": "27/64", "top-k-siblings-no-residual": "7/16",
        "medusa-typical-acceptance": "29/32", "typical-acceptance-sampled-correction": "3/10"}
    assert trees["top-k-siblings-no-residual"]["audit"] == "tree-bug:top-k-siblings-no-residual"
    assert trees["medusa-typical-acceptance"]["audit"] is None
    assert main(["bugzoo", "top-k-siblings-no-residual"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("fixed upstream") and "TV = 7/16" in out and "claim tensorrt-llm-sibling-rule" in out
    assert main(["bugzoo", "top-k-sibling"]) == 2
    assert "did you mean 'top-k-siblings-no-residual'?" in capsys.readouterr().err


def test_specmath_bugzoo_claims_lists_every_record_and_refuses_a_name_beside_it(capsys):
    records = _json(capsys, "--claims")
    assert sorted(r["key"] for r in records) == sorted(CLAIMS)
    statuses = [r["status"] for r in records]
    assert statuses.index("open") < statuses.index("fixed") < statuses.index("sound")
    assert main(["bugzoo", "--claims", "residual-softmax"]) == 2
    assert "--claims prints every claim record: give it without NAME" in capsys.readouterr().err
