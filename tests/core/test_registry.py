"""specmath.registry: name -> "module:attr", nothing imported until an entry is asked for."""

from __future__ import annotations

import subprocess
import sys

import pytest

from specmath.registry import Registry
from specmath.validation import UnknownName


def test_a_registry_names_its_entries_without_importing_them_and_loads_one_on_request():
    code = ("import sys\nfrom specmath.registry import Registry\n"
            "r = Registry('thing', {'tv': 'specmath.laws:tv_distance', 'coin': 'specmath.classic.fair_coin:von_neumann'})\n"
            "print(r.names, list(r), len(r), 'coin' in r, r.location('coin'), 'specmath.classic.fair_coin' in sys.modules)\n"
            "print(r['coin'].__name__, 'specmath.classic.fair_coin' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["('tv', 'coin') ['tv', 'coin'] 2 True specmath.classic.fair_coin:von_neumann False",
                   "von_neumann True"]


def test_an_unknown_name_gets_did_you_mean_and_the_choices():
    registry = Registry("sampler", {"reference": "specmath.speculative.reference_round:reference_sample_round"})
    assert registry.named("reference").__name__ == "reference_sample_round"
    with pytest.raises(UnknownName, match=r"^unknown sampler 'refrence' \(did you mean 'reference'\?\); choose from: "
                                          r"reference, or module:function$"):
        registry.named("refrence", also="or module:function")
    with pytest.raises(KeyError):
        registry["refrence"]  # a Mapping: [] is the plain lookup, named() the checked one


@pytest.mark.parametrize("location", ["specmath.laws", "specmath.laws:", ":tv_distance", "specmath laws:tv", 3])
def test_a_location_not_of_the_form_module_attr_fails_when_the_registry_is_built(location):
    with pytest.raises(ValueError, match=r"^thing 'x': its location must be 'module:attr', got "):
        Registry("thing", {"x": location})
