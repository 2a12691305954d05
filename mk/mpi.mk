# `make mpi-check`: MPICH's own MPI layer (ch3:nemesis, built from Debian's source with
# an external libpmi.so.0) runs real MPI programs on top of this library under Hydra:
# init + allreduce (one node, two simulated nodes, -pmi-port), MPI_Comm_spawn, and
# MPI_Publish_name/MPI_Comm_accept against MPI_Lookup_name/MPI_Comm_connect.
# The MPICH build is cached outside the tree (scripts/build-mpich.sh, MPICH_CACHE=).
# See docs/MPI.md.

MPI_BIN      := $(BUILD)/mpi-tests
MPI_PROGS    := allreduce spawn pubname longport
# Seconds a job may take; empty: the harness's bound (scripts/harness.sh).
MPI_TIMEOUT  ?=
MPI_CFLAGS   := -std=c99 $(CWARN) -pedantic -g -O1
# Set by the recursive make below to the prefix scripts/build-mpich.sh prints.
MPICH_PREFIX ?=

.PHONY: mpi-check mpi-check-run mpi-progs mpich-build

# Build (or find in the cache) the MPICH that loads an external libpmi.so.0.
mpich-build:
	@mkdir -p $(BUILD)
	scripts/build-mpich.sh > $(BUILD)/mpich-prefix.out
	@# the prefix file changes (and the programs are rebuilt) only when the prefix does
	@tail -n 1 $(BUILD)/mpich-prefix.out > $(BUILD)/mpich-prefix.tmp && rm -f $(BUILD)/mpich-prefix.out
	@cmp -s $(BUILD)/mpich-prefix.tmp $(BUILD)/mpich-prefix && rm -f $(BUILD)/mpich-prefix.tmp \
	  || mv $(BUILD)/mpich-prefix.tmp $(BUILD)/mpich-prefix

mpi-check: lib deps-hydra mpich-build
	@$(MAKE) --no-print-directory mpi-check-run MPICH_PREFIX="$$(cat $(BUILD)/mpich-prefix)"

$(MPI_BIN)/%: mpi-tests/%.c mpi-tests/mpit.h c-tests/check.h $(BUILD)/mpich-prefix $(MPICH_PREFIX)/lib/libmpi.so.12
	@test -n "$(MPICH_PREFIX)" || { echo "mpi-check: MPICH_PREFIX unset (run make mpi-check)"; exit 1; }
	@mkdir -p $(MPI_BIN)
	$(MPICH_PREFIX)/bin/mpicc $(MPI_CFLAGS) -o $@ $<

mpi-progs: $(addprefix $(MPI_BIN)/,$(MPI_PROGS))

mpi-check-run: mpi-progs
	MPIEXEC=$(MPIEXEC) MPI_TIMEOUT=$(MPI_TIMEOUT) mpi-tests/run-mpi-tests.sh $(MPI_BIN) $(LIB)

# `make mpich5-check MPICH5_PREFIX=DIR`: MPICH 5's libmpi built by hand on this library
# (configured --with-pmi= an install of it; docs/MPI.md says how: nothing in this tree
# fetches or builds MPICH 5) runs classic programs and MPI-4 sessions under
# MPICH5_LAUNCHERS (one harness kind each; -vc kinds need `make cluster`).
MPICH5_PREFIX    ?=
MPICH5_BIN       := $(BUILD)/mpich5-tests
MPICH5_PROGS     := allreduce sessions
MPICH5_LAUNCHERS ?= hydra5 prterun srun-pmix

.PHONY: mpich5-check mpich5-progs

$(MPICH5_BIN)/%: mpi-tests/%.c mpi-tests/mpit.h c-tests/check.h | lib
	@test -x "$(MPICH5_PREFIX)/bin/mpicc" || { echo "mpich5-check: no MPICH5_PREFIX/bin/mpicc: build MPICH 5 on this library as docs/MPI.md says, then make mpich5-check MPICH5_PREFIX=<its prefix>"; exit 2; }
	@mkdir -p $(MPICH5_BIN)
	@# (libmpi's RUNPATH may name the system's folder first, where Slurm's libpmi.so.0,
	@# without PMI_Barrier_group, would be taken for the link: docs/MPI.md.)
	$(MPICH5_PREFIX)/bin/mpicc $(MPI_CFLAGS) -Wl,-rpath-link,$(CURDIR)/$(LIB) -o $@ $<

mpich5-progs: $(addprefix $(MPICH5_BIN)/,$(MPICH5_PROGS))

mpich5-check: lib mpich5-progs
	@eval "$$(scripts/launchers.sh setup $(MPICH5_LAUNCHERS))" && rc=0 && \
	for k in $(MPICH5_LAUNCHERS); do \
	  LAUNCHER=$$k MPI_FLAVOUR=mpich5 MPI_TIMEOUT=$(MPI_TIMEOUT) \
	    mpi-tests/run-mpi-tests.sh $(MPICH5_BIN) $(LIB) || rc=1; \
	done; exit $$rc
