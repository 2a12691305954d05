# libpmi.so.0 in Rust. `make demo` and `make check` do all the set-up they need.

VERSION    := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR     ?= $(PREFIX)/share/man
DESTDIR    ?=

CC       ?= cc
CXX      ?= c++
CWARN    := -Wall -Wextra -Werror
CFLAGS_T := -std=c99 $(CWARN) -pedantic -g -O1 -pthread
CARGO    ?= cargo
CBINDGEN_VERSION := 0.29.0
export CBINDGEN_VERSION
# mpiexec from PATH, found after ensure-deps installs it.
MPIEXEC  ?= mpiexec.hydra
# How the tests start it: with SIGPIPE ignored (scripts/no-sigpipe says why).
HYDRA_RUN := $(CURDIR)/scripts/no-sigpipe $(MPIEXEC)
export PATH := $(HOME)/.cargo/bin:$(PATH)

BUILD    := build
LIB      := $(BUILD)/lib
TBIN     := $(BUILD)/c-tests
# Cargo's output directory (the packages are built in their own: debian/rules).
TARGET_DIR ?= target
# The tests' build: its own directory, and the profile release-tests (Cargo.toml: the
# release's without link-time optimisation).
TESTS_BUILD := --profile release-tests --target-dir $(TARGET_DIR)/tests
SO       := $(TARGET_DIR)/release/libpmi.so
SO2      := $(TARGET_DIR)/release/libpmi2.so
# The static archives as cargo makes them (scripts/static-archive.sh makes them fit to ship).
RUST_A   := $(TARGET_DIR)/release/libpmi.a
RUST_A2  := $(TARGET_DIR)/release/libpmi2.a
PROBE    := $(TARGET_DIR)/release/pmi-probe
BIN      := $(BUILD)/bin
TESTS    := exchange info barrier validation abort clique names spawn options singleton threads \
            fork stalefd sigsafe memory stopped_server dead_processes groups values hostfail
# The PMI-2 programs, built against include/pmi2.h and libpmi2.so.0.
TESTS2   := pmi2_exchange pmi2_validation pmi2_ring pmi2_names pmi2_spawn pmi2_threads pmi2_abort \
            pmi2_values pmi2_hostfail
TEST_BINS := $(addprefix $(TBIN)/,$(TESTS) $(TESTS2) two_libs)
RUST_SRC := $(shell find core/src libpmi/src libpmi2/src probe/src -name '*.rs') Cargo.toml Cargo.lock \
            core/Cargo.toml core/build.rs core/src/sibling.c libpmi/Cargo.toml libpmi2/Cargo.toml probe/Cargo.toml \
            front-build.rs hot-text.ld

.PHONY: all lib demo check test-rust lint check-symbols check-header check-docs header abi-check \
        c-tests test-c asan memcheck check-install install uninstall install-man uninstall-man \
        deps deps-hydra clean

all: lib

lib: $(LIB)/libpmi.so.0 $(LIB)/libpmi2.so.0 $(LIB)/libpmi.a $(LIB)/libpmi2.a $(BIN)/pmi-probe \
     $(LIB)/libs-private

# Both libraries from one workspace build: the core (no exports) and the two C fronts,
# each with its own soname and exports whatever was built before (check-symbols); their
# static archives; pmi-probe. Without the test kit, whose feature opens the core to the
# tests: what ships is built without it (and the tests are built apart: test-rust). (Touched: cargo leaves an output it need not rebuild as it
# was, and make would run cargo again at every make, `make install` included.)
$(SO) $(SO2) $(RUST_A) $(RUST_A2) $(PROBE) &: $(RUST_SRC)
	$(CARGO) build --release --workspace --exclude pmi-testkit --target-dir $(TARGET_DIR)
	touch $(SO) $(SO2) $(RUST_A) $(RUST_A2) $(PROBE)

# The archives as shipped: the API's names the only globals (scripts/static-archive.sh).
$(LIB)/libpmi.a: $(RUST_A) symbols.txt scripts/static-archive.sh
	mkdir -p $(LIB)
	scripts/static-archive.sh $(RUST_A) symbols.txt $@

$(LIB)/libpmi2.a: $(RUST_A2) symbols2.txt scripts/static-archive.sh
	mkdir -p $(LIB)
	scripts/static-archive.sh $(RUST_A2) symbols2.txt $@

