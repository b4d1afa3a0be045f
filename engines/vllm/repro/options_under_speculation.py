"""vLLM 0.32.0 CPU: which sampling options run under speculative decoding, for ngram and for a draft model.

    .venv-vllm/bin/python engines/vllm/repro/options_under_speculation.py [MODEL_DIR [DRAFT_DIR]]  (about 2 min)

Each option set is one request (n=4, 3 tokens) on an engine with speculation; "ran" says only that it ran:
whether its law is right is the audit's business (and at drafted rows it is not: expand_uninitialised.py).
The top-k rows come last: they kill the engine core (top_k_empty_crash.py). One LLM per process.
"""

import subprocess
import sys

MODEL = sys.argv[1] if len(sys.argv) > 1 else "engines/build/vllm-models/smollm2-135m-f32"
DRAFT = sys.argv[2] if len(sys.argv) > 2 else "engines/build/vllm-models/smollm2-135m-draft-L4-f32"
PROMPT = [1195, 2644, 2643, 335, 260, 1171, 30, 260, 2644, 2643, 335, 260, 1171, 30, 260]
OPTIONS = [{}, {"seed": 7}, {"repetition_penalty": 1.5}, {"presence_penalty": 1.5}, {"frequency_penalty": 1.5},
           {"top_p": 0.9}, {"temperature": 0.7, "top_p": 0.9, "seed": 3}, {"logprobs": 5},
           {"temperature": 0.7, "top_k": 20}]


def run(method: str) -> None:
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    spec = ({"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 3, "prompt_lookup_min": 1}
            if method == "ngram" else {"method": "draft_model", "model": DRAFT, "num_speculative_tokens": 4})
    llm = LLM(model=MODEL, dtype="float32", enforce_eager=True, gpu_memory_utilization=0.15, disable_log_stats=False,
              speculative_config=spec)
    for options in OPTIONS:
        before = {m.name: m.value for m in llm.get_metrics() if m.name == "vllm:spec_decode_num_draft_tokens"}
        try:
            out = llm.generate(TokensPrompt(prompt_token_ids=PROMPT),
                               SamplingParams(n=4, max_tokens=3, ignore_eos=True, **options), use_tqdm=False)
            after = {m.name: m.value for m in llm.get_metrics() if m.name == "vllm:spec_decode_num_draft_tokens"}
            drafted = sum(after.values()) - sum(before.values())
            print(f"RESULT {method} {options}: ran, {drafted} tokens drafted, first sample "
                  f"{list(out[0].outputs[0].token_ids)}", flush=True)
        except Exception as exc:  # noqa: BLE001
            print(f"RESULT {method} {options}: {type(exc).__name__}: {str(exc)[:160]}", flush=True)
            break


if __name__ == "__main__":
    if len(sys.argv) > 3:
        run(sys.argv[3])
    else:
        for method in ("ngram", "draft"):
            subprocess.run([sys.executable, __file__, MODEL, DRAFT, method])
