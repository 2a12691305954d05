# The static archives (issue 26): `make install` lays out lib/libpmi.a and lib/libpmi2.a
# (scripts/static-archive.sh: the API's names are their only global symbols), and
# `pkg-config --static --libs pmi` (pmi2) names what a static link needs beside them.
#
#   make check-static    (part of make check) the archives' symbols; a program linked
#                        fully static through pkg-config --static under Hydra; the C tests
#                        linked with the archives (no libpmi.so at run time) under Hydra;
#                        both archives and another Rust static library in one program
#   make static-progs    those programs (make check-compat runs them under Slurm too)

STATIC_PREFIX := $(BUILD)/prefix-static
STATIC_BIN    := $(BUILD)/c-tests-static
STATIC_PC     := PKG_CONFIG_PATH=$(CURDIR)/$(STATIC_PREFIX)/lib/pkgconfig pkg-config
NEIGHBOUR_A   := $(BUILD)/neighbour-target/release/libneighbour.a

.PHONY: check-static static-progs static-prefix

# The layout under test is what `make install` makes now.
$(STATIC_PREFIX)/lib/pkgconfig/pmi.pc: $(LIB)/libpmi.so.0 $(LIB)/libpmi2.so.0 $(LIB)/libpmi.a \
    $(LIB)/libpmi2.a $(BIN)/pmi-probe pkgconfig/pmi.pc.in pkgconfig/pmi2.pc.in
	rm -rf $(STATIC_PREFIX)
	$(MAKE) --no-print-directory install PREFIX=$(CURDIR)/$(STATIC_PREFIX) >/dev/null

# A program linked with the archives into a dynamically linked program, as a code that
# keeps its libc shared does: the archive between -Bstatic and -Bdynamic, then the rest
# of what pkg-config --static says.
static_link = $(CC) $(CFLAGS_T) $$($(STATIC_PC) --cflags $(1)) -o $@ $< \
	-Wl,-Bstatic $$($(STATIC_PC) --libs $(1)) -Wl,-Bdynamic \
	$$($(STATIC_PC) --static --libs-only-l $(1) | sed 's/-lpmi2\{0,1\} //g')

$(eval $(call c_tests_in,$(STATIC_BIN),static_link,$(STATIC_PREFIX)/lib/pkgconfig/pmi.pc))

# Linked fully static, with exactly what pkg-config --static says.
$(STATIC_BIN)/exchange-full-static: c-tests/exchange.c c-tests/check.h $(STATIC_PREFIX)/lib/pkgconfig/pmi.pc
	mkdir -p $(STATIC_BIN)
	$(CC) $(CFLAGS_T) -static -o $@ $< $$($(STATIC_PC) --static --cflags --libs pmi) 2>$@.link-warnings

# Both archives in one program linked with -static: each still finds the other.
$(STATIC_BIN)/two_libs-full-static: c-tests/two_libs.c c-tests/check.h $(STATIC_PREFIX)/lib/pkgconfig/pmi.pc
	mkdir -p $(STATIC_BIN)
	$(CC) $(CFLAGS_T) -static -o $@ $< $$($(STATIC_PC) --static --cflags --libs pmi pmi2) 2>$@.link-warnings

# Another Rust static library (its own copy of Rust's standard library, unwinder and
# allocator shims), linked with both archives into one program.
$(NEIGHBOUR_A): dropin-tests/neighbour/Cargo.toml dropin-tests/neighbour/src/lib.rs
	cd dropin-tests/neighbour && CARGO_TARGET_DIR=$(CURDIR)/$(BUILD)/neighbour-target \
	  $(CARGO) build --release --quiet

$(STATIC_BIN)/neighbour: dropin-tests/neighbour.c $(NEIGHBOUR_A) $(STATIC_PREFIX)/lib/pkgconfig/pmi.pc
	mkdir -p $(STATIC_BIN)
	$(call static_link,pmi pmi2) $(NEIGHBOUR_A) -Wl,--gc-sections

static-progs: $(addprefix $(STATIC_BIN)/,$(TESTS) $(TESTS2) two_libs exchange-full-static \
    two_libs-full-static neighbour)

check-static: deps-hydra static-progs
	MPIEXEC=$(MPIEXEC) dropin-tests/static.sh $(STATIC_BIN) $(STATIC_PREFIX)
	HARNESS_STATIC=1 MPIEXEC=$(MPIEXEC) c-tests/run-tests.sh $(STATIC_BIN) ""
	@echo "check-static: the archives and the programs linked with them as expected"
