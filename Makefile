# switchsim: golden models of switch-ASIC blocks, co-simulated against
# their Verilog RTL through Verilator.
#
#   make run     co-simulation of every block's default configuration, waveforms in out/
#                (BLOCK=mmu|pfc|credit|... for one; `make blocks` lists them)
#   make test    lint + every test (honours PROPTEST_CASES)
#
# The verilated designs are built at first use into a cache
# (target/vsim-cache, or SWITCHSIM_CACHE); `make test` builds every one the
# tests use first, JOBS at a time.
#
# Both install what they need (Verilator, ...) with apt-get when it is missing.

CARGO       ?= cargo
BLOCK       ?= all
CYCLES      ?= 200000
SEED        ?= 1
VCD_CYCLES  ?= 2000
SWITCHSIM   := target/release/switchsim
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PKGS    := verilator iverilog yosys tshark

JOBS        ?= $(shell nproc 2>/dev/null || echo 2)
# `make fuzz`: this many cases per block (a verdict that does not depend on
# the machine's speed); FUZZ_TIME=10m makes it a time-boxed campaign instead.
FUZZ_CASES  ?= 2000
FUZZ_TIME   ?=
# Fuzz seed: derived from the commit, so a CI failure replays with the same seed.
FUZZ_SEED   ?= $(shell git rev-parse --short=8 HEAD 2>/dev/null | xargs -I{} printf '%d' 0x{} 2>/dev/null || echo 1)

.PHONY: all deps build run test lint lint-ci blocks fuzz bench soak synth synth-scale test-scale mutate clean test-stx sweep-stx sweep-stx-short test-recn-net sweep-recn-net sweep-recn-net-small test-bcn sweep-bcn

all: build

# Install the simulator when it is missing (Debian/Ubuntu).
deps:
	@missing=""; \
	for p in $(APT_PKGS); do command -v $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  command -v apt-get >/dev/null 2>&1 || { echo "error: $$missing missing and no apt-get; install Verilator 5.x by hand" >&2; exit 2; }; \
	  if command -v debconf-set-selections >/dev/null 2>&1; then \
	    echo "wireshark-common wireshark-common/install-setuid boolean false" | $(SUDO) debconf-set-selections; \
	  fi; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@verilator --version
	@python3 -c 'import ensurepip' 2>/dev/null || { \
	  echo "installing: python3-venv"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-venv; }

build: deps
	$(CARGO) build --release -p switchsim

run: build
	$(SWITCHSIM) run $(BLOCK) --cycles $(CYCLES) --seed $(SEED) --vcd-cycles $(VCD_CYCLES)

lint: build lint-ci
	$(SWITCHSIM) lint

# The CI workflow against GitHub's workflow schema (check-jsonschema from
# PyPI, in a virtual environment under target/; the schema is built in, so
# the check itself needs no network).
CI_VENV := target/ci-venv
lint-ci: deps
	@[ -x $(CI_VENV)/bin/check-jsonschema ] || { python3 -m venv $(CI_VENV) && \
	  $(CI_VENV)/bin/pip install -q check-jsonschema; }
	$(CI_VENV)/bin/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/ci.yml

# The designs are built while cargo compiles the test binaries: each
# leaves a core idle at times (a single crate's codegen, linking, one
# design's verilation), and neither needs the other.
test: lint
	@$(SWITCHSIM) build all --jobs $(JOBS) & designs=$$!; \
	$(CARGO) test --release --workspace --no-run; tests=$$?; \
	wait $$designs || { echo "error: building the designs failed (above)" >&2; exit 1; }; \
	[ $$tests = 0 ] || exit $$tests
	$(CARGO) test --release --workspace

# Per block, for every block of the registry (testbenches/src/registry.rs):
# `make test-<block>` runs the model's unit tests of that block and its
# testbench (the module <block> of tests/all). `make blocks` lists the names.
blocks: build
	@$(SWITCHSIM) list

test-%: build
	@$(SWITCHSIM) list | awk '{print $$1}' | grep -qx '$*' || \
	  { echo "error: no block \`$*' (make blocks lists them)" >&2; exit 2; }
	$(CARGO) test --release -p model $*::
	$(CARGO) test --release -p testbenches --test all $*::

# Fuzz campaign over every block, FUZZ_CASES cases each (or FUZZ_TIME);
# fails on a mismatch or on a coverage bin never hit.
fuzz: build
	$(SWITCHSIM) fuzz all $(if $(FUZZ_TIME),--time $(FUZZ_TIME),--cases $(FUZZ_CASES)) \
		--seed $(FUZZ_SEED) --require-coverage

# Benchmarks (BENCHMARKS.md): a cold build of every design into an empty
# cache, a rebuild after touching one RTL file, then the speed figures side
# by side.
BENCH_CACHE := target/bench-cache
bench: build
	$(CARGO) build --release -p engine --features profiling --example profile_lockstep
	@rm -rf $(BENCH_CACHE); s=$$(date +%s.%N); \
	  SWITCHSIM_CACHE=$(BENCH_CACHE) $(SWITCHSIM) build all --jobs 2 || exit $$?; e=$$(date +%s.%N); \
	  cp $(BENCH_CACHE)/builds.tsv target/bench-cold.tsv; awk "BEGIN{print $$e - $$s}" > target/bench-cold.wall
	@cp rtl/mmu.v target/bench-mmu.v.orig; echo "// (benchmark: a one-line edit)" >> rtl/mmu.v; \
	  rm -f $(BENCH_CACHE)/builds.tsv; s=$$(date +%s.%N); \
	  SWITCHSIM_CACHE=$(BENCH_CACHE) $(SWITCHSIM) build mmu; rc=$$?; e=$$(date +%s.%N); \
	  cp target/bench-mmu.v.orig rtl/mmu.v; [ $$rc = 0 ] || exit $$rc; \
	  cp $(BENCH_CACHE)/builds.tsv target/bench-incr.tsv; awk "BEGIN{print $$e - $$s}" > target/bench-incr.wall
	SWITCHSIM_CACHE=$(BENCH_CACHE) $(SWITCHSIM) bench --write BENCHMARKS.md

