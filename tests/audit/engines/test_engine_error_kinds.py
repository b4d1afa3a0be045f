"""What an engine says about a request reaches the audit's record: refused and crashed requests (REFUSED, ENGINE
ERROR, never a loss), its preferred n per request, how it drafts, the seed and counters of every request, and a run
without drafting (INCONCLUSIVE, never a pass). The toy JSON-lines engine plays vLLM's engine (engines/vllm) here.

Statistics: the toy model's law at N = 600 (two requests of 300); the pass asserted is the toy engine's, which is
lossless by construction, at the audit's level 1e-6 per family: a false failure has probability below 1e-6.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from specmath.audit.engines.jsonl import JsonLinesEngine
from specmath.audit.engines.runner import AuditPlan, run_engine_audit
from specmath.sampling_options import SamplingOptions

TOY = Path(__file__).with_name("toy_jsonl_engine.py")
sys.path.insert(0, str(TOY.parent))
import toy_jsonl_engine as toy  # noqa: E402

PROMPT = [31, 26, 29, 31, 26]


def _engine(*flags):
    return JsonLinesEngine([sys.executable, str(TOY), *flags])


def _audit(*flags, n=600):
    with _engine(*flags) as engine:
        return engine, run_engine_audit(engine, "toy", AuditPlan(PROMPT, SamplingOptions(1.0), n, seed=5))


def test_a_refused_request_is_refused_with_the_engine_message_never_a_loss():
    _, audit = _audit("--refuse")
    assert audit.verdict.startswith("REFUSED: EngineRefused: the engine refused 'generate': min_p is not supported")
    assert audit.error_kind == "REFUSED" and not audit.passed and not audit.checks
    assert audit.to_json()["error_kind"] == "REFUSED"


def test_a_crashed_engine_is_an_engine_error_never_a_loss():
    _, audit = _audit("--dead")
    assert audit.verdict.startswith("ENGINE ERROR: EngineDead: the engine died on 'generate': RuntimeError: max()")
    assert audit.verdict.endswith("(toy)")  # the engine and its version, as its info reply names them
    assert audit.error_kind == "ENGINE ERROR" and not audit.passed and not audit.checks


def test_the_engine_n_per_request_and_every_request_seed_are_recorded():
    engine, audit = _audit("--per-request", "300", "--drafted", "7")
    assert engine.calls_per_request == 300
    assert audit.passed, audit.verdict
    assert [(r["role"], r["seed"], r["n"]) for r in audit.requests] == [("engine", 5, 300), ("engine", 305, 300)]
    assert [r["counters"] for r in audit.requests] == [{"before": 0, "after": 7}, {"before": 7, "after": 14}]
    assert audit.drafted == 14
    # call i of the audit is the request seeded seed + i: request 2's first sample is call 300's, drawn alone
    first_of_second = toy.generate_one(PROMPT, 305, 2, {"temperature": 1.0}, True, False)
    with _engine() as alone:
        again = alone.generate(PROMPT, 1, 305, 2, SamplingOptions(1.0)).tokens[0]
    assert again == first_of_second


def test_a_run_in_which_the_engine_drafted_nothing_is_inconclusive_not_a_pass():
    _, audit = _audit("--drafted", "0")
    assert audit.engine_passed and not audit.passed
    assert audit.verdict.startswith("INCONCLUSIVE: the engine drafted no token")


def test_an_engine_that_drafts_by_lookup_says_so_and_a_batch_runs_its_requests_together():
    with _engine("--lookup") as engine:
        assert engine.lookup and engine.has_batch
        options = SamplingOptions(1.0, top_k=5)
        one, two = engine.batch([{"prompt": PROMPT, "n": 3, "seed": 9, "max_new_tokens": 4, "options": options},
                                 {"prompt": PROMPT[:3], "n": 2, "seed": 1, "max_new_tokens": 4,
                                  "options": SamplingOptions(1.0)}])
        assert one.tokens == engine.generate(PROMPT, 3, 9, 4, options).tokens
        assert len(two.tokens) == 2 and np.array(two.tokens).max() < toy.V


def test_a_request_alone_and_in_a_batch_gives_the_same_tokens_and_seed_plus_one_differs():
    from specmath.audit.engines.batch_rows import seed_batch_check

    with _engine() as engine:
        result = seed_batch_check(engine, PROMPT, SamplingOptions(1.0), n=40, seed=3, max_new_tokens=4,
                                  neighbours=(SamplingOptions(0.8, top_k=5), SamplingOptions(1.2, presence_penalty=1.0)))
    assert result["speculative"]["differing_samples"] == result["plain"]["differing_samples"] == 0
    assert result["control"]["differing_samples"] > 20 and result["control"]["first"]["seed"] >= 3


def test_a_mixed_batch_tests_each_request_against_its_own_law():
    from specmath.audit.engines.batch_rows import MixedRequest, mixed_batch_audit

    requests = (MixedRequest("T=1", SamplingOptions(1.0)), MixedRequest("T=0.5 top-k 4", SamplingOptions(0.5, top_k=4)))
    logits = lambda contexts: np.array([toy.logits(c) for c in contexts])  # noqa: E731
    with _engine("--drafted", "3") as engine:
        audit = mixed_batch_audit(engine, "toy", logits, PROMPT, requests, n=500, seed=2, control={"drafted": {}})
    names = [c.name for c in audit.checks if c.role == "engine"]
    assert names == ["T=1: first token", "T=1: first two tokens", "T=0.5 top-k 4: first token",
                     "T=0.5 top-k 4: first two tokens"]
    assert audit.engine_passed and [(r["label"], r["seed"]) for r in audit.requests[:2]] == [("T=1", 2), ("T=0.5 top-k 4", 502)]
    # the toy engine takes no control: its control batch is the same lossless sampling, not caught
    assert not audit.control_caught and audit.verdict.startswith("INCONCLUSIVE: the negative control")
    # the two requests' laws differ: the top-k request sampled its own law, not the other's
    wrong = mixed_batch_audit(_Swap(requests), "toy", logits, PROMPT, requests, n=500, seed=2)
    assert not wrong.engine_passed


def test_a_mixed_batch_runs_its_control_in_the_control_engine_when_the_engine_takes_none():
    # a served engine takes no control: its control batch runs in an engine of the same configuration that does.
    # Request "bias": +8 on token 29, the prompt lookup's draft after 26, so x1 = 29 is likely and x2 is sampled at
    # a drafted row, where the lossy control skips the bias: x2's law moves by far more than N = 500 detects
    from specmath.audit.engines.batch_rows import MixedRequest, mixed_batch_audit

    requests = (MixedRequest("T=1", SamplingOptions(1.0)),
                MixedRequest("bias", SamplingOptions(1.0, logit_bias=((29, 8.0),))))
    logits = lambda contexts: np.array([toy.logits(c) for c in contexts])  # noqa: E731
    with _engine("--drafted", "3") as plain, _engine("--controls") as controlled:
        served = _TakesNoControl(plain)
        audit = mixed_batch_audit(served, "toy", logits, PROMPT, requests, n=500, seed=2,
                                  control={"drafted": {"logit_bias": []}}, control_engine=controlled)
        sent = list(served.controls)
        alone = mixed_batch_audit(served, "toy", logits, PROMPT, requests, n=500, seed=2,
                                  control={"drafted": {"logit_bias": []}})
    assert audit.engine_passed and audit.control_caught and audit.verdict == "PASS", audit.verdict
    assert sent == [None, None] and audit.control.endswith(", in toy")  # the engine was sent no control
    assert [(r["role"], r["label"], r["seed"]) for r in audit.requests] == [
        ("engine", "T=1", 2), ("engine", "bias", 502), ("control", "T=1", 10**6 + 2), ("control", "bias", 10**6 + 502)]
    # without a control engine the control batch meets the engine's refusal: the row is INCONCLUSIVE, never PASS
    assert alone.verdict.startswith("INCONCLUSIVE: the negative control did not run (InvalidArgument: served takes no")


class _TakesNoControl:
    """A batch engine that refuses a lossy control, as a served engine does, and keeps the controls it was sent."""

    def __init__(self, engine):
        self.name, self.engine, self.semantics, self.controls = "served", engine, engine.semantics, []

    def batch(self, batch):
        self.controls += [b.get("control") for b in batch]
        if any(b.get("control") is not None for b in batch):
            from specmath.validation import InvalidArgument

            raise InvalidArgument(f"{self.name} takes no lossy control")
        return self.engine.batch(batch)


class _Swap:
    """A batch engine that gives each request the other's options: the mixing bug the row is for."""

    def __init__(self, requests):
        self.name, self.requests = "swap", requests
        self.engine = JsonLinesEngine([sys.executable, str(TOY)])
        self.semantics = self.engine.semantics

    def batch(self, batch):
        swapped = [{**b, "options": batch[1 - k]["options"]} for k, b in enumerate(batch)]
        try:
            return self.engine.batch(swapped)
        finally:
            self.engine.close()


