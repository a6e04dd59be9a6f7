# Two commands on a fresh machine: `make serve` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: browser docs notebooks install test test-fast bench bench-ci serve lint typecheck clean clean-numba-cache

# (Re)install whenever pyproject.toml changes.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[service,textgen,llama,local,distributed,plot,dev]'
	touch $(STAMP)

install: $(STAMP)

# Headless Chromium (Debian's) for tests/service/test_swagger_browser.py.
browser:
	command -v chromium >/dev/null 2>&1 || (apt-get update -q && apt-get install -y -q chromium chromium-driver)

test: $(STAMP) browser
	$(PY) -m pytest

test-fast: $(STAMP)
	$(PY) -m pytest -m "not slow" -x -q

# TQDM_DISABLE: no progress bars from backtesting.py (a peer) in the reports
bench: $(STAMP)
	$(PY) -m pytest benchmarks --benchmark-only
	TQDM_DISABLE=1 $(PY) benchmarks/vs_peers.py

bench-ci: $(STAMP)
	$(PY) -m pytest benchmarks --benchmark-only --benchmark-min-rounds=1 --benchmark-max-time=0.05 --benchmark-warmup=off -q
	TQDM_DISABLE=1 $(PY) benchmarks/vs_peers.py --quick

docs: $(STAMP)
	$(PY) -m mkdocs build --strict

notebooks: $(STAMP)
	$(PY) -m pytest tests/integration/test_notebooks.py -q

serve: $(STAMP)
	PY=$(PY) bash scripts/serve.sh

lint: $(STAMP)
	$(PY) -m ruff check quantcore service textgen tests benchmarks

typecheck: $(STAMP)
	$(PY) -m mypy

# numba's on-disk cache does not see edits to helpers in other modules: clear it after such edits.
clean-numba-cache:
	find quantcore -name '*.nbi' -delete -o -name '*.nbc' -delete

clean: clean-numba-cache
	rm -rf $(VENV) .pytest_cache .benchmarks .hypothesis .mypy_cache .ruff_cache
