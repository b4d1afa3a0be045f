#!/usr/bin/env bash
# CI: the engine audits that need node and g++ (called by .ci/run beside `make test`, after `make venv`).
# Builds node-llama-cpp and the llama.cpp driver (make engines: engines/build.sh runs `npm install --omit=optional`
# of node-llama-cpp and @node-llama-cpp/linux-x64 from engines/node/package.json, then git and g++), then runs the
# GGUF engine tests that make test skipped before the build: one quick engine row (llama.cpp's speculative loop
# under min-p, N = 200, with its control and the pathwise check over 10 seeds) and node-llama-cpp's penalty defect
# (about a minute in all on 2 quiet cores). Without node >= 20, npm, g++ or git it says so and exits 0: the rest of CI does
# not need them. ENGINES_SERVER=1 also builds llama-server (about 8 minutes on 2 cores) and runs the endpoint test.
#
#   scripts/ci_engines.sh [build|test|all]     (default all: the build, then the tests)
#
# .ci/run calls `all` beside make test, which skips these tests (SPECMATH_DEFER_ENGINES=1) and so never meets a
# half-built engine.
set -euo pipefail
cd "$(dirname "$0")/.."
phase="${1:-all}"
case "$phase" in
  build|test|all) ;;
  *) echo "ci_engines: the phase must be build, test or all, not '$phase'" >&2; exit 2 ;;
esac
for tool in node npm g++ git; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "ci_engines: $tool is not installed; the GGUF engine rows are skipped (node >= 20 with npm, g++, git)"
    exit 0
  fi
done
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
  echo "ci_engines: node $(node --version) is older than 20 (node-llama-cpp 3.22 needs 20); the GGUF engine rows are skipped"
  exit 0
fi
if [ "${ENGINES_SERVER:-0}" = 1 ]; then
  make engines-server
else
  make engines
fi
if [ "$phase" = build ]; then
  exit 0
fi
tests=(tests/audit/engines/test_gguf_engines.py)
if [ "${ENGINES_SERVER:-0}" = 1 ]; then
  tests+=(tests/audit/engines/test_endpoint_engine.py)
fi
# the engines are built now: SPECMATH_REQUIRE_ENGINES=1 makes a test that still skips fail (tests/conftest.py),
# so this step shows the engine tests ran
SPECMATH_REQUIRE_ENGINES=1 HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 .venv/bin/python -m pytest -q -rs "${tests[@]}"
