"""`specmath verify` keeps an error apart from a verdict: a raising verification is ERROR (exit 2), a lossy one NOT LOSSLESS (exit 1)."""

import json
from fractions import Fraction

import pytest

from specmath import proofs
from specmath.cli import main
from specmath.laws import Law, LawError
from specmath.proofs.verification import Verification, VerificationError

HALF = Law({"A": Fraction(1, 2), "B": Fraction(1, 2)})


def _raising() -> Verification:
    raise LawError("the rule rejected token 'A' but gave no law to resample from")


def _lossy() -> Verification:
    return Verification("lossy", "a law off by 1/4", Law({"A": Fraction(3, 4), "B": Fraction(1, 4)}), HALF)


def _lossless() -> Verification:
    return Verification("fine", "the target itself", HALF, HALF)


@pytest.fixture
def registry(monkeypatch):
    table = {"fine": _lossless, "lossy": _lossy, "raises": _raising}
    monkeypatch.setattr(proofs, "VERIFIERS", table)
    return table


def test_a_raising_verification_is_an_error_line_naming_the_exception_and_exit_2(registry, capsys):
    assert main(["verify", "raises"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("raises: ERROR LawError: the rule rejected token 'A' but gave no law to resample from")
    assert "NOT LOSSLESS" not in out and "verdict:" not in out


def test_a_lossy_verification_stays_not_lossless_with_exit_1(registry, capsys):
    assert main(["verify", "lossy"]) == 1
    out = capsys.readouterr().out
    assert "verdict: NOT LOSSLESS" in out and "ERROR" not in out


def test_all_with_an_error_and_a_loss_exits_2_and_counts_each(registry, capsys):
    assert main(["verify", "--all"]) == 2
    out = capsys.readouterr().out
    assert out.rstrip().endswith("1 of 3 samplers lossless, 1 NOT LOSSLESS, 1 ERROR (raised: no verdict)")
    assert "raises: ERROR LawError" in out


def test_all_with_a_loss_and_no_error_exits_1(registry, monkeypatch, capsys):
    monkeypatch.delitem(registry, "raises")
    assert main(["verify", "--all"]) == 1
    assert capsys.readouterr().out.rstrip().endswith("1 of 2 samplers lossless, 1 NOT LOSSLESS")


def test_json_carries_the_error_and_no_verdict(registry, capsys):
    assert main(["verify", "--all", "--json"]) == 2
    payload = {entry["name"]: entry for entry in json.loads(capsys.readouterr().out)}
    assert payload["raises"] == {"name": "raises", "error": "LawError: the rule rejected token 'A' but gave no law to "
                                 "resample from", "lossless": None}
    assert payload["lossy"]["lossless"] is False and "error" not in payload["lossy"]
    assert payload["fine"]["lossless"] is True


def test_run_verification_keeps_the_exception_and_verify_still_raises(registry):
    result = proofs.run_verification("raises")
    assert isinstance(result, VerificationError) and result.lossless is None
    assert isinstance(result.exception, LawError)
    with pytest.raises(LawError, match="no law to resample"):
        proofs.verify("raises")
    with pytest.raises(KeyError, match="unknown verification"):
        proofs.run_verification("nope")
