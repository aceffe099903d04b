#!/usr/bin/env bash
# Writes pgo/topocoll.profdata, the profile an opt-in profile-guided build
# uses (RUSTC_WRAPPER=scripts/rustc-pgo.sh cargo build --release; pgo/ is
# not kept in git): builds an instrumented binary, runs the
# simulations whose speed matters (the rank-by-rank engine on Trinaryx3's
# pipelines, the event engine on an all-to-all, a ring), and merges what
# they counted. Run it after changing the simulator's hot path; without it
# the build still works, with the changed functions unprofiled.
# Needs an llvm-profdata that reads the compiler's raw profiles: the
# compiler's own (`rustup component add llvm-tools`), or else Debian's
# LLVM 19 (`apt-get install llvm-19`), which reads those of rustc 1.95's
# LLVM 22 and writes a profile it takes (checked: the same instructions as
# a profile merged by LLVM 22's own tool).
set -euo pipefail
cd "$(dirname "$0")/.."
sysroot=$(rustc --print sysroot)
profdata=$(find "$sysroot" -name llvm-profdata -type f | head -1)
[ -x "$profdata" ] || profdata=$(command -v llvm-profdata-19 || true)
[ -x "$profdata" ] || {
    echo "llvm-profdata not found: rustup component add llvm-tools, or apt-get install llvm-19" >&2
    exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
P="--bandwidth 3.8666666666666667e9 --latency 0 --overhead 1.27e-6 --compute-bandwidth 6.58e9 --engines 4"
# Builds the crate instrumented with the features given, and runs it.
profile() {
    RUSTC_WRAPPER= RUSTFLAGS="-Cprofile-generate=$work/raw" \
        cargo build --release --target-dir "$work/target" "$@" || return 1
    bin="$work/target/release/topocoll"
    for c in allreduce reduce; do
        "$bin" simulate --stream -t torus:48x6x32 -c $c -a trinaryx3 --size 64MiB $P --no-verify >/dev/null
    done
    "$bin" simulate --stream -t torus:48x6x32 -c bcast -a trinaryx3 --size 64MiB \
        --bandwidth 3.8666666666666667e9 --latency 0 --overhead 1.27e-6 --engines 4 --no-verify >/dev/null
    "$bin" simulate --stream -t torus:12x6x8 -c allreduce -a trinaryx3 --size 16MiB $P --threads 1 --no-verify >/dev/null
    "$bin" simulate --stream -t torus:12x6x8 -c allreduce -a ring --size 4MiB $P --no-verify >/dev/null
    "$bin" simulate -t torus:16x16 -c alltoall -a a2at --size 4KiB --no-verify >/dev/null
}
profile
# The crate's symbol names change with its features, and the profile finds
# functions by name: a build with the MPI backend needs its own runs (the
# same simulations; MPI starts only for `run --backend mpi`). Skipped where
# MPI or libclang is missing.
profile --features mpi || echo "no profile for --features mpi (its build failed)" >&2
mkdir -p pgo
"$profdata" merge --sparse -o pgo/topocoll.profdata "$work/raw"
rustc -vV | sed -n 's/^LLVM version: //p' > pgo/llvm-version
echo "pgo/topocoll.profdata written for LLVM $(cat pgo/llvm-version)"
