# judgelab: `make demo` installs and runs the embedded-judge demo offline; `make test` installs and runs the tests.
# The environment is uv.lock (every package of every extra, pinned with its hashes), installed exactly by uv;
# uv itself is pinned by hash in requirements-uv.txt. llama-cpp-python is built from source by uv with the
# CMAKE_ARGS in pyproject.toml's [tool.uv.extra-build-variables]; uv keeps the built wheel in its cache.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
UV_DIR := .uv
UV := $(UV_DIR)/bin/uv
EXTRAS := --extra local --extra notebooks --extra test
# fresh resolutions (not the lock), each in its own venv: the newest releases, and pandas 2.2 on the lock
LATEST ?= .venv-latest
PANDAS2 ?= .venv-pandas2
# pingouin 0.7 (in the lock) needs pandas 2.3; 0.6.1 is its last release that accepts 2.2
PANDAS2_PINS := pandas==2.2.3 pingouin==0.6.1
PYTEST := -m pytest -q --durations=25 -n 2 --dist loadfile
# uv syncs $(VENV) (.venv unless overridden) with the Python $(PY) and never downloads a Python of its own
export UV_PROJECT_ENVIRONMENT := $(abspath $(VENV))
export UV_PYTHON := $(PY)
export UV_PYTHON_DOWNLOADS := never
export LITELLM_LOCAL_MODEL_COST_MAP := True
export JUDGELAB_DATA_DIR ?= $(abspath ../shared/data)
export JUDGELAB_CACHE ?= $(abspath $(VENV)/judgelab-cache.sqlite)

.PHONY: install demo test test-fast test-latest test-pandas2 lock lock-upgrade lint system-deps reproduce bench clean

$(UV): requirements-uv.txt
	$(PY) -m venv $(UV_DIR)
	$(UV_DIR)/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements-uv.txt
	touch $@

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

# --locked: install exactly uv.lock, and stop if pyproject.toml changed without `make lock`
$(VENV)/.installed: pyproject.toml uv.lock | $(UV)
	$(UV) sync --locked $(EXTRAS)
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

install: $(VENV)/.installed system-deps

# offline, on the embedded judge: a run, the position probe, a statistic with its interval, a figure, the HTML report
demo: install
	$(BIN)/judgelab demo --out runs/demo

test: install
	$(BIN)/python $(PYTEST)

test-fast: install
	$(BIN)/python -m pytest -q -m "not local_model and not slow"

# after editing dependencies in pyproject.toml: re-resolve, keeping every other pin
lock: $(UV)
	$(UV) lock

# move every pin to the newest release the constraints allow (run `make test-latest` first to see it pass)
lock-upgrade: $(UV)
	$(UV) lock --upgrade

# the whole suite on the newest releases of everything (a fresh resolution, ignoring uv.lock), in $(LATEST);
# not used by CI, which tests the lock
test-latest: system-deps | $(UV)
	rm -rf $(LATEST)
	$(UV) venv --quiet $(LATEST)
	$(UV) pip install --quiet --python $(LATEST)/bin/python -e ".[local,notebooks,test]"
	$(LATEST)/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	$(UV) pip list --python $(LATEST)/bin/python | grep -i -E "^(pandas|numpy|scipy|litellm|pyarrow) "
	JUDGELAB_CACHE=$(abspath $(LATEST))/judgelab-cache.sqlite $(LATEST)/bin/python $(PYTEST)

# the whole suite on pandas 2.2 (the oldest pandas judgelab supports) with everything else from the lock, in
# $(PANDAS2); not used by CI, which tests the lock's pandas 3
$(PANDAS2)/.installed: pyproject.toml uv.lock | $(UV)
	UV_PROJECT_ENVIRONMENT=$(abspath $(PANDAS2)) $(UV) sync --locked $(EXTRAS)
	$(UV) pip install --quiet --python $(PANDAS2)/bin/python $(PANDAS2_PINS)
	$(PANDAS2)/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

test-pandas2: $(PANDAS2)/.installed system-deps
	JUDGELAB_CACHE=$(abspath $(PANDAS2))/judgelab-cache.sqlite $(PANDAS2)/bin/python $(PYTEST)

lint: install
	$(BIN)/ruff check judgelab tests benchmarks

reproduce: install
	$(BIN)/judgelab reproduce --out figures

bench: install
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) $(LATEST) $(PANDAS2) $(UV_DIR) .pytest_cache build *.egg-info
