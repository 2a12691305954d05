# Drop-in checks (issue 7): the LD_LIBRARY_PATH swap under a Slurm-linked binary, dlopen,
# C++ through pkg-config, the man page, and the conformance kit (PMI-1 and PMI-2).
#
#   make check-dropin        all of it (part of `make check`)
#   make conformance LAUNCHER="srun --mpi=pmi2 -n 4" [API=2]    the kit under any launcher
#   make conformance REF_PMI=PREFIX ...   the kit on another client (PREFIX/lib/libpmi.so.0)
#   make check-conformance   the kit under Hydra (PMI_FD and -pmi-port, both APIs),
#                            deviations as known

DROPIN_BIN   := $(BUILD)/dropin
DROPIN_PREFIX := $(BUILD)/prefix-dropin
CONF_BIN     := $(BUILD)/conformance
LAUNCHER     ?= $(MPIEXEC) -launcher fork -n 4
API          ?= 1
# The deviations Hydra 4.0.2 is known to have and the tests it cannot run, per API
# (expected-hydra-4.0.2-pmi2.txt for PMI-2); check-conformance fails if they change.
CONF_EXPECTED := conformance/expected-hydra-4.0.2
CONF_PROGS   := $(CONF_BIN)/conform $(CONF_BIN)/probe $(CONF_BIN)/conform2 $(CONF_BIN)/probe2
SLURM_LIBDIR := /usr/lib/x86_64-linux-gnu

.PHONY: check-dropin test-dropin conformance check-conformance

check-dropin: test-dropin check-conformance
	@echo "check-dropin: all passed"

# --- the drop-in programs ----------------------------------------------------------------
# Compiled against Slurm's header and linked with Slurm's library (no rpath), as a legacy
# code is: the swap must happen at run time.
$(DROPIN_BIN)/swap: dropin-tests/swap.c c-tests/check.h
	mkdir -p $(DROPIN_BIN)
	$(CC) $(CFLAGS_T) -I/usr/include/slurm -o $@ $< -L$(SLURM_LIBDIR) -lpmi -ldl

# The same, with this library's folder as its DT_RPATH, which the loader searches before
# LD_LIBRARY_PATH, and as its DT_RUNPATH, which it searches after: under Flux, whose job
# shell puts its own libpmi.so.0 first on LD_LIBRARY_PATH, the first loads this library
# and the second Flux's (dropin-tests/run.sh).
$(DROPIN_BIN)/swap-rpath: dropin-tests/swap.c c-tests/check.h
	mkdir -p $(DROPIN_BIN)
	$(CC) $(CFLAGS_T) -I/usr/include/slurm -o $@ $< -L$(SLURM_LIBDIR) -lpmi -ldl \
	  -Wl,--disable-new-dtags,-rpath,$(CURDIR)/$(LIB)

$(DROPIN_BIN)/swap-runpath: dropin-tests/swap.c c-tests/check.h
	mkdir -p $(DROPIN_BIN)
	$(CC) $(CFLAGS_T) -I/usr/include/slurm -o $@ $< -L$(SLURM_LIBDIR) -lpmi -ldl \
	  -Wl,--enable-new-dtags,-rpath,$(CURDIR)/$(LIB)

# Linked with no libpmi at all: it dlopens one.
$(DROPIN_BIN)/dlopen: dropin-tests/dlopen.c c-tests/check.h
	mkdir -p $(DROPIN_BIN)
	$(CC) $(CFLAGS_T) -o $@ $< -ldl

# C++ against the installed library, through pkg-config only. Installs every time: the
# layout under test is what `make install` makes now.
$(DROPIN_BIN)/app-cxx: dropin-tests/app.cpp c-tests/check.h lib
	mkdir -p $(DROPIN_BIN)
	rm -rf $(DROPIN_PREFIX)
	$(MAKE) --no-print-directory install PREFIX=$(CURDIR)/$(DROPIN_PREFIX) >/dev/null
	$(CXX) -std=c++17 $(CWARN) -pedantic -o $@ $< \
	  $$(PKG_CONFIG_PATH=$(CURDIR)/$(DROPIN_PREFIX)/lib/pkgconfig pkg-config --cflags --libs pmi)

DROPIN_PROGS := $(addprefix $(DROPIN_BIN)/,swap swap-rpath swap-runpath dlopen app-cxx)

