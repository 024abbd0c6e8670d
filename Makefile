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

# Real Harbor, pinned, in a venv of its own: it needs Python 3.12 or newer, the bot runs on 3.11. The
# end-to-end tests on real Harbor find it through CSB_TEST_HARBOR_VENV; without such a Python they do not run.
HARBOR_VERSION := 0.25.0
HARBOR_VENV := .venv-harbor
HARBOR_STAMP := $(HARBOR_VENV)/.installed-$(HARBOR_VERSION)
HARBOR_PYTHON ?= $(shell sh bin/find-python-3.12)

# The suite runs on this many worker processes (pytest-xdist). Most tests wait on child processes, a
# database or a socket rather than on a core, so a 2-core machine keeps four busy (README: "Tests and
# benchmarks"); the tests that share the Ray head all go to one worker (tests/conftest.py).
TEST_WORKERS ?= 4

.PHONY: test lint playground check bench clean harbor venvs harbor-if-possible

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
# PostgreSQL cluster (Debian's server binaries live under /usr/lib/postgresql/<version>/bin, off PATH);
# the shipped systemd unit is checked by `systemd-analyze verify` (Debian's systemd; nothing is started).
# Install what is missing before the clock starts, so no test is skipped. CSB_TEST_RAY names the Ray
# venv's bin folder for tests/ray_cluster.py.
test: venvs
	@$(MAKE) --no-print-directory lint
	@missing=""; \
	test -x /usr/bin/chromium || missing="$$missing chromium"; \
	command -v node >/dev/null || missing="$$missing nodejs"; \
	command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	command -v systemd-analyze >/dev/null || missing="$$missing systemd"; \
	test -z "$$missing" || $(NEED_DEBIAN) $$missing
	@# The tests start a few hundred bot processes. Where PYTHONDONTWRITEBYTECODE is set (some machine
	@# images set it) Python never caches the bot's bytecode, so each would compile the bot again (0.4 s of
	@# CPU a start); compileall writes it once, whatever that variable says.
	$(BIN)/python -m compileall -q bot >/dev/null
	@# pytest rewrites the asserts of every test module and of Hypothesis (a plugin) in each worker, and
	@# keeps the result only where it may write bytecode: with the variable set, every worker and every
	@# run paid again (collection: 8.4 s of CPU a process, 3.8 s with the rewrite kept).
	PYTHONDONTWRITEBYTECODE= CSB_TEST_RAY=$(abspath $(RAY_VENV))/bin CSB_TEST_HARBOR_VENV=$(abspath $(HARBOR_VENV)) $(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup

# The bot's, Ray's and Harbor's venvs are built side by side: each is mostly downloads and unpacking, and
# on a fresh clone one after the other took half a minute longer. python3-venv is checked first, so two
# builds never run apt at once.
venvs:
	@$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || $(NEED_DEBIAN) python3-venv
	@$(MAKE) --no-print-directory -j3 $(STAMP) $(RAY_STAMP) harbor-if-possible

harbor-if-possible:
	@if [ -n "$(HARBOR_PYTHON)" ]; then $(MAKE) --no-print-directory harbor; \
	else echo "real-Harbor tests will not run: no Python 3.12 or newer (python3.12/python3.13 on PATH, or pyenv)"; fi

# Harbor $(HARBOR_VERSION) in $(HARBOR_VENV), rebuilt only when the pin changes.
harbor: $(HARBOR_STAMP)

$(HARBOR_STAMP):
	@test -n "$(HARBOR_PYTHON)" || { echo "Harbor needs Python 3.12 or newer: install python3.12 (or pyenv's 3.12)"; exit 1; }
	rm -rf $(HARBOR_VENV)
	$(HARBOR_PYTHON) -m venv $(HARBOR_VENV)
	$(HARBOR_VENV)/bin/python -m pip install --quiet 'harbor==$(HARBOR_VERSION)'
	@touch $@

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# `make playground PORT=3100 HOST=0.0.0.0` serves elsewhere than the default 127.0.0.1:3000;
# `make playground SOCKET=1` has the bot take Slack's requests over Socket Mode.
# `make playground REAL_HARBOR=1` runs the lanes on the pinned Harbor instead of the bench's stand-in, each
# trial in a throwaway root on this host (the bench's host-root environment: it needs root, and it is no
# security boundary; it only ever runs the bench's scripted agent).
REAL_HARBOR_ENV := CSB_HARBOR=$(abspath $(HARBOR_VENV))/bin/harbor HARBOR_ENV=harness.host_root:HostRootEnvironment \
	LITELLM_LOCAL_MODEL_COST_MAP=True
playground: $(STAMP) $(if $(REAL_HARBOR),$(HARBOR_STAMP))
	$(if $(REAL_HARBOR),$(REAL_HARBOR_ENV)) $(BIN)/csb-bot playground$(if $(HOST), --host $(HOST))$(if $(PORT), --port $(PORT))$(if $(SOCKET), --socket-mode)

check: $(STAMP)
	$(BIN)/csb-bot check

bench: $(STAMP)
	$(BIN)/python bench/ack_latency.py

clean:
	rm -rf $(VENV) $(RAY_VENV) $(HARBOR_VENV) .csb-bot .artifacts .pytest_cache .ruff_cache .mypy_cache
