# libpmi-rs for Spack (issue 45; docs/PACKAGING.md). Tested by scripts/check-spack.sh
# (make check-packaging): spack install from a local mirror, with no network.

import os

from spack_repo.builtin.build_systems.makefile import MakefilePackage

from spack.package import *


class LibpmiRs(MakefilePackage):
    """PMI-1 and PMI-2 client libraries in Rust: libpmi.so.0 (the 33 functions of
    RFC 13) and libpmi2.so.0 (MPICH's pmi2.h with Slurm's PMIX_Ring), drop-ins for
    Slurm's and PMIx's, speaking the PMI wire protocols to Hydra, Slurm and Flux, or
    a PMIx server through the PMIx client library loaded at run time; with pmi-probe."""

    license("MIT")

    # The release tarball `make dist` writes, with every crate vendored: the build needs
    # no network. It is not published where Spack could download it: a site puts
    # it in a Spack mirror (docs/PACKAGING.md), which Spack looks in before the URL.
    manual_download = True

    # A tarball cannot hold its own checksum: a site adds it to its copy of this file
    # (sha256sum libpmi-rs-0.2.0.tar.gz) or installs with --no-checksum, and
    # scripts/check-spack.sh adds it to the copy it tests.
    version("0.2.0")

    variant("pmi2", default=True, description="Install libpmi2.so.0, pmi2.h and pmi2.pc")
    variant("static", default=True, description="Install the static archives libpmi.a and libpmi2.a")

    depends_on("c", type="build")
    depends_on("gmake", type="build")
    # rust-version in Cargo.toml.
    depends_on("rust@1.85:", type="build")

    def url_for_version(self, version):
        return f"file://{os.getcwd()}/libpmi-rs-{version}.tar.gz"

    @property
    def build_targets(self):
        # --frozen: Cargo.lock as shipped and the vendored crates only (CARGO_HOME is
        # the stage's own, set by the rust package).
        return ["lib", "CARGO=cargo --frozen"]

    @property
    def install_targets(self):
        return ["install", f"PREFIX={self.prefix}", "CARGO=cargo --frozen"]

    @run_after("install")
    def leave_out(self):
        """One cargo build makes both libraries and their archives; the variants
        decide what stays in the prefix."""
        lib, man3 = self.prefix.lib, self.prefix.share.man.man3
        gone = []
        if self.spec.satisfies("~pmi2"):
            gone += [join_path(lib, f) for f in os.listdir(lib) if f.startswith("libpmi2.")]
            gone += [join_path(self.prefix.include, "pmi2.h"), join_path(lib, "pkgconfig", "pmi2.pc")]
            gone += [join_path(man3, f) for f in os.listdir(man3) if f.startswith(("pmi2.", "PMI2_", "PMIX_"))]
        if self.spec.satisfies("~static"):
            gone += [join_path(lib, f) for f in ("libpmi.a", "libpmi2.a")]
        for f in gone:
            if os.path.lexists(f):
                os.remove(f)

    def setup_run_environment(self, env: EnvironmentModifications) -> None:
        # A drop-in is found at run time by programs linked elsewhere (against Slurm's
        # libpmi.so.0, or Intel MPI's dlopen): `spack load libpmi-rs` puts it first.
        env.prepend_path("LD_LIBRARY_PATH", self.prefix.lib)

    @property
    def libs(self):
        names = ["libpmi", "libpmi2"] if self.spec.satisfies("+pmi2") else ["libpmi"]
        return find_libraries(names, root=self.prefix.lib, shared=True)

    @property
    def headers(self):
        return find_headers(["pmi", "pmi2"] if self.spec.satisfies("+pmi2") else ["pmi"], self.prefix.include)
