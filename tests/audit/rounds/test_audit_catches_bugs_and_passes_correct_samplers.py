"""Proof of power: every bug-zoo variant fails the audit, the correct samplers pass, HF's adapter runs.

Reduced settings (the full audit is ``specmath audit ADAPTER``, the ci profile: N = 20000 per case): bugs
run under the dev profile, sequentially at N = 2000 per case (looks at 125..2000); correct samplers run the whole battery at
N = 1000, where the joint test of each case detects any round law at TV >= eps from the
exact one with probability >= 0.99 (0.13..0.17; 0.03..0.06 at N = 20000; printed per case by the CLI), with the audit's family level 1e-6.
"""

import json
from pathlib import Path

import pytest

from specmath.audit import BATTERY, adapter_named, case_named, run_audit
from specmath.audit.rounds.adapters import ADAPTERS, make_generator
from specmath.bugzoo import BUGS
from specmath.cli import main
from specmath.settings import AuditSettings
from specmath.validation import InvalidArgument, UnknownName


@pytest.mark.parametrize("name", sorted(BUGS))
def test_every_bug_zoo_variant_is_caught_by_the_sequential_audit(name):
    report = run_audit(adapter_named(f"bug:{name}"), settings="dev")
    failed = [c for c in report.cases if not c.passed]
    assert failed, f"bug:{name} escaped the audit"
    # sequential mode: the audit stops at the first failed case and says which cases it skipped
    assert report.cases[-1] is failed[0]
    assert report.not_run == [c.name for c in BATTERY[len(report.cases):]]


def test_a_clear_failure_stops_at_the_first_look():
    report = run_audit(adapter_named("bug:residual-softmax"), (case_named("context-g1"),), AuditSettings(n=4000, sequential=True))
    assert report.cases[0].n == 250 and not report.passed


#: every built-in adapter, by what the audit must say of it: a new entry of ``ADAPTERS`` goes in one of these
#: (the lossless ones pass the whole battery below; the others have their own tests in this file)
LOSSLESS_ADAPTERS = ("reference", "specmath-torch", "reference-batched", "specmath-torch-batched")
OTHER_ADAPTERS = {
    "specmath-torch-float32": "test_specmath_torch_in_float32_survives_the_zero_residual_that_breaks_hf",
    "specmath-torch-target-residual": "test_negative_control_of_specmath_torch_fails",
    "hf": "test_hf_speculative_sampling_passes_the_histograms_but_fails_its_edge_probes",
}


def test_every_built_in_adapter_is_audited_here_as_lossless_or_by_its_own_test():
    assert sorted((*LOSSLESS_ADAPTERS, *OTHER_ADAPTERS)) == sorted(ADAPTERS.names)
    assert all(callable(globals().get(test)) for test in OTHER_ADAPTERS.values())


@pytest.mark.parametrize("name", LOSSLESS_ADAPTERS)
def test_correct_samplers_pass_the_whole_battery(name):
    report = run_audit(adapter_named(name), settings=AuditSettings(n=1000))
    assert report.passed, [(c.case, c.reasons) for c in report.cases if not c.passed]
    assert all(c.tests[0].detectable_tv < 0.18 for c in report.cases)
    assert all(len(c.probes) == 2 * (c.gamma + 1) for c in report.cases)


def test_negative_control_of_specmath_torch_fails():
    report = run_audit(adapter_named("specmath-torch-target-residual"), settings=AuditSettings(n=1000, sequential=True))
    assert not report.passed


def test_hf_speculative_sampling_passes_the_histograms_but_fails_its_edge_probes():
    # transformers 5.24.0 (1) tests r_i <= p_i / q_i with float32 r_i: r = 0 accepts a token the target
    # forbids (claim transformers-accept-at-u-zero, fixed in 5.25.0: r_i < p_i / q_i); (2) divides the residual by
    # its sum: p <= q in float32 after a rejection gives 0/0 = NaN (claim transformers-zero-residual, still in
    # 5.25.0). If a later transformers fixes (2), this test fails: update the claim record and the README then.
    import transformers
    from packaging.version import Version

    cases = (case_named("context-g5"), case_named("zeros-in-target"), case_named("equal-up-to-rounding"))
    report = run_audit(adapter_named("hf"), cases, AuditSettings(n=800), replay_rounds=100)
    for result in report.cases:
        assert not any(t.rejects for t in result.tests) and result.error is None
    assert report.cases[0].passed and report.versions["transformers"] == transformers.__version__
    zero = report.cases[1].probes[0]
    assert zero["edge"] == "zero"
    if Version(transformers.__version__) < Version("5.25.0"):
        assert "exact probability 0" in zero["problem"]
        failure = report.cases[1].replay_failures[0]
        assert failure["where"] == "zero probe k=0" and failure["uniforms"][0] == 0.0
    else:  # the fix: every zero probe of the zeros-in-target case emits a tuple of positive probability
        assert report.cases[1].passed and not report.cases[1].replay_failures
        assert not [p["problem"] for p in report.cases[1].probes if p["edge"] == "zero" and p["problem"]]
    maximum = next(p for p in report.cases[2].probes if p["edge"] == "max")
    assert maximum["raised"] and "RuntimeError: probability tensor contains" in maximum["problem"]
    assert maximum["problem"].startswith("max probe k=0 (draw 0 = 1 - 2^-24, the accept uniform of position 0; drafts [0, 1])")


