# sleuth: the two commands a newcomer needs are `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# make run keeps its state (cache, breakers) inside the project. Its knowledge base is
# the user's own (kb.path, as `sleuth search` and `sleuth serve` read it), so the
# README's next `sleuth search` finds what `make run` indexed.
export SLEUTH_STORE__PATH ?= $(CURDIR)/.sleuth/state.sqlite

.PHONY: install run test lint typecheck system-deps check bench record clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e '.[test,lint,bench]'
	touch $(STAMP)

# In a terminal: serve on 127.0.0.1:8080 until Ctrl-C. Without one (CI, the fresh-clone
# check): serve on a free port, answer an English and a Chinese search and a task
# through the API, then stop.
run: install
	$(BIN)/sleuth index docs
	@if [ -t 0 ]; then $(BIN)/sleuth serve --host 127.0.0.1 --port 8080; \
	else $(BIN)/python scripts/serve_once.py; fi

lint: install
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts

typecheck: install
	$(BIN)/mypy

# The Redis tests need redis-server and the dashboard test a real Chromium: installed
# from Debian's packages when missing and running as root; otherwise those tests skip
# and say why.
system-deps:
	@missing=""; \
	command -v redis-server >/dev/null || missing="$$missing redis-server"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "not root: the tests that need$$missing will be skipped"; fi; \
	fi

test: lint typecheck system-deps
	$(BIN)/pytest -q

check: test

bench: install
	$(BIN)/python bench/pipeline.py
	$(BIN)/python bench/projection.py
	$(BIN)/python bench/verification.py
	$(BIN)/python bench/tail_latency.py
	$(BIN)/python bench/kb_tokenizers.py
	$(BIN)/python bench/safety.py
	$(BIN)/python bench/http_service.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/wire_limits.py
	$(BIN)/python bench/workflows.py

# Re-record each web provider's cassette with real keys (BRAVE_API_KEY, GOOGLE_API_KEY
# with SLEUTH_PROVIDERS__GOOGLE__OPTIONS__CX, SERPAPI_API_KEY, TAVILY_API_KEY, EXA_API_KEY;
# DuckDuckGo needs none). A provider without its key is skipped and keeps its cassette.
RECORD_QUERY ?= what's new in python 3.13
record: install
	@for p in brave google serpapi tavily exa duckduckgo; do \
	  new=tests/data/$$p/cassette.jsonl.new; rm -f $$new; \
	  $(BIN)/sleuth search "$(RECORD_QUERY)" --providers $$p --record $$new --json >/dev/null; \
	  if grep -q '"status": 200' $$new 2>/dev/null; then mv $$new tests/data/$$p/cassette.jsonl; \
	    echo "recorded $$p"; else rm -f $$new; echo "skipped $$p (no key or no answer)"; fi; \
	done
	cat tests/data/{brave,google,serpapi,tavily,exa,duckduckgo}/cassette.jsonl > tests/data/web.jsonl

clean:
	rm -rf $(VENV) .sleuth .pytest_cache .mypy_cache .ruff_cache src/*.egg-info
