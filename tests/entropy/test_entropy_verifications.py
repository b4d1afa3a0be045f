"""`specmath verify` names for the entropy samplers: lossless, exact costs, the shared JSON keys."""

import json
from fractions import Fraction

import pytest

from specmath.cli import main
from specmath.figures import PLOT_MODULES, load_all
from specmath.proofs import verify

NAMES = ["rand7-recycling", "rand7-stream", "knuth-yao", "peres", "a-res"]


#: the exact expected cost each verification reports (None: no cost label)
COSTS = {
    "rand7-recycling": Fraction(1115, 504),
    "rand7-stream": Fraction(12041157995, 2510839296),
    "knuth-yao": Fraction(5, 4),
    "peres": None,
    "a-res": None,
}


@pytest.mark.parametrize("name", NAMES)
def test_entropy_verification_is_lossless_with_the_shared_json_keys_and_exact_cost(name):
    v = verify(name)
    assert v.lossless and v.tv == 0
    assert v.expected_cost == COSTS[name]
    payload = v.to_json()
    assert {"name", "law", "target", "tv", "lossless"} <= set(payload) and payload["tv"] == "0/1"
    json.dumps(payload)


def test_cli_verify_rand7_recycling_json(capsys):
    assert main(["verify", "rand7-recycling", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    record = out[0] if isinstance(out, list) else out
    assert record["expected_cost"] == "1115/504" and record["lossless"] is True


def test_entropy_figures_are_registered_by_their_plotting_module():
    assert "specmath.plots.entropy_plots" in PLOT_MODULES
    registry = load_all(["specmath.plots.entropy_plots"])
    assert registry["rand7_calls_by_method.png"].__module__ == "specmath.plots.entropy_plots"
    assert registry["coin_rates.png"].__module__ == "specmath.plots.entropy_plots"
