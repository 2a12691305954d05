# Benchmarks (issue 6): `make bench` prints one table and writes it, with the machine
# and the method, to BENCHMARKS.md. About 5 minutes; see bench/run.sh.
#
#   make bench                          everything
#   make bench BENCH_ROUNDS=11 BENCH_N=500 BENCH_REPS=3 BENCH_RUNS=5   a quick pass

BENCH_BIN    := $(BUILD)/bench
BENCH_CFLAGS := -std=gnu99 $(CWARN) -O2
BENCH_TARGET := $(CURDIR)/$(BUILD)/bench-target
BENCH_PROGS  := $(addprefix $(BENCH_BIN)/,canned_server pmi_bench pmi_bench2 wireup_lib wireup_raw \
                loadonly loadnone wireup_pmix wireup_lib2 jobtime byrank)

.PHONY: bench bench-build bench-scale

# MPICH's simple clients (PMI-1 and PMI-2), the second reference, come from
# scripts/build-mpich.sh --simple-pmi (cached); without them the bench runs and says so.
bench: deps-hydra bench-build
	ref=$$(scripts/build-mpich.sh --simple-pmi) || ref=; ref=$$(echo "$$ref" | tail -n 1); \
	BENCH_REF_LIB=$${ref:+$$ref/lib/libpmi.so.0} BENCH_REF_LIB2=$${ref:+$$ref/lib/libpmi2.so.0} BENCH_BIN=$(BENCH_BIN) BENCH_LIB=$(LIB) \
	  MPIEXEC=$(MPIEXEC) BENCH_MAPPING_BIN=$(BENCH_TARGET)/release/mapping_bench bench/run.sh
	$(MAKE) --no-print-directory bench-scale

# The scale curve (bench/scale.sh): n = 16..512 on one host and over four virtual hosts,
# every launcher; about an hour, as root. SCALE_SIZES, SCALE_REPS, SCALE_RANKS,
# SCALE_LAUNCHERS.
bench-scale: deps bench-build
	ref=$$(scripts/build-mpich.sh --simple-pmi) || ref=; ref=$$(echo "$$ref" | tail -n 1); \
	BENCH_REF_LIB=$${ref:+$$ref/lib/libpmi.so.0} BENCH_BIN=$(BENCH_BIN) BENCH_LIB=$(LIB) bench/scale.sh

bench-build: $(BENCH_PROGS)
	cd bench && CARGO_TARGET_DIR=$(BENCH_TARGET) $(CARGO) build --release --quiet

$(BENCH_BIN)/canned_server: bench/canned_server.c
	mkdir -p $(BENCH_BIN)
	$(CC) $(BENCH_CFLAGS) -o $@ $<

$(BENCH_BIN)/wireup_raw: bench/wireup_raw.c bench/wireup.h c-tests/check.h
	mkdir -p $(BENCH_BIN)
	$(CC) $(BENCH_CFLAGS) -o $@ $<

# The wire-up through PMI-2 (libpmi2.so.0, or another client with that soname).
$(BENCH_BIN)/wireup_lib2: bench/wireup_lib2.c bench/wireup.h c-tests/check.h include/pmi2.h $(LIB)/libpmi2.so.0
	mkdir -p $(BENCH_BIN)
	$(CC) $(BENCH_CFLAGS) -Iinclude -o $@ $< -L$(LIB) -lpmi2

# The client of each rank in the scale bench's mixed jobs.
$(BENCH_BIN)/byrank: bench/byrank.c
	mkdir -p $(BENCH_BIN)
	$(CC) $(BENCH_CFLAGS) -o $@ $<

# A whole job's time and CPU as its user waits for it.
$(BENCH_BIN)/jobtime: bench/jobtime.c
	mkdir -p $(BENCH_BIN)
	$(CC) $(BENCH_CFLAGS) -o $@ $<

# A process that loads the library and exits, and the same without it (pmi_bench load).
$(BENCH_BIN)/loadonly: bench/loadonly.c include/pmi.h $(LIB)/libpmi.so.0
	mkdir -p $(BENCH_BIN)
	$(CC) $(BENCH_CFLAGS) -DLOAD_PMI -Iinclude -o $@ $< -L$(LIB) -lpmi

$(BENCH_BIN)/loadnone: bench/loadonly.c
	mkdir -p $(BENCH_BIN)
	$(CC) $(BENCH_CFLAGS) -o $@ $<

# The PMI-2 overhead bench: pmi_bench.c for libpmi2.so.0.
$(BENCH_BIN)/pmi_bench2: bench/pmi_bench.c include/pmi2.h $(LIB)/libpmi2.so.0
	mkdir -p $(BENCH_BIN)
	$(CC) $(BENCH_CFLAGS) -DBENCH_PMI2 -Iinclude -o $@ $< -L$(LIB) -lpmi2 -ldl

# The native PMIx client (the PMIx backend's reference), linked with Debian's libpmix,
# its own libpmix found through its RUNPATH (LD_LIBRARY_PATH names another).
$(BENCH_BIN)/wireup_pmix: bench/wireup_pmix.c bench/wireup.h c-tests/check.h
	scripts/ensure-deps.sh pmix pmix-dev
	mkdir -p $(BENCH_BIN)
	$(CC) $(BENCH_CFLAGS) $$(pkg-config --cflags pmix) -o $@ $< $$(pkg-config --libs pmix)

$(BENCH_BIN)/%: bench/%.c bench/wireup.h c-tests/check.h include/pmi.h $(LIB)/libpmi.so.0
	mkdir -p $(BENCH_BIN)
	$(CC) $(BENCH_CFLAGS) -Iinclude -o $@ $< -L$(LIB) -lpmi -ldl
