# switchsim: golden models of four switch-ASIC blocks, co-simulated against
# their Verilog RTL through Verilator.
#
#   make run     co-simulation of every block's default configuration, waveforms in out/
#                (BLOCK=mmu|pfc|credit|arbiter for one)
#   make test    lint + every test (honours PROPTEST_CASES)
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

FUZZ_TIME   ?= 6m
# Fuzz seed: derived from the commit, so a CI failure replays with the same seed.
FUZZ_SEED   ?= $(shell git rev-parse --short=8 HEAD 2>/dev/null | xargs -I{} printf '%d' 0x{} 2>/dev/null || echo 1)

.PHONY: all deps build run test lint blocks fuzz bench soak synth mutate clean test-stx sweep-stx sweep-stx-short test-recn-net sweep-recn-net

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

build: deps
	$(CARGO) build --release --workspace

run: build
	$(SWITCHSIM) run $(BLOCK) --cycles $(CYCLES) --seed $(SEED) --vcd-cycles $(VCD_CYCLES)

lint: build
	$(SWITCHSIM) lint

test: lint
	$(CARGO) test --release --workspace

# Per block, for every block of the registry (testbenches/src/registry.rs):
# `make test-<block>` runs the model's unit tests of that block and its
# testbench (tests/<block>.rs). `make blocks` lists the names.
blocks: build
	@$(SWITCHSIM) list

test-%: build
	@$(SWITCHSIM) list | awk '{print $$1}' | grep -qx '$*' || \
	  { echo "error: no block \`$*' (make blocks lists them)" >&2; exit 2; }
	$(CARGO) test --release -p model $*::
	$(CARGO) test --release -p testbenches --test $*

# Time-boxed fuzz campaign over every block; fails on a mismatch or on a
# coverage bin never hit.
fuzz: build
	$(SWITCHSIM) fuzz all --time $(FUZZ_TIME) --seed $(FUZZ_SEED) --require-coverage

# Benchmarks (BENCHMARKS.md): cold build of every verilated variant, rebuild
# after touching one RTL file, then the speed figures side by side.
bench: deps
	@s=$$(date +%s.%N); VSIM_FORCE_REBUILD=1 $(CARGO) build --release -p cosim; e=$$(date +%s.%N); \
	  cp target/vsim-build.tsv target/bench-cold.tsv; awk "BEGIN{print $$e - $$s}" > target/bench-cold.wall
	@cp rtl/mmu.v target/bench-mmu.v.orig; echo "// (benchmark: a one-line edit)" >> rtl/mmu.v; \
	  s=$$(date +%s.%N); $(CARGO) build --release -p cosim; rc=$$?; e=$$(date +%s.%N); \
	  cp target/bench-mmu.v.orig rtl/mmu.v; [ $$rc = 0 ] || exit $$rc; \
	  cp target/vsim-build.tsv target/bench-incr.tsv; awk "BEGIN{print $$e - $$s}" > target/bench-incr.wall
	$(CARGO) build --release -p cosim
	$(SWITCHSIM) bench --write BENCHMARKS.md

# Soak (not part of `make test`): every block for 10^8 cycles in a fresh
# process each (streamed stimulus, flat memory); fails on any mismatch;
# wall time and peak RSS recorded in BENCHMARKS.md.
SOAK_CYCLES ?= 100000000
soak: build
	$(SWITCHSIM) soak --cycles $(SOAK_CYCLES) --write BENCHMARKS.md

# Yosys synthesis of every block: no latches, no multiple drivers; cell
# counts recorded in docs/synth.md.
synth: build
	$(SWITCHSIM) synth --write docs/synth.md

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
# crate), RECN network on the model vs the RTL ports (testbenches).
test-recn-net: build
	$(CARGO) test --release -p studies recn_net
	$(CARGO) test --release -p switchsim --test recn_net

# Figs. 2-5 and the hot spot, 128 end points, into docs/ (docs/recn_net.md).
sweep-recn-net: build
	$(SWITCHSIM) study recn --out docs/recn_net

clean:
	$(CARGO) clean
	rm -rf out
