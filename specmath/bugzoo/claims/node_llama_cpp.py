"""Claims about node-llama-cpp's token predictors (withcatai/node-llama-cpp) and llama.cpp's own loop.

Notation: p = target law. node-llama-cpp 3.22.1 is the latest release on npm on the date checked; its npm
sources (``make engines`` installs them in engines/node/node_modules) differ from the older GitHub snapshot
(v3.19.0, f53ea51d), and lines refer to the npm files. It bundles llama.cpp b1-0ad4a86 (prebuilt CPU libraries).
"""

from __future__ import annotations

from datetime import date

from specmath.bugzoo.claims.record import Claim, Report

__all__ = ["RECORDS", "PENALTY_AT_PREDICTIONS", "LLAMA_CPP_ACCEPTS_EACH_ROW"]

_SCRIPT = ("make engines && node engines/node/repeat_penalty_with_predictor.mjs "
           "--model SmolLM2-135M-Instruct.Q4_1.gguf --calls 100")

PENALTY_AT_PREDICTIONS = Claim(
    key="node-llama-cpp-penalty-at-predictions",
    engine="node-llama-cpp", repository="withcatai/node-llama-cpp", version="3.22.1 (npm)", checked=date(2026, 12, 1),
    status="open",
    claim="with a token predictor, a repeat penalty (penalty, presence or frequency) at a validated prediction does not "
          "count the token sampled at the row before it: `_speculativeEvaluate` samples every row of [last, prediction, "
          "...] in one `_decodeTokens` call and resolves `repeatPenalty.punishTokens()` per row before any token is "
          "yielded, so the history lacks the rows sampled in the same batch, and `AddonSampler::ApplyConfig` rebuilds "
          "its penalty sampler from that stale history. Its guide promises that token predictors do not affect the "
          "quality of the output. Prompt 'ha ha ... ha', tokenBias +10 on ' ha', presence penalty 100, seeds 0-99: "
          "' ha ha' in 0 of 100 calls without a predictor, 100 of 100 with `InputLookupTokenPredictor`; "
          "`DraftSequenceTokenPredictor` fails the same row of the options table",
    evidence="run here",
    where=("dist/evaluator/LlamaContext/LlamaContext.js lines 1701-1827 (`_speculativeEvaluate`, the per-row sampler "
           "config at 1802-1830) and 1916-1919 (`punishTokens()` in `_resolveSamplerConfig`) (3.22.1, npm)",
           "llama/addon/AddonSampler.cpp lines 444-535 (`ApplyConfig`: the history comparison at 481-511) (3.22.1, npm)",
           "docs/guide/token-prediction.md line 24 ('doesn't affect the quality of the generated output'; GitHub "
           "v3.19.0, f53ea51d: the npm package ships no docs)",
           _SCRIPT, "specmath audit-generate node-llama-cpp-lookup --target smollm2 --option \"repeat ban\"",
           "the options table, rows node-llama-cpp-lookup and -draft, repeat ban (docs/measurements/engines-2026-11-30.md)",
           "tests/audit/engines/test_gguf_engines.py"),
    reproducer=_SCRIPT,
    report=Report(
        title="Token predictors: the repeat penalty at a validated prediction does not count the token sampled just "
              "before it",
        versions="node-llama-cpp 3.22.1 (npm), its prebuilt linux-x64 CPU llama.cpp (b1-0ad4a86), node v20.20.2; model "
                 "SmolLM2-135M-Instruct Q4_1 (GGUF)",
        reproducer=_SCRIPT + "\n# the script: prompt [3250] + [421] * 10 ('ha ha ... ha'), sequence.evaluate(prompt, "
                   "{temperature: 1, topK: 0, topP: 1, seed,\n#   tokenBias: +10 on 421, repeatPenalty: {punishTokens: () => "
                   "generated, presencePenalty: 100, penalty: 1}}),\n# first two tokens, seeds 0-99, on a sequence with "
                   "and without new InputLookupTokenPredictor({predictionLength: {max: 4}})",
        expected="' ha ha' in no call either way: the first ' ha' is in the punished history when the second token is "
                 "sampled, and a presence penalty of 100 all but forbids it (the guide: token predictors do not affect "
                 "the output)",
        observed="' ha ha' in 0 of 100 calls without the predictor and in 100 of 100 with it. Suggested fix: at row j of a "
                 "validation batch, punish the caller's history plus the validated rows before j (or keep the sampler's "
                 "own accepted history within a batch). Every repeat penalty combined with a token predictor is "
                 "affected, in LlamaChat, LlamaChatSession and LlamaCompletion",
    ),
)

LLAMA_CPP_ACCEPTS_EACH_ROW = Claim(
    key="llama-cpp-accepts-each-row",
    engine="llama.cpp", repository="ggml-org/llama.cpp",
    version="b1-0ad4a86 (the release node-llama-cpp 3.22.1 bundles)", checked=date(2026, 12, 1), status="sound",
    claim="`common_sampler_sample_and_accept_n` samples each verified row and feeds its token to the sampler chain "
          "(`common_sampler_accept`) before the next row, so penalties at a drafted row count the tokens before it: the "
          "node-llama-cpp defect is node-llama-cpp's, not llama.cpp's. In the options table llama.cpp's loop fails no "
          "row (11 pass, the other 9 are INCONCLUSIVE: their controls were not caught at that N), and its speculative "
          "output equals its plain output seed by seed",
    evidence="run here",
    where=("common/sampling.cpp lines 678-706 of the bundled source (engines/build/llama.cpp after make engines)",
           "specmath audit-generate --options-table (docs/measurements/engines-2026-11-30.md)"),
    reproducer="make engines && specmath audit-generate llama-cpp-ngram --target smollm2 --option \"repeat ban\"",
)

#: this engine's claims (joined into ``specmath.bugzoo.claims.CLAIMS``)
RECORDS: tuple[Claim, ...] = (PENALTY_AT_PREDICTIONS, LLAMA_CPP_ACCEPTS_EACH_ROW)
