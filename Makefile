# t2c — agentic Text2Cypher study. `make help` lists the targets.
.DEFAULT_GOAL := help
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
T2C    := $(VENV)/bin/t2c
STAMP  := $(VENV)/.installed
PARAMS ?= params/thesis.yaml
DATASET ?= kurikulum
STORE  ?= ladybug
RUN_ID ?= $(shell test -f $(PARAMS) && $(PYTHON) -c "import sys,yaml;print(yaml.safe_load(open(sys.argv[1])).get('run_id','run'))" $(PARAMS) 2>/dev/null || echo run)

.PHONY: help setup test all run evaluate analyze figures neo4j neo4j-stop clean

help: ## show this help
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade --quiet pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP) ## create .venv and install the package (idempotent)

test: setup ## run the whole test suite
	$(PY) -m pytest -q

all: setup ## rerun the study: load the graph, write the schema texts
	$(T2C) db load --dataset $(DATASET) --store $(STORE)
	@mkdir -p results/$(RUN_ID)/schema
	@for fmt in full_schema nodes_paths only_paths; do \
	  $(T2C) db schema --dataset $(DATASET) --store $(STORE) --format $$fmt > results/$(RUN_ID)/schema/$(DATASET)_$$fmt.txt; \
	  echo "wrote results/$(RUN_ID)/schema/$(DATASET)_$$fmt.txt"; \
	done

clean: ## remove results, figures and caches (keeps .venv)
	rm -rf results/* figures/* .cache .pytest_cache
	touch results/.gitkeep figures/.gitkeep