# What a static link needs beside the archives (the pkg-config files' Libs.private), asked
# of rustc with the build, so that `make install` needs no rustc.
$(LIB)/libs-private: $(RUST_A) scripts/static-archive.sh
	mkdir -p $(LIB)
	scripts/static-archive.sh --private-libs >$@.tmp
	[ -s $@.tmp ] || { echo "$@: rustc named no libraries for Libs.private"; exit 1; }
	mv $@.tmp $@

$(BIN)/pmi-probe: $(PROBE)
	mkdir -p $(BIN)
	cp $(PROBE) $@

$(LIB)/libpmi2.so.0: $(SO2)
	mkdir -p $(LIB)
	cp $(SO2) $@
	ln -sf libpmi2.so.0 $(LIB)/libpmi2.so

# The library as the tests load it: libpmi.so.0 (the soname) and the libpmi.so link.
$(LIB)/libpmi.so.0: $(SO)
	mkdir -p $(LIB)
	cp $(SO) $@
	ln -sf libpmi.so.0 $(LIB)/libpmi.so

deps:
	scripts/ensure-deps.sh hydra slurm-header slurm-header2 cbindgen pkg-config valgrind mandoc man cxx \
	  pmix pmix-dev

deps-hydra:
	scripts/ensure-deps.sh hydra

# The C test programs, built into a directory DIR, each linked by $(call LINK,M) for the
# libraries M it uses (pmi, pmi2, or both), after PREREQ; one rule for every way they
# are built: against the tree's libraries (below), with the sanitizers (below), with the
# static archives (mk/static.mk), against the installed Debian packages (mk/deb.mk).
#   $(eval $(call c_tests_in,DIR,LINK,PREREQ))
define c_tests_in
$(1)/pmi2_threads: c-tests/threads.c c-tests/check.h $(3)
	mkdir -p $(1)
	$$(call $(2),pmi2) -DTHREADS_PMI2

$(1)/pmi2_values: c-tests/values.c c-tests/check.h $(3)
	mkdir -p $(1)
	$$(call $(2),pmi2) -DVALUES_PMI2

$(1)/pmi2_hostfail: c-tests/hostfail.c c-tests/check.h $(3)
	mkdir -p $(1)
	$$(call $(2),pmi2) -DHOSTFAIL_PMI2

$(1)/pmi2_%: c-tests/pmi2_%.c c-tests/check.h $(3)
	mkdir -p $(1)
	$$(call $(2),pmi2)

$(1)/two_libs: c-tests/two_libs.c c-tests/check.h $(3)
	mkdir -p $(1)
	$$(call $(2),pmi pmi2)

$(1)/%: c-tests/%.c c-tests/check.h $(3)
	mkdir -p $(1)
	$$(call $(2),pmi)
endef

# Against the tree's headers and libraries.
TREE_LIBS := include/pmi.h include/pmi2.h $(LIB)/libpmi.so.0 $(LIB)/libpmi2.so.0
tree_link = $(CC) $(CFLAGS_T) -Iinclude -o $@ $< -L$(LIB) $(addprefix -l,$(1))
$(eval $(call c_tests_in,$(TBIN),tree_link,$(TREE_LIBS)))

# The runners find pmi-probe beside the C programs.
$(TBIN)/pmi-probe: $(BIN)/pmi-probe
	mkdir -p $(TBIN)
	cp $< $@

c-tests: $(TEST_BINS) $(TBIN)/pmi-probe

# The same C tests built with AddressSanitizer and UBSan (the library is Rust; the
# sanitizers watch every byte it writes into the tests' buffers).
ASAN_BIN  := $(BUILD)/asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
asan_link = $(call tree_link,$(1)) $(ASAN_FLAGS)
$(eval $(call c_tests_in,$(ASAN_BIN),asan_link,$(TREE_LIBS)))

asan: deps-hydra $(addprefix $(ASAN_BIN)/,$(TESTS) $(TESTS2) two_libs)
	SANITIZED=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/c-tests/lsan.supp \
	  MPIEXEC=$(MPIEXEC) c-tests/run-tests.sh $(ASAN_BIN) $(LIB)

# The C tests under valgrind memcheck inside Hydra jobs: zero errors, zero leaks.
memcheck: deps-hydra c-tests
	MPIEXEC=$(MPIEXEC) c-tests/run-memcheck.sh $(TBIN) $(LIB)