def test_specmath_torch_in_float32_survives_the_zero_residual_that_breaks_hf():
    report = run_audit(adapter_named("specmath-torch-float32"), (case_named("equal-up-to-rounding"),), AuditSettings(n=300))
    assert report.passed, report.cases[0].reasons


def test_hf_adapter_draws_only_from_the_given_generator_and_leaves_the_global_state_alone():
    import torch

    case = case_named("context-g3")
    p, q = case.arrays((0, 1, 2))
    before = torch.get_rng_state()
    outs = []
    for _ in range(2):
        g = make_generator("torch", 5)
        outs.append([adapter_named("hf")(p, q, (0, 1, 2), g) for _ in range(20)])
    assert outs[0] == outs[1]
    assert torch.equal(torch.get_rng_state(), before)


def test_bad_audit_arguments_are_value_errors_naming_the_problem():
    with pytest.raises(UnknownName, match=r"^unknown adapter 'vllm'; choose from: .*reference.*, or module:function$"):
        adapter_named("vllm")
    with pytest.raises(InvalidArgument, match=r"^family_level must be a finite number in \(0, 1\), got 0.0$"):
        run_audit(adapter_named("reference"), settings=AuditSettings(family_level=0.0))
    with pytest.raises(UnknownName, match=r"^unknown audit profile 'prod'; choose from: dev, ci, thorough$"):
        run_audit(adapter_named("reference"), settings="prod")
    with pytest.raises(UnknownName, match="unknown generator kind 'cupy'"):
        make_generator("cupy", 0)


def test_cli_writes_json_and_exits_zero_on_pass_one_on_failure_two_on_bad_input(tmp_path, capsys):
    path = tmp_path / "audit.json"
    assert main(["audit", "reference", "--n", "300", "--cases", "vocab-2", "--json", str(path)]) == 0
    data = json.loads(path.read_text())
    assert data["passed"] and data["cases"][0]["tests"][0]["name"] == "joint"
    assert "detectable TV" in capsys.readouterr().out
    assert main(["audit", "bug:residual-softmax", "--n", "300", "--cases", "context-g1"]) == 1
    assert main(["audit", "no-such-adapter"]) == 2
    assert main(["audit", "reference", "--n", "0"]) == 2
    assert main(["audit", "reference", "--cases", "no-such-case"]) == 2


def test_cli_profile_sets_the_audits_strength_and_its_options_change_it(tmp_path):
    path = tmp_path / "audit.json"
    assert main(["audit", "reference", "--profile", "dev", "--cases", "vocab-2", "--json", str(path)]) == 0
    data = json.loads(path.read_text())
    assert (data["rounds_per_case"], data["sequential"], data["family_level"], data["power"]) == (2000, True, 1e-6, 0.99)
    assert main(["audit", "reference", "--profile", "dev", "--no-sequential", "--n", "300", "--seed", "4",
                 "--cases", "vocab-2", "--json", str(path)]) == 0
    data = json.loads(path.read_text())
    assert (data["rounds_per_case"], data["sequential"]) == (300, False)
    assert main(["audit", "reference", "--profile", "prod"]) == 2


def _emits_nan(target_probs, draft_probs, draft_tokens, generator):
    return [float("nan")]


def _emits_token_outside_vocabulary(target_probs, draft_probs, draft_tokens, generator):
    return [target_probs.shape[1]]


def test_a_user_sampler_named_module_function_is_audited_and_its_garbage_is_an_error_never_a_verdict():
    case = (case_named("vocab-2"),)
    good = adapter_named("specmath.speculative.reference_round:reference_sample_round")
    assert run_audit(good, case, AuditSettings(n=300)).passed
    for sampler, problem in ((_emits_nan, "float nan is not an integer token id"),
                             (_emits_token_outside_vocabulary, "token id 2 is outside the vocabulary 0..1")):
        report = run_audit(adapter_named(f"{__name__}:{sampler.__name__}"), case, AuditSettings(n=300))
        result = report.cases[0]
        assert report.errored and result.verdict == "ERROR" and result.invalid_output and result.n == 0
        assert result.error.startswith("round 0, drafts [") and "invalid output: the sampler returned [" in result.error
        assert problem in result.error
    with pytest.raises(ValueError, match=r"^sampler '.*:no_such_function': module '.*' has no attribute 'no_such_function'$"):
        adapter_named("specmath.speculative.reference_round:no_such_function")
    with pytest.raises(ValueError, match="generator kind"):
        adapter_named("specmath.speculative.reference_round:reference_sample_round", "jax")


ENGINE_SAMPLERS = Path(__file__).resolve().parents[2] / "testing" / "engine_samplers.py"


def test_cli_audits_a_batched_warping_sampler_and_says_what_points_at_a_bug(capsys):
    both, target_only = f"{ENGINE_SAMPLERS}:top_k_both_sides", f"{ENGINE_SAMPLERS}:top_k_target_only"
    assert main(["audit", both, "--batched", "--top-k", "2", "--n", "1000", "--cases", "context-g3,top-k-draft-only"]) == 0
    assert "PASS: 2 of 2 cases pass" in capsys.readouterr().out
    assert main(["audit", target_only, "--batched", "--top-k", "2", "--n", "1000", "--cases", "context-g3"]) == 1
    out = capsys.readouterr().out
    assert "what points at the bug:" in out and "worst cells (observed vs expected count):" in out
    assert main(["audit", "reference", "--batched"]) == 2
    assert "describe a module:function sampler; 'reference' is a registered adapter" in capsys.readouterr().err
