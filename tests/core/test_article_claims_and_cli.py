import json
import subprocess
import sys

from specmath.article import claims_table, contradicted_claims
from specmath.cli import main


def test_every_article_claim_is_evaluated_and_three_are_contradicted():
    rows = claims_table()
    assert len(rows) >= 25
    bad = {r["key"] for r in contradicted_claims()}
    # the article's recycling rand7: 5816/2625 ~ 2.2156 calls (not ~2.21), fallback 2/625 = 0.32%
    assert bad == {"rand7-article-calls", "rand7-fallback-bound", "rand7-fallback-comment"}


def test_verify_all_exits_zero_and_reports_each_sampler(capsys):
    assert main(["verify", "--all"]) == 0
    out = capsys.readouterr().out
    for name in ["two-token", "speculative-step", "rand7-basic", "rand7-article", "von-neumann", "reservoir", "rejection"]:
        assert f"{name}:" in out
    assert "LOSSLESS" in out


def test_verify_json_has_the_documented_keys(capsys):
    assert main(["verify", "rand7-basic", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) >= {"name", "law", "target", "tv", "lossless", "expected_cost"}
    assert payload["expected_cost"] == "50/21" and payload["tv"] == "0/1" and payload["lossless"] is True
    assert payload["law"]["3"] == "1/7"


def test_verify_unknown_name_fails_clearly(capsys):
    assert main(["verify", "rand8"]) == 2
    assert "unknown verification" in capsys.readouterr().err


def test_cli_runs_as_a_module_without_importing_torch():
    code = "import sys; from specmath.cli import main; main(['verify','two-token']); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("False")


def test_article_command_prints_the_table(capsys):
    assert main(["article"]) == 0
    out = capsys.readouterr().out
    assert "CONTRADICTED" in out and "5816/2625" in out
    assert main(["article", "--strict"]) == 1