def test_a_seeds_check_whose_reference_differs_or_whose_control_does_not_is_inconclusive():
    """The seeds row's pathwise check has a reference (the plain path, which must agree alone and in a batch) and a
    control (seed S + 1, which must differ): either failing leaves the row INCONCLUSIVE, never PASS or LOSS; with
    both as they must be, the row's verdict follows its speculative differences."""
    from specmath.audit.engines.checks import GenerateAudit

    def seeds(speculative: int, reference: int, control: int) -> GenerateAudit:
        first = {"seed": 3, "position": 1, "speculative": 5, "plain": 6} if speculative else None
        audit = GenerateAudit("engine", "toy", "seeds", 200, control="the same request with seed S + 1")
        audit.pathwise = {"promised": True, "seeds": 200, "max_new_tokens": 4, "differences": speculative,
                          "observed_differences": speculative, "reference_differences": reference,
                          "control_differences": control, "against": "the same request alone", "first": first}
        return audit

    assert seeds(0, 0, 200).verdict == "PASS"
    assert seeds(7, 0, 200).verdict.startswith("LOSS (pathwise): 7 of 200 seeds differ from the same request alone")
    # the line says what was lost: the tokens of a seed, which the law's G-tests do not measure
    assert "(seed reproducibility, not a test of the law)" in seeds(7, 0, 200).verdict
    assert seeds(7, 2, 200).verdict.startswith("INCONCLUSIVE: 2 of 200 seeds differ on the plain path too")
    assert seeds(0, 0, 0).verdict.startswith("INCONCLUSIVE: the negative control (the same request with seed S + 1)")
    assert seeds(7, 0, 0).verdict.startswith("LOSS (pathwise)")  # a difference seen is one, whatever the control
