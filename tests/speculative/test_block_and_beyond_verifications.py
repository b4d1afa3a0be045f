"""The registered verifications beyond the article are lossless, and the CLI says so."""

import pytest

from specmath.cli import main
from specmath.proofs import verify

NAMES = ["block-verification", "multi-draft", "sample-match", "warped-target"]


@pytest.mark.parametrize("name", NAMES)
def test_each_beyond_verification_is_lossless_with_tv_zero(name):
    result = verify(name)
    assert result.lossless and result.tv == 0
    assert result.to_json()["tv"] == "0/1"


def test_specmath_verify_block_verification_prints_the_papers_11_9(capsys):
    assert main(["verify", "block-verification"]) == 0
    out = capsys.readouterr().out
    assert "E[accepted] block: 11/9" in out and "LOSSLESS" in out
