"""`specmath verify speculative-round / speculative-generate` report exact losslessness."""

import json

from specmath.cli import main
from specmath.proofs import verify


def test_registered_round_and_generation_verifications_are_lossless_with_tv_zero():
    for name in ("speculative-round", "speculative-generate"):
        result = verify(name)
        assert result.lossless and result.tv == 0


def test_verify_speculative_round_json_reports_tv_as_exact_fraction(capsys):
    assert main(["verify", "speculative-round", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["tv"] == "0/1" and payload["lossless"] is True
    assert payload["extras"]["E[tokens per round] (exact)"] == "3019/900"