# The main job: four ranks on two simulated nodes exchange business cards.
demo: deps-hydra $(TBIN)/exchange
	LD_LIBRARY_PATH=$(CURDIR)/$(LIB) $(MPIEXEC) -launcher fork -hosts a:2,b:2 -n 4 $(TBIN)/exchange

# Everything `make check` runs, here in full: the Rust tests and lints, the symbols,
# headers, docs and ABI, the C tests under Hydra (plain, sanitized, under valgrind,
# linked with the static archives: mk/static.mk), the drop-in swap and the conformance
# kit (mk/dropin.mk), and the install.
check: deps test-rust lint check-symbols check-header check-docs abi-check test-c asan memcheck \
       check-install check-static check-dropin
	@echo "make check: all passed"

# In a target directory of their own: the test kit's feature is on in the tests' build of
# the core, and the libraries make ships (target/release) are built without it.
test-rust:
	$(CARGO) test $(TESTS_BUILD) --workspace

# Also: the fronts use the core's public surface only (never its test kit), every place
# that names the release's version names Cargo.toml's, and the crates outside the
# workspace that reach the core through the kit (the fuzz targets, the benchmarks of its
# pure parts) still build (the fuzz targets without libFuzzer's own C++, which only
# `make fuzz` links).
lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy $(TESTS_BUILD) --workspace --all-targets -- -D warnings
	! grep -rn 'testkit\|test-kit' libpmi/src libpmi2/src probe/src libpmi/Cargo.toml \
	  libpmi2/Cargo.toml probe/Cargo.toml
	scripts/check-versions.sh
	cd fuzz && $(CARGO) check --quiet --no-default-features --target-dir $(abspath $(TARGET_DIR))/fuzz
	cd bench && $(CARGO) check --quiet --target-dir $(abspath $(TARGET_DIR))/bench-check

# Exactly the 34 PMI-1 functions (RFC 13's 33 and PMI 1.2's PMI_Barrier_group) and the
# soname libpmi.so.0; exactly the 22 PMI-2 functions and libpmi2.so.0: in what make
# ships, and after a plain `cargo build --workspace` (debug) as a Rust developer types it
# first.
check-symbols: $(LIB)/libpmi.so.0 $(LIB)/libpmi2.so.0
	$(CARGO) build --workspace --quiet
	for so in $(LIB)/libpmi.so.0 $(SO) target/debug/libpmi.so; do \
	  nm -D --defined-only $$so | awk '{print $$3}' | sort | diff -u symbols.txt - || exit 1; \
	  readelf -d $$so | grep -q 'SONAME.*\[libpmi.so.0\]' || { echo "$$so: SONAME is not libpmi.so.0"; exit 1; }; \
	done
	for so in $(LIB)/libpmi2.so.0 $(SO2) target/debug/libpmi2.so; do \
	  nm -D --defined-only $$so | awk '{print $$3}' | sort | diff -u symbols2.txt - || exit 1; \
	  readelf -d $$so | grep -q 'SONAME.*\[libpmi2.so.0\]' || { echo "$$so: SONAME is not libpmi2.so.0"; exit 1; }; \
	done
	@# The unwinder is linked in (core/build.rs) wherever gcc has libgcc_eh.a: no libgcc_s.so.1.
	@# (Each tool's output is kept first: a tool that fails must fail the check, not pass
	@# it with nothing to grep.)
	if [ -f "$$($(CC) -print-file-name=libgcc_eh.a)" ]; then \
	  dyn=$$(readelf -d $(LIB)/libpmi.so.0 $(LIB)/libpmi2.so.0) && ! echo "$$dyn" | grep 'NEEDED.*libgcc_s'; fi
	@# No run-time CPU detection (memchr without "std"): a CPUID is a VM exit per process.
	code=$$(objdump -d $(LIB)/libpmi.so.0 $(LIB)/libpmi2.so.0) && ! echo "$$code" | grep -w cpuid
	@# The hot path gathered in one section, and what each process runs once in the next
	@# (hot-text.ld), in what make ships; every pattern of hot-text.ld names a function the
	@# linker saw (its maps, front-build.rs).
	scripts/check-hot-text-patterns.sh hot-text.ld $(TARGET_DIR)/release/libpmi.so.map \
	  $(TARGET_DIR)/release/libpmi2.so.map
	scripts/check-hot-text.sh $(LIB)/libpmi.so.0 .text.hot PMI_KVS_Put PMI_KVS_Commit PMI_KVS_Get PMI_Barrier
	scripts/check-hot-text.sh $(LIB)/libpmi2.so.0 .text.hot PMI2_KVS_Put PMI2_KVS_Fence PMI2_KVS_Get
	scripts/check-hot-text.sh $(LIB)/libpmi.so.0 .text.warm PMI_Init PMI_Get_rank PMI_Get_size PMI_KVS_Get_my_name PMI_Finalize
	scripts/check-hot-text.sh $(LIB)/libpmi2.so.0 .text.warm PMI2_Init PMI2_Job_GetId PMI2_Finalize
	@# Its own calls direct, not through the GOT (no rlib beside the cdylib: libpmi/Cargo.toml).
	scripts/check-direct-calls.sh $(LIB)/libpmi.so.0
	scripts/check-direct-calls.sh $(LIB)/libpmi2.so.0
	@# What the loader relocates starts a page (front-build.rs): as few written pages as it needs.
	scripts/check-relro-pages.sh $(LIB)/libpmi.so.0
	scripts/check-relro-pages.sh $(LIB)/libpmi2.so.0
	@echo "check-symbols: 34 exports and SONAME libpmi.so.0; 22 exports and SONAME libpmi2.so.0 (release and debug builds); no libgcc_s, no cpuid; the hot path in .text.hot, the start in .text.warm; calls inside the library direct; the relocated data page-aligned"