test-dropin: deps-hydra lib $(DROPIN_PROGS)
	MPIEXEC="$(MPIEXEC)" dropin-tests/run.sh $(DROPIN_BIN) $(LIB) $(DROPIN_PREFIX)

# --- the conformance kit -------------------------------------------------------------------
$(CONF_BIN)/conform: conformance/conform.c conformance/conform.h c-tests/check.h include/pmi.h \
    $(LIB)/libpmi.so.0
	mkdir -p $(CONF_BIN)
	$(CC) $(CFLAGS_T) -Iinclude -o $@ $< -L$(LIB) -lpmi -ldl

$(CONF_BIN)/conform2: conformance/conform2.c conformance/conform.h c-tests/check.h \
    include/pmi2.h $(LIB)/libpmi2.so.0
	mkdir -p $(CONF_BIN)
	$(CC) $(CFLAGS_T) -Iinclude -o $@ $< -L$(LIB) -lpmi2 -ldl

# The raw wire probes do not link any libpmi.
$(CONF_BIN)/probe $(CONF_BIN)/probe2: $(CONF_BIN)/%: conformance/%.c conformance/raw.h c-tests/check.h
	mkdir -p $(CONF_BIN)
	$(CC) $(CFLAGS_T) -o $@ $<

# With REF_PMI=PREFIX the programs load another client, installed there, as a reference:
# its lib/libpmi2.so.0 for API=2, or, where it has none (MPICH 5's src/pmi), its
# libpmi.so.0, which serves PMI-2 too (docs/CONFORMANCE.md).
conformance: lib $(CONF_PROGS)
	@set -e; lib=$(LIB); \
	if [ -n "$(REF_PMI)" ]; then \
	  lib=$(CONF_BIN)/ref-lib; rm -rf $$lib; mkdir -p $$lib; \
	  test -e $(REF_PMI)/lib/libpmi.so.0 || { echo "conformance: no $(REF_PMI)/lib/libpmi.so.0"; exit 2; }; \
	  ln -s $(REF_PMI)/lib/libpmi.so.0 $$lib/libpmi.so.0; \
	  if [ -e $(REF_PMI)/lib/libpmi2.so.0 ]; then ln -s $(REF_PMI)/lib/libpmi2.so.0 $$lib/; \
	  else ln -s $(REF_PMI)/lib/libpmi.so.0 $$lib/libpmi2.so.0; fi; \
	fi; \
	conformance/run.sh --api $(API) --launcher "$(LAUNCHER)" --bin $(CONF_BIN) --lib $$lib

# Under Hydra in both modes, on two simulated nodes: no FAIL, and exactly the known
# deviations (a change in Hydra or in the kit is noticed).
check-conformance: deps-hydra lib $(CONF_PROGS)
	@set -e; ok=0; \
	for api in 1 2; do for mode in fd port; do \
	  launcher="$(HYDRA_RUN) -launcher fork -hosts a:2,b:2 -n 4"; \
	  [ $$mode = port ] && launcher="$(HYDRA_RUN) -launcher fork -pmi-port -hosts a:2,b:2 -n 4"; \
	  run=$$mode-pmi$$api; expected=$(CONF_EXPECTED).txt; \
	  [ $$api = 2 ] && expected=$(CONF_EXPECTED)-pmi2.txt; \
	  ids=$(CONF_BIN)/ids-$$run.txt; rm -f $$ids; \
	  if env -u CONFORMANCE_SKIP conformance/run.sh --api $$api --launcher "$$launcher" \
	       --bin $(CONF_BIN) --lib $(LIB) \
	       --logs $(CONF_BIN)/logs-$$run --ids $$ids > $(CONF_BIN)/report-$$run.txt; then \
	    echo "PASS conformance-$$run ($$(tail -n 1 $(CONF_BIN)/report-$$run.txt))"; \
	  else \
	    echo "FAIL conformance-$$run: $$launcher"; cat $(CONF_BIN)/report-$$run.txt; ok=1; \
	  fi; \
	  if awk '$$1 == "DEV" || $$1 == "SKIP" { print $$1 " " $$2 }' $$ids | sort | \
	       diff -u $$expected - > $(CONF_BIN)/dev-$$run.diff; then \
	    echo "PASS conformance-$$run-deviations (as in $$expected)"; \
	  else \
	    echo "FAIL conformance-$$run-deviations (differ from $$expected):"; \
	    cat $(CONF_BIN)/dev-$$run.diff; ok=1; \
	  fi; \
	done; done; exit $$ok
