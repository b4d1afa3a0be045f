"""vLLM 0.32.0 CPU, speculative decoding: top_k without top_p kills the engine core at the first step.

    .venv-vllm/bin/python engines/vllm/repro/top_k_empty_crash.py [MODEL_DIR [DRAFT_DIR]]   (about 2 minutes)

Mechanism. With a speculative_config the GPU/CPU model runner builds SpecDecodeMetadata at *every* step
(vllm/v1/worker/gpu_model_runner.py, _prepare_inputs: ``use_spec_decode = self.speculative_config is not None``),
so the RejectionSampler runs even when no request of the step carries a draft: at the prefill step, or later
when prompt lookup finds no match for any request. Its target rows are then a [0, V] tensor.
``apply_sampling_constraints`` (vllm/v1/sample/rejection_sampler.py) passes them, with the expanded top_k, to
``apply_top_k_top_p``; without Triton and with top_p None it takes ``apply_top_k_only``
(vllm/v1/sample/ops/topk_topp_sampler.py), whose ``k.max()`` on the empty k raises. Condition: some request of
the step has top_k set and no request has top_p < 1 (then the sorting path runs and copes with 0 rows), and no
request of the step has a draft; ngram and draft model alike, any gamma, n = 1 or more, seed or not. With
top_p < 1 too, the empty step passes and the first drafted step fails instead: top_k at the drafted rows is
uninitialised memory (expand_uninitialised.py) used as a gather index ("index ... is out of bounds").
Plain decoding (no speculative_config) runs the same request. With the engine core in a subprocess (the
default) every later request gets EngineDeadError; here it runs in-process, so the exception itself shows.
Each case runs in a process of its own (one LLM per process).
"""

import os
import subprocess
import sys

# the engine core in this process: the exception itself comes back, not EngineDeadError
os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"

MODEL = sys.argv[1] if len(sys.argv) > 1 else "engines/build/vllm-models/smollm2-135m-f32"
DRAFT = sys.argv[2] if len(sys.argv) > 2 else "engines/build/vllm-models/smollm2-135m-draft-L4-f32"
PROMPT = [1195, 2644, 2643, 335, 260, 1171, 30, 260, 2644, 2643, 335, 260, 1171, 30, 260]
CASES = {
    "ngram, top_k=5": ("ngram", {"top_k": 5}),
    "ngram, temperature=0.7, top_k=20": ("ngram", {"temperature": 0.7, "top_k": 20}),
    "ngram, top_k=5, top_p=0.9": ("ngram", {"top_k": 5, "top_p": 0.9}),
    "draft model, top_k=5": ("draft", {"top_k": 5}),
    "plain, top_k=5": ("plain", {"top_k": 5}),
}


def run(case: str) -> None:
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    method, options = CASES[case]
    spec = {"ngram": {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 3, "prompt_lookup_min": 1},
            "draft": {"method": "draft_model", "model": DRAFT, "num_speculative_tokens": 4}}.get(method)
    llm = LLM(model=MODEL, dtype="float32", enforce_eager=True, gpu_memory_utilization=0.15, speculative_config=spec)
    try:
        out = llm.generate(TokensPrompt(prompt_token_ids=PROMPT), SamplingParams(max_tokens=3, ignore_eos=True, **options),
                           use_tqdm=False)
        print(f"RESULT {case}: ran, tokens {list(out[0].outputs[0].token_ids)}")
    except Exception as exc:  # noqa: BLE001 - the point is which exception
        print(f"RESULT {case}: {type(exc).__name__}: {str(exc)[:200]}")


if __name__ == "__main__":
    if len(sys.argv) > 3:
        run(sys.argv[3])
    else:
        for case in CASES:
            subprocess.run([sys.executable, __file__, MODEL, DRAFT, case])
