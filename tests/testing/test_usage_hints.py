"""Usage mistakes get a line that names them and the likely fix, from the API and the command line alike.

Each test writes the wrong code a user writes (a sampler whose parameters follow the engine's own order,
a one-round sampler audited as batched, a rule handed to the sampler audit, a rule computed in float32)
and checks the message. Audits run at small N (200) on one or two cases: the hints are about calls and
shapes, not statistics, and every sampler here errs or fails on every case.
"""

from __future__ import annotations

import inspect
from fractions import Fraction

import numpy as np
import pytest

from specmath.cli import main
from specmath.settings import CI
from specmath.speculative.reference_round import reference_sample_round
from specmath.testing import (
    SamplerError,
    assert_rule_lossless,
    assert_sampler_lossless,
    assert_tree_sampler_lossless,
)
from specmath.validation import InvalidArgument

CASES = ["context-g3", "vocab-2"]


def engine_round(target_probs, draft_probs, draft_tokens, rng):
    """An engine's round without input checks: accept x_i with min(1, p/q), else resample, else the bonus."""
    out = []
    for i, x in enumerate(draft_tokens):
        if rng.random() * draft_probs[i, x] < target_probs[i, x]:
            out.append(int(x))
            continue
        residual = np.maximum(target_probs[i] - draft_probs[i], 0)
        return out + [int(rng.choice(len(residual), p=residual / residual.sum()))]
    return out + [int(rng.choice(target_probs.shape[1], p=target_probs[len(draft_tokens)]))]


def tokens_first(draft_tokens, target_probs, draft_probs, rng):
    """The same round, its parameters in an engine's order (tokens first)."""
    return engine_round(target_probs, draft_probs, draft_tokens, rng)


def draft_first(draft_probs, target_probs, draft_tokens, rng):
    """An engine's round in its own order, draft before target, the bonus from the last row: handed the
    audit's (target, draft), it raises nothing and emits a wrong law."""
    out = []
    for i, x in enumerate(draft_tokens):
        if rng.random() * draft_probs[i, x] < target_probs[i, x]:
            out.append(int(x))
            continue
        residual = np.maximum(target_probs[i] - draft_probs[i], 0)
        if not residual.sum():
            residual = target_probs[i]
        return out + [int(rng.choice(len(residual), p=residual / residual.sum()))]
    return out + [int(rng.choice(target_probs.shape[1], p=target_probs[-1]))]


def standard_rule(p, q, x):
    residual = {y: max(Fraction(0), p[y] - q[y]) for y in p}
    mass = sum(residual.values())
    return min(Fraction(1), p[x] / q[x]), ({y: w / mass for y, w in residual.items()} if mass else None)


def float32_rule(p, q, x):
    """The standard rule with p and q rounded to float32, the residual normalised in float64: TV ~ 1e-8."""
    tokens = list(p)
    pv = np.array([float(p[t]) for t in tokens], dtype=np.float32).astype(np.float64)
    qv = np.array([float(q[t]) for t in tokens], dtype=np.float32).astype(np.float64)
    i = tokens.index(x)
    residual = np.maximum(pv - qv, 0)
    accept = min(1.0, pv[i] / qv[i])
    return accept, (dict(zip(tokens, (residual / residual.sum()).tolist())) if residual.sum() else None)


def _source(*functions) -> str:
    """A user's module holding these functions, as they are written here."""
    return "import numpy as np\n\n\n" + "\n\n".join(inspect.getsource(f) for f in functions)


ORDER = (r"hint: its parameters \({}\) name another order than the audit's sample_round\(target_probs, draft_probs, "
         r"draft_tokens, generator\), which passes them by position: reorder them, or audit lambda target_probs, "
         r"draft_probs, draft_tokens, generator: f\({}\)")


def test_parameters_in_another_order_are_named_when_the_sampler_errs():
    # tokens first: the probabilities are used as indices (numpy's IndexError); the names say why
    with pytest.raises(SamplerError, match=ORDER.format("draft_tokens, target_probs, draft_probs, rng",
                                                        "draft_tokens, target_probs, draft_probs, generator")):
        assert_sampler_lossless(tokens_first, n=200, cases=CASES)


def test_parameters_in_another_order_are_named_when_the_sampler_fails():
    # draft before target raises nothing: the law is wrong, and the hint says why before the failing cases
    with pytest.raises(AssertionError, match=r"is NOT lossless: .*\n" + ORDER.format(
            "draft_probs, target_probs, draft_tokens, rng", "draft_probs, target_probs, draft_tokens, generator")):
        assert_sampler_lossless(draft_first, n=200, cases=CASES)


