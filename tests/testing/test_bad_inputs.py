"""Every bad input gets one clear error naming it, never a loss, a pass, a raw TypeError or a NaN.

``BAD_INPUTS`` is the table of docs/how-to/test-your-sampler.md ("Bad inputs and the error each
gets"): each row is what a user passes, the exception it gets and the start of its message (the
test checks both, and that the page lists every row).
"""

from __future__ import annotations

import re
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from engine_samplers import one_round, vectorised_uniforms

from specmath.laws import Law, LawError
from specmath.sampling_options import SamplingOptions
from specmath.settings import CI, AuditSettings
from specmath.speculative.round import round_law
from specmath.speculative.step import standard_rule, step_law
from specmath.testing import SamplerError, assert_rule_lossless, assert_sampler_lossless
from specmath.validation import InvalidArgument, UnknownName

ROOT = Path(__file__).resolve().parents[2]
GOOD = one_round(vectorised_uniforms)
SMALL = {"n": 50, "cases": ["vocab-2"]}


def named(function, name: str):
    function.__name__ = function.__qualname__ = name
    return function


def sampler(output):
    """``my_round``: a one-round sampler that returns ``output`` (a function of the correct round's tokens)."""
    return named(lambda tp, dp, dt, rng: output(GOOD(tp, dp, dt, rng)), "my_round")


def batched(output):
    """``my_rounds``: a batched sampler that returns ``output`` (a function of the correct rounds' [N, gamma+1])."""
    return named(lambda tp, dp, dt, rng: output(vectorised_uniforms(tp, dp, dt, rng)), "my_rounds")


def bare_number(p, q, x):
    return 0.5


def three_halves(p, q, x):
    return Fraction(3, 2), None


def tokens_first(draft_tokens, target_probs, draft_probs, rng):
    """A correct round whose parameters follow an engine's order (tokens first): handed the audit's, it breaks."""
    return GOOD(target_probs, draft_probs, draft_tokens, rng)


def one_round_only(target_probs, draft_probs, draft_tokens, rng):
    """A one-round sampler: p(x_0) for the first draft, read as a number."""
    return [0] if rng.random() < float(target_probs[0, draft_tokens[0]]) else [1]


def unfinished_round(tp, dp, dt, rng):
    raise RuntimeError("no residual yet")


def float_rule(p, q, x):
    accept = min(1.0, float(p[x]) / float(q[x]))
    excess = {y: max(0.0, float(p[y]) - float(q[y])) for y in p}
    total = sum(excess.values())
    return accept, ({y: w / total for y, w in excess.items()} if accept < 1 else None)


def outside_vocabulary(p, q, x):
    accept, residual = standard_rule(p, q, x)
    return accept, None if residual is None else {**{y: w / 2 for y, w in residual.items()}, "Z": Fraction(1, 2)}


def short_vector(p, q, x):
    accept, residual = standard_rule(p, q, x)
    return accept, None if residual is None else np.ones(len(p) + 1)


P, Q = {"A": "1/2", "B": "1/2"}, {"A": 1, "B": 0}
TWO_TOKENS = Law({0: Fraction(1, 2), 1: Fraction(1, 2)})

