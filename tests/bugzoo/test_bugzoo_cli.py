"""``specmath bugzoo`` prints every entry with its exact TV; the correct algorithm's TV is 0/1 on each."""

import json

from specmath.bugzoo import BUGS
from specmath.cli import main


def test_specmath_bugzoo_json_lists_every_entry_with_exact_tv_and_a_zero_tv_for_the_correct_algorithm(capsys):
    assert main(["bugzoo", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert {e["name"] for e in entries} == set(BUGS)
    for e in entries:
        assert e["correct_tv"] == "0/1" and e["tv"] != "0/1" and e["citation"]
    by_name = {e["name"]: e for e in entries}
    assert by_name["accept-on-u-equal-zero"]["tv"] == f"1/{2**25}"