def test_float_indices_with_names_that_say_nothing_ask_about_the_order():
    def sampler(a, b, c, d):
        return engine_round(b, c, a, d)

    with pytest.raises(SamplerError, match=r"hint: a float array was used as indices: the audit passes target_probs, "
                                           r"draft_probs, draft_tokens, generator in this order, by position"):
        assert_sampler_lossless(sampler, n=200, cases=CASES)


def test_batched_on_a_one_round_sampler_says_drop_batched():
    with pytest.raises(SamplerError, match=r"hint: it erred on every case when called with every round of a case at "
                                           r"once .*: if it takes one round per call, drop --batched \(batched=False\)"):
        assert_sampler_lossless(engine_round, n=200, cases=CASES, batched=True)


def test_a_rule_where_a_sampler_is_expected_is_named_before_anything_runs():
    with pytest.raises(InvalidArgument, match=r"^the sampler standard_rule takes \(p, q, x\), but the audit calls it as "
                                              r"sample_round\(target_probs, draft_probs, draft_tokens, generator\): it looks "
                                              r"like a rule\(p, q, x\) .*assert_rule_lossless\(rule\)$"):
        assert_sampler_lossless(standard_rule)
    with pytest.raises(InvalidArgument, match=r"^the sampler standard_rule takes \(p, q, x\), but the audit calls it as "
                                              r"sample_tree\(parents, "):
        assert_tree_sampler_lossless(standard_rule, children="iid")
    # a sampler written to take anything is not second-guessed
    assert assert_sampler_lossless(lambda *args: reference_sample_round(*args), n=200, cases=CASES[:1]).passed


def test_the_cli_prints_the_same_hints_after_the_table(tmp_path, monkeypatch, capsys):
    (tmp_path / "my_engine.py").write_text(_source(engine_round, tokens_first))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["audit", "my_engine:tokens_first", "--n", "200", "--cases", ",".join(CASES)]) == 2
    assert "\nhint: its parameters (draft_tokens, target_probs, draft_probs, rng) name another order" in capsys.readouterr().out
    assert main(["audit", "my_engine:engine_round", "--batched", "--n", "200", "--cases", ",".join(CASES)]) == 2
    assert "drop --batched (batched=False)" in capsys.readouterr().out


def test_the_api_and_the_cli_state_one_family_level(tmp_path, monkeypatch, capsys):
    from specmath.audit.rounds.report import table

    report = assert_sampler_lossless(reference_sample_round, n=200, cases=CASES)
    api_header = table(report).splitlines()[2]
    assert main(["audit", "reference", "--n", "200", "--cases", ",".join(CASES)]) == 0
    cli_header = capsys.readouterr().out.splitlines()[2]
    assert api_header == cli_header
    assert f"family level {CI.family_level:g} (float rounding slack " in cli_header


def test_a_float32_rule_gets_decimals_its_bound_as_written_and_the_bound_that_passes_it(capsys):
    with pytest.raises(AssertionError) as info:
        assert_rule_lossless(float32_rule, max_tv=1e-12)
    message = str(info.value)
    assert "(TV above max_tv = 1e-12)" in message and "1/1000000000000" not in message
    assert "TV(law, p) = 9.934e-09 (exactly 37252903/3750000000000000)" in message
    assert "law of the emitted token = {'A': ~0.3333333433, 'B': ~0.6666666567}" in message
    assert message.endswith("is a float's rounding: a rule computed in floats is checked up to a bound, max_tv=1e-06 "
                            "or specmath verify-rule --max-tv 1e-06)")
    assert max(map(len, message.splitlines())) <= 160
    assert_rule_lossless(float32_rule, max_tv=1e-6)


def test_verify_rule_takes_max_tv(tmp_path, monkeypatch, capsys):
    (tmp_path / "float_rules.py").write_text(_source(float32_rule))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["verify-rule", "float_rules:float32_rule", "--max-tv", "1e-12"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("NOT lossless: 36 of 54 instances fail (TV(law, target) > max_tv = 1e-12)")
    assert "TV distance = " in out and max(map(len, out.splitlines())) <= 160
    assert "max_tv=1e-06 or specmath verify-rule --max-tv 1e-06" in out
    assert main(["verify-rule", "float_rules:float32_rule", "--max-tv", "1e-6"]) == 0
    assert capsys.readouterr().out == "lossless on all 54 instances (TV(law, target) <= max_tv = 1e-06)\n"
