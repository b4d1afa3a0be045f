"""The two interpreters: exact enumeration (Fractions) and seeded sampling, on small programs."""

import pickle
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
import sympy

from specmath import (
    RESTART,
    Law,
    Limits,
    NotExactError,
    Recur,
    coin,
    die,
    draw,
    exact,
    exact_paths,
    exact_symbolic,
    tick,
)
from specmath.driver import Call, run
from specmath.sampled import sample, sample_with_costs
from specmath.stats import detectable_tv, g_test
from specmath.validation import InvalidArgument


def two_dice_sum():
    a = yield die(6)
    b = yield die(6)
    return a + b


def test_exact_law_of_two_dice_is_the_triangle():
    law = exact(two_dice_sum).law
    assert law == Law({s: Fraction(6 - abs(s - 7), 36) for s in range(2, 13)})


def geometric_until_six():
    r = yield die(6, label="roll")
    return "six" if r == 6 else RESTART


def test_restart_is_normalised_and_costs_are_exact():
    result = exact(geometric_until_six)
    assert result.law == Law({"six": 1})
    assert result.expected_cost("roll") == 6  # geometric with success 1/6
    assert result.attempt_restart_probability == Fraction(5, 6)


def count_heads_until_tail(heads: int):
    # a state machine: state = heads so far (capped), solved as an absorbing Markov chain
    flip = yield coin(Fraction(1, 2), label="flip")
    if not flip:
        return min(heads, 3)
    return Recur(count_heads_until_tail, min(heads + 1, 3))


def test_recur_state_machine_is_solved_exactly():
    result = exact(count_heads_until_tail, 0)
    assert result.law == Law({0: "1/2", 1: "1/4", 2: "1/8", 3: "1/8"})
    assert result.expected_cost("flip") == 2
    assert result.states == 4


def never_returns():
    yield coin(Fraction(1, 2))
    return RESTART


def ping():
    yield tick("ping")
    return Recur(pong)


def pong():
    yield tick("pong")
    return Recur(ping)


def endless_loop():
    while True:
        yield coin(Fraction(1, 2))


def forgets_to_return():
    yield coin(Fraction(1, 2))


def test_programs_that_do_not_halt_raise_instead_of_hanging():
    with pytest.raises(NotExactError, match="probability 1"):
        exact(never_returns)
    with pytest.raises(NotExactError):
        exact(ping)
    with pytest.raises(NotExactError, match="RESTART or Recur"):
        exact(endless_loop, limits=Limits(max_depth=50))
    with pytest.raises(NotExactError, match="returned None"):
        exact(forgets_to_return)
    with pytest.raises(NotExactError, match="no outcome"):
        sample(never_returns, rng=np.random.default_rng(0), max_attempts=100)


class Scripted:
    """A handler of our own: the answers, in order, whatever is asked."""

    def __init__(self, *answers):
        self.answers = iter(answers)

    def answer(self, request):
        return next(self.answers)


def test_one_driver_runs_a_program_for_any_handler_and_counts_its_costs():
    costs = {}
    assert run(Call(two_dice_sum), Scripted(6, 5), costs) == 11 and costs == {"die": 2}
    # RESTART runs the same call again: two rejected rolls, then a six
    costs = {}
    assert run(Call(geometric_until_six), Scripted(1, 2, 6), costs) == "six" and costs == {"roll": 3}
    # Recur runs the call it names, with the state it carries: heads, heads, tail
    costs = {}
    assert run(Call(count_heads_until_tail, (0,)), Scripted(True, True, False), costs) == 2 and costs == {"flip": 3}
    # ticks are costs without answers; a program that never returns is an error, not a hang
    costs = {}
    with pytest.raises(NotExactError, match="no outcome after 10 attempts"):
        run(Call(ping), Scripted(), costs, max_attempts=10)
    assert costs == {"ping": 5, "pong": 5}


def yields_a_number():
    yield 3
    return "never"


def test_both_interpreters_name_a_yield_that_is_not_a_request():
    for interpret in (exact, lambda program: sample(program, rng=np.random.default_rng(0))):
        with pytest.raises(TypeError, match="'yields_a_number' yielded 3; yield die/coin/draw/tick requests only"):
            interpret(yields_a_number)


