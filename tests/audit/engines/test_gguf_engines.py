"""The GGUF engines built by ``make engines`` (skipped where they are not built), on the SmolLM2 GGUF.

* llama.cpp's own speculative loop (``llama-cpp-ngram``) under min-p passes, its control (min-p skipped at
  drafted rows, the vLLM #42744 shape) is caught, and speculative output equals plain output seed by seed;
* a llama.cpp call's tokens, and a node-llama-cpp lookup call's, depend on its seed alone: the engines run
  ``GGUF_PARALLEL`` calls side by side, and give each seed the tokens it gets alone (8 tokens, 16 seeds,
  speculative and plain, under a penalty that makes each token depend on all the history);
* node-llama-cpp 3.22.1's lookup predictor fails the repeat-ban row: with a token predictor, the presence
  penalty at a drafted row does not count the token emitted at the row before it (a reproducer of the
  defect written up in docs/how-to/audit-an-engine.md).

Statistics: N = 200 calls; the law comes from each engine's own logits; every check is at level 5e-7, each
detectable TV (printed) is below 0.3; the control's shift asserted here measures above it, and the
node-llama-cpp defect emits an outcome the law gives a probability below 1e-40, in most calls.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specmath.audit.engines.jsonl import JsonLinesEngine
from specmath.audit.engines.registry import ENGINES, GGUF_PARALLEL, EngineOpening, engine_entry, engines_for
from specmath.audit.engines.rows import OPTION_ROWS
from specmath.audit.engines.runner import AuditPlan, NegativeControl, run_engine_audit
from specmath.audit.engines.table_runs import open_engine
from specmath.audit.engines.target import AuditTarget
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument, UnknownName


def _gguf():
    from specmath.lm.models import locate_smollm2_gguf

    try:
        return locate_smollm2_gguf()
    except ValueError as exc:
        pytest.skip(str(exc))


def _gguf_target(path) -> AuditTarget:
    """A GGUF target whose torch model is never loaded here (the engines give their own logits)."""
    return AuditTarget(Path(path).name, Path(path), lambda: pytest.fail("the torch model was loaded"))


def _start(name: str):
    reason = ENGINES[name].unavailable()
    if reason:
        pytest.skip(reason)
    return ENGINES[name].open(EngineOpening(_gguf_target(_gguf())))


def test_only_a_gguf_engine_takes_calls_side_by_side():
    assert ENGINES["llama-cpp-ngram"].command_line("m.gguf", side_by_side=3)[-7:-5] == ["-np", "3"]
    assert ENGINES["node-llama-cpp-draft"].command_line("m.gguf", side_by_side=2).count("2") == 1
    with pytest.raises(InvalidArgument, match="vllm-ngram runs no calls side by side"):
        ENGINES["vllm-ngram"].command_line("folder", side_by_side=2)
    with pytest.raises(InvalidArgument, match="side_by_side"):
        ENGINES["llama-cpp-ngram"].command_line("m.gguf", side_by_side=0)


def test_an_engine_that_is_not_built_says_how_to_build_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECMATH_ENGINES_DIR", str(tmp_path))
    assert "run `make engines`" in ENGINES["llama-cpp-ngram"].unavailable()
    with pytest.raises(InvalidArgument, match="llama-cpp-ngram: the llama.cpp driver is not built"):
        ENGINES["llama-cpp-ngram"].open(EngineOpening(_gguf_target("x.gguf")))
    with pytest.raises(InvalidArgument, match="llama-cpp-ngram runs GGUF files: give --target smollm2"):
        ENGINES["llama-cpp-ngram"].open(EngineOpening(AuditTarget("tiny", None, lambda: None)))
    with pytest.raises(UnknownName, match="did you mean 'llama-cpp-draft'"):
        engine_entry("llama-cpp-drafts")


@pytest.mark.parametrize("name", engines_for("gguf"))
def test_each_gguf_engine_declares_what_its_registry_entry_says(name):
    # the entry is what the command line reads without starting anything; the engine's info reply must agree
    entry = ENGINES[name]
    if entry.unavailable():
        pytest.skip(entry.unavailable())
    with open_engine(name, EngineOpening(_gguf_target(_gguf()))) as opened:
        assert opened.engine.name == name and opened.lookup == entry.lookup
        assert opened.engine.has_logits and opened.engine.has_plain
        assert opened.engine.has_controls == bool(entry.controls) and (entry.control_engine is None) == bool(entry.controls)
        assert opened.control_engine is not None and opened.control_engine.has_controls
        assert opened.control_engine is not opened.engine  # a process of its own: its calls run beside the engine's


def test_llama_cpp_speculative_loop_under_min_p_passes_its_control_is_caught_and_it_matches_plain_decoding():
    # the quick engine row CI runs (scripts/ci_engines.sh)
    with _start("llama-cpp-ngram") as engine:
        prompt = [1195, 2644, 2643, 335, 260, 1171, 30, 260, 2644, 2643, 335, 260, 1171, 30, 260]  # "the cat sat on the mat. " twice, "the"
        row = OPTION_ROWS["min-p 0.1"]
        control = NegativeControl(row.control.description, row.control.protocol(engine.semantics), engine)
        audit = run_engine_audit(engine, "smollm2", AuditPlan(prompt, row.options, 200, seed=0, pathwise_seeds=10),
                                 control=control)
        assert audit.error is None, audit.error
        assert audit.passed and audit.verdict == "PASS", [c.to_json() for c in audit.checks]
        assert audit.accepted > 0  # drafts were made and kept: the control had drafted rows to spoil
        control = [c for c in audit.checks if c.role == "control"]
        assert not control[1].passed and control[1].measured_tv > control[1].detectable_tv
        assert audit.pathwise["promised"] and audit.pathwise["observed_differences"] == 0


def test_node_llama_cpp_lookup_counts_no_penalty_for_the_token_before_a_drafted_row():
    with _start("node-llama-cpp-lookup") as engine:
        ids = [3250] + [421] * 10  # "ha ha ... ha": the lookup drafts " ha"
        options = SamplingOptions(1.0, presence_penalty=100.0, logit_bias=((421, 10.0),))
        audit = run_engine_audit(engine, "smollm2", AuditPlan(ids, options, 200, seed=0))
        assert audit.error is None, audit.error
        first, two = audit.checks
        assert first.passed  # x1 = " ha": nothing generated yet, nothing to penalise
        # the law all but forbids x2 = x1 (presence 100: probability below 1e-40); the engine emits it whenever
        # x1 hit the draft, here nearly every call
        assert not two.passed and (421, 421) in two.impossible and two.measured_tv > 0.5, two.to_json()
        plain = engine.generate(ids, 50, 0, 2, options, speculative=False).tokens
        assert all(row[1] != row[0] for row in plain)  # its plain path counts the penalty as documented


def _one_at_a_time(name: str) -> JsonLinesEngine:
    """The engine of ``name`` started with one call at a time (its entry's command, one call side by side)."""
    argv = ENGINES[name].command_line(_gguf(), side_by_side=1)
    assert argv != ENGINES[name].command_line(_gguf()) and GGUF_PARALLEL > 1
    return JsonLinesEngine(argv, name=name)


@pytest.mark.parametrize("name", ["llama-cpp-ngram", "llama-cpp-draft", "node-llama-cpp-lookup"])
def test_a_call_gets_the_tokens_of_its_seed_whatever_runs_beside_it(name):
    # the calls of one request run GGUF_PARALLEL at a time, one sequence each: a call seeded S must emit what it
    # emits alone, or a LOSS's reproducer (its seed) would not reproduce it. Each sequence keeps a KV stream of its
    # own: with one unified cache (tried), llama.cpp gave the second sequence other tokens in 18 of 20 seeds.
    prompt = [1195, 2644, 2643, 335, 260, 1171, 30, 260, 2644, 2643, 335, 260, 1171, 30, 260]
    options = SamplingOptions(1.0, repetition_penalty=1.1)  # each token's law depends on the whole history
    with _start(name) as batched, _one_at_a_time(name) as alone:
        for speculative in (True, False):
            together = batched.generate(prompt, 16, 7, 8, options, speculative=speculative)
            single = alone.generate(prompt, 16, 7, 8, options, speculative=speculative)
            assert together.tokens == single.tokens
            if speculative:
                assert together.accepted > 0 and together.accepted == single.accepted


def test_the_ngram_row_prompt_is_one_llama_cpp_drafts_at():
    # "ha ha ha ...": prompt lookup proposes " ha", llama.cpp's ngram-simple (n-gram 2) does not draft there, since
    # fewer than 2 tokens follow the latest match; the T=0.7 top-k 20 row chose it, and drafted nothing
    from specmath.audit.engines.table_runs import _drafts_at

    ha = [3250] + [421] * 10
    with _start("llama-cpp-ngram") as engine:
        assert not _drafts_at(engine, ha, SamplingOptions(0.7, top_k=20))
        assert _drafts_at(engine, [1195, 2644, 2643, 335, 260, 1171, 30, 260, 2644, 2643, 335, 260, 1171, 30, 260],
                          SamplingOptions(0.7, top_k=20))
        # "ha ha ha. ha ha ha. ... ha": the latest ". ha" is a group back, " ha ha" after it; there it drafts " ha" and
        # the target, which continues the group, takes it (a penalty row's control then has drafted rows to spoil)
        groups = [3250, 421, 421, 30, 421, 421, 421, 30, 421, 421, 421, 30, 421, 421, 421, 30, 421]
        assert _drafts_at(engine, groups, SamplingOptions(1.0, presence_penalty=1.5), accepted=True)


@pytest.mark.parametrize("name", ["llama-cpp-ngram", "llama-cpp-draft"])
def test_a_llama_cpp_call_drafts_no_further_than_the_tokens_it_still_emits(name):
    # a call of M new tokens has room for M - 1 drafted ones in its first round and none in its last: a round
    # that asked common_speculative for 0 (which it reads as "no limit") verified its last token behind 4 drafted
    # ones it could not keep, and cost a row's audit about twice its time. Exact counts: the engine reports them
    prompt = [1195, 2644, 2643, 335, 260, 1171, 30, 260, 2644, 2643, 335, 260, 1171, 30, 260]
    with _start(name) as engine:
        for new in (1, 2):
            out = engine.generate(prompt, 16, 0, new, SamplingOptions(1.0))
            assert out.drafted <= 16 * (new - 1)
        assert engine.generate(prompt, 16, 0, 2, SamplingOptions(1.0)).drafted > 0  # it does draft where it has room
