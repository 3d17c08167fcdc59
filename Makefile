# Every target runs inside ./venv, built from the pinned requirements on first use.
PYTHON ?= python3.11
VENV := venv
PY := $(VENV)/bin/python
STACK ?= dev
FORMAT ?= text
FUZZ_SECONDS ?= 300
FUZZ_SCALE ?= 1
E2E ?= e2e

JS_ENGINE := tests/regex_engines/js

.PHONY: setup engines demo plan cost new-stack lint test fuzz e2e e2e-build bench bench-e2e bench-cli verify up preview clean

$(VENV)/.installed: requirements.txt requirements-dev.txt requirements-verify.txt policies/requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

setup: $(VENV)/.installed

# ajv for the ECMA-262 regex tests, exactly as package-lock.json pins it (Node 20 or later and npm).
$(JS_ENGINE)/node_modules/.installed: $(JS_ENGINE)/package.json $(JS_ENGINE)/package-lock.json
	cd $(JS_ENGINE) && npm ci --silent --no-audit --no-fund
	touch $@

engines: $(JS_ENGINE)/node_modules/.installed  ## The JavaScript engine the tests run (tests/regex_engines/js); Go's needs only `go`.

# Every variable a user gives reaches the tools through the environment, read in the recipe as "$$NAME", so no
# value is ever parsed by the shell (a quote or ';' in STACK_FILE is part of the path); make tests only whether
# one is empty. Command-line variables are exported anyway; these exports take the defaults above too.
USER_VARIABLES := STACK FORMAT FUZZ_SECONDS FUZZ_SCALE E2E STACK_FILE POLICY_CONFIG BASELINE BASE OUT SEED NAME PARENT_ID SUBNET_ID AFTER REPOSITORY REPOSITORY_OWNER_ID REPOSITORY_ID NO_BASE GRAPH BURN_IN
export $(USER_VARIABLES)

# Read before the override below makes every given variable's origin "override".
STACK_ORIGIN := $(origin STACK)
OPTIONAL_PATHS := STACK_FILE POLICY_CONFIG BASELINE BASE OUT
$(foreach name,$(OPTIONAL_PATHS),$(eval $(name)_ORIGIN := $(origin $(name))))

# A variable from make's command line or the environment is recursively expanded: make would expand `$(id)` in
# POLICY_CONFIG='$(id)' to nothing (and `$$` to `$`) wherever it is used or exported, silently. Each given one is
# made a simple variable holding its text as typed ($(value ...)), so it reaches the tool verbatim.
$(foreach name,$(USER_VARIABLES),$(if $(filter command line environment,$(origin $(name))),$(eval override $(name) := $$(value $(name)))))

comma := ,
# $(call switch,NAME,option for 1,option for 0,what 1 does,what 0 does,what leaving it out does): NAME=1, NAME=0 or
# left out; any other value stops make (exit 2), rather than NAME=0 or NAME=no meaning what NAME=1 means.
switch = $(if $(filter-out 0 1,$($(1)))$(word 2,$($(1))),$(error $(1)=$($(1)): give 1 to $(4)$(comma) 0 to $(5)$(comma) or leave it out to $(6)),$(if $(filter 1,$($(1))),$(2))$(if $(filter 0,$($(1))),$(3)))

# $(call given,NAME,--option,what NAME takes): `--option="$$NAME"` when NAME is not empty. Given on make's command
# line but empty (`POLICY_CONFIG="$$PC"` with PC unset in a script) it stops make (exit 2), naming it, rather than
# dropping the option: the plan would run with the pack's defaults, compare with the last commit, or write build/plan.
given = $(if $(strip $($(1))),$(2)="$$$(1)",$(if $(filter command line,$($(1)_ORIGIN)),$(error $(1)= is empty: give $(3), or leave $(1) out)))

# STACK_FILE=path/to/Pulumi.<name>.yaml plans or prices a stack file outside the stack list; given with a
# STACK on make's command line as well, both reach the tool, which refuses the pair (exit 2) rather than pick
# one. A STACK from the environment is not a choice made for this run (`make test` exports its default to the
# makes its tests start), so STACK_FILE wins over it. STACK_FILE= given empty stops make (`given`), rather than
# planning dev's stack in its place.
STACK_ARGS = $(call given,STACK_FILE,--stack-file,a stack file such as Pulumi.dev.yaml) $(if $(strip $(STACK_FILE)),$(if $(filter command line,$(STACK_ORIGIN)),--stack="$$STACK"),--stack="$$STACK")

plan: setup  ## Offline plan of STACK (default dev) or STACK_FILE, FORMAT text|markdown|json, POLICY_CONFIG=<json>, BASELINE=<json plan> or BASE=<git revision> (default: the last commit; NO_BASE=1 compares with nothing, NO_BASE=0 with the base), GRAPH=1 (or 0), OUT=<dir>|none: no cloud account, no Pulumi CLI.
	@$(PY) -m tools.plan $(STACK_ARGS) --format="$$FORMAT" $(call given,POLICY_CONFIG,--policy-config,a policy config file) $(call given,BASELINE,--baseline,a JSON plan) $(call given,BASE,--base,a git revision) $(call switch,NO_BASE,--no-base,,compare with nothing,compare with the base,compare with the base) $(call switch,GRAPH,--graph,,add the dependency graph to the text plan,leave it out,leave it out) $(call given,OUT,--out,a folder or none)

