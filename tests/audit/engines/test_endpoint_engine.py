"""The endpoint engine: requests and replies in the forms vLLM and llama-server use, and an audit from the command
line against a real llama-server (llama.cpp's, with n-gram speculation) serving the SmolLM2 GGUF. The server test
runs where llama-server is built (``make engines-server``, about 8 minutes on 2 cores); with ``ENGINES_SERVER=1``
it builds the server itself when it is missing (``ENGINES_SERVER=1 scripts/ci_engines.sh`` runs it so), and it
skips saying why otherwise: ``make test`` does not spend 8 minutes compiling a server.

Statistics: N = 150 calls, T = 1; the law comes from transformers' dequantised forward of the same GGUF, whose
first-token law differs from llama.cpp's own by a TV of about 0.004 (measured by the GGUF engine audits), far
below the detectable TV at this N (about 0.3, printed); a correct server passes with probability >= 1 - 1e-6.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.request

import pytest

from specmath.audit.engines.endpoint import PLAIN_SERVER, SERVER, EndpointEngine, completion_request, completion_tokens
from specmath.audit.engines.protocol import EngineDead, EngineProtocolError, EngineRefused
from specmath.audit.engines.registry import engines_dir
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument


def test_a_request_switches_truncation_off_unless_asked_and_names_penalties_both_ways():
    body = completion_request([1, 2], 7, 2, SamplingOptions(0.8, repetition_penalty=1.2, penalty_window=16,
                                                            logit_bias=((5, -3.0),)), "m")
    assert body["prompt"] == [1, 2] and body["seed"] == 7 and body["max_tokens"] == 2 and body["n"] == 1
    assert (body["top_k"], body["top_p"], body["min_p"]) == (0, 1.0, 0.0)  # llama-server's defaults would cut
    # exact: the request carries the option value as given (the float 1.2 passed through, nothing computed)
    assert body["repetition_penalty"] == body["repeat_penalty"] == 1.2 and body["repeat_last_n"] == 16
    assert body["logit_bias"] == {"5": -3.0} and body["ignore_eos"] is True
    assert "presence_penalty" not in body


def test_token_ids_are_read_from_vllm_and_llama_server_replies():
    assert completion_tokens({"choices": [{"token_ids": [4, 5]}]}) == [4, 5]
    assert completion_tokens({"choices": [{"logprobs": {"content": [{"id": 4}, {"id": 9}]}}]}) == [4, 9]
    assert completion_tokens({"choices": [{"logprobs": {"tokens": ["token_id:4", "token_id:11"]}}]}) == [4, 11]
    with pytest.raises(EngineProtocolError, match="returned no token ids"):
        completion_tokens({"choices": [{"text": "hi"}]})
    with pytest.raises(EngineProtocolError, match="no choices"):
        completion_tokens({"error": "x"})
    with pytest.raises(InvalidArgument, match="must be an http\\(s\\) URL"):
        EndpointEngine("localhost:8080")
    assert EndpointEngine("http://h:1/v1").url == "http://h:1/v1/completions"


@contextlib.contextmanager
def fake_server(handler: type[http.server.BaseHTTPRequestHandler], **attributes):
    """``with fake_server(Handler) as (server, url)``: ``Handler`` on a free port of 127.0.0.1, a thread per request
    (as a real server takes concurrent requests), ``attributes`` set on the server for the handler to read."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    for name, value in attributes.items():
        setattr(server, name, value)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server, f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_validation_error_is_a_refusal_and_a_server_error_is_not():
    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - no /metrics; /version where the test sets one (vLLM's route)
            version = getattr(self.server, "version", None)
            self.send_response(200 if self.path == "/version" and version else 404)
            self.end_headers()
            if self.path == "/version" and version:
                self.wfile.write(json.dumps({"version": version}).encode())

        def do_POST(self):  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers["Content-Length"]))
            body = json.loads(self.server.answer[1]).__repr__().encode()
            self.send_response(self.server.answer[0])
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    with fake_server(Answer) as (server, url):
        engine = EndpointEngine(url, vocab_size=10)
        server.answer = (400, '"The min_p and logit_bias sampling parameters are not yet supported"')
        with pytest.raises(EngineRefused, match="HTTP 400: .*min_p and logit_bias"):
            engine.generate([1, 2], 1, 0, 2, SamplingOptions(min_p=0.1))
        server.answer = (500, '"EngineDeadError"')
        with pytest.raises(EngineProtocolError, match="HTTP 500") as caught:
            engine.generate([1, 2], 1, 0, 2, SamplingOptions())
        assert not isinstance(caught.value, EngineRefused)
        assert engine.version is None  # no /version route here: an ENGINE ERROR's report names the URL alone
        server.version = "0.32.0"
        served = EndpointEngine(url + "/v1", vocab_size=10)
        with pytest.raises(EngineProtocolError, match="HTTP 500"):
            served.generate([1, 2], 1, 0, 2, SamplingOptions())
        assert served.version == f"vLLM 0.32.0 at {url}/v1/completions"


