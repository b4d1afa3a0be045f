import math
from fractions import Fraction

import numpy as np
import pytest

from specmath.laws import Law, LawError, check_same_vocabulary, difference_table, point, tv_distance, uniform


def test_law_is_a_mapping_whose_dict_is_its_table():
    law = Law({"A": "7/10", "B": Fraction(3, 10)})
    assert dict(law) == {"A": Fraction(7, 10), "B": Fraction(3, 10)}
    assert law.prob("C") == 0
    with pytest.raises(KeyError):
        law["C"]


def test_floats_are_converted_exactly_not_rounded_to_decimals():
    law = Law.from_weights({"A": 0.1, "B": 0.9})
    assert law["A"] == Fraction(0.1) / (Fraction(0.1) + Fraction(0.9))
    assert law["A"] != Fraction(1, 10)  # the double 0.1 is not 1/10, and the exact core says so
    assert Law.from_weights({"A": "0.1", "B": "0.9"})["A"] == Fraction(1, 10)  # strings spell decimals


def test_equality_is_as_measures_zero_entries_do_not_matter():
    assert Law({"A": 1}) == Law({"A": 1, "B": 0})
    assert Law({"A": 1}) != Law({"B": 1})
    assert hash(Law({"A": 1})) == hash(Law({"A": 1, "B": 0}))


@pytest.mark.parametrize(
    "table, message",
    [
        ({"A": -1, "B": 2}, "negative"),
        ({"A": float("nan"), "B": 1}, "NaN"),
        ({"A": float("inf")}, "infinite"),
        ({"A": 0, "B": 0}, "all-zero"),
        ({"A": "1/2", "B": "1/4"}, "not normalised"),
        ({}, "empty"),
        ({"A": "x"}, "not a rational"),
        ({"A": True}, "bool"),
    ],
)
def test_invalid_laws_raise_a_value_error_naming_the_problem(table, message):
    with pytest.raises(ValueError, match=message):
        Law(table)


@pytest.mark.parametrize(
    "weights, message",
    [({"A": -1, "B": 2}, "negative"), ({"A": float("nan")}, "NaN"), ({"A": 0, "B": 0}, "all-zero"), ({}, "empty")],
)
def test_from_weights_rejects_bad_weights(weights, message):
    with pytest.raises(LawError, match=message):
        Law.from_weights(weights)


def test_from_weights_normalises_integers_and_numpy_scalars():
    law = Law.from_weights({0: np.int64(1), 1: np.float64(3.0)})
    assert law == Law({0: Fraction(1, 4), 1: Fraction(3, 4)})


def test_tv_distance_is_half_the_l1_distance():
    a = Law({"A": "7/10", "B": "3/10"})
    b = Law({"A": "2/5", "B": "3/5"})
    assert tv_distance(a, b) == Fraction(3, 10)
    assert tv_distance(a, a) == 0
    assert tv_distance(point("A"), point("B")) == 1


def test_difference_table_lists_every_outcome_of_either_law():
    rows = difference_table(Law({"A": 1}), Law({"B": 1}))
    assert [r[0] for r in rows] == ["A", "B"]
    assert rows[0][3] == 1 and rows[1][3] == -1


def test_vocabulary_mismatch_names_the_missing_tokens():
    with pytest.raises(LawError, match="only in p: 'C'"):
        check_same_vocabulary(Law({"A": 1, "C": 0}), Law({"A": 1}))


def test_uniform_point_map_condition_expectation():
    die = uniform(range(1, 7))
    assert die.map(lambda x: x % 2) == Law({0: "1/2", 1: "1/2"})
    assert die.condition(lambda x: x > 4) == uniform([5, 6])
    assert die.expectation() == Fraction(7, 2)
    with pytest.raises(LawError):
        die.condition(lambda x: x > 6)
    with pytest.raises(LawError, match="empty"):
        uniform([])
    assert not math.isnan(float(die.P(lambda x: x == 1)))
