#!/usr/bin/env bash
# CI: the engine audits that need node and g++ (called by .ci/run after `make test`; the venv exists by then).
# Builds node-llama-cpp and the llama.cpp driver (make engines: npm, git, g++), then runs the quick GGUF engine
# rows (tests/audit/test_gguf_engines.py: llama.cpp's loop under min-p with its control and the pathwise check,
# node-llama-cpp's penalty defect). Without node or g++ it says so and exits 0: the rest of CI does not need them.
# ENGINES_SERVER=1 also builds llama-server (several minutes) and runs the endpoint test against it.
set -euo pipefail
cd "$(dirname "$0")/.."
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
OMP_NUM_THREADS=1 .venv/bin/python -m pytest -q tests/audit/test_gguf_engines.py tests/audit/test_endpoint_engine.py
