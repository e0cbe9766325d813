# Two commands on a fresh machine: `make run` (gateway with embedded defaults) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install run test lint typecheck unit schemas bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/colonnade demo

lint: install
	$(BIN)/ruff check src tests bench examples

typecheck: install
	$(BIN)/mypy src

unit: install
	$(BIN)/pytest

test: lint typecheck unit

schemas: install
	$(BIN)/colonnade contract schema -o src/colonnade/schemas/uac.schema.json
	$(BIN)/python -m colonnade.calls.schema_files src/colonnade/schemas
	$(BIN)/colonnade errors -o docs/errors.md

clean:
	rm -rf $(VENV) .colonnade .pytest_cache .mypy_cache .ruff_cache