# One rule for both headers: include/H.h is what the pinned cbindgen makes of the crate
# libH with libH/cbindgen.toml (H = pmi, pmi2).
HEADERS := pmi pmi2
# (cbindgen closes its C++ guard with a // comment, which C89 does not have.)
gen_header = cbindgen --quiet --config lib$(1)/cbindgen.toml --crate lib$(1) --output $(2) && \
  sed -i -E 's|^\#endif( +)// __cplusplus$$|\#endif\1/* __cplusplus */|' $(2)

header:
	scripts/ensure-deps.sh cbindgen
	$(foreach h,$(HEADERS),$(call gen_header,$(h),include/$(h).h) &&) true

# The committed headers are what the rule makes of the sources, and define only their
# API's macros (and the two aliases and the feature test Slurm's pmi2.h has).
check-header:
	mkdir -p $(BUILD)
	$(foreach h,$(HEADERS),$(call gen_header,$(h),$(BUILD)/$(h).h) && diff -u include/$(h).h $(BUILD)/$(h).h &&) true
	! grep -E '^#define ' include/pmi.h | grep -vE '^#define (PMI_|PMI_H$$)'
	! grep -E '^#define ' include/pmi2.h | grep -vE '^#define (PMI2_|PMI2U_Info MPID_Info$$|HAVE_PMIX_RING 1$$)'
	@echo "check-header: include/pmi.h and include/pmi2.h are up to date; pmi.h defines only PMI_*, pmi2.h PMI2_* (and PMI2U_Info, HAVE_PMIX_RING)"

# Both libraries' man pages name every environment variable the library reads
# (scripts/library-variables.sh); the README is a guide and need not.
DOCS_ENV_PAGES := docs/pmi.3 docs/pmi2.3
check-docs:
	vars=$$(scripts/library-variables.sh) && \
	[ $$(echo $$vars | wc -w) -ge 10 ] || { echo "check-docs: scripts/library-variables.sh found only '$$vars' in core/src: the names are no longer found"; exit 1; }; \
	for v in $$vars; do for d in $(DOCS_ENV_PAGES); do \
	  grep -q "$$v" $$d || { echo "check-docs: $$d does not name $$v"; exit 1; }; \
	done; done; \
	echo "check-docs: $(DOCS_ENV_PAGES) name all $$(echo $$vars | wc -w) variables the library reads"

