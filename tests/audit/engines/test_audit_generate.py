"""End-to-end engine audits on the tiny pair: correct engines pass, their lossy controls are caught,
a raising engine is an error (exit 2), a lossy engine is a failure (exit 1); the exact laws are right.

Statistics: every audit runs at family level 1e-6 (a correct engine fails with probability <= 1e-6),
and each "control caught" assertion below is backed by the control's shift of the first-token law
(``control_shift``: 0.21 for the model draft, 0.09 for the lookup draft on the tiny pair), several
times the G-test's detectable TV at the N used (printed by the audit: about 0.1 at N = 2000).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from specmath.audit.engines.pairs import load_audit_pair  # noqa: E402
from specmath.audit.engines.torch_audit import (  # noqa: E402
    CONFIGS,
    MIN_EXPECTED,
    first_token_law,
    run_generate_audit,
    two_token_law,
    warped_law,
)
from specmath.audit.engines.torch_engines import ENGINES, Engine, specmath_control, specmath_samples  # noqa: E402
from specmath.cli import main  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402
from specmath.validation import InvalidArgument  # noqa: E402

#: generate calls per sampler in CI: the batched specmath engine affords more, HF's one-row calls fewer
CI_N = {"specmath": 2000, "hf-assisted": 400, "hf-lookup": 400}


@pytest.mark.parametrize("engine", list(CI_N))
def test_tiny_rows_engine_passes_and_its_lossy_control_is_caught(engine):
    for config in CONFIGS:
        audit = run_generate_audit(engine, "tiny", config, n=CI_N[engine], seed=1)
        assert audit.error is None, audit.error
        assert audit.engine_passed, (config, [c.to_json() for c in audit.checks])
        assert audit.control_caught, (config, "control not caught", [c.to_json() for c in audit.checks])
        assert audit.passed and audit.verdict == "pass"
        assert all(c.detectable_tv < 0.3 for c in audit.checks)


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
        ours = warped_law(logits[0].numpy(), sampling)
        # same support exactly; values from float32 (HF) vs float64 (ours): 1e-6 covers float32 rounding
        assert np.array_equal(hf > 0, ours > 0), sampling
        assert np.abs(hf - ours).max() < 1e-6


def test_two_token_cells_form_a_law_with_every_cell_expected_at_least_five_or_pooled():
    pair = load_audit_pair("tiny")
    sampling = CONFIGS["T=0.7 top-k 20"]
    n = 2000
    cells, frequent = two_token_law(pair, sampling, n)
    p1 = first_token_law(pair, sampling)
    assert math.isclose(sum(cells.values()), 1.0, abs_tol=1e-9)  # float64 sums of one law
    assert frequent == {int(x) for x in np.flatnonzero(n * p1 >= MIN_EXPECTED)}
    assert all(n * v >= MIN_EXPECTED for k, v in cells.items() if "other" not in k)
    assert np.count_nonzero(p1) == 20  # top-k 20 leaves exactly 20 tokens (no ties in these logits)


def _raises(pair, sampling, n, seed):
    raise RuntimeError("engine exploded")


def test_an_engine_that_raises_is_an_error_not_a_loss(monkeypatch, capsys):
    broken = Engine("broken", "raises", _raises, "none", specmath_control, lambda pair: None)
    audit = run_generate_audit(broken, "tiny", "T=1", n=50)
    assert audit.verdict == "ERROR: RuntimeError: engine exploded" and not audit.passed and not audit.checks
    monkeypatch.setitem(ENGINES, "specmath", broken)
    assert main(["audit-generate", "specmath", "--pair", "tiny", "--n", "50"]) == 2
    out = capsys.readouterr().out
    assert "ERROR: RuntimeError: engine exploded" in out and "FAIL" not in out


def test_a_lossy_engine_fails_with_exit_status_one(monkeypatch, capsys):
    lossy = Engine("specmath", "residual from p", specmath_control, "same", specmath_control, lambda pair: None)
    audit = run_generate_audit(lossy, "tiny", "T=1", n=2000)
    assert audit.verdict == "FAIL" and not audit.engine_passed
    monkeypatch.setitem(ENGINES, "specmath", lossy)
    assert main(["audit-generate", "specmath", "--pair", "tiny", "--n", "2000"]) == 1


def test_a_control_that_is_not_lossy_makes_the_run_inconclusive():
    no_control = Engine("specmath", "correct", specmath_samples, "correct too", specmath_samples, lambda pair: None)
    audit = run_generate_audit(no_control, "tiny", "T=1", n=500)
    assert audit.engine_passed and not audit.control_caught and not audit.passed
    assert audit.verdict.startswith("INCONCLUSIVE")


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
    audit = run_generate_audit(engine, "tiny", options, n=CI_N[engine], seed=2)
    assert audit.error is None and audit.engine_passed, [c.to_json() for c in audit.checks]
    assert audit.config == options.label()


def test_an_option_an_engine_does_not_take_is_a_clear_mistake():
    with pytest.raises(InvalidArgument, match="the engine \\(specmath\\) does not take min_p"):
        run_generate_audit("specmath", "tiny", SamplingOptions(min_p=0.1), n=10)
    with pytest.raises(InvalidArgument, match="does not take frequency_penalty"):
        run_generate_audit("hf-lookup", "tiny", SamplingOptions(frequency_penalty=0.5), n=10)
