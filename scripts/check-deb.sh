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
# at the end, on failure or interruption too, in the same apt transaction that removes
# ours, with their automatic-install marks. Nothing else may go: the install is simulated
# first and refused if apt would remove any other package. "As before": every package's
# name, version and state, the automatic marks, and every file either side could ship
# (found anew at each snapshot), contents included.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
debdir=$(cd "$1" && pwd)
cache=${LIBPMI_CACHE:-$HOME/.cache/libpmi}/debs
work=$root/build/check-deb
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
ours=(libpmi0-rs libpmi2-0-rs libpmi-rs-dev pmi-probe libpmi0-rs-dbgsym libpmi2-0-rs-dbgsym
    pmi-probe-dbgsym)
theirs=(libpmi0 libpmi0-dev libpmi2-0 libpmi2-0-dev)
# Where either side's files are, and the names they have there (searched at each
# snapshot, so that a file left behind is seen).
DIRS=(/usr/lib/$arch /usr/include /usr/bin /usr/share/man /usr/share/doc /usr/share/lintian
    /usr/lib/debug)
NAMES=(-name 'libpmi*' -o -name 'pmi*' -o -path '/usr/include/slurm/*' -o -path '/usr/lib/debug/.build-id/*')
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
        find "${DIRS[@]}" \( "${NAMES[@]}" \) \( -type f -o -type l -o -type d \) -print0 2>/dev/null |
            sort -z | xargs -0 -r stat -c '%n %F %a %s %N'
        find "${DIRS[@]}" \( "${NAMES[@]}" \) -type f -print0 2>/dev/null | sort -z |
            xargs -0 -r sha256sum
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
        (cd "$cache" && apt-get download -qq -o Acquire::Retries=3 "$p=$v") || { say "cannot fetch $p $v to put it back"; exit 1; }
        f=$(ls "$cache/${p}_${v//:/%3a}_"*.deb | head -n 1)
    fi
    restore+=("$f")
    apt-mark showauto "$p" | grep -qx "$p" && auto+=("$p")
done
say "will put back: ${restore[*]##*/}${auto:+ (automatic: ${auto[*]})}"

# Ours removed and Slurm's put back in one transaction (a package that needs libpmi0
# never sees it missing), once.
put_back() {
    trap - EXIT INT TERM HUP
    say "removing ours, putting back Slurm's"
    local installed=() p
    for p in "${ours[@]}"; do
        dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^i' && installed+=("$p-")
    done
    [ $((${#installed[@]} + ${#restore[@]})) = 0 ] && return 0
    # (PKG- in an install removes PKG; ours have no conffiles, so nothing is left.)
    apt-get install -y -qq --no-install-recommends "${restore[@]}" "${installed[@]}" \
        >"$work/restore.log" 2>&1 || { say "could not put the machine back:"; cat "$work/restore.log"; }
    for p in "${ours[@]}"; do
        dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^r' && dpkg --purge "$p" >/dev/null
    done
    [ ${#auto[@]} = 0 ] || apt-mark auto "${auto[@]}" >/dev/null
}
# After put_back: the machine as before? (0 if so)
as_before() {
    snapshot "$work/after.txt"
    if diff -u "$work/before.txt" "$work/after.txt" >"$work/changed.diff"; then
        say "the machine is as before ($(grep -c . "$work/before.txt") lines: packages, marks, files)"
    else
        say "the machine changed:"; head -n 40 "$work/changed.diff"; return 1
    fi
}
trap put_back EXIT
trap 'put_back; as_before; exit 1' INT TERM HUP

# What apt would do: install ours, remove Slurm's four (those installed), nothing else.
apt-get install -s --no-install-recommends "$debdir"/*.deb >"$work/simulate.log" 2>&1 ||
    { say "apt-get cannot install the packages:"; cat "$work/simulate.log"; exit 1; }
others=$(sed -n 's/^Remv \([^ :]*\).*/\1/p' "$work/simulate.log" | grep -vxF -f <(printf '%s\n' "${theirs[@]}") || true)
if [ -n "$others" ]; then
    say "installing ours would also remove: $others; not going on"; exit 1
fi

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
as_before || status=1
[ "$status" = 0 ] && say "all passed"
exit $status
