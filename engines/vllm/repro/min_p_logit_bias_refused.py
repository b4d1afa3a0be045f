"""vLLM 0.32.0: min_p and logit_bias are refused with speculative decoding, accepted without it.

    .venv-vllm/bin/python engines/vllm/repro/min_p_logit_bias_refused.py [MODEL_DIR]   (about 1 minute)

SamplingParams._validate_spec_decode (vllm/sampling_params.py) raises VLLMValidationError when a
speculative_config is set and min_p > 1e-5 or logit_bias is non-empty. The reason is in the rejection sampler:
at drafted rows it applies only the MinTokens processor of the non-argmax-invariant ones (so no logit bias) and
none of the argmax-invariant ones (so no min-p) (vllm/v1/sample/rejection_sampler.py apply_logits_processors),
so a drafted row would sample without them. Refused: a REFUSED row, never a pass. Plain decoding runs both.
"""

import subprocess
import sys

MODEL = sys.argv[1] if len(sys.argv) > 1 else "engines/build/vllm-models/smollm2-135m-f32"
PROMPT = [1195, 2644, 2643, 335, 260, 1171, 30, 260, 2644, 2643, 335, 260, 1171, 30, 260]


def run(speculative: bool) -> None:
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    spec = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 3, "prompt_lookup_min": 1}
    llm = LLM(model=MODEL, dtype="float32", enforce_eager=True, gpu_memory_utilization=0.15,
              speculative_config=spec if speculative else None)
    for options in ({"min_p": 0.1}, {"logit_bias": {2644: -100.0}}, {"seed": 3, "min_p": 0.1}):
        try:
            out = llm.generate(TokensPrompt(prompt_token_ids=PROMPT), SamplingParams(max_tokens=3, **options),
                               use_tqdm=False)
            print(f"RESULT speculative={speculative} {options}: ran, tokens {list(out[0].outputs[0].token_ids)}")
        except Exception as exc:  # noqa: BLE001
            print(f"RESULT speculative={speculative} {options}: {type(exc).__name__}: {exc}")


if __name__ == "__main__":
    if len(sys.argv) > 2:
        run(sys.argv[2] == "speculative")
    else:
        for mode in ("speculative", "plain"):
            subprocess.run([sys.executable, __file__, MODEL, mode])
