"""The symbolic proof that one speculative step outputs p for every p, q on 2, 3 and 4 tokens.

Exact throughout: sympy rational functions cancelled to 0, Fractions compared with ==.
"""

import json
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specmath.cli import main
from specmath.laws import Law
from specmath.speculative.step import standard_rule, step_law
from specmath.speculative.symbolic_step import (
    as_step_rule,
    prove_step_symbolically,
    resample_from_target_rule,
    standard_symbolic_rule,
)


@pytest.mark.parametrize("n, regions", [(2, 3), (3, 7), (4, 15)])
def test_standard_step_outputs_p_in_every_sign_pattern_region(n, regions):
    proof = prove_step_symbolically(n)
    assert proof.cases == regions == 2**n - 1  # every nonempty set of tokens with p >= q
    assert proof.lossless and proof.counterexample is None
    assert all(v == 0 for r in proof.regions for v in r.difference.values())


@pytest.mark.parametrize("n", [2, 3, 4])
def test_resampling_from_p_is_refuted_with_a_witness_checked_by_the_exact_interpreter(n):
    proof = prove_step_symbolically(n, resample_from_target_rule, "resample-from-target")
    assert not proof.lossless
    bad = proof.counterexample
    w = bad.witness
    # the witness lies in its region: p >= q exactly on the region's tokens
    assert {x for x in w["p"] if w["p"][x] >= w["q"][x]} == set(bad.above)
    # and the exact interpreter, running speculative_step with the same rule, gives the same wrong law
    assert step_law(w["p"], w["q"], as_step_rule(resample_from_target_rule)) == w["output"] != w["p"]
    assert w["tv"] > 0


def test_the_region_where_p_equals_q_is_lossless_even_for_the_lossy_rule():
    # with p == q nothing is ever rejected, so the resample law does not matter
    proof = prove_step_symbolically(3, resample_from_target_rule)
    everything = next(r for r in proof.regions if len(r.above) == 3)
    assert everything.lossless


laws = st.lists(st.integers(0, 6), min_size=3, max_size=3).filter(lambda ws: sum(ws) > 0).map(
    lambda ws: Law({t: Fraction(w, sum(ws)) for t, w in zip("ABC", ws, strict=True)})
)


@settings(max_examples=60, deadline=None)
@given(laws, laws)
def test_the_region_resolved_rule_is_the_librarys_standard_rule(p, q):
    # the symbolic proof is about the same rule that speculative_step runs: same accept, same residual
    rule = as_step_rule(standard_symbolic_rule)
    for x in q.support:
        assert rule(p, q, x) == standard_rule(p, q, x)
    assert step_law(p, q, rule) == p


def test_bad_vocabularies_are_refused():
    for bad in (1, 0, 27, ("A",), ("A", "A")):
        with pytest.raises(ValueError, match="vocabulary size|distinct tokens"):
            prove_step_symbolically(bad)


def test_cli_json_reports_lossless_and_the_cases_per_size_with_timing_on_stderr(capsys):
    assert main(["verify", "symbolic-step", "--json"]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert payload["lossless"] is True and payload["cases"] == {"2": 3, "3": 7, "4": 15}
    assert "seconds" not in captured.out and "4 tokens, 15 cases in" in captured.err


def test_cli_exits_one_and_prints_the_counterexample_for_a_lossy_rule(capsys):
    assert main(["verify", "symbolic-step", "--rule", "resample-from-target", "--sizes", "2"]) == 1
    out = capsys.readouterr().out
    assert "LOSSY in the region" in out and "witness p = {A: 1/2, B: 1/2}" in out
