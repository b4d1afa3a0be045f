"""vLLM 0.32.0 CPU: expand_batch_to_tokens returns uninitialised memory for float32 and int32 inputs.

    .venv-vllm/bin/python engines/vllm/repro/expand_uninitialised.py      (no model; a few seconds)

The rejection sampler expands each request's temperature (float32), top_k (int32) and top_p (float32) to its
drafted rows with ``expand_batch_to_tokens`` (vllm/v1/sample/rejection_sampler.py), whose output is
``x.new_empty(num_tokens)``. On the CPU platform the Triton kernel is replaced by ``_expand_kernel_impl``
(vllm/utils/cpu_triton_utils.py), which hands the C++ kernel ``_ensure_int64(output)``: for a float32 or int32
output that is a *new* int64 tensor, written and thrown away; the caller's output stays as torch.empty left it.
(The input is cast to int64 too: a temperature of 0.7 would become 0.) Expected: [a, a, b, b, b, c].
"""

import torch
from vllm.platforms import current_platform

if __name__ == "__main__":
    current_platform.import_kernels()
    current_platform.register_triton_kernel_overrides()  # what the CPU worker does at start-up
    from vllm.v1.sample.rejection_sampler import expand_batch_to_tokens

    cu_num_draft_tokens = torch.tensor([2, 5, 6], dtype=torch.int32)  # 2, 3 and 1 drafted rows
    for name, x in (("temperature float32", torch.tensor([0.7, 1.0, 1.3])),
                    ("top_k int32", torch.tensor([5, 20, 49152], dtype=torch.int32)),
                    ("top_p float32", torch.tensor([0.9, 1.0, 0.5])),
                    ("int64 (works)", torch.tensor([5, 20, 49152], dtype=torch.int64))):
        out = expand_batch_to_tokens(x, cu_num_draft_tokens, 6, replace_from=0, replace_to=1)
        expected = x.repeat_interleave(torch.tensor([2, 3, 1]))
        print(f"{name:20s} expected {expected.tolist()}\n{'':20s} got      {out.tolist()}"
              f"  {'OK' if torch.equal(out, expected) else 'WRONG'}")