def test_a_law_keeps_what_is_derived_from_it_and_pickles_without_it():
    law = Law({"A": "1/3", "B": "2/3", "C": 0})
    calls = []
    first = law.derived("support size", lambda lw: calls.append(1) or len(lw.support))
    assert first == law.derived("support size", lambda lw: calls.append(1) or -1) == 2 and calls == [1]
    hash(law)
    copy = pickle.loads(pickle.dumps(law))
    assert copy == law and list(copy.items()) == list(law.items()) and hash(copy) == hash(law)
    assert copy.derived("support size", lambda lw: -1) == -1  # derived values are not carried along


def test_exact_paths_list_each_leaf_with_its_answers():
    paths = exact_paths(two_dice_sum)
    assert len(paths) == 36 and all(p.probability == Fraction(1, 36) for p in paths)
    assert paths[0].steps == (("die", 1), ("die", 1)) and paths[0].end == 2


def certain_then_impossible():
    # coin(1) never comes up False: its False branch must not be explored (here it would divide by zero)
    sure = yield coin(Fraction(1), label="sure")
    if not sure:
        return 1 / 0
    x = yield coin(Fraction(0), label="never")
    return "heads" if x else "tails"


def test_a_zero_probability_branch_is_never_explored():
    assert exact(certain_then_impossible).law == Law({"tails": 1})
    paths = exact_paths(certain_then_impossible)
    assert [p.steps for p in paths] == [(("sure", True), ("never", False))]
    assert exact(draw_zero_weight).law == Law({"a": 1})


def draw_zero_weight():
    x = yield draw({"a": 1, "b": 0})
    return x if x == "a" else 1 / 0


def biased(p):
    x = yield coin(p)
    y = yield coin(p)
    return (x, y)


def test_symbolic_interpreter_keeps_the_bias_as_a_symbol():
    p = sympy.Symbol("p", positive=True)
    law, _ = exact_symbolic(biased, p)
    assert sympy.simplify(law[(True, False)] - p * (1 - p)) == 0


def test_sampler_refuses_global_randomness():
    with pytest.raises(InvalidArgument, match="rng must be a numpy.random.Generator"):
        sample(two_dice_sum, rng=None)


def test_same_seed_gives_the_same_samples():
    a = [sample(two_dice_sum, rng=np.random.default_rng(7)) for _ in range(3)]
    b = [sample(two_dice_sum, rng=np.random.default_rng(7)) for _ in range(3)]
    assert a == b


def test_sampled_interpreter_agrees_with_the_exact_one_g_test():
    """Power: with N = 40000 samples over 11 cells at alpha = 1e-6, any sampler whose law is at TV
    >= detectable_tv (about 0.022) from the exact law is rejected with probability >= 0.99."""
    rng = np.random.default_rng(2024)
    n = 40_000
    counts = Counter(sample(two_dice_sum, rng=rng) for _ in range(n))
    law = exact(two_dice_sum).law
    eps = detectable_tv(law, n, alpha=1e-6, power=0.99)
    assert eps < 0.025, eps
    result = g_test(counts, law)
    assert result.p_value > 1e-6, result
    # the same test rejects a sampler that is off by eps (the negative control for its power)
    lossy = Law.from_weights({s: (w + (Fraction(3, 100) if s == 7 else 0)) for s, w in law.items()})
    bad_counts = Counter(np.random.default_rng(5).choice(list(lossy), size=n, p=[float(lossy[s]) for s in lossy]))
    assert g_test(bad_counts, law).p_value < 1e-6


def test_costs_are_counted_per_label_on_the_sampled_side():
    _, costs = sample_with_costs(geometric_until_six, rng=np.random.default_rng(1))
    assert costs["roll"] >= 1


def test_draw_takes_any_mapping_as_its_law_and_coin_a_probability():
    assert draw({"A": 0.25, "B": 0.75}).law == Law({"A": Fraction(1, 4), "B": Fraction(3, 4)})
    with pytest.raises(ValueError, match="Mapping"):
        draw(["A", "B"])
    with pytest.raises(InvalidArgument, match=r"coin probability \(coin\) must be a number in \[0, 1\], got 3/2"):
        coin(Fraction(3, 2))
    with pytest.raises(InvalidArgument, match=r"must be a finite number in \[0, 1\], got nan"):
        coin(float("nan"))
    with pytest.raises(InvalidArgument, match=r"a die's number of sides must be an int >= 1, got 0"):
        die(0)
    with pytest.raises(InvalidArgument, match=r"got True \(a bool\)"):
        die(True)
    assert die(np.int64(3)).law == die(3).law
