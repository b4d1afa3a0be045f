import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from specmath.laws import (
    Law,
    LawError,
    as_law,
    check_same_vocabulary,
    difference_table,
    point,
    to_fraction,
    tv_distance,
    uniform,
)


def test_law_is_a_mapping_whose_dict_is_its_table():
    law = Law({"A": "7/10", "B": Fraction(3, 10)})
    assert dict(law) == {"A": Fraction(7, 10), "B": Fraction(3, 10)}
    assert law.prob("C") == 0
    with pytest.raises(KeyError):
        law["C"]


def test_python_floats_are_read_as_the_decimals_they_print_as():
    law = Law({"A": 0.7, "B": 0.3})
    assert dict(law) == {"A": Fraction(7, 10), "B": Fraction(3, 10)}  # not the doubles 0.7 - 2^-54 ...
    assert Law({"A": 0.1, "B": 0.2, "C": 0.7})["B"] == Fraction(1, 5)
    assert Law.from_weights({"A": "0.1", "B": "0.9"})["A"] == Fraction(1, 10)  # strings spell decimals
    assert to_fraction(1e-300) == Fraction(1, 10**300)


def test_numpy_torch_and_decimal_scalars_are_read_like_python_numbers():
    torch = pytest.importorskip("torch")
    # a float scalar is the shortest decimal of its own precision, whichever type carries it
    assert to_fraction(np.float64(0.1)) == to_fraction(0.1) == Fraction(1, 10)
    assert to_fraction(np.float32(0.7)) == Fraction(7, 10) != Fraction(float(np.float32(0.7)))
    assert to_fraction(torch.tensor(0.1, dtype=torch.float64)) == Fraction(1, 10)
    assert to_fraction(torch.tensor(0.7)) == Fraction(7, 10)  # float32
    assert to_fraction(torch.tensor(3)) == 3 and to_fraction(np.int64(3)) == 3
    assert to_fraction(Decimal("0.7")) == Fraction(7, 10)
    assert Law({"A": np.float64(0.7), "B": np.float64(0.3)}) == Law({"A": 0.7, "B": 0.3})
    assert Law(dict(enumerate(np.array([0.7, 0.3])))) == Law({0: "7/10", 1: "3/10"})
    assert Law({"A": Decimal("0.25"), "B": Decimal("0.75")})["A"] == Fraction(1, 4)
    with pytest.raises(LawError, match="bool"):
        to_fraction(torch.tensor(True))
    with pytest.raises(LawError, match="shape"):
        to_fraction(np.zeros(2))
    with pytest.raises(LawError, match="not a finite number"):
        to_fraction(Decimal("NaN"))


def test_probability_vectors_become_exact_binary_laws_renormalised():
    torch = pytest.importorskip("torch")
    v = np.array([0.1, 0.2, 0.7])
    total = Fraction(0.1) + Fraction(0.2) + Fraction(0.7)
    assert as_law(v) == Law({0: Fraction(0.1) / total, 1: Fraction(0.2) / total, 2: Fraction(0.7) / total})
    assert as_law(torch.tensor([0.25, 0.75])) == Law({0: Fraction(1, 4), 1: Fraction(3, 4)})
    with pytest.raises(LawError, match="one-dimensional"):
        as_law(np.ones((2, 2)) / 4)


def test_as_law_accepts_any_mapping_and_names_what_it_cannot_read():
    from types import MappingProxyType

    law = Law({"A": Fraction(1, 2), "B": Fraction(1, 2)})
    assert as_law(law) is law
    assert as_law(MappingProxyType({"A": "1/2", "B": 0.5})) == law
    with pytest.raises(LawError, match="Mapping outcome -> probability"):
        as_law([("A", 1)])


def test_weights_that_do_not_sum_to_one_name_the_sum_and_both_fixes():
    with pytest.raises(LawError) as info:
        Law({"A": 1 / 3, "B": 2 / 3}, name="p")
    message = str(info.value)
    assert "9999999999999999/10000000000000000" in message
    assert "'1/3'" in message and "Fractions" in message and "Law.from_weights(weights)" in message
    assert Law({"A": 1 / 3, "B": 2 / 3}, normalise=True) == Law({"A": Fraction(1, 3), "B": Fraction(2, 3)})
    assert Law({"A": 1, "B": 3}, normalise=True) == Law({"A": Fraction(1, 4), "B": Fraction(3, 4)})


def test_equality_is_as_measures_zero_entries_do_not_matter():
    assert Law({"A": 1}) == Law({"A": 1, "B": 0})
    assert Law({"A": 1}) != Law({"B": 1})
    assert hash(Law({"A": 1})) == hash(Law({"A": 1, "B": 0}))


def test_laws_that_differ_by_float_rounding_are_unequal():
    # equality is exact: 1e-17 is below any float tolerance (float(1/2 + 1e-17) == 0.5), and still unequal
    tiny = Fraction(1, 10**17)
    half = Law({"A": Fraction(1, 2), "B": Fraction(1, 2)})
    nudged = Law({"A": Fraction(1, 2) + tiny, "B": Fraction(1, 2) - tiny})
    assert float(nudged["A"]) == float(half["A"])  # Fraction -> float is correctly rounded (IEEE 754): the same on every CPU
    assert nudged != half and not (nudged == half)
    assert half != {"A": Fraction(1, 2) + tiny, "B": Fraction(1, 2) - tiny}  # a Mapping compares the same way
    assert tv_distance(nudged, half) == tiny
    # the double nearest 1/3, read exactly (Fraction(float)), is 1/3 - 1/(3 * 2^54): a different law
    assert Fraction(1 / 3) - Fraction(1, 3) == -Fraction(1, 3 * 2**54)
    assert Law.from_weights({"A": Fraction(1 / 3), "B": 1 - Fraction(1 / 3)}) != Law({"A": "1/3", "B": "2/3"})


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
