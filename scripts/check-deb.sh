#!/usr/bin/env bash
# `make check-deb` (CI): install the packages `make deb` built, run the drop-in tests and
# the C tests against the installed files, remove them, and check the machine is as
# before. As root; it changes the machine's packages while it runs.
#
#   scripts/check-deb.sh DEBDIR
#
# The packages take the place of Slurm's client libraries (Conflicts/Replaces/Provides
# libpmi0, libpmi2-0 and their -dev): apt removes those while ours are installed. They
# are fetched first (the exact versions installed) into LIBPMI_CACHE/debs, and put back
# at the end, on failure too, with their automatic-install marks. "As before": every
# package's name, version and state, the automatic marks, and the files under the paths
# either side ships (PATHS below), contents included.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
debdir=$(cd "$1" && pwd)
cache=${LIBPMI_CACHE:-$HOME/.cache/libpmi}/debs
work=$root/build/check-deb
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
ours=(libpmi0-rs libpmi2-0-rs libpmi-rs-dev pmi-probe)
theirs=(libpmi0 libpmi0-dev libpmi2-0 libpmi2-0-dev)
PATHS=(/usr/lib/$arch/libpmi* /usr/lib/$arch/pkgconfig/pmi* /usr/include/pmi*.h /usr/include/slurm
       /usr/bin/pmi-probe /usr/share/man/man1/pmi-probe.1.gz /usr/share/man/man3/pmi*.3.gz)
say() { echo "check-deb: $*"; }
[ "$(id -u)" = 0 ] || { say "needs root (it installs and removes packages)"; exit 1; }
export DEBIAN_FRONTEND=noninteractive
rm -rf "$work" && mkdir -p "$work" "$cache"

# The machine as it stands: packages, automatic marks, and the files at PATHS.
snapshot() { # FILE
    {
        dpkg-query -W -f '${Package}:${Architecture}\t${Version}\t${db:Status-Abbrev}\n' | sort
        echo "-- automatic"
        apt-mark showauto | sort
        echo "-- files"
        local p
        for p in "${PATHS[@]}"; do
            [ -e "$p" ] || [ -L "$p" ] || continue
            find "$p" \( -type f -o -type l \) -print0 | sort -z |
                xargs -0 -r stat -c '%n %F %a %s %N' 
            find "$p" -type f -print0 | sort -z | xargs -0 -r sha256sum
        done
    } >"$1"
}
snapshot "$work/before.txt"

# Slurm's packages that are installed, fetched as installed, to put back.
restore=() auto=()
for p in "${theirs[@]}"; do
    v=$(dpkg-query -W -f '${Version}' "$p" 2>/dev/null) || continue
    [ "$(dpkg-query -W -f '${db:Status-Abbrev}' "$p")" = "ii " ] || continue
    f=$(ls "$cache/${p}_${v//:/%3a}_"*.deb 2>/dev/null | head -n 1)
    if [ -z "$f" ]; then
        (cd "$cache" && apt-get download -qq "$p=$v") || { say "cannot fetch $p $v to put it back"; exit 1; }
        f=$(ls "$cache/${p}_${v//:/%3a}_"*.deb | head -n 1)
    fi
    restore+=("$f")
    apt-mark showauto "$p" | grep -qx "$p" && auto+=("$p")
done
say "will put back: ${restore[*]##*/}${auto:+ (automatic: ${auto[*]})}"

put_back() {
    say "removing ours, putting back Slurm's"
    apt-get purge -y -qq "${ours[@]}" >"$work/purge.log" 2>&1 || true
    if [ ${#restore[@]} -gt 0 ]; then
        apt-get install -y -qq --no-install-recommends "${restore[@]}" >"$work/restore.log" 2>&1 ||
            { say "could not reinstall Slurm's packages"; cat "$work/restore.log"; }
        [ ${#auto[@]} = 0 ] || apt-mark auto "${auto[@]}" >/dev/null
    fi
}
trap put_back EXIT

status=0
say "installing ${ours[*]}"
if ! apt-get install -y -qq --no-install-recommends "$debdir"/*.deb >"$work/install.log" 2>&1; then
    say "apt-get install failed"; cat "$work/install.log"; exit 1
fi
dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\n' "${ours[@]}" "${theirs[@]}" 2>/dev/null |
    sed 's/^/    /'

# The tests, against the installed files only.
(
    unset LD_LIBRARY_PATH PKG_CONFIG_PATH
    make -C "$root" --no-print-directory installed-progs >"$work/build.log" 2>&1 ||
        { cat "$work/build.log"; exit 1; }
    MPIEXEC=${MPIEXEC:-mpiexec.hydra} "$root/dropin-tests/installed.sh" "$root/build/c-tests-installed" \
        "$root/build/dropin" || exit 1
    HARNESS_LOADED_FROM=/usr/lib/$arch/libpmi.so.0 MPIEXEC=${MPIEXEC:-mpiexec.hydra} \
        "$root/c-tests/run-tests.sh" "$root/build/c-tests-installed" "" || exit 1
) || status=1

put_back
trap - EXIT
snapshot "$work/after.txt"
if diff -u "$work/before.txt" "$work/after.txt" >"$work/changed.diff"; then
    say "the machine is as before ($(grep -c . "$work/before.txt") lines: packages, marks, files)"
else
    say "the machine changed:"; head -n 40 "$work/changed.diff"; status=1
fi
[ "$status" = 0 ] && say "all passed"
exit $status