# Soak (not part of `make test`; nightly in CI): every block for 10^8 cycles
# in a fresh process each (streamed stimulus, flat memory); fails on any
# mismatch or a peak RSS over SOAK_MAX_RSS_MIB; wall time and peak RSS
# recorded in BENCHMARKS.md.
SOAK_CYCLES ?= 100000000
SOAK_MAX_RSS_MIB ?= 64
SCALE_DEPTH_TIMEOUT ?= 3600
soak: build
	$(SWITCHSIM) build all --default-only --jobs $(JOBS)
	$(SWITCHSIM) soak --cycles $(SOAK_CYCLES) --max-rss-mib $(SOAK_MAX_RSS_MIB) --write BENCHMARKS.md

# The tests that co-simulate a block at a seed's size (`#[ignore]`d with
# "scale design", named scale_*): their designs take minutes to build.
test-scale: build
	$(CARGO) test --release --workspace -- --ignored scale_

# Yosys synthesis of every block: no latches, no multiple drivers; cell
# counts recorded in docs/synth.md.
synth: build
	$(SWITCHSIM) synth --write docs/synth.md

# The blocks at the sizes the seeds describe (`Block::scale`): cells,
# flip-flops, memory bits and logic depth in docs/synth-scale.md. Hours of
# Yosys: not part of `make test`; a nightly CI job.
synth-scale: build
	$(SWITCHSIM) synth --scale --depth-timeout $(SCALE_DEPTH_TIMEOUT) --write docs/synth-scale.md

# Mutation campaign (long): single-point RTL mutants against each block's
# default test budget; report in docs/mutation.md.
mutate: build
	$(SWITCHSIM) mutate --write docs/mutation.md

# STX switch system (seed 004): analytic model, system properties and Fig. 2
# scenarios (model crate), system with model vs RTL arbiter (testbenches).
# (Declared before the pattern rule's blocks: stx is a study, not a block.)
test-stx: build
	$(CARGO) test --release -p model stx_
	$(CARGO) test --release -p studies stx_system
	$(CARGO) test --release -p switchsim --test stx

# The STX study (docs/stx.md): N = 64, RTT = 64, 8 seeds per point; the
# paper's curves against the analytic model, the STX policies and delivery
# schemes (paired differences), bursts, saturation, hot spots, stalled
# output links with and without flow control. About an hour on 2 cores.
sweep-stx: build
	$(SWITCHSIM) study stx --jobs 2 --out out/stx_sweep.csv

# The runs recorded in docs/stx.md (docs/stx_sweep*.csv): the same study
# thinned to what ran in the time there was on the shared machine (fewer
# loads and variants, 1000 + 3000 slots per run, 8 seeds per point).
sweep-stx-short: build
	$(SWITCHSIM) study stx --plan short --warmup 1000 --slots 3000 --jobs 1 --out out/stx_sweep.csv

# RECN network study (seed 002 section 5): network properties (studies
# crate), RECN network on the model vs the RTL ports and the hot-spot
# claim over 8 traffic draws (switchsim crate).
test-recn-net: build
	$(CARGO) test --release -p studies recn_net
	$(CARGO) test --release -p switchsim --test recn_net
	$(CARGO) test --release -p engine study::recn

# Figs. 2-5 and the hot spot at the paper's size (128 end points), 8
# traffic draws per point, into docs/ (docs/recn_net.md): the loads the
# conclusions use, the hot spot at 0.8, no variants, 2000 + 5000 slots;
# 120 runs, about 30 min of one idle core. Without the options, the
# command's full plan (every load and variant, 3000 + 8000 slots) takes
# several hours.
sweep-recn-net: build
	nice -n 10 $(SWITCHSIM) study recn --loads 0.5,0.8,0.9,1.0 --hot-loads 0.8 \
		--variants none --warmup 2000 --slots 5000 --jobs 1 --out docs/recn_net

# The same study on the 16-end-point network of 4-port switches (the RTL
# variant's size), 8 draws per point: about 40 minutes on one shared core.
sweep-recn-net-small: build
	nice -n 10 $(SWITCHSIM) study recn --small --jobs 1 --out docs/recn_net_small

# BCN closed loop (seed 003): the loop and its figures (studies crate),
# the two-point loop on the models vs the RTL (switchsim), the blocks.
test-bcn: build
	$(CARGO) test --release -p studies bcn_
	$(CARGO) test --release -p engine --lib study::bcn
	$(CARGO) test --release -p testbenches --test all -- bcn_cp:: bcn_rp::

# The BCN study (docs/bcn.md): every experiment, 8 seeds per setting,
# 10^7 cycles per run (the length docs/bcn_sweep.csv holds; --max-cycles
# above it lets an unsettled run double); resumes from docs/bcn_sweep.csv,
# so only the runs it lacks are run. About 1.5 hours of one core.
sweep-bcn: build
	nice -n 10 $(SWITCHSIM) study bcn --sweep --seeds 8 --cycles 10000000 \
		--max-cycles 10000000 --jobs 1 --resume --out docs/bcn_sweep

clean:
	$(CARGO) clean
	rm -rf out
