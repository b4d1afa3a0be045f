"""The bench on tiny models (incl. HF assisted generation), the cost measurement, and histograms vs the exact law."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

# the bench's timing, shapes and sampled histograms: another thread count changes no verdict here
pytestmark = pytest.mark.no_float_paths

from lm_tiny import noisy_copy, tiny_llama, tiny_pair  # noqa: E402

from specmath.lm import cost_measure  # noqa: E402
from specmath.lm.bench import DecodeOptions, bench_pair, choose_gamma, continuation_rates  # noqa: E402
from specmath.lm.cost_measure import GAMMAS, measure_costs, workload_context  # noqa: E402
from specmath.lm.drafts import ModelDraft, PromptLookupDraft  # noqa: E402
from specmath.lm.histogram import lossless_report  # noqa: E402
from specmath.lm.measured_costs import Costs  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402
from specmath.settings import AuditSettings  # noqa: E402
from specmath.validation import InvalidArgument  # noqa: E402


def test_bench_skips_hf_where_it_has_no_counterpart_and_says_so_with_none():
    """An n-gram table draft has no HF counterpart; lookup + table is compared with HF prompt lookup."""
    import torch

    from specmath.lm.ngram_draft import LookupNgramDraft, NgramDraft, build_ngram_table

    target = tiny_llama(0, sharpness=4.0)
    g = torch.Generator().manual_seed(0)
    rows = []
    for _ in range(8):
        tokens = torch.randint(0, 48, (30,), generator=g)
        probs, ids = torch.softmax(torch.randn(30, 48, generator=g), -1).topk(8, -1)
        rows.append((tokens, 2, ids, probs))
    table = build_ngram_table(rows, order=1, keep=8, min_count=1)
    alone = bench_pair(tiny_pair(target, NgramDraft(table)), None, 8, DecodeOptions(gamma=2), progress=False, repeats=1)
    assert alone.tokens_per_s.hf_assisted is None and alone.speedup_vs_hf_assisted is None
    assert alone.to_json()["new_tokens"]["hf_assisted"] == 0
    both = bench_pair(tiny_pair(target, LookupNgramDraft(PromptLookupDraft(), NgramDraft(table))), [[1, 2, 3, 1, 2]], 8,
                      DecodeOptions(gamma=2), progress=False, repeats=1)
    assert both.tokens_per_s.hf_assisted > 0 and both.speedup_vs_hf_assisted > 0


@pytest.mark.parametrize("lookup", [False, True])
def test_bench_measures_plain_speculative_and_hf_assisted_on_the_same_pair(lookup):
    target = tiny_llama(0, sharpness=4.0)
    draft = PromptLookupDraft() if lookup else ModelDraft(noisy_copy(target, 0.3, 1))
    r = bench_pair(tiny_pair(target, draft), [[1, 2, 3, 1, 2], [5, 6]], 12, DecodeOptions(gamma=3), progress=False, repeats=1)
    rates = r.to_json()["tokens_per_s"]
    assert set(rates) == {"plain", "speculative", "hf_assisted"}
    assert all(v > 0 for v in rates.values())
    assert r.new_tokens.plain == r.new_tokens.speculative == 24
    assert 0 <= r.alpha <= 1 and 1 <= r.mean_tokens_per_round <= 4
    assert len(r.acceptance_by_position) == 3
    # the model's tokens per round from alpha_i is the measured mean up to the last, cut round of each prompt
    assert abs(r.predicted_tokens_per_round - r.mean_tokens_per_round) < 1e-9
    assert r.model.c > 0  # a lookup draft's n-gram search costs time too, only less
    assert r.model.k > 0 and r.model.o_round >= 0 and r.model.o_plain >= 0
    assert r.predicted_speedup > 0 and r.predicted_speedup_k1 > 0


def test_bench_stops_every_decoder_at_eos_and_takes_decoder_options():
    target = tiny_llama(0, sharpness=4.0)
    pair = tiny_pair(target, ModelDraft(noisy_copy(target, 0.3, 1)))
    pair.eos_token_id = 7
    r = bench_pair(pair, None, 40, DecodeOptions(gamma=2, sampling=SamplingOptions(0), draft_threshold=0.25),
                   progress=False, repeats=1, hf=False)
    data = r.to_json()
    assert data["decode_options"] == {"draft_threshold": 0.25}  # gamma, verify, sampling have keys of their own
    assert (data["gamma"], data["verify"], data["sampling"]["temperature"]) == (2, "token", 0.0)
    assert DecodeOptions().to_json() == {}  # only options that differ from their defaults
    assert DecodeOptions(seed=3, eos_token_id=7, vocab_size=30).to_json() == {"seed": 3}  # eos and vocabulary: the pair's
    assert 1 <= r.new_tokens.plain <= 40
    # greedy: plain and speculative emit the same tokens, so they stop at the same eos
    assert r.new_tokens.plain == r.new_tokens.speculative


def test_measured_costs_give_k_for_each_gamma_and_gamma_auto_picks_the_model_optimum(monkeypatch):
    monkeypatch.setattr(cost_measure, "MIN_SECONDS", 0.0)  # the fixed number of repeats is enough for a shape check
    target = tiny_llama(0, sharpness=4.0)
    pair = tiny_pair(target, ModelDraft(noisy_copy(target, 0.3, 1)))
    costs = measure_costs(target, pair.draft, [1, 2, 3, 4], GAMMAS, context=20, repeats=2)
    assert sorted(costs.to_json(GAMMAS)["k"]) == list(GAMMAS)
    assert all(costs.k(g) > 0 and costs.c(g) > 0 for g in GAMMAS)
    calibration = choose_gamma(pair, [1, 2, 3, 4], context=20, tokens=12)
    assert calibration.gamma in GAMMAS and calibration.scores[calibration.gamma] == max(calibration.scores.values())
    r = bench_pair(pair, None, 8, calibrate_gamma=True, progress=False, repeats=1, hf=False)
    assert r.gamma in GAMMAS and r.to_json()["gamma_calibration"]["acceptance_by_position"]
    assert r.options.gamma == r.gamma == r.to_json()["gamma"]
    with pytest.raises(InvalidArgument, match="the bench takes an int"):
        bench_pair(pair, None, 8, DecodeOptions(gamma=lambda r: 2), progress=False, repeats=1, hf=False)
    with pytest.raises(InvalidArgument, match="options.seed .* must be an int >= 0"):
        bench_pair(pair, None, 8, DecodeOptions(seed=[1, 2]), progress=False, repeats=1, hf=False)
    with pytest.raises(InvalidArgument, match="max_new_tokens"):
        bench_pair(pair, None, 0, progress=False, repeats=1, hf=False)


def test_the_costs_time_the_decoders_own_round_and_step_right_after_the_pass_they_follow(monkeypatch):
    # o_round and o_plain come from the functions speculative_generate and plain_generate call, on the logits of
    # the pass just run (not on a warm copy): a spy records what each call gets and what ran just before it
    monkeypatch.setattr(cost_measure, "MIN_SECONDS", 0.0)
    monkeypatch.setattr(cost_measure, "SETTLE", 1)  # one untimed plain step before the timed one, as for a round
    monkeypatch.setattr(cost_measure, "SETTLE_SECONDS", float("inf"))
    monkeypatch.setattr(cost_measure, "TIMED", 1)
    target = tiny_llama(0, sharpness=4.0)
    draft = ModelDraft(noisy_copy(target, 0.3, 1))
    log = []
    feed_block = cost_measure.RowCache.feed_block

    def logged_feed(cache, ids, counts=None, logits=True):
        out = feed_block(cache, ids, counts, logits)
        log.append(("pass", out))
        return out

    def spy(name, real):
        def call(logits, *args):
            log.append((name, logits))
            return real(logits, *args)
        return call

    monkeypatch.setattr(cost_measure.RowCache, "feed_block", logged_feed)
    monkeypatch.setattr(cost_measure, "verify_round", spy("round", cost_measure.verify_round))
    monkeypatch.setattr(cost_measure, "plain_step", spy("step", cost_measure.plain_step))
    costs = measure_costs(target, draft, [1, 2, 3, 4], [2, 3], context=20, repeats=2)
    rounds = [i for i, (name, _) in enumerate(log) if name == "round"]
    steps = [i for i, (name, _) in enumerate(log) if name == "step"]
    # per repeat (3): two rounds of each of the two gammas, two plain steps, each pair one settling and one timed
    assert len(rounds) == 2 * 2 * 3 and len(steps) == 2 * 3
    for i in rounds:  # the round's work on the very logits of the verify pass before it: (1, gamma + 1, V)
        assert log[i - 1][0] == "pass" and log[i][1] is log[i - 1][1] and log[i][1].shape[1] in (3, 4)
    for i in steps:  # the plain step on the last position of the 1-token pass before it
        assert log[i - 1][0] == "pass" and log[i - 1][1].shape[1] == 1 and log[i][1].dim() == 2
    assert all(costs.o_round(g) > 0 for g in (2, 3)) and costs.o_plain > 0
    monkeypatch.setattr(cost_measure, "SETTLE", 3)  # plain steps settle longer; a round settles in one
    log.clear()
    measure_costs(target, draft, [1, 2, 3, 4], [2, 3], context=20, repeats=2)
    assert sum(name == "round" for name, _ in log) == 2 * 2 * 3 and sum(name == "step" for name, _ in log) == 4 * 3


def test_timed_calls_leave_both_caches_as_they_found_them_and_time_every_part():
    # calls follow each other at one cache length (the workload's mid-run length), whatever the round kept
    target = tiny_llama(0, sharpness=4.0)
    draft = ModelDraft(noisy_copy(target, 0.3, 1))
    calls = cost_measure.TimedCalls(target, draft, [1, 2, 3, 4], DecodeOptions(gamma=3), context=10)
    assert calls.context == [1, 2, 3, 4, 1, 2, 3, 4, 1, 2]
    before = (list(calls.cache.lengths), list(draft.cache.lengths))
    for _ in range(3):
        round_parts, step_parts = calls.round(3), calls.plain_step()
        assert len(round_parts) == 4 and len(step_parts) == 2
        assert all(t > 0 for t in round_parts + step_parts)
        assert (calls.cache.lengths, draft.cache.lengths) == before == ([9], [9])


def test_a_cost_is_the_median_of_calls_made_after_the_first_ones_back_to_back(monkeypatch):
    # a compiled step that follows other work runs slower for several calls: the settling calls are not kept
    monkeypatch.setattr(cost_measure, "SETTLE", 4)
    monkeypatch.setattr(cost_measure, "TIMED", 3)
    monkeypatch.setattr(cost_measure, "SETTLE_SECONDS", 100.0)
    calls = iter([(9.0, 1.0), (8.0, 1.0), (7.0, 1.0), (6.0, 1.0), (2.0, 0.5), (4.0, 0.1), (3.0, 0.2), (0.0, 0.0)])
    assert cost_measure._settled(lambda: next(calls)) == (3.0, 0.2)  # calls 5-7, each part's median
    assert next(calls) == (0.0, 0.0)  # and no more calls than that
    # a slow step settles in fewer calls: once the settling calls took SETTLE_SECONDS
    monkeypatch.setattr(cost_measure, "SETTLE_SECONDS", 15.0)
    calls = iter([(9.0, 1.0), (8.0, 1.0), (1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (0.0, 0.0)])
    assert cost_measure._settled(lambda: next(calls)) == (2.0, 0.0)
    assert next(calls) == (0.0, 0.0)


def test_the_mid_run_cache_length_is_the_mean_prompt_plus_half_the_new_tokens():
    assert workload_context([[1, 2, 3], [4, 5, 6, 7, 8]], 64) == 4 + 32
    assert workload_context([[1]], 7) == 1 + 3


def test_histograms_match_the_exact_law_and_the_lossy_control_is_rejected():
    """N = 3000 samples, vocabulary 16: the G-test at level 1e-6 detects TV >= detectable_tv (~0.08 for one
    token) with probability 0.99; the residual-softmax control must be rejected (p < 1e-6) at the same N."""
    target = tiny_llama(0, vocab_size=16, sharpness=6.0)
    draft = noisy_copy(target, 0.5, 1)
    report = lossless_report(target, draft, [1, 2, 3], DecodeOptions(gamma=3), settings=AuditSettings(n=3000),
                             batch_size=3000)
    for key in ("first_token", "first_two_tokens"):
        check = report[key]
        assert check.p_value > 1e-6, f"{key}: G={check.statistic:.1f} p={check.p_value:.2e}, power TV {check.detectable_tv:.3f}"
        assert check.passed and check.level == 1e-6 and check.power == 0.99 and check.n == 3000
        assert check.detectable_tv < 0.15
    for key in ("negative_control_first_token", "negative_control_first_two_tokens"):
        assert report[key].p_value < 1e-6, f"{key}: the lossy rule was not detected (p={report[key].p_value:.2e})"
        assert report[key].rejects
    data = report["first_token"].to_json()
    assert list(data) == ["what", "n", "G", "dof", "p_value", "tv", "tv_upper_99", "detectable_tv_at_1e-6_power_0.99"]
    assert data["what"] == "first token" and data["tv"] <= data["tv_upper_99"]


def test_bench_command_is_registered_and_lazy():
    from specmath.cli import COMMANDS

    assert "bench" in COMMANDS
    import importlib

    module = importlib.import_module(COMMANDS["bench"][0])
    assert "torch" not in module.__dict__


def test_bench_command_reports_a_bad_argument_in_one_line_with_exit_2(capsys):
    from specmath.cli import main

    assert main(["bench", "--pair", "bundled", "--max-new-tokens", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--max-new-tokens must be an int >= 1" in err
    assert main(["bench", "--pair", "bundle", "--no-hf"]) == 2
    assert "unknown pair 'bundle'" in capsys.readouterr().err


def test_continuation_rates_and_the_costs_of_the_rounds_as_they_ran():
    # 10 rounds accepted 0 drafts, 6 accepted 1, 4 accepted 3 (gamma 3): S = 20, 10, 4, 4
    hist = [10, 6, 0, 4]
    assert continuation_rates(hist, 3) == [10 / 20, 4 / 10, 4 / 4]
    assert continuation_rates([5], 2) == [0.0, 0.0]
    # 1 + sum of prod a_j = 1 + mean accepted = 1 + (6 + 12) / 20
    a = continuation_rates(hist, 3)
    assert 1 + a[0] + a[0] * a[1] + a[0] * a[1] * a[2] == pytest.approx(1 + 18 / 20)
    costs = Costs(t1=1.0, passes={1: 1.0, 2: 1.5, 4: 2.0}, rollback={2: 0.0, 4: 0.0}, draft_round={3: 0.3},
                  round_extra={1: 0.1, 3: 0.2}, plain_extra=0.05, context=8, alone={})
    # widths: 2 rounds without drafts (plain steps), 1 verifying 1, 1 verifying 3; 4 draft forwards in 4 rounds
    model = costs.model_of_rounds([2, 1, 0, 1], draft_steps_per_round=1.0, gamma=3, prefill=2.0)
    assert model.k == pytest.approx((2 * 1.0 + 1.5 + 2.0) / 4)
    assert model.o_round == pytest.approx((2 * 0.05 + 0.1 + 0.2) / 4)
    assert model.c == pytest.approx(0.1 * 1.0 / 3)
    assert (model.o_plain, model.prefill, model.draft_prefill) == (0.05, 2.0, 0.0)


def test_the_model_counts_a_confidence_stop_as_a_shorter_round():
    """With a stop threshold rounds propose fewer drafts: the model's tokens per round is the measured one."""
    target = tiny_llama(0, sharpness=4.0)
    pair = tiny_pair(target, ModelDraft(noisy_copy(target, 0.3, 1)))
    r = bench_pair(pair, [[1, 2, 3, 1, 2]], 24, DecodeOptions(gamma=4, draft_threshold=0.6), progress=False, repeats=1, hf=False)
    assert r.drafts_per_round < 4, "the threshold should stop some rounds early on this pair"
    assert sum(r.rounds_by_width[:4]) > 0 and len(r.rounds_by_width) == 5
    assert abs(r.predicted_tokens_per_round - r.mean_tokens_per_round) < 1e-9


