"""End-to-end engine audits on the tiny pair: correct engines pass, their lossy controls are caught,
a raising engine is an error (exit 2), a lossy engine is a failure (exit 1); the exact laws are right.

Every torch engine is a client of the engine protocol (``specmath.audit.engines.torch_engines``), audited by
the one audit (``run_engine_audit``) through ``run_on_pair``.

Statistics: every audit runs at family level 1e-6 (a correct engine fails with probability <= 1e-6),
and each "control caught" assertion below is backed by the control's shift of the first-token law
(``control_shift``: 0.21 for the model draft, 0.09 for the lookup draft on the tiny pair), several
times the G-test's detectable TV at the N used (printed by the audit: about 0.1 at N = 2000).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from specmath.audit.engines.checks import check_samples, exact_laws  # noqa: E402
from specmath.audit.engines.law import MIN_EXPECTED, first_token_law, sampling_law, two_token_law  # noqa: E402
from specmath.audit.engines.pairs import load_audit_pair  # noqa: E402
from specmath.audit.engines.registry import ENGINES, EngineOpening  # noqa: E402
from specmath.audit.engines.rows import OPTION_ROWS  # noqa: E402
from specmath.audit.engines.runner import AuditPlan, NegativeControl, run_engine_audit  # noqa: E402
from specmath.audit.engines.semantics import SEMANTICS  # noqa: E402
from specmath.audit.engines.table_runs import PAIR_CONFIGS, open_engine, run_on_pair  # noqa: E402
from specmath.audit.engines.torch_engines import torch_logits  # noqa: E402
from specmath.cli import main  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402
from specmath.validation import InvalidArgument  # noqa: E402

HERE = Path(__file__).parent
#: generate calls per sampler in CI: the batched specmath engine affords more, HF's one-row calls fewer
CI_N = {"specmath": 2000, "hf-assisted": 400, "hf-lookup": 400}


@pytest.mark.parametrize("engine", list(CI_N))
def test_tiny_rows_engine_passes_and_its_lossy_control_is_caught(engine):
    for config in PAIR_CONFIGS:
        audit = run_on_pair(engine, "tiny", OPTION_ROWS[config].options, n=CI_N[engine], seed=1)
        assert audit.error is None, audit.error
        assert audit.engine_passed, (config, [c.to_json() for c in audit.checks])
        assert audit.control_caught, (config, "control not caught", [c.to_json() for c in audit.checks])
        assert audit.passed and audit.verdict == "PASS"
        assert all(c.detectable_tv < 0.3 for c in audit.checks)


@pytest.mark.parametrize("engine", list(CI_N))
def test_each_plain_path_samples_the_exact_law(engine):
    # the plain path (``"speculative": false``, the pathwise check's other side) is the target's own sampling:
    # the same G-tests at the same power as the engine's (detectable TV about 0.1 at N = 2000, 0.2 at 400)
    pair = load_audit_pair("tiny")
    options = SamplingOptions(0.7, top_k=20)
    with open_engine(engine, EngineOpening(pair)) as opened:
        prompt = pair.prompt_for(ENGINES[engine].lookup)
        plain = opened.engine.generate(prompt, CI_N[engine], 5, 2, options, speculative=False).tokens
        laws = exact_laws(opened.engine.logits, prompt, options, opened.engine.semantics, CI_N[engine])
    checks = check_samples(plain, "engine", laws)
    assert all(c.passed for c in checks), [c.to_json() for c in checks]


def test_a_pair_engine_is_a_client_with_its_targets_logits_its_controls_and_a_plain_path():
    pair = load_audit_pair("tiny")
    with open_engine("specmath", EngineOpening(pair)) as opened:
        engine = opened.engine
        assert engine.has_logits and engine.has_controls and engine.has_plain and opened.control_engine is engine
        contexts = [pair.prompt, pair.prompt + [3]]
        # exact: one function computes both (the pair target's forward), nothing else in between
        assert np.array_equal(engine.logits(contexts), torch_logits(pair.target)(contexts))
        # the same arguments give the same tokens; 16 tokens per call, as the pathwise check asks
        first = engine.generate(pair.prompt, 6, 11, 16, SamplingOptions()).tokens
        assert first == engine.generate(pair.prompt, 6, 11, 16, SamplingOptions()).tokens and len(first[0]) == 16
        with pytest.raises(InvalidArgument, match="specmath takes the lossy control residual-from-p"):
            engine.generate(pair.prompt, 2, 0, 2, SamplingOptions(), control={"name": "ensemble-weight-0.1"})
        with pytest.raises(InvalidArgument, match="the engine \\(specmath\\) does not take min_p"):
            engine.generate(pair.prompt, 2, 0, 2, SamplingOptions(min_p=0.1))


def test_warped_law_matches_hf_logits_processors():
    from transformers.generation.logits_process import (
        LogitsProcessorList,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    logits = torch.randn(1, 50, generator=torch.Generator().manual_seed(0)) * 3
    for sampling in (SamplingOptions(1.0), SamplingOptions(0.7, top_k=20), SamplingOptions(1.0, top_p=0.9), SamplingOptions(0.5, top_k=7, top_p=0.8)):
        processors = LogitsProcessorList([TemperatureLogitsWarper(sampling.temperature)])
        if sampling.top_k:
            processors.append(TopKLogitsWarper(sampling.top_k))
        if sampling.top_p:
            processors.append(TopPLogitsWarper(sampling.top_p))
        hf = torch.softmax(processors(None, logits.clone()), -1)[0].double().numpy()
        ours = sampling_law(logits[0].numpy(), sampling, SEMANTICS["hf"])
        # same support exactly; values from float32 (HF) vs float64 (ours): 1e-6 covers float32 rounding
        assert np.array_equal(hf > 0, ours > 0), sampling
        assert np.abs(hf - ours).max() < 1e-6


def test_two_token_cells_form_a_law_with_every_cell_expected_at_least_five_or_pooled():
    pair = load_audit_pair("tiny")
    sampling = OPTION_ROWS["T=0.7 top-k 20"].options
    n = 2000
    logits = torch_logits(pair.target)
    cells, frequent = two_token_law(logits, pair.prompt, sampling, SEMANTICS["hf"], n)
    p1 = first_token_law(logits, pair.prompt, sampling, SEMANTICS["hf"])
    assert math.isclose(sum(cells.values()), 1.0, abs_tol=1e-9)  # float64 sums of one law
    assert frequent == {int(x) for x in np.flatnonzero(n * p1 >= MIN_EXPECTED)}
    assert all(n * v >= MIN_EXPECTED for k, v in cells.items() if "other" not in k)
    assert np.count_nonzero(p1) == 20  # top-k 20 leaves exactly 20 tokens (no ties in these logits)


@pytest.fixture
def test_engines(monkeypatch):
    """The registry's specmath entry pointed at a factory of tiny_engines (the CLI then runs that engine)."""
    monkeypatch.syspath_prepend(str(HERE))

    def use(factory: str) -> None:
        monkeypatch.setitem(ENGINES, "specmath", dataclasses.replace(ENGINES["specmath"], factory=factory))

    return use


