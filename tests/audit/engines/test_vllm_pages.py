"""The vLLM pages are what scripts/vllm_pages.py writes from the committed measurement, and every vLLM row of it
has a verdict of the fixed set, its requests' seeds and counters, and a control where it sampled."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from specmath.audit.engines.checks import in_verdict_words

ROOT = Path(__file__).resolve().parents[3]
MEASUREMENT = ROOT / "data" / "measurements" / "cpu_x86_64_2026-12-01"

sys.path.insert(0, str(ROOT / "scripts"))  # measure_vllm, imported by the tests that need it



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
        assert in_verdict_words(r["verdict"]).startswith(words), r["verdict"]
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


def test_the_server_law_check_takes_the_audits_own_samples_not_the_prompt_probes(monkeypatch):
    # a draft model's row probes candidate prompts through the same endpoint before its audit (16 samples each, at
    # seed 10**8): those are samples of other prompts' laws, and counted in they move the first token's histogram
    import measure_vllm
    from measure_vllm import CapturingEndpoint, audited_samples

    from specmath.audit.engines.protocol import Generation
    from specmath.audit.engines.runner import AuditPlan, _generate
    from specmath.sampling_options import SamplingOptions

    def fake(self, prompt, n, seed, max_new_tokens, options, speculative, control):  # token = the prompt's last
        return Generation([[prompt[-1], seed + i] for i in range(n)])

    monkeypatch.setattr(measure_vllm.EndpointEngine, "_generate", fake)
    engine = CapturingEndpoint("http://127.0.0.1:9/v1", vocab_size=None, samples_per_request=4)
    options = SamplingOptions()
    for probed in ([1, 2], [1, 3]):
        engine.generate(probed, 16, 10**8, 2, options)
    requests: list[dict] = []
    tokens, _, _ = _generate(engine, AuditPlan([1, 3], options, 10, seed=0), 0, requests=requests)

    class Audit:
        prompt, n = [1, 3], 10

    Audit.requests = requests
    assert audited_samples(engine.samples, Audit) == tokens == [[3, i] for i in range(10)]
    Audit.n = 11
    with pytest.raises(ValueError, match="10 samples kept of the audit's 11"):
        audited_samples(engine.samples, Audit)


def test_a_plain_server_crash_under_the_seeds_row_is_reported_with_the_exception_its_own_log_holds(tmp_path):
    # the served seeds row's plain reference is a second server; when it dies, the cause is in its log, not the
    # speculative server's, and the ENGINE ERROR says which server it was
    import contextlib
    import http.server
    import threading
    from types import SimpleNamespace

    from measure_vllm import served_seeds

    class Answers(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - no /metrics, no /version
            self.send_response(404)
            self.end_headers()

        def do_POST(self):  # noqa: N802 - the speculative server answers; the plain one fails as vLLM's does
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.server.dies:  # its engine core logs the cause, its client gets HTTP 500
                self.server.log.write("(EngineCore pid=3) ERROR 12-05 10:00:00 [core.py:1100] RuntimeError: the "
                                      "plain core's own cause\n")
                self.server.log.flush()
                self.send_response(500)
                self.end_headers()
                self.wfile.write(b'{"error": "EngineCore encountered an issue. See stack trace (above)"}')
                return
            reply = {"choices": [{"index": i, "token_ids": [1 + (body["seed"] + i) % 7] * body["max_tokens"]}
                                 for i in range(body["n"])]}
            self.send_response(200)
            self.end_headers()
            self.wfile.write(json.dumps(reply).encode())

        def log_message(self, *args):
            pass

    @contextlib.contextmanager
    def server(dies: bool, log=None):
        s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answers)
        s.daemon_threads, s.dies, s.log = True, dies, log
        threading.Thread(target=s.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{s.server_port}"
        finally:
            s.shutdown()
            s.server_close()

    @contextlib.contextmanager
    def serving(folder, method, log):
        assert method == "none"
        log.write("(APIServer pid=2) INFO 12-05 09:59:00 [api_server.py:1] started\n")  # before the row: not read
        log.flush()
        with server(dies=True, log=log) as url:
            yield url

    target = SimpleNamespace(name="toy", vocab_size=100, encode=lambda text: [1, 2, 3])
    with server(dies=False) as url:
        audit, _, _ = served_seeds(SimpleNamespace(serving=serving), url, "vllm-ngram", tmp_path, target,
                                   SimpleNamespace(seed=0))
    assert audit.error_kind == "ENGINE ERROR" and audit.error_source == "plain endpoint"
    assert audit.to_json()["error_source"] == "plain endpoint"
    assert audit.error.startswith("RuntimeError: the plain core's own cause (the plain server's log; its client was "
                                  "told: EngineDead: the plain endpoint http://127.0.0.1:"), audit.error
