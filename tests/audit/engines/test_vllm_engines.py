"""vLLM (``make vllm``) under the audit: offline (``vllm-ngram``) and served (its OpenAI server on 127.0.0.1).

Runs where ``.venv-vllm`` and the models of ``make vllm`` exist (CI runs ``make vllm`` first: scripts/ci_vllm.sh),
skips saying why elsewhere. The model is the bundled character-level target with its heads padded to 32 dimensions
(vLLM's CPU attention takes no narrower head; the law comes from transformers' forward of the same folder), small
enough that a row of N = 1000 takes seconds once vLLM has started (30-90 s on 2 shared cores).

What is asserted, and its statistics:

* sample i of a request (n, seed S) is the request (1, S + i), alone and in a batch with other requests: exact
  token equality on the plain path; with speculation, on the first token (never drafted; the drafted rows of vLLM
  0.32's CPU backend read uninitialised memory, claim vllm-cpu-expand-uninitialised, so they do not reproduce);
* min-p under speculation is REFUSED with vLLM's message, top-k is an ENGINE ERROR (claim
  vllm-cpu-top-k-empty-batch), never a verdict on the law;
* the T = 1 row at N = 1000 (detectable TV about 0.15 at level 5e-7, power 0.99, printed in the record): vLLM as
  shipped is a LOSS on its first two tokens (the CPU defect above moves their law by a TV of 0.3-0.5 here, far above
  0.15), its control (argmax at drafted rows) is caught, and the counters show drafting; the same engine with its
  in-process ``--fix expand,empty-top-k`` passes (a lossless sampler fails with probability <= 1e-6);
* served: the same mapping of seeds on the first token, and the law from the server's own top-20 logprobs equal to
  transformers' float32 law of the same weights within a TV of 1e-3 (two float32 forwards, vLLM's CPU kernels and
  transformers', differ in their last bits; the logprobs travel as decimals) on the cells it resolves (its 20
  tokens, the rest as one bin), with the same verdicts on the same samples;
* ``serve.py --plain``: a second server of the same model without speculation, beside the speculative one, both
  answering; over the same request (n = 4, T = 1, seeded) on a repetitive prompt (prompt lookup finds a match at every step) the
  speculative server's drafted-token counter rises and the plain one's stays at 0.
"""

from __future__ import annotations

import importlib.util
import json
import sys

import numpy as np
import pytest

from specmath.audit.engines.law import first_token_law
from specmath.audit.engines.registry import EngineOpening, engines_dir
from specmath.audit.engines.rows import OPTION_ROWS
from specmath.sampling_options import SamplingOptions

ROOT = engines_dir().parent
PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
MODELS = engines_dir() / "build" / "vllm-models"
TARGET, DRAFT = MODELS / "bundled-target-hd32", MODELS / "bundled-draft"
MISSING = (f"{PYTHON} is missing: run `make vllm`" if not PYTHON.exists() else
           f"{TARGET} is missing: run `make vllm`" if not (TARGET / "model.safetensors").exists() else None)
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
#: "the cat sat on the mat. the cat sat on the mat. the" in the bundled pair's character vocabulary
PROMPT_TEXT = "the cat sat on the mat. the cat sat on the mat. the"


@pytest.fixture(scope="module")
def target():
    from specmath.audit.engines.target import load_target

    return load_target(str(TARGET))


@pytest.fixture(scope="module")
def ngram(target):
    from specmath.audit.engines.table_runs import open_engine

    with open_engine("vllm-ngram", EngineOpening(target, draft=str(DRAFT))) as opened:
        yield opened


