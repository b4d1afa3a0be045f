"""A toy engine speaking the JSON-lines protocol (``specmath.audit.engines.protocol``), for the tests.

Its model: logits z(x | context) = W[last token] + 0.3 * (x == the token before last), a 32-token vocabulary (the tiny pair's size),
W drawn once from a fixed seed. It samples under temperature, top-k, min-p, a logit bias and the presence
penalty (llama.cpp's order, penalties over prompt and generated tokens), with speculation by prompt lookup
verified by sample-match, so its output equals its plain output seed by seed. ``--lossy`` skips min-p and the
logit bias at drafted rows (the vLLM #42744 shape); ``--crash`` answers garbage to ``generate``; ``--model PATH``
(a registry entry's ``{target}``) is named in its ``info`` reply. As vLLM's engine does (engines/vllm):
``--refuse`` rejects every ``generate`` (``{"error", "refused": true}``), ``--die`` (or ``--dead``) dies on it
(``{"error", "engine_dead": true}``);
``--controls`` declares ``controls`` and samples a request with a ``control`` as ``--lossy`` does;
``--per-request K`` declares ``calls_per_request`` K, ``--prompt-block B`` ``prompt_block`` B (B as JSON) and
``--lookup`` ``drafter: lookup``; ``--drafted D``
reports D drafted tokens per request with counters before and after; ``batch`` runs several requests.
"""

from __future__ import annotations

import base64
import json
import sys

import numpy as np

V = 32
W = np.random.default_rng(7).normal(0, 1.5, (V, V))


def logits(context: list[int]) -> np.ndarray:
    z = W[context[-1]].copy()
    if len(context) >= 2:
        z[context[-2]] += 0.3
    return z


def law(z: np.ndarray, options: dict, history: list[int], drafted: bool, lossy: bool) -> np.ndarray:
    z = z.astype(np.float64).copy()
    skip = lossy and drafted
    if not skip:
        for token, bias in options.get("logit_bias", []):
            z[token] += bias
    for token in set(history):
        z[token] -= options.get("presence_penalty", 0.0)
    if options.get("top_k"):
        z[z < np.sort(z)[-options["top_k"]]] = -np.inf
    p = np.exp(z - z.max())
    p /= p.sum()
    if options.get("min_p") and not skip:
        z[p < options["min_p"] * p.max()] = -np.inf
    z = z / options.get("temperature", 1.0)
    p = np.exp(z - z.max())
    return p / p.sum()


def generate_one(prompt: list[int], seed: int, m: int, options: dict, speculative: bool, lossy: bool) -> list[int]:
    rng = np.random.default_rng(seed)
    out: list[int] = []
    while len(out) < m:
        context = prompt + out
        draft = []
        if speculative:  # prompt lookup: what followed the last earlier occurrence of the last token
            for i in range(len(context) - 2, -1, -1):
                if context[i] == context[-1]:
                    draft = context[i + 1:i + 4]
                    break
        for row in range(len(draft) + 1):  # row 0 from the batch's first logits, row r > 0 because draft[r - 1] hit
            current = prompt + out
            p = law(logits(current), options, current, row > 0, lossy)
            x = int(rng.choice(V, p=p))
            out.append(x)
            if row == len(draft) or draft[row] != x or len(out) >= m:
                break
    return out[:m]


def main() -> None:
    lossy, crash = "--lossy" in sys.argv, "--crash" in sys.argv
    refuse, dead = "--refuse" in sys.argv, "--dead" in sys.argv
    drafted = int(sys.argv[sys.argv.index("--drafted") + 1]) if "--drafted" in sys.argv else None
    total = 0  # the engine's own counter of drafted tokens
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "info":
            model = sys.argv[sys.argv.index("--model") + 1] if "--model" in sys.argv else None
            reply = {"engine": "toy" if model is None else f"toy on {model}", "vocab_size": V, "order": ["logit_bias", "penalties", "top_k", "min_p", "temperature"],
                     "history": "prompt+generated", "options": ["temperature", "top_k", "min_p", "logit_bias",
                                                                "presence_penalty"],
                     "logits": True, "plain": True, "same_tokens_as_plain": True, "batch": True}
            if "--per-request" in sys.argv:
                reply["calls_per_request"] = int(sys.argv[sys.argv.index("--per-request") + 1])
            if "--lookup" in sys.argv:
                reply["drafter"] = "lookup"
            if "--controls" in sys.argv:
                reply["controls"] = True
            if "--prompt-block" in sys.argv:  # the value as JSON, so that a test can send a bad one
                reply["prompt_block"] = json.loads(sys.argv[sys.argv.index("--prompt-block") + 1])
        elif request["op"] == "logits":
            reply = {"logits_b64": [base64.b64encode(logits(c).astype("<f4").tobytes()).decode()
                                    for c in request["contexts"]]}
        elif crash:
            reply = {"tokens": [[V + 5]]}
        elif refuse:
            reply = {"error": "min_p is not supported with speculative decoding", "refused": True}
        elif dead or "--die" in sys.argv:
            reply = {"error": "RuntimeError: max(): Expected reduction dim", "engine_dead": True}
        else:
            requests = request["requests"] if request["op"] == "batch" else [request]
            replies = [{"tokens": [generate_one(r["prompt"], r["seed"] + i, r["max_new_tokens"], r["options"],
                                                r.get("speculative", True), lossy or bool(r.get("control")))
                                   for i in range(r["n"])]}
                       for r in requests]
            reply = {"replies": replies} if request["op"] == "batch" else replies[0]
            if drafted is not None:
                reply.update(drafted=drafted, accepted=0, counters={"before": total, "after": total + drafted})
                total += drafted
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
