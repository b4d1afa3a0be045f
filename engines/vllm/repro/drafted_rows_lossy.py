"""vLLM 0.32.0 CPU, speculative decoding: the law of a drafted row is garbage; seeds do not reproduce.

    .venv-vllm/bin/python engines/vllm/repro/drafted_rows_lossy.py [MODEL_DIR]     (about 1 minute)

Consequence of expand_uninitialised.py: at every drafted row the target logits are divided by an uninitialised
"temperature" (rejection_sampler.py apply_sampling_constraints), so p there is inf/NaN or a random power of the
true law. Condition: any random-sampling request (temperature > 0) on the CPU backend with speculation on, ngram
or draft model, any gamma, with or without a seed; greedy requests are untouched (all_greedy returns first).
Shown here: (1) one seeded request run twice gives different tokens (plain decoding reproduces it exactly);
(2) the engine's own counters say (almost) no draft is accepted, yet the second token is the drafted one far
more often than p allows: a rejected draft comes back as the "recovered" token, which the rule never allows
(its residual max(0, p - q) is 0 at a one-hot draft).
"""

import collections
import sys

from vllm import LLM, SamplingParams
from vllm.inputs import TokensPrompt

MODEL = sys.argv[1] if len(sys.argv) > 1 else "engines/build/vllm-models/smollm2-135m-f32"
# "the cat sat on the mat. the cat sat on the mat. the": prompt lookup drafts "cat sat on the" after "the"
PROMPT = [1195, 2644, 2643, 335, 260, 1171, 30, 260, 2644, 2643, 335, 260, 1171, 30, 260]


def counters(llm):
    return {m.name.split(":")[1]: m.value for m in llm.get_metrics()
            if m.name in ("vllm:spec_decode_num_draft_tokens", "vllm:spec_decode_num_accepted_tokens")}


def run(speculative: bool) -> None:
    spec = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 3, "prompt_lookup_min": 1}
    llm = LLM(model=MODEL, dtype="float32", enforce_eager=True, gpu_memory_utilization=0.15, disable_log_stats=False,
              speculative_config=spec if speculative else None)
    prompt = TokensPrompt(prompt_token_ids=PROMPT)
    runs = [list(llm.generate(prompt, SamplingParams(seed=8, max_tokens=8, ignore_eos=True),
                              use_tqdm=False)[0].outputs[0].token_ids) for _ in range(3)]
    before = counters(llm)
    out = llm.generate(prompt, SamplingParams(n=300, seed=0, max_tokens=2, ignore_eos=True), use_tqdm=False)
    after = counters(llm)
    pairs = collections.Counter(tuple(c.token_ids) for c in out[0].outputs)
    cat = sum(v for k, v in pairs.items() if k[0] == 2644)
    print(f"RESULT speculative={speculative}: the request seed=8 three times gives "
          f"{'the same tokens' if runs[0] == runs[1] == runs[2] else 'DIFFERENT tokens'}: {runs}")
    print(f"RESULT   n=300, 2 tokens: P(x2 = 'sat' | x1 = 'cat') = {pairs[(2644, 2643)]}/{cat}; "
          f"counters over the request: { {k: after[k] - before[k] for k in after} }")


if __name__ == "__main__":
    import subprocess

    import vllm

    if len(sys.argv) > 2:  # one LLM per process: vLLM 0.32 does not build a second one in the same process
        run(sys.argv[2] == "speculative")
    else:
        print("vLLM", vllm.__version__)
        for mode in ("speculative", "plain"):
            subprocess.run([sys.executable, __file__, MODEL, mode], check=True)
