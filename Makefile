# Two commands on a fresh machine: `make serve` and `make test`.
# Every install comes from the committed lock (requirements/constraints.txt); `make lock` renews it.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
LOCK := requirements/constraints.txt
# What serving needs, and everything (tests, oracles, docs, benchmarks).
SERVE_EXTRAS := service,textgen,llama
ALL_EXTRAS := service,textgen,llama,local,distributed,plot,dev
SERVE_STAMP := $(VENV)/.installed-serve
ALL_STAMP := $(VENV)/.installed-all

.PHONY: browser docs notebooks install install-serve test test-fast test-thorough bench bench-ci serve lint typecheck lock clean clean-numba-cache

$(SERVE_STAMP): pyproject.toml $(LOCK)
	PYTHON=$(PYTHON) bash scripts/install.sh $(VENV) $(SERVE_EXTRAS)
	touch $@

$(ALL_STAMP): pyproject.toml $(LOCK)
	PYTHON=$(PYTHON) bash scripts/install.sh $(VENV) $(ALL_EXTRAS)
	touch $@ $(SERVE_STAMP)

install-serve: $(SERVE_STAMP)
install: $(ALL_STAMP)

# Headless Chromium (Debian's) and axe-core (npm, the accessibility check) for the browser tests.
browser:
	command -v chromium >/dev/null 2>&1 || (apt-get update -q && apt-get install -y -q chromium chromium-driver)
	test -f tests/browser/node_modules/axe-core/axe.min.js || (cd tests/browser && npm ci --no-audit --no-fund)

# Two workers: the suite's wall time on a 2-core machine; `make test-thorough` runs
# the hypothesis properties with many more examples (the nightly-style run).
test: $(ALL_STAMP) browser
	$(PY) -m pytest -n 2

test-thorough: $(ALL_STAMP) browser
	HYPOTHESIS_PROFILE=thorough $(PY) -m pytest -n 2

test-fast: $(ALL_STAMP)
	$(PY) -m pytest -m "not slow" -x -q -n 2

# TQDM_DISABLE: no progress bars from backtesting.py (a peer) in the reports
bench: $(ALL_STAMP)
	$(PY) -m pytest benchmarks --benchmark-only
	TQDM_DISABLE=1 $(PY) benchmarks/vs_peers.py

bench-ci: $(ALL_STAMP)
	$(PY) -m pytest benchmarks --benchmark-only --benchmark-min-rounds=1 --benchmark-max-time=0.05 --benchmark-warmup=off -q
	TQDM_DISABLE=1 $(PY) benchmarks/vs_peers.py --quick

# The documentation site, built offline into site/ (MathJax from the npm registry, served locally).
docs: $(ALL_STAMP)
	bash scripts/docs_assets.sh
	$(PY) -m mkdocs build --strict

notebooks: $(ALL_STAMP)
	$(PY) -m pytest tests/integration/test_notebooks.py -q

serve: $(SERVE_STAMP)
	PY=$(PY) bash scripts/serve.sh

lint: $(ALL_STAMP)
	$(PY) -m ruff check quantcore service textgen tests benchmarks scripts
	PYTHONPATH=. $(VENV)/bin/lint-imports

# The whole tree, then quantcore alone under --strict (its public surface is fully typed).
typecheck: $(ALL_STAMP)
	$(PY) -m mypy
	$(PY) -m mypy --strict quantcore

# Renew the lock: resolve every extra afresh in a scratch environment and write its versions.
# Then run `make test` (the gate) and commit the lock on its own.
lock:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --upgrade pip
	.lock-venv/bin/python -m pip install -e '.[$(ALL_EXTRAS)]'
	bash scripts/write_lock.sh .lock-venv $(LOCK)
	rm -rf .lock-venv
	@echo "$(LOCK) renewed: run 'make test', then commit the lock on its own"

# numba's on-disk cache does not see edits to helpers in other modules: clear it after such edits.
clean-numba-cache:
	find quantcore -name '*.nbi' -delete -o -name '*.nbc' -delete

clean: clean-numba-cache
	rm -rf $(VENV) .lock-venv .pytest_cache .benchmarks .hypothesis .mypy_cache .ruff_cache site