# Programs written against the reference header compile against ours, and our exports
# have the reference prototypes; the header also compiles as C++ with C linkage.
abi-check:
	mkdir -p $(BUILD)
	$(CC) -std=c99 $(CWARN) -pedantic -Iinclude -c c-tests/abi_check.c -o $(BUILD)/abi_ours.o
	if [ -f /usr/include/slurm/pmi.h ]; then \
	  $(CC) -std=c99 $(CWARN) -pedantic -I/usr/include/slurm -c c-tests/abi_check.c -o $(BUILD)/abi_slurm.o; \
	fi
	$(CXX) -std=c++17 $(CWARN) -pedantic -Iinclude -c c-tests/cxx_check.cpp -o $(BUILD)/cxx_check.o
	nm $(BUILD)/cxx_check.o | grep -q ' U PMI_Init$$'
	$(CC) -std=c99 $(CWARN) -pedantic -Iinclude -c c-tests/abi_check2.c -o $(BUILD)/abi2_ours.o
	$(CC) -std=c99 $(CWARN) -pedantic -I/usr/include/slurm -c c-tests/abi_check2.c -o $(BUILD)/abi2_slurm.o
	$(CXX) -std=c++17 $(CWARN) -pedantic -Iinclude -c c-tests/cxx_check2.cpp -o $(BUILD)/cxx_check2.o
	nm $(BUILD)/cxx_check2.o | grep -q ' U PMI2_Init$$'
	for h in pmi.h pmi2.h; do echo "#include <$$h>" | $(CC) -std=c89 $(CWARN) -pedantic -Iinclude -x c -c -o /dev/null - || exit 1; done
	@echo "abi-check: reference prototypes match (pmi.h and pmi2.h); C++ sees C linkage; both headers are C89"

test-c: deps-hydra c-tests
	MPIEXEC=$(MPIEXEC) c-tests/run-tests.sh $(TBIN) $(LIB)

# `make install` into a scratch prefix, then build and run a program with pkg-config.
check-install: lib
	rm -rf $(BUILD)/prefix
	$(MAKE) --no-print-directory install PREFIX=$(CURDIR)/$(BUILD)/prefix
	test -f $(BUILD)/prefix/lib/libpmi.so.0.0.0
	test "$$(readlink $(BUILD)/prefix/lib/libpmi.so.0)" = libpmi.so.0.0.0
	test "$$(readlink $(BUILD)/prefix/lib/libpmi.so)" = libpmi.so.0
	cmp include/pmi.h $(BUILD)/prefix/include/pmi.h
	PKG_CONFIG_PATH=$(BUILD)/prefix/lib/pkgconfig pkg-config --modversion pmi | grep -qx '$(VERSION)'
	$(CC) $(CFLAGS_T) -o $(BUILD)/exchange-pc c-tests/exchange.c \
	  $$(PKG_CONFIG_PATH=$(BUILD)/prefix/lib/pkgconfig pkg-config --cflags --libs pmi)
	readelf -d $(BUILD)/exchange-pc | grep -q 'NEEDED.*\[libpmi.so.0\]'
	LD_LIBRARY_PATH=$(CURDIR)/$(BUILD)/prefix/lib $(HYDRA_RUN) -launcher fork -n 2 $(BUILD)/exchange-pc -q
	test "$$(readlink $(BUILD)/prefix/lib/libpmi2.so.0)" = libpmi2.so.0.0.0
	test "$$(readlink $(BUILD)/prefix/lib/libpmi2.so)" = libpmi2.so.0
	cmp include/pmi2.h $(BUILD)/prefix/include/pmi2.h
	PKG_CONFIG_PATH=$(BUILD)/prefix/lib/pkgconfig pkg-config --modversion pmi2 | grep -qx '$(VERSION)'
	$(CC) $(CFLAGS_T) -o $(BUILD)/pmi2-exchange-pc c-tests/pmi2_exchange.c \
	  $$(PKG_CONFIG_PATH=$(BUILD)/prefix/lib/pkgconfig pkg-config --cflags --libs pmi2)
	readelf -d $(BUILD)/pmi2-exchange-pc | grep -q 'NEEDED.*\[libpmi2.so.0\]'
	LD_LIBRARY_PATH=$(CURDIR)/$(BUILD)/prefix/lib $(HYDRA_RUN) -launcher fork -n 2 $(BUILD)/pmi2-exchange-pc -1
	test -f $(BUILD)/prefix/lib/libpmi.a && test -f $(BUILD)/prefix/lib/libpmi2.a
	test -f $(BUILD)/prefix/share/man/man1/pmi-probe.1
	$(BUILD)/prefix/bin/pmi-probe --json | grep -q '"verdict":"singleton"'
	test "$$($(HYDRA_RUN) -launcher fork -n 2 $(BUILD)/prefix/bin/pmi-probe --json | grep -c '"verdict":"ok"')" = 2
	@echo "check-install: layout, pkg-config, NEEDED libpmi.so.0 / libpmi2.so.0, the archives and pmi-probe as expected"