def test_an_engine_that_raises_is_an_engine_error_not_a_loss(test_engines, capsys):
    test_engines("tiny_engines:exploding_engine")
    audit = run_on_pair("specmath", "tiny", SamplingOptions(), n=50)
    assert audit.verdict == "ENGINE ERROR: RuntimeError: engine exploded (specmath)"
    assert not audit.passed and not audit.checks
    assert main(["audit-generate", "specmath", "--pair", "tiny", "--n", "50"]) == 2
    out = capsys.readouterr().out
    assert "ENGINE ERROR: RuntimeError: engine exploded" in out and "LOSS" not in out


def test_a_lossy_engine_is_a_loss_with_its_tvs_and_reproducer_and_exit_status_one(test_engines, capsys):
    test_engines("tiny_engines:lossy_engine")
    audit = run_on_pair("specmath", "tiny", SamplingOptions(0.8), n=2000, seed=5)
    assert audit.verdict.startswith("LOSS: first two tokens: measured TV ") and not audit.engine_passed
    assert audit.verdict.endswith("reproduce: specmath audit-generate specmath --pair tiny --temperature 0.8 "
                                  "--n 2000 --seed 5")
    two = audit.checks[1]
    assert f"measured TV {two.measured_tv:.3f}, detectable TV {two.detectable_tv:.3f}" in audit.verdict
    assert main(["audit-generate", "specmath", "--pair", "tiny", "--n", "2000", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"].startswith("LOSS") and report["reproducer"].endswith("--n 2000 --seed 0")


def test_a_refusing_engine_and_an_uncaught_control_exit_three_and_are_never_pass_or_loss(test_engines, capsys):
    test_engines("tiny_engines:refusing_engine")
    audit = run_on_pair("specmath", "tiny", SamplingOptions(), n=50)
    assert audit.verdict == "REFUSED: EngineRefused: this option is not supported with speculative decoding"
    assert main(["audit-generate", "specmath", "--pair", "tiny", "--n", "50", "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["verdict"].startswith("REFUSED: ")
    test_engines("tiny_engines:harmless_control_engine")
    assert main(["audit-generate", "specmath", "--pair", "tiny", "--n", "500", "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"].startswith("INCONCLUSIVE: the negative control (specmath, residual drawn from p) was "
                                        "not caught at N = 500") and report["control_caught"] is False


def test_a_table_exits_with_its_first_verdict_among_loss_error_refused_inconclusive():
    from specmath.audit.engines.checks import EXIT_STATUS, VERDICTS, exit_status

    assert EXIT_STATUS == {"PASS": 0, "LOSS": 1, "ENGINE ERROR": 2, "REFUSED": 3, "INCONCLUSIVE": 3}
    assert set(VERDICTS) == set(EXIT_STATUS)
    assert exit_status(["PASS", "INCONCLUSIVE: why", "LOSS: first token", "ENGINE ERROR: x (v)"]) == 1
    assert exit_status(["PASS", "REFUSED: no", "ENGINE ERROR: x (v)"]) == 2
    assert exit_status(["PASS (no negative control)", "REFUSED: no", None]) == 3
    assert exit_status(["PASS", None]) == 0 and exit_status([None]) == 0


def test_a_control_that_is_not_lossy_makes_the_run_inconclusive():
    pair = load_audit_pair("tiny")
    with open_engine("specmath", EngineOpening(pair)) as opened:
        # a control request that names no control: the engine runs as it is, so the "control" is not lossy
        correct = NegativeControl("correct too", None, opened.engine)
        audit = run_engine_audit(opened.engine, "tiny", AuditPlan(pair.prompt, SamplingOptions(), 500),
                                 control=correct)
    assert audit.engine_passed and not audit.control_caught and not audit.passed
    assert audit.verdict.startswith("INCONCLUSIVE: the negative control (correct too) was not caught")


def test_cli_json_has_engine_pair_passed_and_checks(capsys):
    assert main(["audit-generate", "specmath", "--pair", "tiny", "--n", "2000", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["engine"] == "specmath" and report["pair"] == "tiny" and report["passed"] is True
    names = [(c["role"], c["name"]) for c in report["checks"]]
    assert names == [("engine", "first token"), ("engine", "first two tokens"),
                     ("control", "first token"), ("control", "first two tokens")]
    for check in report["checks"]:
        assert {"name", "statistic", "p_value", "detectable_tv", "passed"} <= set(check)


def test_bad_arguments_exit_two(capsys):
    assert main(["audit-generate", "specmath", "--pair", "tiny", "--temperature", "0"]) == 2
    assert main(["audit-generate", "specmath", "--pair", "tiny", "--n", "0"]) == 2
    assert main(["audit-generate", "specmath"]) == 2
    assert main(["audit-generate", "no-such-engine", "--pair", "tiny"]) == 2


@pytest.mark.parametrize("engine", ["hf-assisted", "hf-lookup"])
def test_hf_engines_under_min_p_repetition_and_logit_bias_pass_against_the_law_in_hf_order(engine):
    # the options HF generate takes beyond temperature, top-k and top-p, on both sides of its verification;
    # the repetition penalty counts the prompt and each position's own prefix (HF applies its processors to
    # candidate_input_ids[:, :cur_len + i] position by position)
    options = SamplingOptions(0.9, min_p=0.05, repetition_penalty=1.3, logit_bias=((3, 2.0), (5, -2.0)))
    audit = run_on_pair(engine, "tiny", options, n=CI_N[engine], seed=2)
    assert audit.error is None and audit.engine_passed, [c.to_json() for c in audit.checks]
    assert audit.config == options.label()


def test_an_option_an_engine_does_not_take_is_a_clear_mistake():
    with pytest.raises(InvalidArgument, match="the engine \\(specmath\\) does not take min_p"):
        run_on_pair("specmath", "tiny", SamplingOptions(min_p=0.1), n=10)
    with pytest.raises(InvalidArgument, match="does not take frequency_penalty"):
        run_on_pair("hf-lookup", "tiny", SamplingOptions(frequency_penalty=0.5), n=10)
    with pytest.raises(InvalidArgument, match="temperature must be > 0"):
        run_on_pair("specmath", "tiny", SamplingOptions(0.0), n=10)
    with pytest.raises(InvalidArgument, match="llama-cpp-ngram does not run on a pair's torch models"):
        run_on_pair("llama-cpp-ngram", "tiny", SamplingOptions(), n=10)


def test_an_engine_that_cannot_run_here_is_skipped_in_the_table_and_a_mistake_alone(monkeypatch, capsys):
    from specmath.audit.engines.registry import Requirement

    missing = Requirement("its package is missing", program="no-such-program-here")
    monkeypatch.setitem(ENGINES, "hf-lookup", dataclasses.replace(ENGINES["hf-lookup"], requires=(missing,)))
    audit = run_on_pair("hf-lookup", "tiny", SamplingOptions(), n=10)
    assert audit.skipped == "its package is missing" and audit.verdict is None  # no audit, no verdict
    assert audit.to_json()["verdict"] is None and audit.to_json()["skipped"] == "its package is missing"
    assert not audit.checks and audit.control == "specmath prompt lookup, residual drawn from p"
    assert main(["audit-generate", "hf-lookup", "--pair", "tiny", "--n", "10"]) == 2
    assert "engine 'hf-lookup' cannot run here: its package is missing" in capsys.readouterr().err