def test_vllm_ngram_declares_itself_and_maps_seeds_to_samples(ngram, target):
    engine = ngram.engine
    assert engine.info["drafter"] == "lookup" and ngram.lookup and engine.has_batch and engine.has_controls
    assert engine.calls_per_request >= 1000 and engine.vocab_size == 100
    assert engine.info["engine"].startswith("vLLM 0.32.0 CPU, ngram") and "gamma 1" in engine.info["engine"]
    prompt, options = target.encode(PROMPT_TEXT), SamplingOptions(1.0)
    many = engine.generate(prompt, 6, 40, 3, options, speculative=False).tokens
    alone = [engine.generate(prompt, 1, 40 + i, 3, options, speculative=False).tokens[0] for i in range(6)]
    batched = engine.batch([{"prompt": prompt[:7], "n": 3, "seed": 1, "max_new_tokens": 3, "options":
                             SamplingOptions(0.8, top_p=0.9), "speculative": False},
                            {"prompt": prompt, "n": 6, "seed": 40, "max_new_tokens": 3, "options": options,
                             "speculative": False}])
    assert many == alone == batched[1].tokens
    assert len({tuple(t) for t in many}) > 1  # the seeds differ: not one sample repeated
    speculative = engine.generate(prompt, 6, 40, 2, options)
    assert [t[0] for t in speculative.tokens] == [t[0] for t in many]  # the first token is never drafted
    assert speculative.drafted > 0 and set(speculative.report["counters"]) == {"before", "after"}


def test_refused_and_crashing_options_are_refused_and_engine_errors(ngram, target):
    from specmath.audit.engines.table_runs import run_row

    refused, _, _ = run_row(ngram, target, OPTION_ROWS["min-p 0.1"], n=200, prompt=target.encode(PROMPT_TEXT))
    assert refused.verdict.startswith("REFUSED: ") and "min_p and logit_bias" in refused.verdict
    assert not refused.passed and not refused.checks
    crashed, _, _ = run_row(ngram, target, OPTION_ROWS["T=0.7 top-k 20"], n=200, prompt=target.encode(PROMPT_TEXT))
    assert crashed.verdict.startswith("ENGINE ERROR: ") and "Expected reduction dim" in crashed.verdict
    assert not crashed.passed and not crashed.checks


def test_the_t1_row_fails_as_shipped_its_control_is_caught_and_the_fixed_engine_passes(ngram, target):
    from specmath.audit.engines.jsonl import JsonLinesEngine
    from specmath.audit.engines.table_runs import OpenEngine, run_row

    row = OPTION_ROWS["T=1"]
    shipped, _, _ = run_row(ngram, target, row, n=1000)
    print(shipped.verdict, [c.to_json() for c in shipped.checks])
    assert shipped.drafted and shipped.drafted > 0 and shipped.control_caught
    assert shipped.verdict.startswith("LOSS: first two tokens"), "claim vllm-cpu-expand-uninitialised"
    assert [r["seed"] for r in shipped.requests] == [0, 10**6] and all(r["counters"] for r in shipped.requests)
    fixed = JsonLinesEngine([*ngram.entry.command_line(TARGET), "--fix", "expand,empty-top-k"], name="vllm-ngram --fix")
    with OpenEngine(fixed, fixed, True, "vllm-ngram, fixed in-process", ngram.entry) as opened:
        audit, _, _ = run_row(opened, target, row, n=1000)
    print(audit.verdict, [c.to_json() for c in audit.checks])
    assert audit.verdict == "PASS" and audit.accepted > 0


