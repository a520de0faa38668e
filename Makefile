# switchsim: golden models of four switch-ASIC blocks, co-simulated against
# their Verilog RTL through Verilator.
#
#   make run     co-simulation of the default configuration, waveforms in out/
#   make test    lint + every test (honours PROPTEST_CASES)
#
# Both install what they need (Verilator, ...) with apt-get when it is missing.

CARGO       ?= cargo
CYCLES      ?= 200000
SEED        ?= 1
VCD_CYCLES  ?= 2000
SWITCHSIM   := target/release/switchsim
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PKGS    := verilator

.PHONY: all deps build run test lint test-mmu test-credit clean

all: build

# Install the simulator when it is missing (Debian/Ubuntu).
deps:
	@missing=""; \
	for p in $(APT_PKGS); do command -v $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  command -v apt-get >/dev/null 2>&1 || { echo "error: $$missing missing and no apt-get; install Verilator 5.x by hand" >&2; exit 2; }; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@verilator --version

build: deps
	$(CARGO) build --release --workspace

run: build
	$(SWITCHSIM) run mmu --cycles $(CYCLES) --seed $(SEED) --vcd-cycles $(VCD_CYCLES)

lint: build
	$(SWITCHSIM) lint

test: lint
	$(CARGO) test --release --workspace

test-mmu: build
	$(CARGO) test --release -p testbenches --test mmu

test-credit: build
	$(CARGO) test --release -p testbenches --test credit

clean:
	$(CARGO) clean
	rm -rf out
