# Debian packages from the tree (issue 26), built with Debian's own tools (debian/:
# dpkg-buildpackage and debhelper), checked with lintian; they take the place of Slurm's
# libpmi0 and libpmi2-0 (Conflicts/Replaces/Provides: docs/INSTALL.md, "Debian packages").
#
#   make deb          build/deb/: libpmi0-rs, libpmi2-0-rs, libpmi-rs-dev, pmi-probe and
#                     the -dbgsym packages of the three with binaries
#                     (.deb), lintian with no error or warning
#   make check-deb    as root (CI): install them, run the drop-in tests and the C tests
#                     against the installed files, remove them, and check the machine is
#                     as before (scripts/check-deb.sh)

DEB_OUT       := $(BUILD)/deb
INSTALLED_BIN := $(BUILD)/c-tests-installed
DEB_ID        := libpmi-rs_$(VERSION)_$(shell dpkg --print-architecture 2>/dev/null)

.PHONY: deb check-deb installed-progs

deb:
	scripts/ensure-deps.sh deb pkg-config
	@# The packages' version is the crates'.
	test "$$(dpkg-parsechangelog -SVersion)" = "$(VERSION)" || \
	  { echo "deb: debian/changelog's version is not $(VERSION)"; exit 1; }
	rm -rf $(DEB_OUT) && mkdir -p $(DEB_OUT)
	@# (-d: the Rust toolchain may be rustup's, not Debian's packages.) The packages are
	@# written beside the tree, where Debian's tools put them, and moved into $(DEB_OUT)
	@# with the .changes that lists them.
	dpkg-buildpackage -b -us -uc -d
	fakeroot debian/rules clean
	for f in $$(sed -n '/^Files:/,/^[^ ]/s/^ .* \([^ ]*\)$$/\1/p' ../$(DEB_ID).changes) $(DEB_ID).changes; do \
	  mv ../$$f $(DEB_OUT)/ || exit 1; \
	done
	lintian --fail-on error,warning $(DEB_OUT)/$(DEB_ID).changes
	@echo "deb: $$(ls $(DEB_OUT)/*.deb | xargs -n 1 basename | tr '\n' ' ')(lintian: no error, no warning)"

# Built against the installed packages only, through the system's pkg-config (called by
# scripts/check-deb.sh while they are installed).
installed_link = $(CC) $(CFLAGS_T) $$(pkg-config --cflags $(1)) -o $@ $< $$(pkg-config --libs $(1))
$(eval $(call c_tests_in,$(INSTALLED_BIN),installed_link,))

$(INSTALLED_BIN)/exchange-full-static: c-tests/exchange.c c-tests/check.h
	mkdir -p $(INSTALLED_BIN)
	$(CC) $(CFLAGS_T) -static -o $@ $< $$(pkg-config --static --cflags --libs pmi) 2>$@.link-warnings

installed-progs: $(addprefix $(INSTALLED_BIN)/,$(TESTS) $(TESTS2) two_libs exchange-full-static)
	ln -sf /usr/bin/pmi-probe $(INSTALLED_BIN)/pmi-probe

# The drop-in programs are built against Slurm's library first, before it is replaced
# (their directory is named in mk/dropin.mk, read after this file).
check-deb: deb deps-hydra
	@$(MAKE) --no-print-directory $(DROPIN_BIN)/swap $(DROPIN_BIN)/dlopen
	rm -rf $(INSTALLED_BIN)
	MPIEXEC=$(MPIEXEC) scripts/check-deb.sh $(DEB_OUT)