def _serve():
    spec = importlib.util.spec_from_file_location("vllm_serve", engines_dir() / "vllm" / "serve.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["vllm_serve"] = module
    spec.loader.exec_module(module)
    return module


def test_the_served_engine_maps_seeds_and_its_logprobs_law_is_transformers_law(target):
    from specmath.audit.engines.checks import check_samples, exact_laws
    from specmath.audit.engines.endpoint import EndpointEngine
    from specmath.audit.engines.semantics import semantics_named
    from specmath.audit.engines.server_law import ServerLogprobs

    options, vllm = SamplingOptions(1.0), semantics_named("vllm")
    with _serve().serving(str(TARGET), method="ngram", gamma=1) as url:
        engine = EndpointEngine(url, vocab_size=100, timeout=300)
        assert engine.prompt_block == 32  # serve.py's --block-size, from the server's /metrics
        prompt = engine.tokenize(PROMPT_TEXT)
        assert prompt == target.encode(PROMPT_TEXT)
        mapping = engine.seed_mapping_check(prompt, options, seed=11, n=8)
        assert mapping["agree"] and len(set(mapping["first_tokens"])) > 1, mapping
        law = ServerLogprobs(engine, 100, options, top=20)
        served = first_token_law(law, prompt, options, vllm)
        local = first_token_law(target.reference, prompt, options, vllm)
        # on the cells the server's law resolves: its 20 tokens one by one, the other 80 as one bin (their mass is
        # spread evenly in the served law, as the audit pools them, so their split is not compared)
        top = np.argsort(-served)[:20]
        rest = np.setdiff1d(np.arange(100), top)
        pooled = 0.5 * (np.abs(served[top] - local[top]).sum() + abs(served[rest].sum() - local[rest].sum()))
        assert pooled < 1e-3, pooled
        out = engine.generate(prompt, 1000, 3, 2, options)
        by_server = check_samples(out.tokens, "engine", exact_laws(law, prompt, options, vllm, 1000))
        assert law.report()["drafted_during_law"] == 0
        # one token past a full KV block, cached by the samples before: vLLM drafts such a first token (claim
        # vllm-no-draft-before-first-token), and the law's requests, salted, are computed in full and draft nothing
        cut = prompt[:33]
        assert engine.generate(cut, 16, 5, 1, options).drafted >= 15
        salted = ServerLogprobs(engine, 100, options, top=20)
        salted([cut, cut + [int(np.argmax(served))]])
        assert salted.report()["drafted_during_law"] == 0
    assert out.drafted and out.drafted > 0 and out.report["n_per_post"] == 500
    by_target = check_samples(out.tokens, "engine", exact_laws(target.reference, prompt, options, vllm, 1000))
    print([c.to_json() for c in by_server], [c.to_json() for c in by_target])
    assert [c.passed for c in by_server] == [c.passed for c in by_target]
    assert [c.passed for c in by_target] == [True, False], "the first token passes, the drafted second fails (claim)"


#: run by ``serve.py --plain --run``: both servers answer, only the speculative one drafts (its /metrics counters)
_PLAIN_BESIDE_SPECULATIVE = """
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("vllm_serve", sys.argv[1])
serve = importlib.util.module_from_spec(spec)
spec.loader.exec_module(serve)
drafted = {}
for variable in ("VLLM_URL", "VLLM_PLAIN_URL"):
    url = os.environ[variable]
    before = serve.spec_counters(url)
    reply = serve.post(url + "/v1/completions", {"model": "default", "prompt": sys.argv[2], "max_tokens": 8,
                                                 "n": 4, "temperature": 1.0, "seed": 7, "ignore_eos": True})
    assert len(reply.get("choices", [])) == 4, reply
    after = serve.spec_counters(url)
    drafted[variable] = after["vllm:spec_decode_num_draft_tokens_total"] - before["vllm:spec_decode_num_draft_tokens_total"]
print(json.dumps(drafted))
sys.exit(0 if drafted["VLLM_URL"] > 0 and drafted["VLLM_PLAIN_URL"] == 0 else 1)
"""


def test_serve_plain_starts_a_server_without_speculation_beside_the_speculative_one(tmp_path):
    import subprocess

    check = tmp_path / "check_both.py"
    check.write_text(_PLAIN_BESIDE_SPECULATIVE)
    serve_py = engines_dir() / "vllm" / "serve.py"
    command = f"{sys.executable} {check} {serve_py} '{PROMPT_TEXT}'"
    done = subprocess.run([sys.executable, str(serve_py), "--model", str(TARGET), "--method", "ngram", "--gamma", "1",
                           "--plain", "--log", str(tmp_path / "serve.log"), "--run", command],
                          capture_output=True, text=True, timeout=900)
    print(done.stdout, done.stderr)
    assert done.returncode == 0
    assert "with ngram speculation" in done.stdout and "without speculation" in done.stdout
    drafted = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert drafted and json.loads(drafted[-1])["VLLM_PLAIN_URL"] == 0
    assert (tmp_path / "serve.log").stat().st_size > 0 and (tmp_path / "serve.plain.log").stat().st_size > 0


def test_serve_plain_beside_no_speculation_is_one_line_and_exit_2():
    import subprocess

    done = subprocess.run([sys.executable, str(engines_dir() / "vllm" / "serve.py"), "--model", str(TARGET),
                           "--method", "none", "--plain"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith(
        "--plain serves a plain server beside a speculative one: give --method ngram or draft")