def test_the_bench_profiles_the_rounds_when_asked():
    target = tiny_llama(0, sharpness=4.0)
    r = bench_pair(tiny_pair(target, ModelDraft(noisy_copy(target, 0.3, 1))), None, 8, DecodeOptions(gamma=2),
                   progress=False, repeats=1, hf=False, profile=True)
    profile = r.to_json()["profile"]
    assert profile["rounds"] >= 1 and set(profile["ms_per_round"]) == {"draft", "target", "accept_reject", "cache", "other"}
    assert "profile" not in bench_pair(tiny_pair(target, PromptLookupDraft()), None, 4, DecodeOptions(gamma=2),
                                       progress=False, repeats=1, hf=False).to_json()


def test_the_bench_times_by_the_cpu_clock_with_one_thread_and_refuses_it_with_more():
    import torch

    target = tiny_llama(0, sharpness=4.0)
    pair = tiny_pair(target, ModelDraft(noisy_copy(target, 0.3, 1)))
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        r = bench_pair(pair, None, 8, DecodeOptions(gamma=2), progress=False, repeats=1, hf=False, clock="cpu")
        assert r.to_json()["clock"] == "cpu" and r.seconds.plain > 0 and r.costs.t1 > 0
        torch.set_num_threads(2)
        with pytest.raises(InvalidArgument, match=r"clock 'cpu' .* with 1 torch thread on a CPU \(this run: 2 threads on cpu\)"):
            bench_pair(pair, None, 8, DecodeOptions(gamma=2), progress=False, repeats=1, hf=False, clock="cpu")
    finally:
        torch.set_num_threads(threads)
    with pytest.raises(InvalidArgument, match="unknown clock 'cpus'"):
        bench_pair(pair, None, 8, DecodeOptions(gamma=2), progress=False, repeats=1, hf=False, clock="cpus")
    assert bench_pair(pair, None, 8, DecodeOptions(gamma=2), progress=False, repeats=1, hf=False).clock == "wall"


