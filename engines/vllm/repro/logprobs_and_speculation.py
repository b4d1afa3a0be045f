"""vLLM 0.32.0 CPU, ngram: do logprobs / prompt_logprobs switch speculation off or change what is drafted?

    .venv-vllm/bin/python engines/vllm/repro/logprobs_and_speculation.py [MODEL_DIR]   (about 1 minute)

The same 200 greedy requests (temperature 0: the tokens, so the drafts, are fixed and comparable; greedy rows
are also untouched by the expand defect) with no logprobs, logprobs=5, prompt_logprobs=1 and both; for each,
vLLM's own counters: drafts (verify steps with a draft), draft tokens and accepted tokens over the request.
Equal counts and equal tokens: logprobs neither switch speculation off nor change the drafts.
Then (f) one-token requests: no draft is ever made before a request's first token (the prefill step carries no
draft: the first token comes from the ordinary Sampler on the last prompt position, bonus-row style), so the
first token's logprobs of a one-token request are the plain target's.
"""

import sys

from vllm import LLM, SamplingParams
from vllm.inputs import TokensPrompt

MODEL = sys.argv[1] if len(sys.argv) > 1 else "engines/build/vllm-models/smollm2-135m-f32"
PROMPT = [1195, 2644, 2643, 335, 260, 1171, 30, 260, 2644, 2643, 335, 260, 1171, 30, 260]
NAMES = ("vllm:spec_decode_num_drafts", "vllm:spec_decode_num_draft_tokens", "vllm:spec_decode_num_accepted_tokens")


def counters(llm):
    return {m.name: m.value for m in llm.get_metrics() if m.name in NAMES}


def run(llm, n, max_tokens, **options):
    before = counters(llm)
    prompts = [TokensPrompt(prompt_token_ids=PROMPT[i % 5:]) for i in range(n)]
    out = llm.generate(prompts, SamplingParams(max_tokens=max_tokens, ignore_eos=True, **options), use_tqdm=False)
    after = counters(llm)
    return [list(o.outputs[0].token_ids) for o in out], [after[k] - before[k] for k in NAMES], out


if __name__ == "__main__":
    import vllm

    print("vLLM", vllm.__version__)
    spec = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 3, "prompt_lookup_min": 1}
    llm = LLM(model=MODEL, dtype="float32", enforce_eager=True, gpu_memory_utilization=0.15, disable_log_stats=False,
              speculative_config=spec)
    reference = None
    for options in ({}, {"logprobs": 5}, {"prompt_logprobs": 1}, {"logprobs": 5, "prompt_logprobs": 1}):
        tokens, counts, _ = run(llm, 200, 8, temperature=0.0, **options)
        reference = reference or tokens
        print(f"RESULT {options or 'no logprobs'}: drafts, draft tokens, accepted = {counts}; "
              f"tokens {'equal to' if tokens == reference else 'DIFFERENT from'} the run without logprobs")
    for max_tokens in (1, 2):
        _, counts, out = run(llm, 50, max_tokens, temperature=1.0, logprobs=5)
        print(f"RESULT max_tokens={max_tokens}, T=1, logprobs=5: drafts, draft tokens, accepted = {counts}")
    first = out[0].outputs[0].logprobs[0]
    print("RESULT first-token top logprobs of the last run:",
          {t: round(lp.logprob, 4) for t, lp in sorted(first.items(), key=lambda kv: -kv[1].logprob)[:3]})
