#!/usr/bin/env bash
# Install what `make demo`, `make check` and `make compat` need and the machine lacks:
# Debian's mpich (mpiexec.hydra), libpmi0-dev (the reference pmi.h and Slurm's
# libpmi.so.0), Slurm and munge, libpmix2 (Slurm's --mpi=pmix), and the pinned cbindgen. Says exactly what to install when it cannot do it itself.
# Usage: scripts/ensure-deps.sh [hydra] [slurm-header] [slurm-header2] [cbindgen] [pkg-config] [valgrind] [mandoc]
#                                [man] [cxx] [slurm] [pmix] [pmix-dev] [unzip] [pip] [iproute] [deb]
#                                [rpm] [venv] [lmod]
set -eu
CBINDGEN_VERSION=${CBINDGEN_VERSION:-0.29.0}
want=("$@")
[ ${#want[@]} -gt 0 ] || want=(hydra slurm-header slurm-header2 cbindgen pkg-config valgrind mandoc pmix pmix-dev)

packages=()
for w in "${want[@]}"; do
    case $w in
        hydra) command -v mpiexec.hydra >/dev/null || packages+=(mpich) ;;
        slurm-header) [ -f /usr/include/slurm/pmi.h ] || packages+=(libpmi0-dev) ;;
        slurm-header2) [ -f /usr/include/slurm/pmi2.h ] || packages+=(libpmi2-0-dev) ;;
        cbindgen) ;;
        pkg-config) command -v pkg-config >/dev/null || packages+=(pkgconf) ;;
        valgrind) command -v valgrind >/dev/null || packages+=(valgrind) ;;
        mandoc) command -v mandoc >/dev/null || packages+=(mandoc) ;;
        man) command -v groff >/dev/null || packages+=(groff-base)
             command -v man >/dev/null || packages+=(man-db) ;;
        cxx) command -v "${CXX:-g++}" >/dev/null || packages+=(g++) ;;
        pip) python3 -m pip --version >/dev/null 2>&1 || packages+=(python3-pip) ;;
        iproute) command -v ip >/dev/null && command -v ss >/dev/null || packages+=(iproute2) ;;
        slurm) command -v slurmd >/dev/null && command -v slurmctld >/dev/null &&
               command -v srun >/dev/null && command -v munged >/dev/null ||
               packages+=(slurmd slurmctld slurm-client munge) ;;
        pmix) [ -e /usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2 ] || packages+=(libpmix2) ;;
        pmix-dev) [ -f /usr/lib/x86_64-linux-gnu/pmix2/include/pmix.h ] || packages+=(libpmix-dev) ;;
        unzip) command -v unzip >/dev/null || packages+=(unzip) ;;
        deb) for p in dpkg-buildpackage:dpkg-dev dh:debhelper lintian:lintian fakeroot:fakeroot; do
                 command -v "${p%%:*}" >/dev/null || packages+=("${p#*:}")
             done ;;
        # rpmbuild, rpmlint, find-debuginfo (the -debuginfo packages), rpm2cpio and cpio.
        rpm) for p in rpmbuild:rpm rpmlint:rpmlint find-debuginfo:debugedit eu-strip:elfutils rpm2cpio:rpm2cpio \
                       cpio:cpio; do
                 command -v "${p%%:*}" >/dev/null || packages+=("${p#*:}")
             done ;;
        # Debian's python3 with venv and pip (the Spack and EasyBuild checks' own venv).
        venv) /usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null || packages+=(python3-venv) ;;
        # Lmod, the module tool EasyBuild's default configuration expects.
        lmod) [ -f /usr/share/lmod/lmod/init/bash ] || packages+=(lmod) ;;
        *) echo "ensure-deps: unknown dependency '$w'" >&2; exit 2 ;;
    esac
done

if [ ${#packages[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "ensure-deps: installing ${packages[*]} with apt-get"
        apt-get update -qq -o Acquire::Retries=3
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Acquire::Retries=3 --no-install-recommends "${packages[@]}" >/dev/null
    else
        echo "ensure-deps: missing Debian packages: ${packages[*]}" >&2
        echo "ensure-deps: run as root: apt-get install ${packages[*]}" >&2
        exit 1
    fi
fi

for w in "${want[@]}"; do
    if [ "$w" = cbindgen ]; then
        have=$(cbindgen --version 2>/dev/null | awk '{print $2}')
        if [ "$have" != "$CBINDGEN_VERSION" ]; then
            echo "ensure-deps: installing cbindgen $CBINDGEN_VERSION (found '${have:-none}')"
            cargo install --quiet --locked cbindgen --version "$CBINDGEN_VERSION"
        fi
    fi
done
