"""vLLM 0.32.0 CPU: a seeded request whose prefill is split over steps raises "CPU Generator does not use offset".

    .venv-vllm/bin/python engines/vllm/repro/cpu_generator_offset.py [MODEL_DIR]    (about 1.5 minutes)

Mechanism. When a step holds a partial prefill (chunked prefill: the prompt, or the batch of prompts, does not
fit max_num_batched_tokens), the runner discards that request's sample and rewinds its generator:
``gen.set_offset(gen.get_offset() - 4)`` (vllm/v1/worker/gpu_model_runner.py, _bookkeeping_sync), which only a
Philox (CUDA) generator has; a CPU torch.Generator raises. Condition: a request with a seed, chunked prefill on
(the CPU default), and its prefill split: one long prompt, or n > 1 (n children of one prompt) / several
prompts whose tokens together exceed max_num_batched_tokens. Not tied to speculation: plain decoding fails
alike. Without a seed (no generator) or with enable_chunked_prefill=False it runs.
"""

import os
import subprocess
import sys

# the engine core in this process: the exception itself comes back, not EngineDeadError
os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"

MODEL = sys.argv[1] if len(sys.argv) > 1 else "engines/build/vllm-models/smollm2-135m-f32"
CASES = {  # name: (seed, enable_chunked_prefill)
    "seed=1, chunked prefill on": (1, True),
    "seed=None, chunked prefill on": (None, True),
    "seed=1, chunked prefill off": (1, False),
}


def run(case: str) -> None:
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    seed, chunked = CASES[case]
    # a budget of 64 tokens a step, a prompt of 100: its prefill takes two steps when chunking is on
    # (without chunking a whole prompt must fit the budget, so that case gets 128)
    llm = LLM(model=MODEL, dtype="float32", enforce_eager=True, gpu_memory_utilization=0.15, max_num_seqs=8,
              max_num_batched_tokens=64 if chunked else 128, max_model_len=128, enable_chunked_prefill=chunked)
    prompt = TokensPrompt(prompt_token_ids=[1195, 2644, 2643, 335, 260] * 20)
    try:
        out = llm.generate(prompt, SamplingParams(seed=seed, max_tokens=2, ignore_eos=True), use_tqdm=False)
        print(f"RESULT {case}: ran, tokens {list(out[0].outputs[0].token_ids)}")
    except Exception as exc:  # noqa: BLE001
        print(f"RESULT {case}: {type(exc).__name__}: {str(exc)[:200]}")


if __name__ == "__main__":
    if len(sys.argv) > 2:
        run(sys.argv[2])
    else:
        for case in CASES:
            subprocess.run([sys.executable, __file__, MODEL, case])
