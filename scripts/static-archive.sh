#!/usr/bin/env bash
# The static archive as a C system library ships it: one object whose only global
# symbols are the API, so that nothing of Rust's own (the standard library, the
# allocator shims, the unwinder) can meet another Rust static library's in a program.
#
#   scripts/static-archive.sh CARGO_ARCHIVE SYMBOLS OUT.a
#   scripts/static-archive.sh --private-libs
#
# The second form prints what a static link needs beside the archive (pkg-config's
# Libs.private): what rustc says Rust's standard library needs, less the C library
# (always linked) and, where gcc has libgcc_eh.a, the unwinder (inside the archive).
#
# CARGO_ARCHIVE is the staticlib cargo made (every object of the crate and of std);
# SYMBOLS the exported names, one a line (symbols.txt). Steps: a relocatable link of the
# whole archive with gcc's unwinder (libgcc_eh.a, as the shared library has it), keeping
# only what the API reaches (--gc-sections from the API's names); every COMDAT group
# renamed after the archive (two objects' groups of one name would be merged by the
# linker, and one of them then points at a symbol made local); every global but the
# API's made local; debug info, the embedded bitcode and the symbols no relocation needs
# removed.
set -euo pipefail
eh=$(${CC:-cc} -print-file-name=libgcc_eh.a)
[ -f "$eh" ] || eh=
if [ "$1" = --private-libs ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    : >"$tmp/e.rs"
    ${RUSTC:-rustc} --crate-type staticlib --crate-name e --print native-static-libs \
        -o "$tmp/e.a" "$tmp/e.rs" 2>&1 | sed -n 's/.*native-static-libs: //p' | tr ' ' '\n' |
        grep -vx -e -lc ${eh:+-e -lgcc_s} | tr '\n' ' ' | sed 's/ *$//'
    echo
    exit
fi
in=$1 syms=$2 out=$3
name=$(basename "$out" .a)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
roots=()
while read -r sym; do [ -n "$sym" ] && roots+=(-u "$sym"); done <"$syms"
${LD:-ld} -r --gc-sections "${roots[@]}" -o "$tmp/all.o" --whole-archive "$in" --no-whole-archive $eh
readelf -g "$tmp/all.o" | sed -n "s/^COMDAT group section \[ *[0-9]*\] \`.group' \[\(.*\)\] contains.*/\1 $name.\1/p" \
    >"$tmp/groups.txt"
${OBJCOPY:-objcopy} --redefine-syms="$tmp/groups.txt" --keep-global-symbols="$syms" \
    --strip-debug --strip-unneeded --remove-section=.llvmbc --remove-section=.llvmcmd \
    "$tmp/all.o" "$tmp/$name.o"
rm -f "$out"
${AR:-ar} rcD "$out" "$tmp/$name.o"