# Each library (H = pmi, pmi2): the shared library with its two links, the archive, the
# header and the pkg-config file (Libs.private: what a static link needs beside the
# archive); then pmi-probe.
install_lib = \
	private=$$(cat $(LIB)/libs-private) && \
	install -m 0755 $(LIB)/lib$(1).so.0 $(DESTDIR)$(LIBDIR)/lib$(1).so.0.0.0 && \
	ln -sf lib$(1).so.0.0.0 $(DESTDIR)$(LIBDIR)/lib$(1).so.0 && \
	ln -sf lib$(1).so.0 $(DESTDIR)$(LIBDIR)/lib$(1).so && \
	install -m 0644 $(LIB)/lib$(1).a $(DESTDIR)$(LIBDIR)/lib$(1).a && \
	install -m 0644 include/$(1).h $(DESTDIR)$(INCLUDEDIR)/$(1).h && \
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e "s|@LIBS_PRIVATE@|$$private|" \
	    pkgconfig/$(1).pc.in > $(DESTDIR)$(PKGCONFIGDIR)/$(1).pc

# Everything `make install` lays out, here in full: both libraries (shared, static,
# header, pkg-config file), pmi-probe, and the manual pages.
install: lib
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR)
	$(call install_lib,pmi)
	$(call install_lib,pmi2)
	install -m 0755 $(BIN)/pmi-probe $(DESTDIR)$(BINDIR)/pmi-probe
	$(MAKE) --no-print-directory install-man

# Every exported function has its page name too (`man PMI_Get_rank`): a one-line `.so`
# page that sends man to pmi(3) or pmi2(3), as distributions ship function pages.
MAN_FUNCS  := $(shell cat symbols.txt)
MAN_FUNCS2 := $(shell cat symbols2.txt)

install-man:
	install -d $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man1
	install -m 0644 docs/pmi.3 $(DESTDIR)$(MANDIR)/man3/pmi.3
	install -m 0644 docs/pmi2.3 $(DESTDIR)$(MANDIR)/man3/pmi2.3
	install -m 0644 docs/pmi-probe.1 $(DESTDIR)$(MANDIR)/man1/pmi-probe.1
	rm -rf $(BUILD)/man3 && mkdir -p $(BUILD)/man3
	for f in $(MAN_FUNCS); do echo '.so man3/pmi.3' > $(BUILD)/man3/$$f.3 || exit 1; done
	for f in $(MAN_FUNCS2); do echo '.so man3/pmi2.3' > $(BUILD)/man3/$$f.3 || exit 1; done
	install -m 0644 $(BUILD)/man3/*.3 $(DESTDIR)$(MANDIR)/man3/

uninstall-man:
	rm -f $(DESTDIR)$(MANDIR)/man3/pmi.3 $(DESTDIR)$(MANDIR)/man3/pmi2.3 \
	      $(DESTDIR)$(MANDIR)/man1/pmi-probe.1 \
	      $(addprefix $(DESTDIR)$(MANDIR)/man3/,$(addsuffix .3,$(MAN_FUNCS) $(MAN_FUNCS2)))

uninstall:
	for h in pmi pmi2; do \
	  rm -f $(DESTDIR)$(LIBDIR)/lib$$h.so.0.0.0 $(DESTDIR)$(LIBDIR)/lib$$h.so.0 \
	        $(DESTDIR)$(LIBDIR)/lib$$h.so $(DESTDIR)$(LIBDIR)/lib$$h.a \
	        $(DESTDIR)$(INCLUDEDIR)/$$h.h $(DESTDIR)$(PKGCONFIGDIR)/$$h.pc; \
	done
	rm -f $(DESTDIR)$(BINDIR)/pmi-probe
	$(MAKE) --no-print-directory uninstall-man

clean:
	$(CARGO) clean
	rm -rf $(BUILD)

# Further targets (benchmarks, the MPICH swap test, the conformance kit) live in mk/.
-include $(sort $(wildcard mk/*.mk))
