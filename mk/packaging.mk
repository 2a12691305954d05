# Packaging where HPC sites install software (issue 45): the release tarball, RPMs for
# RHEL-family systems, a Spack package and an EasyBuild easyconfig (docs/PACKAGING.md).
#
#   make dist             build/dist/libpmi-rs-VERSION.tar.gz: what git ls-files holds,
#                         the crates vendored (vendor/, .cargo/config.toml); checked
#   make rpm              build/rpm/: source and binary RPMs from that tarball with
#                         rpmbuild (RHEL's layout: packaging/rpm/macros.rhel), rpmlint
#                         with no error or warning
#   make check-rpm        (CI) unpack the binary RPMs into a scratch root, check every
#                         file's place and the sonames, build the C tests against that
#                         root and run them under Hydra (scripts/check-rpm.sh)
#   make check-packaging  the tarball built offline, then Spack and EasyBuild install it
#                         (scripts/check-spack.sh, scripts/check-easybuild.sh)

DIST_NAME := libpmi-rs-$(VERSION)
DIST_TAR  := $(BUILD)/dist/$(DIST_NAME).tar.gz
LIBPMI_CACHE ?= $(HOME)/.cache/libpmi
export LIBPMI_CACHE

.PHONY: dist check-dist rpm check-rpm rpm-progs check-packaging check-spack check-easybuild

# Made anew each time (a few seconds: cargo vendor reads cargo's cache of the registry).
dist:
	scripts/dist.sh $(BUILD)/dist
	scripts/dist.sh --check $(DIST_TAR)

# The tarball, unpacked anew, builds with the network shut (cargo --frozen) and an empty
# cargo home: nothing comes from outside it.
DIST_TRY := $(BUILD)/dist-try
check-dist: dist
	rm -rf $(DIST_TRY) && mkdir -p $(DIST_TRY)/cargo-home
	tar -C $(DIST_TRY) -xzf $(DIST_TAR)
	CARGO_HOME=$(CURDIR)/$(DIST_TRY)/cargo-home CARGO_NET_OFFLINE=true \
	  $(MAKE) --no-print-directory -C $(DIST_TRY)/$(DIST_NAME) lib CARGO="cargo --frozen" >$(DIST_TRY)/build.log 2>&1 || \
	  { tail -n 30 $(DIST_TRY)/build.log; echo "check-dist: the tarball does not build offline"; exit 1; }
	@echo "check-dist: $(DIST_TAR) builds offline (cargo --frozen, empty CARGO_HOME)"

# --- RPM -------------------------------------------------------------------------------------
RPM_TOP   := $(BUILD)/rpm
RPM_SPEC  := packaging/rpm/libpmi-rs.spec
# (--nodeps: the BuildRequires are RHEL's package names; here the toolchain is rustup's
# and rpm's own database is empty.)
RPMBUILD  := rpmbuild --load $(CURDIR)/packaging/rpm/macros.rhel --define '_topdir $(CURDIR)/$(RPM_TOP)' --nodeps

rpm: dist
	scripts/ensure-deps.sh rpm
	@# The packages' version is the crates'.
	test "$$(rpmspec -q --srpm --qf '%{version}' $(RPM_SPEC) 2>/dev/null)" = "$(VERSION)" || \
	  { echo "rpm: $(RPM_SPEC)'s Version is not $(VERSION)"; exit 1; }
	rm -rf $(RPM_TOP) && mkdir -p $(RPM_TOP)/SOURCES
	cp $(DIST_TAR) $(RPM_TOP)/SOURCES/
	$(RPMBUILD) -ba $(RPM_SPEC) >$(RPM_TOP)/rpmbuild.log 2>&1 || \
	  { tail -n 40 $(RPM_TOP)/rpmbuild.log; echo "rpm: rpmbuild failed (log: $(RPM_TOP)/rpmbuild.log)"; exit 1; }
	@# (Every finding is a failure: the summary must say 0 errors, 0 warnings.)
	rpmlint -c packaging/rpm/rpmlint.toml -r packaging/rpm/libpmi-rs.rpmlintrc $(RPM_SPEC) \
	  $(RPM_TOP)/SRPMS/*.rpm $(RPM_TOP)/RPMS/*/*.rpm >$(RPM_TOP)/rpmlint.log 2>&1; \
	  grep -q ' 0 errors, 0 warnings' $(RPM_TOP)/rpmlint.log || \
	  { cat $(RPM_TOP)/rpmlint.log; echo "rpm: rpmlint found the above"; exit 1; }
	@grep ' checked;' $(RPM_TOP)/rpmlint.log
	@echo "rpm: $$(cd $(RPM_TOP) && ls SRPMS/*.rpm RPMS/*/*.rpm | xargs -n 1 basename | tr '\n' ' ')(rpmlint: no error, no warning)"

# The C tests built against the unpacked RPMs only (scripts/check-rpm.sh calls this with
# its root): the root's headers and libraries through its own pkg-config files.
RPM_ROOT  := $(BUILD)/rpm-root
RPM_BIN   := $(BUILD)/c-tests-rpm
RPM_PC     = PKG_CONFIG_SYSROOT_DIR=$(RPM_ROOT) PKG_CONFIG_LIBDIR=$(RPM_ROOT)/usr/lib64/pkgconfig pkg-config
rpm_link   = $(CC) $(CFLAGS_T) $$($(RPM_PC) --cflags $(1)) -o $@ $< $$($(RPM_PC) --libs $(1))
$(eval $(call c_tests_in,$(RPM_BIN),rpm_link,))

$(RPM_BIN)/exchange-full-static: c-tests/exchange.c c-tests/check.h
	mkdir -p $(RPM_BIN)
	$(CC) $(CFLAGS_T) -static -o $@ $< $$($(RPM_PC) --static --cflags --libs pmi) 2>$@.link-warnings

rpm-progs: $(addprefix $(RPM_BIN)/,$(TESTS) $(TESTS2) two_libs exchange-full-static)

check-rpm: rpm deps-hydra
	MPIEXEC=$(MPIEXEC) scripts/check-rpm.sh $(RPM_TOP)/RPMS/$$(rpm --eval '%{_arch}') $(RPM_ROOT) $(RPM_BIN)

# --- Spack and EasyBuild ---------------------------------------------------------------------
# Spack from a clone outside the tree (SPACK_ROOT, SPACK_PACKAGES, SPACK_MIRROR: defaults
# under LIBPMI_CACHE; scripts/check-spack.sh says how to get each when it is missing);
# EasyBuild from PyPI into a venv under LIBPMI_CACHE, with Debian's Lmod.
check-spack: dist deps-hydra
	scripts/ensure-deps.sh venv pkg-config
	MPIEXEC=$(MPIEXEC) scripts/check-spack.sh $(DIST_TAR) $(BUILD)/spack

check-easybuild: dist deps-hydra
	scripts/ensure-deps.sh venv lmod pkg-config
	MPIEXEC=$(MPIEXEC) scripts/check-easybuild.sh $(DIST_TAR) $(BUILD)/easybuild

# Not in CI (docs/PACKAGING.md gives each check's time): Spack needs its sources and a
# mirror with its compiler wrapper, which CI's machine cannot download.
check-packaging: check-dist check-spack check-easybuild
	@echo "check-packaging: the tarball builds offline; Spack and EasyBuild install it as expected"
