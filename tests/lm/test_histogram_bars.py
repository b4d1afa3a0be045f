"""The histogram's "other" bar: samples outside the target's top outcomes are shown, not dropped."""

from collections import Counter
from fractions import Fraction
from types import SimpleNamespace

from specmath.laws import Law
from specmath.plots.lm_plots import histogram_bars


def test_other_bar_holds_the_samples_the_target_never_produces_and_the_remaining_mass():
    law = Law({1: Fraction(1, 2), 2: Fraction(1, 4), 3: Fraction(1, 4)})
    draft = Law({1: Fraction(1, 4), 2: Fraction(1, 4), 3: Fraction(1, 4), 9: Fraction(1, 4)})
    # 10 samples: 2 of them are token 9, outside the target's support (what a lossy residual emits)
    check = SimpleNamespace(law=law, n=10, counts=Counter({1: 5, 2: 2, 3: 1, 9: 2}))
    rows = histogram_bars(check, draft, top=2)
    assert [r[0] for r in rows] == [1, 2, "other"]
    other = rows[-1]
    assert other[1] == 3 / 10  # token 3 (1 sample) and token 9 (2 samples) of 10: one division, the same float
    assert other[2] == 0.25 and other[3] == 0.5  # p(3); q(3) + q(9): quarters are exact in binary
    assert abs(sum(r[1] for r in rows) - 1) < 1e-12  # tenths are not exact in binary: rounding only