#: (what is passed, how it is called, the exception, the start of its message)
BAD_INPUTS = [
    ("a sampler that returns None", lambda: assert_sampler_lossless(sampler(lambda t: None), **SMALL), SamplerError,
     "the sampler my_round returned invalid output (an error, not a loss) in 1 of 1 case(s); first, vocab-2: round 0, "
     "drafts [1]: invalid output: the sampler returned None; it must return a sequence of token ids"),
    ("float token ids (t + 0.7)", lambda: assert_sampler_lossless(sampler(lambda t: [x + 0.7 for x in t]), **SMALL),
     SamplerError, "the sampler my_round returned invalid output"),
    ("a digit string", lambda: assert_sampler_lossless(sampler(lambda t: "".join(map(str, t))), **SMALL), SamplerError,
     "the sampler my_round returned invalid output"),
    ("a token id outside the vocabulary", lambda: assert_sampler_lossless(sampler(lambda t: [5]), **SMALL), SamplerError,
     "the sampler my_round returned invalid output"),
    ("more than gamma + 1 tokens", lambda: assert_sampler_lossless(sampler(lambda t: [0, 0, 0]), **SMALL), SamplerError,
     "the sampler my_round returned invalid output"),
    ("batched: the wrong shape", lambda: assert_sampler_lossless(batched(lambda out: out[:1]), batched=True, **SMALL),
     SamplerError, "the sampler my_rounds returned invalid output"),
    ("batched: -1 before a token", lambda: assert_sampler_lossless(batched(lambda out: out[:, ::-1].copy()), batched=True, **SMALL),
     SamplerError, "the sampler my_rounds returned invalid output"),
    ("a sampler that raises", lambda: assert_sampler_lossless(unfinished_round, **SMALL), SamplerError,
     "the sampler unfinished_round raised on valid input (an error, not a loss) in 1 of 1 case(s); first, vocab-2: round 0, "
     "drafts [1]: RuntimeError: no residual yet"),
    ("a numpy sampler with generator='torch'", lambda: assert_sampler_lossless(GOOD, generator="torch", **SMALL),
     SamplerError, "the sampler one_round(vectorised_uniforms) raised on valid input"),
    ("a rule where a sampler is expected", lambda: assert_sampler_lossless(standard_rule, **SMALL), InvalidArgument,
     "the sampler standard_rule takes (p, q, x), but the audit calls it as sample_round(target_probs, draft_probs, "
     "draft_tokens, generator): it looks like a rule(p, q, x)"),
    ("parameters in another order", lambda: assert_sampler_lossless(tokens_first, **SMALL), SamplerError,
     "the sampler tokens_first raised on valid input"),
    ("batched=True on a one-round sampler", lambda: assert_sampler_lossless(one_round_only, batched=True, **SMALL),
     SamplerError, "the sampler one_round_only raised on valid input"),
    ("a case name with a typo", lambda: assert_sampler_lossless(GOOD, cases=["context_g3"]), UnknownName,
     "unknown audit case 'context_g3' (did you mean 'context-g3'?); choose from: context-g1, "),
    ("cases that are not names", lambda: assert_sampler_lossless(GOOD, cases=3), InvalidArgument,
     "cases must be audit case names or AuditCase objects, got int 3"),
    ("AuditSettings(seed=1.5)", lambda: assert_sampler_lossless(GOOD, settings=AuditSettings(seed=1.5)), InvalidArgument,
     "seed must be an int >= 0, got 1.5"),
    ("a profile with a typo", lambda: assert_sampler_lossless(GOOD, settings="thorogh"), UnknownName,
     "unknown audit profile 'thorogh' (did you mean 'thorough'?); choose from: dev, ci, thorough"),
    ("a setting with a typo", lambda: assert_sampler_lossless(GOOD, settings=CI.replace(sequentail=True)), UnknownName,
     "unknown audit setting 'sequentail' (did you mean 'sequential'?); choose from: n, generate_calls, family_level, power, "
     "seed, sequential"),
    ("settings that are not settings", lambda: assert_sampler_lossless(GOOD, settings={"n": 3}), InvalidArgument,
     "settings must be an AuditSettings or a profile name (dev, ci, thorough), got dict {'n': 3}"),
    ("n=0", lambda: assert_sampler_lossless(GOOD, n=0), InvalidArgument, "n (rounds per case) must be an int >= 1, got 0"),
    ("generator='jax'", lambda: assert_sampler_lossless(GOOD, generator="jax"), UnknownName,
     "unknown generator 'jax'; choose from: numpy, torch"),
    ("top_k=0", lambda: assert_sampler_lossless(GOOD, sampling=SamplingOptions(top_k=0)), InvalidArgument,
     "top_k must be an int >= 1, got 0"),
    ("a warp the audit does not implement", lambda: assert_sampler_lossless(GOOD, sampling=SamplingOptions(min_p=0.1)),
     InvalidArgument, "the round audit does not take min_p; it takes: temperature, top_k, top_p"),
    ("sampling that is not SamplingOptions", lambda: assert_sampler_lossless(GOOD, sampling={"top_k": 2}), InvalidArgument,
     "sampling must be a SamplingOptions (or None: no warp), got dict"),
    ("a sampler that is not callable", lambda: assert_sampler_lossless("my_round"), InvalidArgument,
     "sample_round must be callable, got str 'my_round'"),
    ("a rule that returns a bare number", lambda: assert_rule_lossless(bare_number), SamplerError,
     "the rule bare_number returned invalid output on 54 of 54 instances (an error, not a loss); the smallest is\n"
     "single token: p = {'A': 1}, q = {'A': 1}\n  the rule's output is invalid: the rule returned float 0.5 for token 'A': "
     "a rule returns a pair (accept_probability, resample_law)"),
    ("a resample law over tokens outside the vocabulary", lambda: assert_rule_lossless(outside_vocabulary), SamplerError,
     "the rule outside_vocabulary returned invalid output on 48 of 54 instances"),
    ("a resample vector of the wrong length", lambda: assert_rule_lossless(short_vector), SamplerError,
     "the rule short_vector returned invalid output on 48 of 54 instances"),
    ("an accept probability of 3/2", lambda: assert_rule_lossless(three_halves), SamplerError,
     "the rule three_halves returned invalid output on 54 of 54 instances"),
    ("a rule computed in floats, checked exactly", lambda: assert_rule_lossless(float_rule), SamplerError,
     "the rule float_rule returned invalid output on 19 of 54 instances"),
    ("max_tv=-1", lambda: assert_rule_lossless(standard_rule, max_tv=-1), InvalidArgument,
     "max_tv (a bound on TV(law, target)) must be a number in [0, 1), got -1"),
    ("a law that does not sum to 1", lambda: step_law({"A": 0.5, "B": 0.6}, Q), LawError,
     "p is not normalised: its weights sum to 11/10 (about 1.1000000000000001), not 1. Either give exact weights"),
    ("a Decimal NaN weight", lambda: Law({"A": Decimal("NaN"), "B": 1}), LawError, "law['A'] is Decimal('NaN'), not a finite number"),
    ("a toy LM that returns a list", lambda: round_law(lambda c: [0.5, 0.5], lambda c: TWO_TOKENS, (), 1), LawError,
     "the target model returned list for context (): a model returns a Mapping token -> probability"),
]