def test_repeats_each_time_both_decoders_and_the_result_is_their_median():
    target = tiny_llama(0, sharpness=4.0)
    r = bench_pair(tiny_pair(target, ModelDraft(noisy_copy(target, 0.3, 1))), None, 8, DecodeOptions(gamma=2),
                   progress=False, hf=False, repeats=3)
    assert len(r.repeats) == 3
    for repeat in r.repeats:
        assert repeat.plain > 0 and repeat.speculative > 0 and repeat.hf_assisted == 0
        assert repeat.predicted_speedup > 0 and repeat.bandwidth > 0  # the model's costs and the copy loop, per repeat
        assert len(repeat.load_average) == 2
    record = r.to_json()
    ratios = sorted(rep["measured_speedup"] for rep in record["repeats"])
    assert record["measured_speedup"]["median"] == ratios[1]  # the same floats, picked: no arithmetic between them
    assert (record["measured_speedup"]["min"], record["measured_speedup"]["max"]) == (ratios[0], ratios[2])
    assert r.seconds.plain == sorted(rep.plain for rep in r.repeats)[1]
    # one repeat's tokens are counted (every repeat decodes the same prompts with the same seeds)
    assert r.new_tokens.plain == r.new_tokens.speculative == 8 * r.prompts
    with pytest.raises(InvalidArgument, match="repeats"):
        bench_pair(tiny_pair(target, PromptLookupDraft()), None, 4, progress=False, hf=False, repeats=0)


def test_the_burners_of_a_busy_measurement_run_beside_it_and_are_gone_after_it():
    from specmath.lm.bench_result import cpu_burners

    with cpu_burners(2, settle_s=0.0) as burners:
        assert len(burners) == 2 and all(p.poll() is None for p in burners)
    assert all(p.returncode is not None for p in burners)
    with cpu_burners(0) as none:
        assert none == []
