#!/usr/bin/env bash
# Builds the engines specmath audits beside its own (make engines; make engines-server adds llama-server):
#   engines/node/node_modules   node-llama-cpp and its prebuilt llama.cpp libraries for linux-x64 CPUs (npm, ~85 MB)
#   engines/build/llama.cpp     llama.cpp's source at the libraries' release, cloned from the git bundle that
#                               node-llama-cpp ships (headers only are used; nothing of it is committed here)
#   engines/build/specmath-llama-engine   engines/llama_cpp/specmath_llama_engine.cpp, compiled with g++ against
#                               those headers and prebuilt libraries (llama.cpp's own speculative loop, JSON lines)
#   engines/build/llama-server  (with the argument "server") llama.cpp's OpenAI-compatible server from the same
#                               source and libraries, for the endpoint test (several minutes on 2 cores)
# Needs node >= 20 with npm, git, g++ (C++17). Prints what it installed, how big and how long it took.
set -euo pipefail
cd "$(dirname "$0")"
start=$(date +%s)
if [ ! -d node/node_modules/node-llama-cpp ]; then
  # --omit=optional: the CPU package only; the GPU packages of node-llama-cpp weigh 725 MB more
  npm install --prefix node --omit=optional --no-save --no-audit --no-fund --loglevel=error
fi
echo "node-llama-cpp: $(du -sh node/node_modules | cut -f1) in node/node_modules, $(( $(date +%s) - start )) s"
BINS="$PWD/node/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
SRC=build/llama.cpp
mkdir -p build
if [ ! -d "$SRC" ]; then
  # the headers and the server's sources only (a sparse checkout: 20 MB instead of 200)
  git clone --quiet --no-checkout node/node_modules/node-llama-cpp/llama/gitRelease.bundle "$SRC" 2>/dev/null
  git -C "$SRC" sparse-checkout set --no-cone /include /ggml/include /common /vendor /tools/server /tools/mtmd \
      /tools/ui /scripts/ui-assets.cmake
  git -C "$SRC" checkout --quiet 2>/dev/null
fi
LIBS=(-L"$BINS" -l:libllama-common.so -l:libllama.v0.5.0.so -l:libggml.v0.5.0.so -l:libggml-base.so -Wl,-rpath,"$BINS")
INCLUDES=(-I"$SRC/include" -I"$SRC/ggml/include" -I"$SRC/common" -I"$SRC/vendor")
t=$(date +%s)
g++ -std=c++17 -O2 -Wall -DSPECMATH_BACKEND_DIR="\"$BINS\"" "${INCLUDES[@]}" llama_cpp/specmath_llama_engine.cpp \
    -o build/specmath-llama-engine "${LIBS[@]}"
echo "specmath-llama-engine: compiled in $(( $(date +%s) - t )) s"
if [ "${1:-}" = server ]; then
  t=$(date +%s)
  mkdir -p build/server-obj build/ui
  # the server's web UI is left out (no assets: its pages answer 404); the API is all the audit needs
  cmake -DUI_SOURCE_DIR="$PWD/$SRC/tools/ui" -DUI_BINARY_DIR="$PWD/build/ui" -DLLAMA_SOURCE_DIR="$PWD/$SRC" \
        -DHF_ENABLED=OFF -DBUILD_UI=OFF -DLLAMA_UI_GZIP=OFF -P "$SRC/scripts/ui-assets.cmake" >/dev/null
  sources=("$SRC"/tools/server/*.cpp "$SRC"/tools/mtmd/models/*.cpp "$SRC"/vendor/cpp-httplib/httplib.cpp build/ui/ui.cpp
           "$SRC"/vendor/hash/hash.cpp)
  for f in mtmd mtmd-audio mtmd-image mtmd-helper mtmd-helper-gen clip; do sources+=("$SRC/tools/mtmd/$f.cpp"); done
  printf '%s\n' "${sources[@]}" | xargs -P "$(nproc)" -I{} sh -c \
    'o=build/server-obj/$(echo {} | tr / _).o; [ -f "$o" ] || g++ -std=c++17 -O1 -fPIC -w '"${INCLUDES[*]}"' -I'"$SRC"'/tools/mtmd -I'"$SRC"'/tools/server -I'"$SRC"'/vendor/hash -Ibuild/ui -I'"$SRC"' -c {} -o "$o"'
  gcc -O1 -fPIC -w -I"$SRC/vendor/hash" -c "$SRC/vendor/hash/sha256/sha256.c" -o build/server-obj/sha256.o
  g++ build/server-obj/*.o -o build/llama-server "${LIBS[@]}" -lpthread
  echo "llama-server: compiled in $(( $(date +%s) - t )) s"
fi
echo "engines built in $(( $(date +%s) - start )) s"
