#!/usr/bin/env bash
# `make ci-stress`: CI as it runs on a busy machine. Each run clones the committed HEAD
# afresh (a clean clone, with shared/ beside it as CI has it) and runs `bash .ci/run`
# with CI=true and no standard input, while one busy loop per core takes every CPU.
#
#   scripts/ci-stress.sh [RUNS] [OUTDIR]     (default: 3 runs, build/ci-stress)
#
# Prints one line per run (its time, its exit status, and every retry the harness made,
# with its cause), then "ci-stress: N passed, N failed". A run fails if .ci/run fails or
# takes longer than CI_STRESS_LIMIT seconds (default 1800, CI's half hour).
# The caches outside the tree (~/.cache/libpmi, ~/.cache/libpmi-mpich) and installed
# packages are kept: the first run on a fresh machine installs them.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
out=$(mkdir -p "${2:-$root/build/ci-stress}" && cd "${2:-$root/build/ci-stress}" && pwd)
limit=${CI_STRESS_LIMIT:-1800}
work=$(mktemp -d /tmp/libpmi-ci-stress.XXXXXX)
busy=()
cleanup() {
    [ ${#busy[@]} = 0 ] || kill "${busy[@]}" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shared/ sits beside the clone in CI; the checkout's own neighbour is used when it has one.
[ -d "$root/../shared" ] && ln -s "$(cd "$root/../shared" && pwd)" "$work/shared"
head=$(git -C "$root" rev-parse --short HEAD)
for _ in $(seq "$(nproc)"); do
    (while :; do :; done) &
    busy+=($!)
done
echo "ci-stress: $runs clean clones of $head, .ci/run each, with ${#busy[@]} busy loops on $(nproc) cores"

passed=0 failed=0
for i in $(seq "$runs"); do
    clone=$work/run$i
    git clone -q "$root" "$clone"
    git -C "$clone" checkout -q "$head"
    log=$out/run$i.log
    start=$SECONDS
    (cd "$clone" && CI=true timeout -k 10 "$((limit + 600))" bash .ci/run </dev/null >"$log" 2>&1)
    status=$?
    took=$((SECONDS - start))
    retries=$(grep -c '^RETRY ' "$log")
    verdict=PASS
    if [ "$status" != 0 ]; then
        verdict=FAIL why="exit $status"
    elif [ "$took" -gt "$limit" ]; then
        verdict=FAIL why="over $limit s"
    fi
    if [ $verdict = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
    printf '%s run %d: %d s, .ci/run exit %d, %d retries%s (log: %s)\n' "$verdict" "$i" "$took" \
        "$status" "$retries" "${why:+, $why}" "$log"
    grep '^RETRY ' "$log" | sed 's/^/    /'
    [ $verdict = PASS ] || grep -E '^FAIL ' "$log" | sed 's/^/    /' | head -n 20
    rm -rf "$clone"
    unset why
done
echo "ci-stress: $passed passed, $failed failed"
[ "$failed" = 0 ]
