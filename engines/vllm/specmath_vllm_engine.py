"""vLLM's speculative decoding as an engine under specmath's audit (``specmath audit-generate --engine-cmd``).

Notation: p = target law, q = draft law, gamma = draft tokens per round, V = vocabulary size.

    .venv-vllm/bin/python engines/vllm/specmath_vllm_engine.py --model DIR --method ngram|draft [--draft DIR]
        [--gamma 4] [--max-num-seqs 256] [--dtype float32] [--draft-sample-method greedy|probabilistic]
        [--fix expand,empty-top-k]

One JSON object per line on stdin, one reply per line on stdout (protocol: specmath/audit/engine_protocol.py).
vLLM's offline ``LLM`` runs with its engine core *in this process* (VLLM_ENABLE_V1_MULTIPROCESSING=0), so that
the lossy controls below can reach its rejection sampler; its logs go to stderr (stdout carries replies only).

* ``info``: vLLM's version, V, the order of its sampling stages and the history each penalty counts, read from
  vLLM's own source (``vllm/v1/sample/sampler.py``: logit bias (a non-argmax-invariant logits processor), then
  penalties (``ops/penalties.py``: repetition over prompt + output, presence and frequency over the output),
  then temperature, then min-p (an argmax-invariant processor), then top-k and top-p, in that order). At a
  drafted row the rejection sampler (``rejection_sampler.py``) applies the penalties position by position
  (the output plus the drafts before it), then temperature, top-k and top-p (``apply_sampling_constraints``);
  it skips logit bias and min-p, which is why vLLM refuses both with speculation.
* ``generate``: ONE vLLM request with ``SamplingParams(n=N, seed=S, ignore_eos=True)``. vLLM turns it into N
  child requests, child i seeded with S + i (``vllm/v1/engine/parallel_sampling.py``), so sample i is the
  request n=1, seed=S+i: the protocol's "call i from seed + i". ``drafted`` and ``accepted`` are the
  differences of vLLM's own counters ``vllm:spec_decode_num_draft_tokens`` and
  ``vllm:spec_decode_num_accepted_tokens`` (``LLM.get_metrics()``) over the request; ``counters`` gives both
  snapshots, ``drafts`` the number of verify steps that carried a draft.
* ``batch``: ``{"op": "batch", "requests": [generate requests without "op"]}`` -> ``{"replies": [...]}``: all
  of them in one ``LLM.generate`` call, so they share verify batches (the pathwise check: one request alone and
  in a batch; one batch mixing options). The counters are those of the whole batch.
* ``"speculative": false``: a second ``LLM`` without ``speculative_config``, started on first use.
* ``"control"``: vLLM made lossy on purpose at drafted rows, for a negative control of this very engine:
  ``drafted`` overrides (temperature 0: argmax; top_k 0 or top_p 1: the truncation skipped; a penalty set to
  its neutral value: that penalty skipped), ``stale_history`` (penalties counted from the history at the
  batch's start), and ``residual: "p"`` (the recovered token drawn from p instead of norm(max(0, p - q))).
  min-p and logit-bias controls cannot run: vLLM refuses those options under speculation.
* A refused request (``VLLMValidationError``, ``ValueError``) is ``{"error", "refused": true}``; any other
  exception inside the engine core is ``{"error", "engine_dead": true}``. Each LLM runs in a worker process
  of this script (vLLM 0.32 builds one LLM per process, and none after its engine core raised); a dead
  worker is started afresh on the next request.
* ``--fix``: in-process patches of two defects of vLLM 0.32's CPU path (claims vllm-cpu-expand-uninitialised and
  vllm-cpu-top-k-empty-batch, docs/explanation/engine-findings.md), so the rest of its speculative decoding can be
  audited; the engine's name says so. Never on by default.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
import traceback

SPEC_COUNTERS = ("vllm:spec_decode_num_drafts", "vllm:spec_decode_num_draft_tokens",
                 "vllm:spec_decode_num_accepted_tokens")
#: vLLM's sampling chain (vllm/v1/sample/sampler.py, Sampler docstring and forward)
ORDER = ["logit_bias", "penalties", "temperature", "min_p", "top_k", "top_p"]
#: which tokens each penalty counts (vllm/model_executor/layers/utils.py apply_penalties)
HISTORY = {"repetition": "prompt+generated", "presence": "generated", "frequency": "generated"}
#: what vLLM's SamplingParams takes of the protocol's options (it has no penalty window)
OPTIONS = ["temperature", "top_k", "top_p", "min_p", "logit_bias", "repetition_penalty", "presence_penalty",
           "frequency_penalty"]
FIXES = ("expand", "empty-top-k")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="vLLM as a JSON-lines engine for specmath's audit")
    parser.add_argument("--model", required=True, help="folder of the target (safetensors + tokenizer)")
    parser.add_argument("--method", choices=("ngram", "draft"), default="ngram")
    parser.add_argument("--draft", help="folder of the draft model (--method draft)")
    parser.add_argument("--gamma", type=int, default=4, help="num_speculative_tokens")
    parser.add_argument("--prompt-lookup-max", type=int, default=3)
    parser.add_argument("--prompt-lookup-min", type=int, default=1)
    parser.add_argument("--draft-sample-method", choices=("greedy", "probabilistic"), default="greedy",
                        help="vLLM's draft_sample_method: greedy drafts argmax q (q one-hot in the test)")
    parser.add_argument("--max-num-seqs", type=int, default=256)
    parser.add_argument("--calls-per-request", type=int, default=4000,
                        help="the n the engine asks for in one request (info's calls_per_request)")
    parser.add_argument("--max-num-batched-tokens", type=int, default=32768,
                        help="tokens per step: many children's prefills in one step (chunked prefill is off)")
    parser.add_argument("--block-size", type=int, default=32,
                        help="KV block size (the CPU backend's default is 128): a prompt's full blocks are computed "
                             "once and shared by the request's n children (prefix caching)")
    parser.add_argument("--max-model-len", type=int, default=1024)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--memory", type=float, default=0.15,
                        help="gpu_memory_utilization: on the CPU backend, the share of RAM kept for the KV cache")
    parser.add_argument("--engine-seed", type=int, default=0, help="LLM(seed=...): the engine's global generator")
    parser.add_argument("--fix", default="", help=f"comma-separated in-process patches: {', '.join(FIXES)}")
    parser.add_argument("--worker", choices=("speculative", "plain"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.fix = [f for f in args.fix.split(",") if f]
    for f in args.fix:
        if f not in FIXES:
            parser.error(f"--fix takes {', '.join(FIXES)}, got {f!r}")
    if args.method == "draft" and not args.draft:
        parser.error("--method draft needs --draft DIR")
    return args


class Refused(Exception):
    """vLLM refused the request before running it (a validation error): REFUSED, never a loss."""


# ---------------------------------------------------------------------------------------------------------
# Lossy controls and fixes: in-process wrappers around vLLM's rejection sampler. Each wrapper reads the
# current control and calls vLLM's own function unchanged when there is none.
# ---------------------------------------------------------------------------------------------------------
class Hooks:
    def __init__(self, fixes: list[str]):
        import torch
        import vllm.v1.sample.rejection_sampler as rs

        self.torch, self.rs, self.control = torch, rs, None
        self.recovered_generator = torch.Generator().manual_seed(0x5EED)
        original_constraints = rs.apply_sampling_constraints
        original_penalties = rs.RejectionSampler.apply_penalties
        original_combine = rs.RejectionSampler._combine_outputs_with_spec_tokens
        original_recovered = rs.sample_recovered_tokens

        def apply_sampling_constraints(logits, cu_num_draft_tokens, sampling_metadata):
            # an empty target batch (a verify step where no request carries a draft) has nothing to constrain
            if "empty-top-k" in fixes and logits.shape[0] == 0:
                return logits
            drafted = (self.control or {}).get("drafted", {})
            changes = {}
            if drafted.get("top_k") == 0:
                changes["top_k"] = None
            if drafted.get("top_p") is not None and drafted["top_p"] >= 1:
                changes["top_p"] = None
            if drafted.get("temperature") and sampling_metadata.temperature is not None:
                changes["temperature"] = torch.full_like(sampling_metadata.temperature, drafted["temperature"])
            if changes:
                sampling_metadata = dataclasses.replace(sampling_metadata, **changes)
            out = original_constraints(logits, cu_num_draft_tokens, sampling_metadata)
            if drafted.get("temperature") == 0:  # argmax at drafted rows: every other token's logit -inf
                keep = out.argmax(dim=-1, keepdim=True)
                out = torch.full_like(out, -float("inf")).scatter_(1, keep, 0.0)
            return out

        def apply_penalties(logits, sampling_metadata, metadata, repeat_indices, output_token_ids):
            drafted = (self.control or {}).get("drafted", {})
            neutral = {"repetition_penalty": ("repetition_penalties", 1.0),
                       "presence_penalty": ("presence_penalties", 0.0),
                       "frequency_penalty": ("frequency_penalties", 0.0)}
            changes = {field: torch.full_like(getattr(sampling_metadata, field), value)
                       for name, (field, value) in neutral.items()
                       if name in drafted and drafted[name] == value and getattr(sampling_metadata, field) is not None}
            if changes:
                sampling_metadata = dataclasses.replace(sampling_metadata, **changes)
            return original_penalties(logits, sampling_metadata, metadata, repeat_indices, output_token_ids)

        def combine_outputs_with_spec_tokens(output_token_ids, spec_token_ids=None):
            if not (self.control or {}).get("stale_history") or spec_token_ids is None:
                return original_combine(output_token_ids, spec_token_ids)
            # every drafted row of a request sees the history of the batch's start, not the drafts before it
            return [out for out, spec in zip(output_token_ids, spec_token_ids, strict=True) for _ in spec]

        def sample_recovered_tokens(max_spec_len, num_draft_tokens, cu_num_draft_tokens, draft_token_ids,
                                    draft_probs, target_probs, sampling_metadata, device, *rest, **kw):
            if (self.control or {}).get("residual") != "p":
                return original_recovered(max_spec_len, num_draft_tokens, cu_num_draft_tokens, draft_token_ids,
                                          draft_probs, target_probs, sampling_metadata, device, *rest, **kw)
            # the lossy variant: after a rejection, draw from p itself instead of norm(max(0, p - q))
            if target_probs.shape[0] == 0:
                return torch.empty_like(draft_token_ids)
            drawn = torch.multinomial(target_probs.nan_to_num(0.0) + 1e-30, 1, generator=self.recovered_generator)
            return drawn.view(-1).to(draft_token_ids.dtype)

        rs.apply_sampling_constraints = apply_sampling_constraints
        rs.RejectionSampler.apply_penalties = staticmethod(apply_penalties)
        rs.RejectionSampler._combine_outputs_with_spec_tokens = staticmethod(combine_outputs_with_spec_tokens)
        rs.sample_recovered_tokens = sample_recovered_tokens
        if "expand" in fixes:
            rs.expand_batch_to_tokens = expand_batch_to_tokens

    def set(self, control: dict | None) -> None:
        known = {"drafted", "stale_history", "history", "ignored", "residual"}
        if control:
            unknown = sorted(set(control) - known)
            if unknown:
                raise Refused(f"unknown control fields {unknown}; this engine takes {sorted(known)}")
            drafted = control.get("drafted", {})
            cannot = sorted(k for k in drafted if k in ("min_p", "logit_bias", "penalty_window"))
            if cannot:
                raise Refused(f"no control for {cannot}: vLLM refuses min_p and logit_bias with speculative "
                              "decoding and has no penalty window")
        self.control = control or None


def expand_batch_to_tokens(x, cu_num_tokens, num_tokens, replace_from=0, replace_to=0):
    """[batch] -> [num_tokens]: x[i] repeated for each of request i's drafted rows, replace_from -> replace_to.

    The same contract as vLLM's ``expand_batch_to_tokens``, in torch, keeping x's dtype (the CPU kernel's
    wrapper writes into an int64 copy and leaves its float32 / int32 output uninitialised).
    """
    import torch

    counts = torch.diff(cu_num_tokens.long(), prepend=cu_num_tokens.new_zeros(1).long())
    x = x.masked_fill(x == replace_from, replace_to)
    return x.repeat_interleave(counts, output_size=num_tokens)


# ---------------------------------------------------------------------------------------------------------
class Worker:
    """One vLLM ``LLM`` (speculative or plain) with its engine core in this process.

    vLLM 0.32 cannot build a second ``LLM`` in a process (the second fails in its kernel registry with
    "'_lib_fn_wrapper' object has no attribute 'get'"), nor rebuild one after its engine core raised; so each
    LLM lives in a worker process of its own, and a worker whose engine core raised exits after its reply.
    """

    def __init__(self, args: argparse.Namespace, speculative: bool):
        import vllm

        self.args, self.vllm, self.speculative = args, vllm, speculative
        self.hooks = Hooks(args.fix)
        a = args
        kwargs = dict(model=a.model, dtype=a.dtype, enforce_eager=True, gpu_memory_utilization=a.memory,
                      max_num_seqs=a.max_num_seqs, max_model_len=a.max_model_len, seed=a.engine_seed,
                      disable_log_stats=False, block_size=a.block_size, skip_tokenizer_init=True,
                      # a prefill split over steps discards its sample and rewinds the request's generator with
                      # set_offset, which a CPU generator does not have (claim vllm-cpu-generator-offset): never split one
                      enable_chunked_prefill=False)
        if a.max_num_batched_tokens:
            kwargs["max_num_batched_tokens"] = a.max_num_batched_tokens
        if speculative:
            kwargs["speculative_config"] = speculative_config(a)
        self.llm = vllm.LLM(**kwargs)
        self.vocab_size = int(self.llm.llm_engine.model_config.get_vocab_size())

    def info(self) -> dict:
        return {"engine": engine_name(self.args, self.vllm.__version__), "vocab_size": self.vocab_size,
                "order": ORDER, "history": HISTORY, "window": None, "ignored": [], "options": OPTIONS,
                "logits": False, "plain": True, "controls": True, "batch": True, "same_tokens_as_plain": False,
                "calls_per_request": self.args.calls_per_request,
                # prefix caching shares a prompt's full KV blocks among a request's n children, no partial one
                "prompt_block": self.args.block_size,
                "refused_with_speculation": ["min_p", "logit_bias"],
                # prompt lookup reaches x2 only where the text so far offers a match
                "drafter": "lookup" if self.args.method == "ngram" else "draft model",
                # none where the prompt is computed in full; where the prefix cache holds all its tokens but the last,
                # vLLM drafts at the first token too (claim vllm-no-draft-before-first-token)
                "drafts_before_first_token": True,
                "seed_mapping": "one vLLM request SamplingParams(n=N, seed=S); child i has seed S + i "
                                "(vllm/v1/engine/parallel_sampling.py): sample i == the request n=1, seed=S+i",
                "speculative_config": speculative_config(self.args)}

    def counters(self) -> dict:
        out = dict.fromkeys(SPEC_COUNTERS, 0)
        for metric in self.llm.get_metrics():
            if metric.name in out:
                out[metric.name] += int(metric.value)
        return out

    def sampling_params(self, request: dict):
        options = dict(request.get("options") or {})
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise Refused(f"vLLM has no option {unknown} (it takes {OPTIONS})")
        kwargs = {"n": int(request.get("n", 1)), "max_tokens": int(request.get("max_new_tokens", 2)),
                  "ignore_eos": True, "detokenize": False, "temperature": float(options.get("temperature", 1.0))}
        seed = request.get("seed")
        kwargs["seed"] = None if seed is None else int(seed)
        if options.get("top_k") is not None:
            kwargs["top_k"] = int(options["top_k"])
        for name in ("top_p", "min_p", "repetition_penalty", "presence_penalty", "frequency_penalty"):
            if options.get(name) is not None:
                kwargs[name] = float(options[name])
        if options.get("logit_bias"):
            kwargs["logit_bias"] = {int(t): float(b) for t, b in options["logit_bias"]}
        try:
            return self.vllm.SamplingParams(**kwargs)
        except (ValueError, TypeError) as exc:
            raise Refused(str(exc)) from exc

    def run(self, requests: list[dict]) -> dict:
        """All ``requests`` in one LLM.generate call, with the spec-decode counters around it."""
        from vllm.exceptions import VLLMValidationError
        from vllm.inputs import TokensPrompt

        control = requests[0].get("control")
        if control and not self.speculative:
            raise Refused("a control acts at drafted rows: it needs \"speculative\": true")
        prompts = [TokensPrompt(prompt_token_ids=[int(t) for t in r["prompt"]]) for r in requests]
        params = [self.sampling_params(r) for r in requests]
        self.hooks.set(control)
        before = self.counters()
        start = time.perf_counter()
        try:
            outputs = self.llm.generate(prompts, params, use_tqdm=False)
        except (VLLMValidationError, ValueError) as exc:  # checked when the request is added, before it runs
            raise Refused(f"{type(exc).__name__}: {exc}") from exc
        finally:
            self.hooks.set(None)
        seconds = time.perf_counter() - start
        after = self.counters()
        # children come back in index order (child i has seed S + i); sorted by index to be sure
        replies = [{"tokens": [list(c.token_ids) for c in sorted(o.outputs, key=lambda c: c.index)]}
                   for o in outputs]
        delta = {k: after[k] - before[k] for k in SPEC_COUNTERS}
        return {"replies": replies, "drafted": delta["vllm:spec_decode_num_draft_tokens"],
                "accepted": delta["vllm:spec_decode_num_accepted_tokens"],
                "drafts": delta["vllm:spec_decode_num_drafts"], "counters": {"before": before, "after": after},
                "seconds": round(seconds, 3), "speculative": self.speculative}


def speculative_config(a: argparse.Namespace) -> dict:
    if a.method == "ngram":
        return {"method": "ngram", "num_speculative_tokens": a.gamma, "prompt_lookup_max": a.prompt_lookup_max,
                "prompt_lookup_min": a.prompt_lookup_min}
    return {"method": "draft_model", "model": a.draft, "num_speculative_tokens": a.gamma,
            "draft_sample_method": a.draft_sample_method}


def engine_name(a: argparse.Namespace, version: str) -> str:
    method = (f"ngram (prompt lookup {a.prompt_lookup_min}-{a.prompt_lookup_max})" if a.method == "ngram" else
              f"draft_model {os.path.basename(a.draft.rstrip('/'))} ({a.draft_sample_method} drafts)")
    fixes = f", patched in-process: {', '.join(a.fix)}" if a.fix else ""
    return f"vLLM {version} CPU, {method}, gamma {a.gamma}, {a.dtype}{fixes}"


def worker_main(args: argparse.Namespace, speculative: bool) -> int:
    """A worker's loop: one request per line, one reply per line; it exits after its engine core raised."""
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # vLLM's logs and any C++ print go to stderr; the real stdout carries replies only
    sys.stdout = sys.stderr
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    worker = Worker(args, speculative)
    replies.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        try:
            reply = worker.info() if request.get("op") == "info" else worker.run(request["requests"])
        except Refused as exc:
            reply = {"error": str(exc), "refused": True}
        except Exception as exc:  # noqa: BLE001 - the engine core raised: its state is gone with it
            traceback.print_exc()
            replies.write(json.dumps({"error": f"{type(exc).__name__}: {exc}", "engine_dead": True}) + "\n")
            return 1
        replies.write(json.dumps(reply) + "\n")
    return 0


