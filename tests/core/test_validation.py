"""The argument checks every public function uses: what they accept, and the one line they raise."""

import doctest
from fractions import Fraction

import numpy as np
import pytest

import specmath.validation as validation
from specmath.validation import (
    InvalidArgument,
    InvalidFile,
    UnknownName,
    check_choice,
    check_choices,
    check_file,
    check_fraction,
    check_generator,
    check_generator_kind,
    check_integer,
    check_probability,
    check_real,
    check_seed,
)


def test_module_doctests_pass():
    assert doctest.testmod(validation).failed == 0


@pytest.mark.parametrize("value", [0, 3, np.int64(3), np.uint8(3), np.array(3)])
def test_integers_of_any_integer_type_are_accepted_as_python_ints(value):
    out = check_integer(value, "n", min_value=0)
    assert out == int(value) and type(out) is int


@pytest.mark.parametrize("value", [True, False, np.bool_(True), 2.0, "2", None, Fraction(2), np.float64(2)])
def test_non_integers_and_bools_are_refused_with_the_name_and_the_rule(value):
    with pytest.raises(InvalidArgument, match=r"^n must be an int >= 0, got "):
        check_integer(value, "n", min_value=0)


def test_integer_range_is_stated_in_the_message():
    with pytest.raises(InvalidArgument, match=r"gamma must be an int in \[1, 32\], got 33"):
        check_integer(33, "gamma", min_value=1, max_value=32)
    assert check_integer(32, "gamma", min_value=1, max_value=32) == 32


def test_real_numbers_with_open_and_closed_bounds():
    assert check_real(np.float32(0.5), "t", min_value=0, open_min=True) == 0.5
    assert check_real(1, "top_p", min_value=0, max_value=1, open_min=True) == 1.0
    for bad in (0, -1.0, float("nan"), float("inf"), True, "1", None):
        with pytest.raises(InvalidArgument, match=r"^t must be a (real|finite) number > 0, got "):
            check_real(bad, "t", min_value=0, open_min=True)


def test_probability_and_seed():
    assert check_probability(0, "p") == 0.0 and check_probability(1, "p") == 1.0
    with pytest.raises(InvalidArgument, match=r"in \[0, 1\]"):
        check_probability(1.5, "p")
    assert check_seed(np.int64(7)) == 7
    with pytest.raises(InvalidArgument, match=r"^seed must be an int >= 0, got 1.5$"):
        check_seed(1.5)
    with pytest.raises(InvalidArgument, match=r"^seed must be an int >= 0, got -1$"):
        check_seed(-1)


def test_exact_ranges_are_checked_on_the_number_meant_and_return_a_fraction():
    # a float is read as the decimal it prints as: 0.7 is 7/10, and 1.0000000000000002 is above 1
    assert check_fraction(0.7, "p", min_value=0, max_value=1) == Fraction(7, 10)
    assert check_fraction("1/3", "p", min_value=0, max_value=1) == Fraction(1, 3)
    assert check_fraction(np.float64(0.5), "p", min_value=0, max_value=1) == Fraction(1, 2)
    with pytest.raises(InvalidArgument, match=r"^p must be a number in \[0, 1\], got 1.0000000000000002$"):
        check_fraction(1.0000000000000002, "p", min_value=0, max_value=1)
    with pytest.raises(InvalidArgument, match=r"^top-p must be a number in \(0, 1\], got 0$"):
        check_fraction(0, "top-p", min_value=0, max_value=1, open_min=True)
    for bad in (float("nan"), float("inf"), True, "x", None):
        with pytest.raises(InvalidArgument, match=r"^p must be a finite number in \[0, 1\], got "):
            check_fraction(bad, "p", min_value=0, max_value=1)


def test_generators_and_generator_kinds():
    rng = np.random.default_rng(0)
    assert check_generator(rng) is rng
    for bad in (None, 42, np.random.RandomState(0)):
        with pytest.raises(InvalidArgument, match=r"^rng must be a numpy.random.Generator, e.g. numpy.random.default_rng\(seed\), got "):
            check_generator(bad)
    assert check_generator_kind("torch") == "torch"
    with pytest.raises(UnknownName, match=r"^unknown backend 'jax'; choose from: numpy, torch$"):
        check_generator_kind("jax", "backend")


def test_unknown_names_list_the_choices_and_suggest_the_nearest():
    with pytest.raises(UnknownName, match=r"^unknown pair 'bundeld' \(did you mean 'bundled'\?\); choose from: bundled, smollm2$"):
        check_choice("bundeld", "pair", ["bundled", "smollm2"])
    with pytest.raises(UnknownName, match=r"^unknown pair 'zzz'; choose from: bundled, smollm2$"):
        check_choice("zzz", "pair", ["bundled", "smollm2"])
    with pytest.raises(UnknownName, match=r"^unknown adapter 'x'; choose from: numpy, torch, or module:function$"):
        check_choice("x", "adapter", ["numpy", "torch"], also="or module:function")
    assert check_choices("bundled", "pair", ["bundled", "smollm2"]) == ["bundled"]
    assert issubclass(UnknownName, ValueError)


def test_files_missing_or_directories_are_named(tmp_path):
    with pytest.raises(InvalidFile, match=r"prompts file '.*nosuch.jsonl': no such file"):
        check_file(tmp_path / "nosuch.jsonl", "prompts file")
    with pytest.raises(InvalidFile, match=r"is not a file"):
        check_file(tmp_path, "prompts file")
    f = tmp_path / "a.txt"
    f.write_text("x")
    assert check_file(str(f)) == f