cost: setup  ## What STACK's (or STACK_FILE's) nodes cost (FORMAT text|markdown|json); BASE=<git revision> adds what the change costs.
	@$(PY) -m tools.cost $(STACK_ARGS) --format="$$FORMAT" $(call given,BASE,--base,a git revision)

new-stack: setup  ## A new stack on the project's defaults: NAME=<stack> PARENT_ID=project-... SUBNET_ID=vpcsubnet-... write Pulumi.<NAME>.yaml and the identity bootstrap's tools/ci_identity/Pulumi.<NAME>.yaml (its repository REPOSITORY=OWNER/REPO, or the one the bootstrap's stacks name, and GitHub's REPOSITORY_OWNER_ID and REPOSITORY_ID, which a repository created since 2026-07-15 needs), and add it to .github/stacks.json (the workflows' list, in deploy order) before its last stack, or after the stack AFTER=<stack> names.
	$(PY) -m tools.new_stack --name="$$NAME" --parent-id="$$PARENT_ID" --subnet-id="$$SUBNET_ID" --after="$$AFTER" --repository="$$REPOSITORY" --repository-owner-id="$$REPOSITORY_OWNER_ID" --repository-id="$$REPOSITORY_ID"

lint: setup  ## ruff (lint and format) and mypy, as configured in pyproject.toml.
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

test: lint engines  ## Lint, type check, then the whole test suite.
	$(PY) -m pytest -q

fuzz: setup  ## The property tests explored at random until FUZZ_SECONDS (default 300) are spent; a fresh seed per run unless SEED=<n>, failures kept in .hypothesis/fuzz and printed with the command that reproduces them; FUZZ_SCALE=<n> draws n times each test's examples per run.
	$(PY) -m tools.fuzz --seconds="$$FUZZ_SECONDS" --scale="$$FUZZ_SCALE" $(if $(SEED),--seed="$$SEED")

demo: setup  ## Local demo: the real Pulumi CLI puts dev's Kubernetes layer on a local control plane, shows its claims allocated, tears down (builds what e2e/cli starts first, as make e2e does).
	$(PY) -m tools.ci_run --builds-for e2e/cli
	$(PY) e2e/cli/demo.py

e2e: setup  ## Real engines: Kubernetes 1.34, 1.35 and 1.36 control planes, the Kueue controller, and the Pulumi CLI running this program and policy pack with the real charts (built from Go modules and the vendored sources, cached in ~/.cache/nebius-dra-e2e, first, a line per build step as it starts, each build's log under build/e2e/); E2E=e2e/<tier> runs one directory and builds only what it starts; E2E takes paths under e2e/, several separated by blanks, and pytest's -x and -k <word> (E2E='e2e/cli -x').
	$(PY) -m tools.ci_run --e2e="$$E2E"

e2e-build: setup  ## Build every binary `make e2e` starts (one after another, under nice), each stage's time printed: what .ci/run starts beside `make test`.
	$(PY) -m tools.ci_run --builds

bench: setup  ## Benchmark: dev/prod plans against the import floor, generated fleets against their SDK floor, profiles.
	$(PY) -m tools.bench

bench-e2e: setup  ## Benchmark: pods per second the real scheduler (oldest and newest minor the e2e builds) allocates for each built-in claim template, against upstream's scheduler_perf of the same release.
	$(PY) e2e/dra/bench_allocation.py

bench-cli: setup  ## Benchmark: the real Pulumi CLI's preview, up and destroy of dev's Kubernetes layer, with and without 200 user claim templates, against its CLI floor.
	$(PY) e2e/cli/bench_cli.py

# BURN_IN=1 runs the NCCL burn-in this time, BURN_IN=0 skips it; left out, the verifier runs it when the GPU groups
# or their nodes changed since the last passing one (docs/verify.md). Any other value stops make (exit 2).
BURN_IN_ARGS = $(call switch,BURN_IN,--burn-in,--no-burn-in,run the burn-in,skip it,run it when the GPU groups changed)

verify: setup  ## Checks a live cluster after `pulumi up` (needs kubectl access and the nebius CLI); BURN_IN=1 forces the NCCL burn-in, BURN_IN=0 skips it (default: when the GPU groups changed).
	$(PY) -m tools.verify --stack="$$STACK" $(BURN_IN_ARGS)

preview: setup  ## Real `pulumi preview` with the policy pack (needs the Pulumi CLI and Nebius credentials).
	pulumi preview --stack="$$STACK" --policy-pack policies

up: setup  ## Real `pulumi up` (needs the Pulumi CLI and Nebius credentials); the local file backend is the default.
	@pulumi whoami >/dev/null 2>&1 || pulumi login --local
	pulumi up --stack="$$STACK" --policy-pack policies

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache
