"""The recycling stream: the first 3 outputs of 5 -> 7 are i.i.d. uniform, exactly; fast path == proved path."""

from fractions import Fraction
from itertools import product

import numpy as np
import pytest

from specmath import exact
from specmath.entropy.recycling_stream import (
    RecyclingStream,
    long_run_calls_per_output,
    numpy_rolls,
    run_program_on_rolls,
    stream_joint_law,
    stream_next,
    stream_step_from_uniform,
)
from specmath.laws import uniform
from specmath.validation import InvalidArgument


@pytest.mark.parametrize("bound", [7, 10, 25])
def test_first_three_stream_outputs_are_iid_uniform_on_1_to_7(bound):
    law, calls = stream_joint_law(5, 7, bound, 3)
    assert law == uniform(product(range(1, 8), repeat=3))
    assert calls > 0


def test_first_three_outputs_cost_less_than_three_one_at_a_time_samplers():
    _, calls = stream_joint_law(5, 7, 10, 3)
    assert calls == Fraction(12041157995, 2510839296) < 3 * Fraction(1115, 504)


@pytest.mark.parametrize("bound", [7, 16])
def test_one_step_from_a_uniform_state_gives_a_uniform_output_independent_of_the_new_state(bound):
    sizes, todo = set(), [1]
    while todo:  # every state size the stream can reach
        n = todo.pop()
        if n in sizes:
            continue
        sizes.add(n)
        law = exact(stream_step_from_uniform, 5, 7, bound, n).law
        size_law = law.map(lambda t: t[2])
        for (x, v, n2), w in law.items():
            # P(x, v', n') = (1/7) P(n') (1/n')
            assert 1 <= x <= 7 and 0 <= v < n2
            assert w == Fraction(1, 7) * size_law[n2] / n2
        todo.extend(size_law)
    assert len(sizes) > 3


def test_long_run_cost_falls_toward_log5_7_as_the_state_grows():
    costs = [long_run_calls_per_output(5, 7, bound) for bound in (7, 16, 21)]
    # sum_n pi(n) c(n) over the chain of state sizes, solved over the rationals
    assert costs == [Fraction(725, 469), Fraction(70550, 51919), Fraction(15775, 11837)]
    assert costs[0] > costs[1] > costs[2] > Fraction(1209, 1000)


@pytest.mark.parametrize("bound", [7, 49, 2**16, 2**40])
def test_integer_stream_agrees_with_the_proved_program_draw_for_draw(bound):
    faces = np.random.default_rng(bound % 1000).integers(1, 6, size=5000).tolist()
    fast = RecyclingStream(5, 7, bound, iter(faces))
    fast_out = fast.take(1500)
    prog_out, used = run_program_on_rolls(5, 7, bound, iter(faces), 1500)
    assert fast_out == prog_out and fast.calls == used


def test_driving_the_program_on_too_few_faces_is_an_error_not_a_silent_stop():
    with pytest.raises(InvalidArgument, match="the given die faces ran out"):
        run_program_on_rolls(5, 7, 10, iter([1, 2, 3]), 5)


def test_sampled_stream_cost_is_within_0_1_percent_of_log5_7_at_a_large_state():
    stream = RecyclingStream(5, 7, 2**32, numpy_rolls(5, np.random.default_rng(3)))
    stream.take(50_000)
    # total calls = log_5(7^N * state) + O(1) here: the amortised cost is nearly deterministic
    assert abs(stream.calls / 50_000 / 1.2090619551221677 - 1) < 0.001


@pytest.mark.parametrize("args", [(5, 7, 6, 0, 1), (5, 7, 7.0, 0, 1), (5, 7, 10, 2, 2), (1, 7, 10, 0, 1)])
def test_stream_rejects_bad_bounds_and_states(args):
    with pytest.raises(InvalidArgument, match=r"bound \(at least b\)|leftover state|die's sides"):
        exact(stream_next, *args)


def test_stream_joint_law_rejects_a_bad_k():
    with pytest.raises(InvalidArgument, match=r"^k \(the number of outputs\) must be an int >= 1, got 0$"):
        stream_joint_law(5, 7, 10, 0)


def test_numpy_rolls_needs_a_generator():
    with pytest.raises(InvalidArgument, match="rng must be a numpy.random.Generator"):
        next(numpy_rolls(5, 42))
