"""vLLM 0.32.0 CPU, speculative decoding: a seeded request does not give the same tokens twice, alone or batched.

    .venv-vllm/bin/python engines/vllm/repro/seeds_not_reproduced.py [TARGET_DIR DRAFT_DIR]    (about 2 minutes on 2 cores)

specmath's seeds row sends SamplingParams(n=200, seed=0) alone and in a batch beside two other requests and
finds 105-183 of 200 samples differ with speculation, 0 without. The batch is not what moves them: the same
request sent alone twice differs as much. Mechanism (claim vllm-cpu-expand-uninitialised): at every drafted row
the rejection sampler divides the target logits by the output of ``expand_batch_to_tokens``, an
``x.new_empty(num_tokens)`` that the CPU kernel wrapper never writes, so a requested temperature of 1 reads
as whatever the allocator left there (printed below: values such as 3e-25, 0 and 1e34). That memory differs from
step to step and run to run; every random draw still comes from the request's own generator. With
``expand_batch_to_tokens`` written in torch (the dtype kept) 0 of 200 differ, alone or batched beside unseeded
requests, for ngram (here) and for a greedy draft model (the same run with draft_sample_method "greedy").
A second, separate cause, on every platform:
``draft_sample_method="probabilistic"`` samples the draft model's tokens with the global generator
(llm_base_proposer.py ``compute_probs_and_sample_next_token``, "TODO(woosuk): Consider seeds."), so a seeded
request differs run to run even with the expand fixed; the law stays exact there (the draft is drawn from q).
"""

import os
import subprocess
import sys

# the engine core in this process, so that the patch of case "expand kept" reaches the rejection sampler
os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"

TARGET = sys.argv[1] if len(sys.argv) > 2 else "engines/build/vllm-models/bundled-target-hd32"
DRAFT = sys.argv[2] if len(sys.argv) > 2 else "engines/build/vllm-models/bundled-draft"
CASES = {  # name: (the speculative method, draft_sample_method, expand_batch_to_tokens written in torch)
    "ngram, as shipped": ("ngram", None, False),
    "ngram, expand kept": ("ngram", None, True),
    "draft model, probabilistic drafts, expand kept": ("draft_model", "probabilistic", True),
}


def run(case: str) -> None:
    import torch
    import vllm.v1.sample.rejection_sampler as rs
    from transformers import AutoTokenizer
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    method, drafts, kept = CASES[case]
    original, seen = rs.expand_batch_to_tokens, []

    def expand(x, cu_num_tokens, num_tokens, replace_from=0, replace_to=0):
        if kept:  # x[i] repeated for each drafted row of request i, in x's own dtype
            counts = torch.diff(cu_num_tokens.long(), prepend=cu_num_tokens.new_zeros(1).long())
            out = x.masked_fill(x == replace_from, replace_to).repeat_interleave(counts, output_size=num_tokens)
        else:
            out = original(x, cu_num_tokens, num_tokens, replace_from, replace_to)
        if x.is_floating_point() and replace_to == 1 and out.numel() and len(seen) < 4:  # the temperature
            seen.append(f"{out[0].item():.3g}")
        return out

    rs.expand_batch_to_tokens = expand
    spec = {"method": method, "num_speculative_tokens": 4}
    spec.update({"prompt_lookup_max": 3, "prompt_lookup_min": 1} if method == "ngram"
                else {"model": DRAFT, "draft_sample_method": drafts})
    llm = LLM(model=TARGET, dtype="float32", enforce_eager=True, gpu_memory_utilization=0.15, max_model_len=1024,
              enable_chunked_prefill=False, block_size=32, speculative_config=spec)
    # "the cat sat on the mat. the cat sat on the mat. the": prompt lookup drafts there
    prompt = AutoTokenizer.from_pretrained(TARGET)("the cat sat on the mat. the cat sat on the mat. the",
                                                   add_special_tokens=False)["input_ids"]

    def generate(requests):
        outs = llm.generate([TokensPrompt(prompt_token_ids=p) for p, _ in requests], [s for _, s in requests],
                            use_tqdm=False)
        return [[list(c.token_ids) for c in o.outputs] for o in outs]

    mine = (prompt, SamplingParams(n=200, seed=0, temperature=1.0, max_tokens=4, ignore_eos=True))
    # the neighbours of specmath's seeds row, here unseeded: they draw from the global generator only
    left = (prompt[: len(prompt) // 2], SamplingParams(n=7, temperature=0.8, top_p=0.9, max_tokens=4, ignore_eos=True))
    right = (prompt, SamplingParams(n=5, temperature=1.2, presence_penalty=1.0, max_tokens=4, ignore_eos=True))
    alone, again = generate([mine])[0], generate([mine])[0]
    batched = generate([left, mine, right])[1]

    def differ(a, b):
        return sum(x != y for x, y in zip(a, b, strict=True))

    print(f"RESULT {case}: seed 0, n = 200, 4 tokens: alone vs alone again {differ(alone, again)} differ, "
          f"alone vs batched {differ(alone, batched)} differ, "
          f"{sum(x[0] != y[0] for x, y in zip(alone, batched, strict=True))} of them in the first token (not drafted at this prompt); "
          f"temperature 1 at the first drafted rows read as {seen}", flush=True)


if __name__ == "__main__":
    import vllm

    if len(sys.argv) > 3:
        run(sys.argv[3])
    else:
        print("vLLM", vllm.__version__)
        for case in CASES:  # one LLM per process: vLLM 0.32 does not build a second one in the same process
            subprocess.run([sys.executable, __file__, TARGET, DRAFT, case], stderr=subprocess.DEVNULL)
