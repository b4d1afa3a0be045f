"""The engine protocol: a Python function and a JSON-lines subprocess audited end to end against a toy model
whose law is known exactly; a lossy engine fails, a broken reply is an error (never a loss), the pathwise
check finds a seed that differs, and the options rows' controls and prompt choice do what they say.

Statistics: the toy model has 12 tokens; at N = 2000 the G-tests detect a TV of about 0.1 with probability
0.99 (printed by each audit); the lossy toy engine (min-p and the logit bias skipped at drafted rows) moves
the law of the first two tokens by far more (its measured TV is asserted beside the verdict).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from specmath.audit.engines.jsonl import JsonLinesEngine
from specmath.audit.engines.law import sampling_law
from specmath.audit.engines.protocol import CallableEngine, EngineProtocolError, check_tokens
from specmath.audit.engines.rows import OPTION_ROWS, Control, block_prompts, choose_prompt, control_shift, row_for
from specmath.audit.engines.runner import AuditPlan, NegativeControl, run_engine_audit
from specmath.audit.engines.semantics import SEMANTICS
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument

TOY = Path(__file__).with_name("toy_jsonl_engine.py")
sys.path.insert(0, str(TOY.parent))
import toy_jsonl_engine as toy  # noqa: E402

#: lookup drafts 29 after it; at these options x1 = 29 is likely, and the lossy engine's x2 then moves far
#: (``control_shift`` bounds that move at 0.93 for the two skipped options)
PROMPT = [31, 26, 29, 31, 26]
OPTIONS = SamplingOptions(1.0, min_p=0.3, logit_bias=((5, 3.0),), presence_penalty=0.7)


def toy_generate(prompt_ids, n, seed, *, max_new_tokens, **options):
    """The toy model as a Python engine: ``generate(prompt_ids, n, seed, **options)``."""
    return [toy.generate_one(list(prompt_ids), seed + i, max_new_tokens, options, True, False) for i in range(n)]


toy_generate.semantics = {"order": ["logit_bias", "penalties", "top_k", "min_p", "temperature"]}


def toy_logits(contexts):
    return np.array([toy.logits(c) for c in contexts])


def _engine(*flags):
    return JsonLinesEngine([sys.executable, str(TOY), *flags])


def test_a_python_function_engine_passes_against_the_exact_law():
    engine = CallableEngine(toy_generate, vocab_size=toy.V)
    audit = run_engine_audit(engine, "toy", AuditPlan(PROMPT, OPTIONS, 2000, seed=3), reference=toy_logits)
    assert audit.error is None and audit.passed and audit.verdict == "PASS (no negative control)"
    assert all(c.detectable_tv < 0.15 for c in audit.checks)


def test_a_subprocess_engine_passes_and_the_same_engine_made_lossy_fails():
    with _engine() as engine:
        assert engine.semantics.order == ("logit_bias", "penalties", "top_k", "min_p", "temperature")
        audit = run_engine_audit(engine, "toy", AuditPlan(PROMPT, OPTIONS, 2000, seed=1, pathwise_seeds=30))
        assert audit.passed, [c.to_json() for c in audit.checks]
        assert audit.pathwise["promised"] and audit.pathwise["differences"] == 0
    with _engine("--lossy") as lossy:
        audit = run_engine_audit(lossy, "toy", AuditPlan(PROMPT, OPTIONS, 2000, seed=1))
        assert audit.verdict.startswith("LOSS: first two tokens: measured TV") and audit.error is None
        two = audit.checks[1]
        assert not two.passed and two.measured_tv > two.detectable_tv
        assert f"measured TV {two.measured_tv:.3f}, detectable TV {two.detectable_tv:.3f}" in audit.verdict
        assert audit.verdict.endswith("; seed 1")  # no reproducer command given: the seed the samples came from


def test_a_broken_reply_is_an_engine_error_and_a_rejected_request_is_refused_never_a_loss():
    with _engine("--crash") as engine:
        audit = run_engine_audit(engine, "toy", AuditPlan(PROMPT, SamplingOptions(), 10))
    assert audit.verdict.startswith("ENGINE ERROR: EngineProtocolError") and not audit.checks
    assert audit.verdict.endswith("(toy)")  # the engine's version, as its info names it
    with _engine("--refuse") as engine:
        audit = run_engine_audit(engine, "toy", AuditPlan(PROMPT, SamplingOptions(), 10))
    assert audit.verdict == ("REFUSED: EngineRefused: the engine refused 'generate': min_p is not supported with "
                             "speculative decoding") and not audit.passed and audit.error is None
    with _engine("--die") as engine:
        audit = run_engine_audit(engine, "toy", AuditPlan(PROMPT, SamplingOptions(), 10))
    assert audit.verdict.startswith("ENGINE ERROR: EngineDead: the engine died on 'generate': RuntimeError: max()")
    assert audit.refused is None and not audit.passed
    with pytest.raises(EngineProtocolError, match="returned 1 token lists for n = 2"):
        check_tokens([[1, 2]], 2, 2, 12)
    with pytest.raises(EngineProtocolError, match="returned token 12, not an id in \\[0, 12\\)"):
        check_tokens([[1, 12]], 1, 2, 12)
    with pytest.raises(EngineProtocolError, match="not a list of 2 tokens"):
        check_tokens([[1]], 1, 2, 12)
    with pytest.raises(InvalidArgument, match="cannot start the engine"):
        JsonLinesEngine("/no/such/engine --flag")


def test_an_engine_that_promises_plain_output_and_breaks_it_fails_with_the_seed_named():
    def speculative(prompt_ids, n, seed, *, max_new_tokens, **options):
        rows = toy_generate(prompt_ids, n, seed, max_new_tokens=max_new_tokens, **options)
        return [row if seed + i != 7 else row[:-1] + [(row[-1] + 1) % toy.V] for i, row in enumerate(rows)]

    speculative.plain = toy_generate
    speculative.same_tokens_as_plain = True
    speculative.semantics = toy_generate.semantics
    engine = CallableEngine(speculative, vocab_size=toy.V)
    audit = run_engine_audit(engine, "toy", AuditPlan(PROMPT, SamplingOptions(), 300, seed=0, pathwise_seeds=10),
                             reference=toy_logits)
    assert audit.verdict.startswith("LOSS (pathwise): 1 of 10 seeds differ from plain decoding, first seed 7")
    assert audit.pathwise["differing_seeds"] == [7]
    assert audit.pathwise["first"]["seed"] == 7 and audit.pathwise["first"]["position"] == 15


def test_each_row_control_is_its_bug_at_drafted_rows_and_its_shift_bound_is_zero_where_it_cannot_act():
    z = np.array([2.0, 1.0, 0.0, -1.0])
    semantics = SEMANTICS["llama.cpp"]
    greedy = OPTION_ROWS["T=1"].control.second_law(z, [0], 1, SamplingOptions(), semantics)
    assert greedy.tolist() == [1.0, 0.0, 0.0, 0.0]
    skipped = OPTION_ROWS["min-p 0.1"].control.second_law(z, [0], 1, SamplingOptions(min_p=0.5), semantics)
    assert np.allclose(skipped, sampling_law(z, SamplingOptions(), semantics))
    stale = Control("stale", {}, stale_history=True).second_law(z, [3], 0, SamplingOptions(presence_penalty=5.0),
                                                                 semantics)
    assert np.allclose(stale, sampling_law(z, SamplingOptions(presence_penalty=5.0), semantics, [3], ()))

    def logits(contexts):
        return np.array([z for _ in contexts])

    row = OPTION_ROWS["min-p 0.1"]
    # exact: with no token reachable by a draft, control_shift returns the literal 0.0 before any arithmetic
    assert control_shift(logits, [0], row, row.options, semantics, lambda c, x: 0.0) == 0.0
    assert control_shift(logits, [0], row, row.options, semantics, lambda c, x: 1.0) > 0.0
    assert row_for(SamplingOptions(frequency_penalty=1.0)).control.stale_history
    assert row_for(SamplingOptions(min_p=0.2)).control.drafted == {"min_p": 0.0}


def test_a_penalty_row_whose_control_cannot_act_where_the_prompt_is_counted_has_one_that_can():
    # counting from the batch's start misses only x1; where the penalties count the prompt (llama.cpp) and x1 was
    # drafted by lookup, x1 is in the prompt already, so that control barely moves the frequency row's law
    row, prompt = OPTION_ROWS["frequency 1.5"], [2, 22, 2, 22]
    llama = SEMANTICS["llama.cpp"]
    node = dataclasses.replace(llama, history={k: "generated" for k in llama.history})  # node-llama-cpp's info
    assert row.control_for(node) is row.control and row.control.stale_history
    assert row.control_for(llama).drafted == {"frequency_penalty": 0.0}
    assert OPTION_ROWS["presence 1.5"].control_for(llama) is OPTION_ROWS["presence 1.5"].control
    # repeat ban: with the prompt counted every drafted token is banned already; skipping the ban lets it through
    assert OPTION_ROWS["repeat ban"].control_for(llama).drafted == {"presence_penalty": 0.0}
    assert OPTION_ROWS["repeat ban"].control_for(node).stale_history
    # the window row: counting generated tokens only, the history at x2 (x1) lies inside the window of 4
    window = OPTION_ROWS["repetition 1.5 window 4"]
    assert window.control_for(llama) is window.control
    assert window.control_for(node).drafted == {"repetition_penalty": 1.0}

    def in_prompt(c, x1):
        return float(x1 in c)

    stale = control_shift(toy_logits, prompt, dataclasses.replace(row, prompt_counted=None), row.options, llama,
                          in_prompt)
    skipped = control_shift(toy_logits, prompt, row, row.options, llama, in_prompt)
    assert skipped > 20 * stale > 0  # toy: 0.0097 against 0.0004
    # the controls each semantics gets move the law; the ones they replace do not (the same arithmetic on the same
    # counts, so exactly 0), or barely
    void = control_shift(toy_logits, prompt, dataclasses.replace(window, generated_only=None), window.options, node,
                         in_prompt)
    assert void == 0.0 < control_shift(toy_logits, prompt, window, window.options, node, in_prompt)
    # repeat ban where the prompt is counted: presence 100 bans every token a lookup drafts from the window of 64,
    # so no x1 it drafts is likely (control_shift's literal 0.0), but one drafted from beyond the window survives
    # (here 22, drafted after 2), and skipping the ban at the drafted x2 then moves the law
    ban, far = OPTION_ROWS["repeat ban"], [2, 22, *[3 + i % 10 for i in range(70)], 2]
    assert control_shift(toy_logits, prompt, ban, ban.with_bias_token(22), llama, in_prompt) == 0.0
    assert control_shift(toy_logits, far, ban, ban.with_bias_token(22), llama, lambda c, x1: float(x1 == 22)) > 0.5


def test_the_bias_row_bans_the_likely_second_token_at_the_prompt_where_skipping_the_ban_moves_the_law_most():
    candidates = [[a, (a * 5) % toy.V] * 3 for a in range(8)]
    semantics = SEMANTICS["llama.cpp"]
    prompt, options, shift = choose_prompt(toy_logits, candidates, OPTION_ROWS["logit bias"], semantics, lookup=False)
    (token, bias), = options.logit_bias
    assert bias == -100 and shift > 0
    x1 = int(np.argmax(sampling_law(toy.logits(prompt), SamplingOptions(), semantics, prompt)))
    assert token == int(np.argmax(sampling_law(toy.logits(prompt + [x1]), SamplingOptions(), semantics, prompt, [x1])))
    assert prompt in candidates
    with pytest.raises(InvalidArgument, match="no candidate prompt is 9 tokens long"):
        choose_prompt(toy_logits, candidates, OPTION_ROWS["T=1"], semantics, lookup=False, min_length=9)


def test_a_draft_model_is_audited_where_the_target_is_sure_of_x1_not_where_x1_is_flat():
    # prompt [0]: x1 flat over 4 tokens, and after each the control (argmax at drafted rows) moves x2 by 0.75;
    # prompt [1]: x1 == 5 with probability 0.9, and after it the control moves x2 by 0.5. Counting every x1 as hit,
    # [0] has the larger shift (0.75 against 0.9 * 0.5 + ...); a sample-match verifier keeps a draft of x1 only when
    # the target draws it, so a draft that is the target hits [0]'s x1 a quarter of the time, [1]'s 0.9 of it
    def row_logits(probabilities):
        return np.log(np.maximum(np.asarray(probabilities, dtype=float), 1e-30))

    def logits(contexts):
        rows = []
        for c in contexts:
            if c == [0]:
                rows.append(row_logits([0.25] * 4 + [0] * 4))
            elif c == [1]:
                rows.append(row_logits([0, 0, 0, 0, 0, 0.9, 0.1, 0]))
            else:  # after x1: four likely second tokens (argmax moves x2 by 0.75) or two (by 0.5)
                rows.append(row_logits([0.25] * 4 + [0] * 4 if c[0] == 0 else [0, 0, 0, 0, 0, 0.5, 0.5, 0]))
        return np.array(rows)

    semantics, row = SEMANTICS["llama.cpp"], OPTION_ROWS["T=1"]
    every = {tuple(c): control_shift(logits, c, row, row.options, semantics, lambda c, x1: 1.0) for c in ([0], [1])}
    assert every[(0,)] > every[(1,)]
    prompt, _, shift = choose_prompt(logits, [[0], [1]], row, semantics, lookup=False)
    assert prompt == [1] and shift == pytest.approx(0.9 * 0.9 * 0.5, abs=1e-12)  # w(x1) * reach w(x1) * TV


def test_the_prompt_choice_passes_over_the_candidates_the_engine_does_not_draft_at():
    candidates = [[a, (a * 5) % toy.V] * 3 for a in range(8)]
    semantics, row = SEMANTICS["llama.cpp"], OPTION_ROWS["T=1"]
    best, _, top = choose_prompt(toy_logits, candidates, row, semantics, lookup=True)
    asked = []

    def drafts_at(prompt, options):
        asked.append(prompt)
        return prompt != best  # the engine declines the best candidate

    second, _, shift = choose_prompt(toy_logits, candidates, row, semantics, lookup=True, drafts_at=drafts_at)
    assert second != best and asked == [best, second] and 0 < shift <= top  # asked from the largest shift down
    # an engine that drafts at none: the best candidate still, its audit then INCONCLUSIVE (nothing drafted)
    assert choose_prompt(toy_logits, candidates, row, semantics, lookup=True, drafts_at=lambda c, o: False)[0] == best


def test_block_prompts_cut_each_candidate_to_one_token_past_its_last_full_block():
    # b = 4: L tokens cost a call ((L - 1) mod 4) + 1 tokens of prefill, so L = 5 or 9 cost one; a candidate of
    # 4 tokens or fewer has no full block to share and is left out
    candidates = [list(range(n)) for n in (3, 4, 5, 8, 9, 12)]
    cut = block_prompts(candidates, 4)
    assert cut == [[0, 1, 2, 3, 4], [3, 4, 5, 6, 7], [0, 1, 2, 3, 4, 5, 6, 7, 8], [3, 4, 5, 6, 7, 8, 9, 10, 11]]
    assert block_prompts([[1, 2, 3]], 4) == []


def test_an_engine_s_prompt_block_is_read_from_its_info_and_a_bad_one_is_one_clear_error():
    with _engine() as engine:
        assert engine.prompt_block is None
    with _engine("--prompt-block", "32") as engine:
        assert engine.prompt_block == 32
    for bad in ("0", "2.5", '"32"'):
        with pytest.raises(InvalidArgument, match="the engine's info prompt_block must be an int >= 1"):
            _engine("--prompt-block", bad)


def test_an_engine_that_shares_full_blocks_is_audited_at_a_prompt_one_token_past_a_block(monkeypatch):
    # vLLM's prefix caching shares a prompt's full KV blocks among a request's calls: run_row offers the prompt
    # choice the candidates (the row's texts and the long ones) cut by block_prompts, or all of them where none is
    # longer than a block
    from types import SimpleNamespace

    import specmath.audit.engines.table_runs as table_runs

    offered = []

    def choose(logits, candidates, row, semantics, *, lookup, min_length, drafts_at):
        offered.append(candidates)
        return candidates[0], row.options, 0.5

    monkeypatch.setattr(table_runs, "choose_prompt", choose)
    lengths = {}

    def candidates(texts):  # a tokenizer of one token a word
        return [[len(w) % toy.V for w in t.split()] for t in texts]

    target = SimpleNamespace(name="toy", reference=toy_logits, gguf=None, folder=None, candidates=candidates)
    for block in (None, 8, 1000):
        engine = CallableEngine(toy_generate, vocab_size=toy.V)
        engine.prompt_block = block
        opened = table_runs.OpenEngine(engine, None, False, "toy", None)
        table_runs.run_row(opened, target, OPTION_ROWS["T=1"], n=50, reproducer="again")
        lengths[block] = sorted(len(c) for c in offered[-1])
    assert all((n - 1) % 8 == 0 for n in lengths[8]) and len(lengths[8]) > len(table_runs.LONG_PROMPTS)
    assert lengths[None] == lengths[1000] and any((n - 1) % 8 for n in lengths[None])  # none longer: all offered


def test_a_control_in_a_process_of_its_own_runs_beside_the_engine_with_the_same_samples_and_records(monkeypatch):
    # run_engine_audit runs the control's calls beside the engine's when each has its own process; the audit
    # must be the one it makes running them one after the other (the same checks, requests and verdict)
    import specmath.audit.engines.runner as runner

    submitted = []

    class Pool(runner.ThreadPoolExecutor):
        def submit(self, fn, *args, **kwargs):
            submitted.append(fn)
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(runner, "ThreadPoolExecutor", Pool)
    audits = []
    for apart in (True, False):
        with _engine("--controls") as engine, _engine("--controls") as second:
            if not apart:
                second.own_process = False  # as an in-process control: after the engine, in this thread
            control = NegativeControl("min-p and the bias skipped at drafted rows", {"lossy": True}, second)
            audits.append(run_engine_audit(engine, "toy", AuditPlan(PROMPT, OPTIONS, 1000, seed=1), control=control))
            assert len(submitted) == 1  # the control's calls went to the second thread in the first audit only
    beside, after = audits
    assert beside.verdict == after.verdict == "PASS" and beside.control_error is None
    assert [c.to_json() for c in beside.checks] == [c.to_json() for c in after.checks]
    assert [(r["role"], r["seed"], r["n"]) for r in beside.requests] == [(r["role"], r["seed"], r["n"])
                                                                         for r in after.requests]
    assert [r["role"] for r in beside.requests] == ["engine"] * 4 + ["control"] * 4  # 250 calls a request
    assert not beside.checks[3].passed  # the control was caught


def test_a_lookup_row_is_audited_where_the_engine_and_its_controls_engine_both_draft():
    from types import SimpleNamespace

    from specmath.audit.engines.table_runs import _both_draft_at

    def drafting(at):  # an engine whose lookup drafts at the prompts in ``at`` only
        return SimpleNamespace(generate=lambda prompt, *a, **k: SimpleNamespace(drafted=int(tuple(prompt) in at)))

    node, llama = drafting({(1, 2), (3, 4)}), drafting({(3, 4)})  # node-llama-cpp's lookup, llama.cpp's control
    opened = SimpleNamespace(engine=node, control_engine=llama, lookup=True)
    assert not _both_draft_at(opened, [1, 2], SamplingOptions()) and _both_draft_at(opened, [3, 4], SamplingOptions())
    alone = SimpleNamespace(engine=node, control_engine=None, lookup=True)
    assert _both_draft_at(alone, [1, 2], SamplingOptions())


def test_a_draft_model_row_is_audited_where_the_target_accepts_a_drafted_token():
    from types import SimpleNamespace

    from specmath.audit.engines.table_runs import _both_draft_at

    # a draft model drafts everywhere; at (1, 2) the target never takes its proposal (as frequency 1.5 at
    # "1, 2, 3, ..., 1," for llama-cpp-draft), so a control acting at drafted rows has nothing to spoil there
    engine = SimpleNamespace(generate=lambda prompt, *a, **k: SimpleNamespace(
        drafted=16, accepted=0 if tuple(prompt) == (1, 2) else 5))
    model = SimpleNamespace(engine=engine, control_engine=engine, lookup=False)
    assert not _both_draft_at(model, [1, 2], SamplingOptions()) and _both_draft_at(model, [3, 4], SamplingOptions())
    lookup = SimpleNamespace(engine=engine, control_engine=engine, lookup=True)  # a lookup: drafting is what counts
    assert _both_draft_at(lookup, [1, 2], SamplingOptions())


def test_an_engine_the_prompt_probe_crashed_is_reported_with_the_probe_s_message(monkeypatch):
    # vLLM's server under top-k dies on the probe's request; the audit's own request then meets only a closed port,
    # and the verdict must still name the crash (ENGINE ERROR with the engine's message, never PASS or LOSS)
    from types import SimpleNamespace

    import specmath.audit.engines.table_runs as table_runs

    calls = []

    def dying(prompt_ids, n, seed, *, max_new_tokens, **options):
        calls.append(n)
        raise RuntimeError("max(): Expected reduction dim" if len(calls) == 1 else "connection refused")

    def choose(logits, candidates, row, semantics, *, lookup, min_length, drafts_at):
        assert drafts_at(PROMPT, row.options)  # a failed probe does not pass the prompt over
        return PROMPT, row.options, 0.5

    monkeypatch.setattr(table_runs, "choose_prompt", choose)
    target = SimpleNamespace(name="toy", reference=toy_logits, gguf=None, folder=None, candidates=lambda texts: [])
    opened = table_runs.OpenEngine(CallableEngine(dying, vocab_size=toy.V), None, False, "dying", None)
    audit, _, _ = table_runs.run_row(opened, target, OPTION_ROWS["T=1"], n=100, reproducer="again")
    assert audit.verdict.startswith("ENGINE ERROR: RuntimeError: max(): Expected reduction dim (at the prompt probe")
    assert "connection refused" in audit.verdict and calls[0] == 16


def test_the_engine_a_control_runs_in_is_probed_with_that_control():
    # node-llama-cpp's control runs in llama.cpp, which by its own semantics counts the prompt into the penalties;
    # the control's protocol says how node-llama-cpp counts them, and only under it does x1's draft get accepted
    from types import SimpleNamespace

    from specmath.audit.engines.table_runs import _both_draft_at

    asked = []

    def engine(name):
        def generate(prompt, n, seed, max_new_tokens, options, control=None):
            asked.append((name, control))
            accepted = 0 if name == "control engine" and control is None else 3
            return SimpleNamespace(drafted=16, accepted=accepted)
        return SimpleNamespace(generate=generate)

    protocol = {"drafted": {"repetition_penalty": 1.0}, "stale_history": False, "history": "generated", "ignored": []}
    opened = SimpleNamespace(engine=engine("engine"), control_engine=engine("control engine"), lookup=False)
    assert _both_draft_at(opened, [1, 2], SamplingOptions(repetition_penalty=1.5), control=protocol)
    assert asked == [("engine", None), ("control engine", protocol)]
    assert not _both_draft_at(opened, [1, 2], SamplingOptions(repetition_penalty=1.5))