class Supervisor:
    """The protocol's side: routes each request to the speculative or the plain worker, restarts dead ones."""

    def __init__(self, argv: list[str]):
        self.argv = argv
        self.workers: dict[bool, subprocess.Popen] = {}

    def worker(self, speculative: bool) -> subprocess.Popen:
        process = self.workers.get(speculative)
        if process is None or process.poll() is not None:
            command = [sys.executable, os.path.abspath(__file__), *self.argv,
                       "--worker", "speculative" if speculative else "plain"]
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
            ready = process.stdout.readline()
            if not ready:
                raise RuntimeError(f"the {'speculative' if speculative else 'plain'} vLLM worker did not start "
                                   f"(status {process.wait()}); its log is on stderr")
            self.workers[speculative] = process
        return process

    def ask(self, speculative: bool, message: dict) -> dict:
        process = self.worker(speculative)
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        line = process.stdout.readline()
        reply = json.loads(line) if line else {"error": "the vLLM worker exited; its log is on stderr",
                                               "engine_dead": True}
        if reply.get("engine_dead"):  # the worker ends with its engine core; the next request starts a new one
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            self.workers.pop(speculative, None)
        return reply

    def handle(self, request: dict) -> dict:
        op = request.get("op")
        if op == "info":
            return self.ask(True, {"op": "info"})
        if op == "generate":
            reply = self.batch([request])
            if "replies" in reply:
                reply = {**reply.pop("replies")[0], **reply}
            return reply
        if op == "batch":
            requests = request.get("requests")
            if not isinstance(requests, list) or not requests:
                return {"error": "a batch needs a non-empty list 'requests'", "refused": True}
            return self.batch(requests)
        return {"error": f"unknown op {op!r}: use info, generate or batch (this engine gives no logits)",
                "refused": True}

    def batch(self, requests: list[dict]) -> dict:
        speculative = {r.get("speculative", True) is not False for r in requests}
        controls = {json.dumps(r.get("control"), sort_keys=True) for r in requests}
        if len(speculative) != 1 or len(controls) != 1:
            return {"error": "a batch runs on one engine with one control: give its requests one 'speculative' "
                             "and one 'control'", "refused": True}
        return self.ask(speculative.pop(), {"op": "run", "requests": requests})

    def close(self) -> None:
        for process in self.workers.values():
            if process.poll() is None:
                process.stdin.close()
                try:
                    process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.worker:
        return worker_main(args, args.worker == "speculative")
    supervisor = Supervisor(argv)
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                reply = supervisor.handle(json.loads(line))
            except Exception as exc:  # noqa: BLE001 - a reply for every request, never a traceback on stdout
                reply = {"error": f"{type(exc).__name__}: {exc}", "engine_dead": True}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
    finally:
        supervisor.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
