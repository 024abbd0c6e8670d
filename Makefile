# `make playground` and `make test` work on a fresh Debian machine with Python 3.11 and make:
# they create .venv themselves (installing python3-venv first when the machine lacks it).

PYTHON ?= python3
# Installs the Debian packages named after it: prints the list first, installs only those (no recommends,
# no upgrade of what is already there); without root it prints the command to run and stops.
NEED_DEBIAN := sh bin/need-debian-packages
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# The Ray tests start a real one-node head from a venv of its own: Ray is no dependency of the bot, which
# speaks to a cluster over its REST API only. Cached like .venv; a new version gets a new stamp.
RAY_VERSION := 2.60.0
RAY_VENV := .venv-ray
RAY_STAMP := $(RAY_VENV)/.installed-$(RAY_VERSION)

.PHONY: test lint playground check bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "csb-bot needs Python 3.11 or newer")'
	@$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || $(NEED_DEBIAN) python3-venv
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

$(RAY_STAMP):
	@$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || $(NEED_DEBIAN) python3-venv
	@test -x $(RAY_VENV)/bin/python || $(PYTHON) -m venv $(RAY_VENV)
	$(RAY_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(RAY_VENV)/bin/python -m pip install --quiet 'ray[default]==$(RAY_VERSION)'
	@rm -f $(RAY_VENV)/.installed-*
	@touch $(RAY_STAMP)

# The browser test drives Debian's chromium (never a downloaded browser) and the page's Block Kit renderer
# is tested under node; the store, engine and end-to-end suites run on SQLite and on a throwaway
# PostgreSQL cluster (Debian's server binaries live under /usr/lib/postgresql/<version>/bin, off PATH).
# Install what is missing before the clock starts, so no test is skipped. CSB_TEST_RAY names the Ray
# venv's bin folder for tests/ray_cluster.py.
test: $(STAMP) $(RAY_STAMP) lint
	@missing=""; \
	test -x /usr/bin/chromium || missing="$$missing chromium"; \
	command -v node >/dev/null || missing="$$missing nodejs"; \
	command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	test -z "$$missing" || $(NEED_DEBIAN) $$missing
	CSB_TEST_RAY=$(abspath $(RAY_VENV))/bin $(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# `make playground PORT=3100 HOST=0.0.0.0` serves elsewhere than the default 127.0.0.1:3000.
playground: $(STAMP)
	$(BIN)/csb-bot playground $(if $(HOST),--host $(HOST)) $(if $(PORT),--port $(PORT))

check: $(STAMP)
	$(BIN)/csb-bot check

bench: $(STAMP)
	$(BIN)/python bench/ack_latency.py

clean:
	rm -rf $(VENV) $(RAY_VENV) .csb-bot .artifacts .pytest_cache .ruff_cache
