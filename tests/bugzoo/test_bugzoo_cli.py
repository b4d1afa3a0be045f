"""``specmath bugzoo`` prints every entry, chain and tree, with its exact TV; the correct algorithm's TV is 0/1 on each."""

import json

from specmath.bugzoo import BUGS, TREE_BUGS
from specmath.cli import main


def test_specmath_bugzoo_json_lists_every_entry_with_exact_tv_and_a_zero_tv_for_the_correct_algorithm(capsys):
    assert main(["bugzoo", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert {e["name"] for e in entries} == set(BUGS) | {bug.name for bug in TREE_BUGS}
    for e in entries:
        assert e["correct_tv"] == "0/1" and e["tv"] != "0/1" and e["citation"]
    by_name = {e["name"]: e for e in entries}
    assert by_name["accept-on-u-equal-zero"]["tv"] == f"1/{2**25}"


def test_specmath_bugzoo_lists_the_tree_entries_with_their_exact_tv_and_audit_name(capsys):
    assert main(["bugzoo", "--json"]) == 0
    trees = {e["name"]: e for e in json.loads(capsys.readouterr().out) if e["kind"] == "tree"}
    assert {name: e["tv"] for name, e in trees.items()} == {
        "top-k-children-specinfer-rule": "27/64", "top-k-siblings-no-residual": "7/16",
        "medusa-typical-acceptance": "29/32", "typical-acceptance-sampled-correction": "3/10"}
    assert trees["top-k-siblings-no-residual"]["audit"] == "tree-bug:top-k-siblings-no-residual"
    assert trees["medusa-typical-acceptance"]["audit"] is None
    assert main(["bugzoo", "top-k-siblings-no-residual"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("token-tree verifiers") and "TV = 7/16" in out and "TensorRT-LLM PR #12588" in out
    assert main(["bugzoo", "top-k-sibling"]) == 2
    assert "did you mean 'top-k-siblings-no-residual'?" in capsys.readouterr().err
