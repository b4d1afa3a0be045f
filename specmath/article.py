"""Every number the seed article states, next to its exact value.

The article: ARTICLE_TITLE = "从投机解码到 Rand5 模拟 Rand7:跨越十年的拒绝采样直觉" ("From speculative
decoding to simulating Rand7 with Rand5: a rejection-sampling intuition across ten years"), in Chinese
(``shared/seed``). It works four examples: the two-token speculative step,
rand5 -> rand7 (basic and with three recycling levels), von Neumann's coin and a speedup estimate.
Each ``Claim`` records what the article prints (``stated``, verbatim digits) and how to read it:

* ``equal``: the article states an exact value ("= 1.75", "16%"): exact == value;
* ``approx``: a rounded value ("≈ 2.38", "4.5%"): |exact - value| <= half a unit in the last digit;
* ``less``: a bound ("< 0.3%"): exact < value;
* ``symbolic``: an identity in the coin bias p, checked with sympy.

The exact side is always computed by the library (exact interpreter, closed forms); nothing here
is a hard-coded result. ``claims_table()`` returns the rows; ``specmath article`` prints them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from specmath.classic import fair_coin, rand7
from specmath.exact import exact, exact_paths
from specmath.speculative import two_token
from specmath.speculative.step import acceptance_rate, residual_law

__all__ = ["ARTICLE_TITLE", "ARTICLE_TITLE_EN", "Claim", "CLAIMS", "claims_table", "contradicted_claims"]

#: the seed article's title, as it prints it
ARTICLE_TITLE = "从投机解码到 Rand5 模拟 Rand7:跨越十年的拒绝采样直觉"
#: the title in English (our translation)
ARTICLE_TITLE_EN = "From speculative decoding to simulating Rand7 with Rand5: a rejection-sampling intuition across ten years"


@dataclass(frozen=True)
class Claim:
    key: str
    section: str
    statement: str  # what the article claims, in our words
    stated: str  # the figure as the article prints it
    kind: str  # "equal", "approx", "less" or "symbolic"
    value: str  # the stated number ("2.21", "16%") or sympy expression text
    compute: Callable[[], Any]

    def stated_value(self) -> Fraction:
        text = self.value.strip()
        if text.endswith("%"):
            return Fraction(Decimal(text[:-1])) / 100
        return Fraction(Decimal(text))

    def half_unit(self) -> Fraction:
        text = self.value.strip().rstrip("%")
        decimals = len(text.split(".")[1]) if "." in text else 0
        unit = Fraction(1, 10**decimals) / 2
        return unit / 100 if self.value.strip().endswith("%") else unit

    def evaluate(self) -> dict:
        exact_value = self.compute()
        if self.kind == "symbolic":
            import sympy

            p = sympy.Symbol("p", positive=True)
            target = sympy.sympify(self.value, locals={"p": p})
            ok = sympy.simplify(exact_value - target) == 0
            shown = str(sympy.factor(exact_value))
        else:
            stated = self.stated_value()
            if self.kind == "equal":
                ok = exact_value == stated
            elif self.kind == "approx":
                ok = abs(exact_value - stated) <= self.half_unit()
            elif self.kind == "less":
                ok = exact_value < stated
            else:
                raise ValueError(f"claim {self.key}: unknown kind {self.kind!r}")
            shown = f"{exact_value} ~ {float(exact_value):.6g}"
        return {
            "key": self.key,
            "section": self.section,
            "statement": self.statement,
            "stated": self.stated,
            "exact": shown,
            "exact_value": exact_value,
            "agrees": bool(ok),
        }


def _two_token_path(draft: str, accepted: bool) -> Fraction:
    return sum(
        (r["probability"] for r in two_token.path_table() if r["draft"] == draft and r["accepted"] == accepted),
        Fraction(0),
    )


def _rand7_article(label: str) -> Fraction:
    return exact(rand7.rand7_article).expected_cost(label)


def _vn_leaf(first: bool, second: bool):
    import sympy

    p = sympy.Symbol("p", positive=True)
    return sum(
        (path.probability for path in exact_paths(fair_coin.von_neumann, p) if [a for _, a in path.steps] == [first, second]),
        0,
    )


def _largest_multiple(size: int, b: int = 7) -> Fraction:
    return Fraction(b * (size // b))


def _speedup_example() -> Fraction:
    try:  # the closed form lives with the speedup model when that module is present
        from specmath.theory import article_speedup_example

        return Fraction(article_speedup_example())
    except ImportError:
        # E[tokens] * T_decode / (T_draft + T_target), the article's inputs in ms
        return Fraction(3 * 10, 3 + 12)


P, Q = two_token.TARGET, two_token.DRAFT

CLAIMS: list[Claim] = [
    # -- the two-token world --------------------------------------------------------------
    Claim("ratio-A", "two-token world", "p(A)/q(A) = 0.7/0.4", "1.75", "equal", "1.75", lambda: P["A"] / Q["A"]),
    Claim("accept-A", "two-token world", "token A is accepted with min(1, 1.75)", "100%", "equal", "100%",
          lambda: two_token.acceptance_by_token()["A"]),
    Claim("ratio-B", "two-token world", "p(B)/q(B) = 0.3/0.6", "0.5", "equal", "0.5", lambda: P["B"] / Q["B"]),
    Claim("accept-B", "two-token world", "token B is accepted with min(1, 0.5)", "50%", "equal", "50%",
          lambda: two_token.acceptance_by_token()["B"]),
    Claim("path-A-accept", "two-token world", "draft A, accepted: q(A) * 1", "40%", "equal", "40%",
          lambda: _two_token_path("A", True)),
    Claim("path-B-accept", "two-token world", "draft B, accepted: q(B) * 0.5", "30%", "equal", "30%",
          lambda: _two_token_path("B", True)),
    Claim("path-B-reject", "two-token world", "draft B, rejected: q(B) * 0.5", "30%", "equal", "30%",
          lambda: _two_token_path("B", False)),
    Claim("alpha", "two-token world", "total probability of accepting the draft token", "70%", "equal", "70%",
          lambda: acceptance_rate(P, Q)),
    Claim("excess-A", "two-token world", "max(0, p(A) - q(A))", "0.3", "equal", "0.3", lambda: max(Fraction(0), P["A"] - Q["A"])),
    Claim("excess-B", "two-token world", "max(0, p(B) - q(B))", "0", "equal", "0", lambda: max(Fraction(0), P["B"] - Q["B"])),
    Claim("residual-A", "two-token world", "normalised residual p'(A)", "1.0", "equal", "1.0", lambda: residual_law(P, Q)["A"]),
    Claim("residual-B", "two-token world", "normalised residual p'(B)", "0", "equal", "0", lambda: residual_law(P, Q)["B"]),
    Claim("output-A", "two-token world", "P(output A) = 0.40 + 0.30", "0.70", "equal", "0.70",
          lambda: exact(two_token.two_token_world).law["A"]),
    Claim("output-B", "two-token world", "P(output B) = 0.30 + 0", "0.30", "equal", "0.30",
          lambda: exact(two_token.two_token_world).law["B"]),
    # -- von Neumann's coin -----------------------------------------------------------------
    Claim("vn-HT", "fair coin", "P(HT) in one attempt", "p(1-p)", "symbolic", "p*(1-p)", lambda: _vn_leaf(True, False)),
    Claim("vn-TH", "fair coin", "P(TH) in one attempt", "(1-p)p", "symbolic", "(1-p)*p", lambda: _vn_leaf(False, True)),
    Claim("vn-HH", "fair coin", "P(HH): discard", "p^2", "symbolic", "p**2", lambda: _vn_leaf(True, True)),
    Claim("vn-TT", "fair coin", "P(TT): discard", "(1-p)^2", "symbolic", "(1-p)**2", lambda: _vn_leaf(False, False)),
    # -- rand5 -> rand7, basic --------------------------------------------------------------
    Claim("rand7-multiple-25", "rand7 basic", "largest multiple of 7 in 1..25", "21", "equal", "21", lambda: _largest_multiple(25)),
    Claim("rand7-reject", "rand7 basic", "P(value in 22..25): rejected", "4/25 = 16%", "equal", "16%",
          lambda: exact(rand7.rand7_basic).attempt_restart_probability),
    Claim("rand7-basic-calls", "rand7 basic", "expected rand5 calls 2 * 25/21", "≈ 2.38", "approx", "2.38",
          lambda: exact(rand7.rand7_basic).expected_cost("rand5")),
    # -- rand5 -> rand7, the article's recycling --------------------------------------------
    Claim("rand7-multiple-20", "rand7 recycling", "largest multiple of 7 in 1..20", "14", "equal", "14", lambda: _largest_multiple(20)),
    Claim("rand7-multiple-30", "rand7 recycling", "largest multiple of 7 in 1..30", "28", "equal", "28", lambda: _largest_multiple(30)),
    Claim("rand7-level1", "rand7 recycling", "output after 2 calls (21/25)", "84%", "equal", "84%", lambda: _rand7_article("level 1")),
    Claim("rand7-level2", "rand7 recycling", "output after 3 calls (4/25 * 14/20)", "11.2%", "equal", "11.2%",
          lambda: _rand7_article("level 2")),
    Claim("rand7-level3", "rand7 recycling", "output after 4 calls (4/25 * 6/20 * 28/30)", "4.5%", "approx", "4.5%",
          lambda: _rand7_article("level 3")),
    Claim("rand7-fallback-bound", "rand7 recycling", "probability of reaching the fallback", "不到 0.3% (< 0.3%)", "less", "0.3%",
          lambda: _rand7_article("fallback")),
    Claim("rand7-fallback-comment", "rand7 recycling", "code comment: fallback reached with tiny probability", "~0.1%", "approx", "0.1%",
          lambda: _rand7_article("fallback")),
    Claim("rand7-article-calls", "rand7 recycling", "expected rand5 calls of the recycling sampler", "≈ 2.21", "approx", "2.21",
          lambda: _rand7_article("rand5")),
    # -- the speedup estimate ---------------------------------------------------------------
    Claim("speedup", "why it is faster", "3 tokens * 10 ms / (3 ms draft + 12 ms verify)", "2x", "equal", "2", _speedup_example),
]


def claims_table() -> list[dict]:
    """One row per claim: key, section, statement, stated, exact, agrees."""
    return [c.evaluate() for c in CLAIMS]


def contradicted_claims() -> list[dict]:
    """The rows whose exact value contradicts what the article states."""
    return [row for row in claims_table() if not row["agrees"]]
