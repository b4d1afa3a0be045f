"""Internal: What a verification rule returns, read strictly: ``(accept_probability, resample_law or None)``.

Notation: p = target law, q = draft law, gamma = draft tokens per round,
alpha = sum_x min(p(x), q(x)).

A rule is ``rule(p, q, x) -> (accept_probability, resample_law)`` (``specmath.speculative.step``).
Users write rules with Fractions, with floats, with numpy; every caller of a rule reads its output
here, so a rule means the same thing to ``step_law``, ``round_law`` and ``assert_rule_lossless``:

* the output is a pair (a tuple or list of two); a bare number is an error naming what was returned;
* the accept probability is a number in [0, 1], read as ``specmath.laws.to_fraction`` reads one
  (ints, Fractions, Decimals, strings; Python, numpy and 0-d torch floats as the decimals they print as);
* the resample law is None (allowed only where it is never drawn: accept probability 1), a Mapping
  token -> weight (``as_law``), or a 1-D numpy array / torch tensor over p's vocabulary: entry i is
  token i when p's tokens are 0..V-1, else the i-th token p lists (``list(p)``), the order of
  ``np.array([p[y] for y in p])``; a vector is converted exactly (binary) and renormalised, as
  every probability vector is;
* the resample law lists only tokens of p's vocabulary: a token outside it is an error, not a loss.

Each problem raises ``InvalidRuleOutput`` (a ``LawError``, so a ``ValueError``) saying what the rule
returned and what is allowed. ``slack`` > 0 (rules computed in floats, checked up to a TV bound)
renormalises a Mapping whose weights sum to within ``slack`` of 1 instead of rejecting it; a sum
off by a float's rounding is told which bound would take it (``float_bound``).

Numbers in messages are printed by ``number_text``: a short fraction as itself, a long one (a float's
binary value, read exactly) as a decimal, with the exact fraction beside it where it is the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from specmath.laws import Law, LawError, as_law, to_fraction

__all__ = ["InvalidRuleOutput", "read_rule_output", "number_text", "float_bound", "FLOAT_SIZED"]

#: a fraction whose numerator and denominator are both below this prints as itself ("7/10")
SHORT_FRACTION = 10**6
#: an error this small is a float's rounding, not a bug (float32 rounds at 2^-24 ~ 6e-8 relative)
FLOAT_SIZED = Fraction(1, 10**5)


def number_text(value: Any, *, exact: bool = False) -> str:
    """``value`` as a message prints it: a short Fraction as itself ("7/10"), a long one as a decimal
    ("~0.3333333433", 10 significant digits), and with ``exact`` the fraction beside the decimal
    ("9.934e-09 (exactly 37252903/3750000000000000)"), for a TV or a bound the verdict rests on."""
    value = Fraction(value)
    if abs(value.numerator) < SHORT_FRACTION and value.denominator < SHORT_FRACTION:
        return str(value)
    if exact:
        return f"{float(value):.4g} (exactly {value})"
    return f"~{float(value):.10g}"


#: the bounds a message suggests for a float rule: float64's rounding (a few V 2^-53 per step) sits far
#: below 1e-12, float32's (a few V 2^-24) below 1e-6; the others for what lies between
FLOAT_BOUNDS = (Fraction(1, 10**12), Fraction(1, 10**9), Fraction(1, 10**6), Fraction(1, 10**4))


def float_bound(error: Fraction) -> Fraction:
    """The TV bound to suggest for a float rule whose laws (or weights' sum) are off by ``error``: the first
    of ``FLOAT_BOUNDS`` at least 10 times above it (2e-17 -> 1e-12, 3e-8 -> 1e-6)."""
    return next((bound for bound in FLOAT_BOUNDS if bound >= 10 * error), FLOAT_BOUNDS[-1])


class InvalidRuleOutput(LawError):
    """A rule returned something that is not a valid (accept probability, resample law)."""


def _shown(value: Any) -> str:
    text = repr(value)
    return (text[:77] + "...") if len(text) > 80 else text


def _accept_probability(value: Any, x: object) -> Fraction:
    try:
        accept = to_fraction(value, what=f"the accept probability of token {x!r}")
    except LawError as exc:
        raise InvalidRuleOutput(f"{exc}: a rule's accept probability is a number in [0, 1]") from None
    if not 0 <= accept <= 1:
        raise InvalidRuleOutput(f"the accept probability of token {x!r} is {accept}, not in [0, 1]")
    return accept


def _vector_law(vector: Any, p: Law) -> Law:
    """A probability vector over p's vocabulary as a law on p's tokens (see the module docstring)."""
    tokens = list(p)
    if len(getattr(vector, "shape", ())) != 1 or int(vector.shape[0]) != len(tokens):
        raise InvalidRuleOutput(
            f"the resample vector has shape {tuple(vector.shape)}, but p lists {len(tokens)} tokens: "
            f"a vector resample law has one entry per token of p, in the order p lists them")
    indexed = as_law(vector, name="the resample vector")  # exact binary entries, renormalised
    if set(tokens) != set(range(len(tokens))):
        return Law({tokens[i]: w for i, w in indexed.items()}, name="resample law")
    return indexed


def _mapping_law(table: Mapping, slack: Fraction) -> Law:
    try:
        return as_law(table, name="the resample law")
    except LawError as exc:
        if "not normalised" not in str(exc):
            raise InvalidRuleOutput(str(exc)) from None
        total = sum((to_fraction(w) for w in table.values()), Fraction(0))
        off = abs(total - 1)
        if off <= slack:
            return Law.from_weights(table, name="the resample law")
        if off < FLOAT_SIZED:  # a float's rounding: say which bound takes it
            bound = float_bound(off)
            over = f", more than max_tv = {float(slack):g}" if slack else ""
            message = (f"the resample law is not normalised: its weights sum to 1 {'+' if total > 1 else '-'} "
                       f"{float(off):.2g}{over} (a float rule is checked up to a bound, max_tv={float(bound):g} or "
                       f"specmath verify-rule --max-tv {float(bound):g}, which renormalises weights within it of 1 "
                       "and passes TV(law, p) <= it)")
        else:
            message = (f"the resample law is not normalised: its weights sum to {number_text(total)}, not 1; give "
                       "exact weights that sum to 1 (Fractions, or strings such as '1/3'), or divide each weight by "
                       "their sum (Law.from_weights(weights) does)")
        raise InvalidRuleOutput(message) from None


def _resample_law(value: Any, p: Law, slack: Fraction) -> Law:
    if isinstance(value, Mapping):
        law = _mapping_law(value, slack)
    elif hasattr(value, "shape") and hasattr(value, "dtype"):
        law = _vector_law(value, p)
    else:
        raise InvalidRuleOutput(
            f"the resample law is {type(value).__name__} {_shown(value)}: return a Mapping token -> probability "
            "(a dict, a Law), a 1-D numpy array or torch tensor over p's tokens, or None")
    outside = [y for y in law if y not in p.vocabulary]
    if outside:
        listed = ", ".join(map(repr, sorted(outside, key=repr)[:5]))
        vocabulary = ", ".join(map(repr, list(p)[:10]))
        raise InvalidRuleOutput(f"the resample law lists {listed}, outside p's vocabulary ({vocabulary})")
    return law


def read_rule_output(output: Any, p: Law, x: object, *, slack: Fraction = Fraction(0)) -> tuple[Fraction, Law | None]:
    """The rule's ``output`` for draft token ``x`` against target ``p``, as (Fraction in [0, 1], Law over
    p's vocabulary or None); ``InvalidRuleOutput`` naming the problem otherwise."""
    if isinstance(output, (str, bytes, Mapping)) or not isinstance(output, (tuple, list)) or len(output) != 2:
        raise InvalidRuleOutput(
            f"the rule returned {type(output).__name__} {_shown(output)} for token {x!r}: a rule returns a pair "
            "(accept_probability, resample_law), the resample law None where it is never used")
    accept = _accept_probability(output[0], x)
    resample = output[1]
    if resample is None:
        return accept, None
    return accept, _resample_law(resample, p, slack)