class Completions(http.server.BaseHTTPRequestHandler):
    """A completions server whose token ids say who answered and to which seed: choice i of a request seeded S is
    [marker, S + i]; ``/metrics`` counts the POSTs answered as drafted tokens. With a ``barrier`` of k parties it
    answers no POST before k arrived (a client that sends them one after another meets the barrier's timeout and
    gets HTTP 500), then answers the larger seeds first, so the replies arrive out of request order."""

    def do_GET(self):  # noqa: N802 - http.server's name
        if self.path == "/version" and getattr(self.server, "version", None):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(json.dumps({"version": self.server.version}).encode())
            return
        if self.path != "/metrics":
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.end_headers()
        self.wfile.write(f"vllm:spec_decode_num_draft_tokens_total {len(self.server.answered)}\n".encode())

    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server = self.server
        with server.turn:
            server.bodies.append(body)
        if server.barrier is not None:
            try:
                server.barrier.wait()
            except threading.BrokenBarrierError:
                self.send_response(500)
                self.end_headers()
                self.wfile.write(b'"the requests did not arrive together"')
                return
            with server.turn:  # the larger seeds are answered first
                server.turn.wait_for(lambda: all(b["seed"] in server.answered for b in server.bodies
                                                 if b["seed"] > body["seed"]), timeout=20)
        # a request without n or seed (the check that the URL serves): one choice, seed 0
        choices = [{"index": i, "token_ids": [server.marker, body.get("seed", 0) + i]} for i in range(body.get("n", 1))]
        self.send_response(200)
        self.end_headers()
        self.wfile.write(json.dumps({"choices": choices}).encode())
        self.wfile.flush()
        with server.turn:
            server.answered.append(body.get("seed", 0))
            server.turn.notify_all()

    def log_message(self, *args):
        pass


def completions_server(marker: int, barrier: threading.Barrier | None = None):
    """``fake_server(Completions)`` answering ``marker`` first, with its own record of bodies and answers."""
    return fake_server(Completions, marker=marker, barrier=barrier, bodies=[], answered=[],
                       turn=threading.Condition())


def _request(n: int, seed: int, **more) -> dict:
    return {"prompt": [1, 2], "n": n, "seed": seed, "max_new_tokens": 2, "options": SamplingOptions(), **more}


