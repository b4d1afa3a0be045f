"""The vLLM pages are what scripts/vllm_pages.py writes from the committed measurement, and every vLLM row of it
has a verdict of the fixed set, its requests' seeds and counters, and a control where it sampled."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MEASUREMENT = ROOT / "data" / "measurements" / "cpu_x86_64_2026-12-01"

sys.path.insert(0, str(ROOT / "scripts"))
from vllm_pages import verdict_word  # noqa: E402  (the page's reading of a recorded verdict)


def test_the_vllm_pages_are_up_to_date_with_the_measurement():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "vllm_pages.py"), "--check"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_vllm_row_has_a_verdict_seeds_and_counters_and_a_sampled_row_its_control():
    records = [r for p in sorted(MEASUREMENT.glob("vllm-*.json")) if p.name != "vllm-environment.json"
               for r in json.loads(p.read_text())]
    assert records
    words = ("PASS", "LOSS", "REFUSED", "ENGINE ERROR", "INCONCLUSIVE")
    for r in records:
        assert verdict_word(r["verdict"]).startswith(words), r["verdict"]
        if r["row"] in ("min-p 0.1", "logit bias") and not r["engine_name"].endswith("served"):
            assert r["verdict"].startswith("REFUSED") and "not yet supported with speculative decoding" in r["verdict"]
        if r["checks"]:
            assert any(c["role"] == "control" for c in r["checks"]), (r["engine_name"], r["row"])
            assert all("seed" in q and "n" in q for q in r["requests"])
            assert all(q.get("counters") for q in r["requests"]), (r["engine_name"], r["row"])
            assert r["drafted"] and r["drafted"] > 0


def test_a_served_crash_is_reported_with_the_exception_the_server_logged(tmp_path):
    # vLLM's server answers a crashed engine core with HTTP 500 "See stack trace (above)": the root cause is in its
    # log, after the byte where the row started (an earlier crash in the same log belongs to another row)
    from measure_vllm import logged_cause

    log = tmp_path / "serve.log"
    earlier = "(Worker pid=1) ERROR 12-04 15:00:00 [multiproc_executor.py:1063] ValueError: an earlier row\n"
    log.write_text(earlier + "INFO: 127.0.0.1 - \"POST /v1/completions HTTP/1.1\" 200 OK\n"
                   "(Worker pid=1) ERROR 12-04 15:11:22 [multiproc_executor.py:1063]   File \"x.py\", line 3, in f\n"
                   "(Worker pid=1) ERROR 12-04 15:11:22 [multiproc_executor.py:1063] RuntimeError: max(): Expected "
                   "reduction dim to be specified for input.numel() == 0.\n"
                   "(APIServer pid=2) ERROR 12-04 15:11:22 [async_llm.py:906] vllm.v1.engine.exceptions."
                   "EngineDeadError: EngineCore encountered an issue.\n")
    assert logged_cause(log, len(earlier)) == "RuntimeError: max(): Expected reduction dim to be specified for " \
                                              "input.numel() == 0."
    assert logged_cause(log, 0) == "ValueError: an earlier row"
    assert logged_cause(log, log.stat().st_size) is None
