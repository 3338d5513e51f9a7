# sleuth: the two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# make run keeps its index inside the project, not in the user's data folder.
export SLEUTH_KB__PATH ?= $(CURDIR)/.sleuth/kb.sqlite

.PHONY: install run test lint typecheck check bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e '.[test,lint]'
	touch $(STAMP)

run: install
	$(BIN)/sleuth index docs
	$(BIN)/sleuth search "How does sleuth remove duplicate results?"
	$(BIN)/sleuth search "本地知识库怎么支持中文检索？"

lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: install
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest -q

check: test

bench: install
	$(BIN)/python bench/pipeline.py
	$(BIN)/python bench/kb_tokenizers.py

clean:
	rm -rf $(VENV) .sleuth .pytest_cache .mypy_cache .ruff_cache src/*.egg-info