#: where the message says more than its start: a phrase each must contain
DETAILS = {
    "float token ids (t + 0.7)": "float 1.7 is not an integer token id",
    "a digit string": "the sampler returned str '10'; it must return a sequence of token ids",
    "a token id outside the vocabulary": "token id 5 is outside the vocabulary 0..1",
    "more than gamma + 1 tokens": "the sampler returned 3 token ids [0, 0, 0]: a round emits 1..2 integer token ids in 0..1",
    "batched: the wrong shape": "the sampler returned shape (1, 2), expected (N, gamma + 1) = (50, 2)",
    "batched: -1 before a token": "-1 (no token) may only follow the last emitted token",
    "a numpy sampler with generator='torch'": "handed a torch.Generator (generator='torch') and failed with AttributeError",
    "a resample law over tokens outside the vocabulary": "the resample law lists 'Z', outside p's vocabulary ('A', 'B')",
    "a resample vector of the wrong length": "the resample vector has shape (3,), but p lists 2 tokens",
    "an accept probability of 3/2": "the accept probability of token 'A' is 3/2, not in [0, 1]",
    "parameters in another order": "hint: its parameters (draft_tokens, target_probs, draft_probs, rng) name another order "
                                   "than the audit's sample_round(target_probs, draft_probs, draft_tokens, generator)",
    "batched=True on a one-round sampler": "if it takes one round per call, drop --batched (batched=False)",
    "a rule computed in floats, checked exactly": "a float rule is checked up to a bound, max_tv=1e-12 or specmath verify-rule --max-tv 1e-12",
}


@pytest.mark.parametrize(("what", "call", "error", "start"), BAD_INPUTS, ids=[row[0] for row in BAD_INPUTS])
def test_each_bad_input_gets_one_clear_error(what, call, error, start):
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert message.startswith(start), message
    assert DETAILS.get(what, "") in message, message
    assert "NOT lossless" not in message and "Traceback" not in message.split("\n")[0]
    if error is SamplerError:
        assert info.value.__cause__ is not None or "the rule" in message  # chained to what the code under test did


def test_what_looks_odd_but_is_fine_is_accepted():
    # numpy scalars, Decimals and dicts of them are read as the numbers they print as
    assert Law({"A": np.float64(0.7), "B": np.float64(0.3)}) == Law({"A": Decimal("0.7"), "B": "3/10"})
    # a rule may return its residual as a numpy vector over p's tokens, in the order p lists them
    def vector_rule(p, q, x):
        accept, residual = standard_rule(p, q, x)
        return accept, None if residual is None else np.array([residual[y] for y in p], dtype=object).astype(float)

    assert_rule_lossless(vector_rule, max_tv=1e-12)
    assert step_law(P, Q, vector_rule) == Law(P)
    torch = pytest.importorskip("torch")

    def tensor_rule(p, q, x):
        accept, residual = standard_rule(p, q, x)
        return accept, None if residual is None else torch.tensor([float(residual[y]) for y in p], dtype=torch.float64)

    assert step_law(P, Q, tensor_rule) == Law(P)
    assert_rule_lossless(tensor_rule, max_tv=1e-12)
    # a toy LM may return a plain dict
    assert round_law(lambda c: {0: 0.5, 1: 0.5}, lambda c: TWO_TOKENS, (), 1) == round_law(lambda c: TWO_TOKENS, lambda c: TWO_TOKENS, (), 1)


def test_the_how_to_lists_every_bad_input():
    page = (ROOT / "docs" / "how-to" / "test-your-sampler.md").read_text(encoding="utf-8")
    section = page.split("## Bad inputs and the error each gets", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert rows == [what for what, *_ in BAD_INPUTS]


if __name__ == "__main__":  # print the table for the how-to: what, error, message
    for what, call, error, _ in BAD_INPUTS:
        try:
            call()
        except error as exc:
            first = re.sub(r"\s+", " ", str(exc))[:300].replace("|", "\\|")
            print(f"| {what} | `{error.__name__}` | {first} |")
    sys.exit(0)