def test_the_served_kv_block_comes_from_the_servers_metrics_once_and_none_without_them():
    class Metrics(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            self.server.asked += 1
            self.send_response(200 if self.server.text is not None else 404)
            self.end_headers()
            self.wfile.write((self.server.text or "").encode())

        def log_message(self, *args):
            pass

    labels = 'block_size="32",enable_prefix_caching="True",engine="0",prefix_match_unit="None"'
    with fake_server(Metrics, text=f"vllm:cache_config_info{{{labels}}} 1.0\n", asked=0) as (server, url):
        engine = EndpointEngine(url)
        assert (engine.prompt_block, engine.prompt_block, server.asked) == (32, 32, 1)
        server.text = None  # a server without /metrics: the audit keeps its ordinary prompt choice
        assert EndpointEngine(url).prompt_block is None


def test_samples_come_without_logprobs_from_a_server_that_says_it_is_vllm_and_with_them_elsewhere():
    with completions_server(4) as (server, url):
        engine = EndpointEngine(url, vocab_size=100, samples_per_request=3)
        assert engine.generate([1, 2], 3, 5, 2, SamplingOptions()).tokens == [[4, 5], [4, 6], [4, 7]]
        server.version = "0.32.0"  # vLLM's GET /version: the ids come through return_token_ids
        vllm = EndpointEngine(url, vocab_size=100, samples_per_request=3)
        assert vllm.generate([1, 2], 3, 8, 2, SamplingOptions()).tokens == [[4, 8], [4, 9], [4, 10]]
        assert vllm.seed_mapping_check([1, 2], SamplingOptions(), 20, n=2)["agree"]
    by_seed = {b["seed"]: b for b in server.bodies if "seed" in b}
    assert by_seed[5]["logprobs"] == 1  # llama-server returns the ids only with logprobs
    assert all("logprobs" not in by_seed[s] for s in (8, 20, 21)), by_seed


def test_law_requests_carry_a_fresh_cache_salt_where_the_server_shares_kv_blocks(monkeypatch):
    bodies = []

    def post(body, url=None):
        bodies.append(body)
        return {"choices": [{"logprobs": {"top_logprobs": [{"token_id:3": -0.1, "token_id:5": -2.4}]}}]}

    engine = EndpointEngine("http://127.0.0.1:9/v1")
    monkeypatch.setattr(engine, "_post", post)
    engine._prompt_block = 32  # what /metrics said (read as the test above shows)
    assert engine.top_logprobs([1, 2], 20) == {3: -0.1, 5: -2.4}
    engine.top_logprobs([1, 2], 20)
    salts = [b.get("cache_salt") for b in bodies]
    assert all(salts) and salts[0] != salts[1]  # no request finds another's blocks: each prompt computed in full
    engine._prompt_block = None
    engine.top_logprobs([1, 2], 20)
    assert "cache_salt" not in bodies[-1]  # a server that names no block gets only the fields every server takes


def test_a_served_batch_is_sent_concurrently_and_its_replies_come_back_in_request_order():
    # the server answers nothing before all three requests arrived: a client that posts them one after another fails
    with completions_server(1, threading.Barrier(3, timeout=20)) as (server, url):
        engine = EndpointEngine(url, vocab_size=100, timeout=60)
        assert engine.has_batch
        replies = engine.batch([_request(3, 10), _request(2, 20), _request(4, 30)])
    assert server.answered == [30, 20, 10]  # answered last request first
    assert [g.tokens for g in replies] == [[[1, 10], [1, 11], [1, 12]], [[1, 20], [1, 21]],
                                           [[1, 30], [1, 31], [1, 32], [1, 33]]]
    assert [b["n"] for b in server.bodies if b["seed"] == 30] == [4]  # one POST per request, n samples in it
    assert [g.drafted for g in replies] == [3, 3, 3]  # the whole batch's counters on every reply
    # every POST was sent before any reply came: the three were in flight together
    assert max(g.report["sent"] for g in replies) < min(g.report["answered"] for g in replies)


def test_without_speculation_a_request_and_a_batch_go_to_the_plain_server():
    with completions_server(1) as (served, url), completions_server(2) as (plain, plain_url):
        engine = EndpointEngine(url, vocab_size=100, plain_url=plain_url + "/v1")
        assert engine.has_plain and engine.plain_url == plain_url + "/v1/completions"
        assert engine.generate([1, 2], 2, 5, 2, SamplingOptions()).tokens == [[1, 5], [1, 6]]
        assert engine.generate([1, 2], 2, 5, 2, SamplingOptions(), speculative=False).tokens == [[2, 5], [2, 6]]
        replies = engine.batch([_request(1, 7, speculative=False), _request(1, 8, speculative=False)])
        assert [g.tokens for g in replies] == [[[2, 7]], [[2, 8]]]
        assert replies[0].report["server"] == "plain"
        assert engine.batch([_request(1, 9, control=None)])[0].tokens == [[1, 9]]  # no control: the speculative one
    assert sorted(b["seed"] for b in plain.bodies) == [5, 7, 8] and sorted(b["seed"] for b in served.bodies) == [5, 9]


def test_a_served_batch_refuses_a_control_two_servers_and_a_plain_path_it_does_not_have():
    with completions_server(1) as (server, url):
        engine = EndpointEngine(url, vocab_size=100)
        assert not engine.has_plain
        with pytest.raises(InvalidArgument, match=r"takes no lossy control: request 1 of the batch carries control "
                                                  r"\{\"drafted\": \{\"temperature\": 0\}\}") as caught:
            engine.batch([_request(1, 0), _request(1, 1, control={"drafted": {"temperature": 0}})])
        assert "\n" not in str(caught.value)
        with pytest.raises(InvalidArgument, match=r"has no plain \(non-speculative\) path"):
            engine.generate([1, 2], 1, 0, 2, SamplingOptions(), speculative=False)
        with pytest.raises(InvalidArgument, match=r"has no plain \(non-speculative\) path: give plain_url"):
            engine.batch([_request(1, 0, speculative=False)])
        with pytest.raises(InvalidArgument, match="a served batch goes to one server"):
            EndpointEngine(url, plain_url=url).batch([_request(1, 0), _request(1, 1, speculative=False)])
        with pytest.raises(InvalidArgument, match="at least one request"):
            engine.batch([])
        assert server.bodies == []  # each refused before a request was sent
    with pytest.raises(InvalidArgument, match=r"plain_url must be an http\(s\) URL, got 'localhost:2'"):
        EndpointEngine("http://h:1", plain_url="localhost:2")


def missing_build_tool() -> str | None:
    """Why llama-server cannot be built here (engines/build.sh's tools), or None."""
    for tool in ("node", "npm", "g++", "gcc", "git", "cmake"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    major = subprocess.run(["node", "-p", "process.versions.node.split('.')[0]"], capture_output=True, text=True).stdout
    if int(major or 0) < 20:
        return f"node {major.strip()} is older than 20 (node-llama-cpp 3.22 needs 20)"
    return None


def test_an_unreachable_endpoint_is_an_engine_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free, and nothing listens once it is closed
    engine = EndpointEngine(f"http://127.0.0.1:{port}", timeout=5)
    with pytest.raises(EngineProtocolError, match="cannot reach the endpoint"):
        engine.generate([1, 2], 1, 0, 2, SamplingOptions())


@pytest.fixture(scope="module")
def llama_server():
    server = engines_dir() / "build" / "llama-server"
    if not server.exists():
        if os.environ.get("ENGINES_SERVER") != "1":
            pytest.skip("llama-server is not built: make engines-server, or run with ENGINES_SERVER=1 to build it (8 min)")
        reason = missing_build_tool()
        if reason:
            pytest.skip(f"llama-server cannot be built here: {reason} (make engines-server)")
        build = subprocess.run(["bash", str(engines_dir() / "build.sh"), "server"], capture_output=True, text=True)
        assert build.returncode == 0 and server.exists(), f"make engines-server failed: {build.stderr[-2000:]}"
    from specmath.lm.models import locate_smollm2_gguf

    libs = engines_dir() / "node" / "node_modules" / "@node-llama-cpp" / "linux-x64" / "bins" / "linux-x64"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # its CPU backends load from the working folder (llama.cpp's ggml_backend_load_all searches it)
    process = subprocess.Popen([str(server), "-m", str(locate_smollm2_gguf()), "-t", "1", "-c", "1024", "-np", "1",
                                "--port", str(port), "--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", "2",
                                "--spec-ngram-simple-size-m", "4"], cwd=libs, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env={**os.environ, "OMP_NUM_THREADS": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):  # up to a minute on a busy machine; it loads in about a second
            try:
                urllib.request.urlopen(url + "/health", timeout=1)
                break
            except OSError:
                if process.poll() is not None:
                    pytest.fail(f"llama-server exited with status {process.returncode}")
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.slow
def test_llama_server_with_ngram_speculation_passes_from_the_command_line(llama_server, capsys):
    from specmath.cli import main

    status = main(["audit-generate", "--endpoint", llama_server, "--target", "smollm2", "--semantics", "llama.cpp",
                   "--prompt", "the cat sat on the mat. the cat sat on the mat. the", "--n", "150", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["error"] is None, report["error"]
    assert status == 0 and report["verdict"] == "PASS (no negative control)", report["checks"]
    assert report["engine"] == f"endpoint {llama_server}/v1/completions" and report["n"] == 150
    assert all(c["detectable_tv"] < 0.4 for c in report["checks"])


def test_the_plain_endpoint_of_the_command_line_is_the_engines_plain_path_and_is_checked_to_serve():
    from specmath.audit.engines.endpoint import endpoint_engine
    from specmath.audit.engines.registry import ENGINES, EngineOpening

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        nothing = f"http://127.0.0.1:{s.getsockname()[1]}"  # free, and nothing listens once it is closed
    with completions_server(1) as (served, url), completions_server(2) as (plain, plain_url):
        engine = endpoint_engine(ENGINES["endpoint"], EngineOpening(None, spec=url, plain_url=plain_url))
        assert engine.has_plain
        assert engine.generate([1, 2], 1, 5, 2, SamplingOptions(), speculative=False).tokens == [[2, 5]]
        assert len(plain.bodies) == 2  # the check that it serves, then the request
        with pytest.raises(InvalidArgument, match=rf"^--plain-endpoint {nothing}/v1/completions serves no "
                                                  r"completions: cannot reach the plain endpoint"):
            endpoint_engine(ENGINES["endpoint"], EngineOpening(None, spec=url, plain_url=nothing))


def test_a_failure_of_the_plain_server_names_it():
    class Dies(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b'"EngineCore encountered an issue. See stack trace (above)"')

        def log_message(self, *args):
            pass

    with completions_server(1) as (_, url), fake_server(Dies) as (_, plain_url):
        engine = EndpointEngine(url, vocab_size=100, plain_url=plain_url)
        assert engine.generate([1, 2], 1, 5, 2, SamplingOptions()).tokens == [[1, 5]]
        with pytest.raises(EngineDead, match=rf"^the plain endpoint {plain_url}/v1/completions answered HTTP 500") as died:
            engine.generate([1, 2], 1, 5, 2, SamplingOptions(), speculative=False)
        assert died.value.source == PLAIN_SERVER  # which server failed, without reading the message
        with pytest.raises(EngineDead, match=r"^the plain endpoint .* answered HTTP 500") as died:
            engine.batch([_request(1, 7, speculative=False)])
        assert died.value.source == PLAIN_SERVER
    with fake_server(Dies) as (_, url):
        with pytest.raises(EngineDead, match=r"^the endpoint answered HTTP 500") as died:
            EndpointEngine(url, vocab_size=100).generate([1, 2], 1, 5, 2, SamplingOptions())
        assert died.value.source == SERVER
