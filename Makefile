# `make playground` and `make test` work on a fresh Debian machine with Python 3.11 and make:
# they create .venv themselves (installing python3-venv first when the machine lacks it).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: test lint playground check bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "csb-bot needs Python 3.11 or newer")'
	@$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || { \
		echo "installing python3-venv"; apt-get update -qq && apt-get install -y -qq python3-venv; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# The browser test drives Debian's chromium (never a downloaded browser) and the page's Block Kit renderer
# is tested under node; install both before the clock starts, so neither test is skipped.
test: $(STAMP) lint
	@test -x /usr/bin/chromium && command -v node >/dev/null || { \
		echo "installing chromium and nodejs for the playground tests"; \
		apt-get update && apt-get install -y chromium nodejs; }
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

playground: $(STAMP)
	$(BIN)/csb-bot playground

check: $(STAMP)
	$(BIN)/csb-bot check

bench: $(STAMP)
	$(BIN)/python bench/ack_latency.py

clean:
	rm -rf $(VENV) .csb-bot .artifacts .pytest_cache .ruff_cache
