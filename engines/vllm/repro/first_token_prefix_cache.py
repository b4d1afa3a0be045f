"""vLLM 0.32.0 CPU, speculative decoding: a request's first token is wrong where its prompt's KV blocks are cached.

    .venv-vllm/bin/python engines/vllm/repro/first_token_prefix_cache.py [--fix expand]      (SmolLM2; about 2 min)

One request of n = 128 samples, T = 1, one new token, ngram speculation (gamma 1), KV blocks of 32 tokens, prefix
caching on (vLLM's default), at two prompts cut from "1, 2, 3, 1, 2, 3, ...": 33 tokens (one full block, which the
request's children share through the prefix cache) and its last 15 (no full block, nothing shared). The law of
the first token is transformers' float32 forward of the same folder; the script prints the most frequent first
tokens against their expected counts. Then the same without speculation, and with prefix caching off.

Expected: the first token is the prefill's draw from the target's law, 98% token 216 (" 3") at both prompts,
in every configuration. Observed (2-core Intel Xeon, 2026-12-07): with speculation and caching, at 33 tokens,
token 0 in 125 of 128 samples (at 15 tokens: 119 of 128 are 216); without speculation, or with caching off,
or with ``--fix expand`` (the engine's torch ``expand_batch_to_tokens``, claim vllm-cpu-expand-uninitialised),
the first token follows the law at both prompts.
"""

import collections
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MODEL = ROOT / "engines" / "build" / "vllm-models" / "smollm2-135m-f32"
PROMPT = [216, 35, 28, 216, 33, 28, 216, 34, 28] * 3 + [216, 35, 28, 216, 33, 28]  # " 3, 1, 2, 3, 1, ..., 1,"


def first_tokens(speculative: bool, caching: bool, fixes: list[str]) -> dict[int, dict[int, int]]:
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    sys.path.insert(0, str(ROOT / "engines" / "vllm"))
    from specmath_vllm_engine import Hooks

    Hooks(fixes)
    spec = {"method": "ngram", "num_speculative_tokens": 1, "prompt_lookup_max": 3, "prompt_lookup_min": 1}
    llm = LLM(model=str(MODEL), dtype="float32", enforce_eager=True, gpu_memory_utilization=0.15, max_num_seqs=256,
              max_model_len=1024, enable_chunked_prefill=False, block_size=32, enable_prefix_caching=caching,
              skip_tokenizer_init=True, speculative_config=spec if speculative else None)
    out = {}
    for prompt in (PROMPT, PROMPT[-15:]):
        reply = llm.generate([TokensPrompt(prompt_token_ids=prompt)],
                             SamplingParams(n=128, temperature=1.0, max_tokens=1, seed=3, ignore_eos=True),
                             use_tqdm=False)
        out[len(prompt)] = collections.Counter(o.token_ids[0] for o in reply[0].outputs)
    return out


def worker(config: str) -> None:
    speculative, caching, fixes = config.split(":")
    counts = first_tokens(speculative == "spec", caching == "cache", [f for f in fixes.split(",") if f])
    print("RESULT", {length: dict(c.most_common(4)) for length, c in counts.items()}, flush=True)


def law() -> dict[int, list[tuple[int, float]]]:
    """The expected counts of the 4 likeliest first tokens out of 128, at each prompt (transformers, float32)."""
    import subprocess

    code = ("import torch, json, sys; from transformers import AutoModelForCausalLM; "
            f"m = AutoModelForCausalLM.from_pretrained({str(MODEL)!r}, dtype=torch.float32); P = {PROMPT!r}; "
            "out = {}\nfor p in (P, P[-15:]):\n"
            "    w = torch.softmax(m(torch.tensor([p])).logits[0, -1].double(), -1); v, i = w.topk(4)\n"
            "    out[len(p)] = [(int(a), round(128 * float(b), 1)) for a, b in zip(i, v)]\n"
            "print(json.dumps(out))")
    python = ROOT / ".venv" / "bin" / "python"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout


if __name__ == "__main__":
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"  # the fix reaches the engine core only in-process
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
        sys.exit(0)
    import subprocess

    fixes = sys.argv[sys.argv.index("--fix") + 1] if "--fix" in sys.argv else ""
    print("law (expected counts of 128, by prompt length):", law().strip())
    # vLLM 0.32 builds one LLM per process: each configuration in a process of its own
    for config in (f"spec:cache:{fixes}", f"plain:cache:{fixes}", f"spec:nocache:{fixes}"):
        run = subprocess.run([sys.executable, __file__, "--worker", config], capture_output=True, text=True)
        result = [line for line in run.stdout.splitlines() if line.startswith("RESULT")]
        print(f"{config:22s}", result[0][7:] if result else f"failed: {run.stderr[-500:]}")
