#!/usr/bin/env bash
# The interposed collectives' latency with libtopocoll_mpi.so preloaded
# against the MPI library's own, in one run: crates/mpi/tests/c/latency.c,
# native and preloaded in turn, ROUNDS times, the least time of each point.
# Prints a Markdown table: collective, size, native us, topocoll us, ratio.
#
#   scripts/pmpi-latency.sh [NP] [COLLECTIVES] [MAX_BYTES]
#   TOPOCOLL_ALGORITHMS=allreduce=rabenseifner,bcast=binomial scripts/pmpi-latency.sh 4 allreduce,bcast
#   TOPOCOLL_TABLE=table.json scripts/pmpi-latency.sh 4 allreduce
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
np=${1:-4}
colls=${2:-allreduce,bcast,reduce,allgather,alltoall,reduce_scatter,scatter,gather,barrier}
max=${3:-67108864}
rounds=${ROUNDS:-3}
lib="$PWD/target/release/libtopocoll_mpi.so"
[ -f "$lib" ] || cargo build --release -p topocoll-mpi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
${MPICC:-mpicc} -O2 -o "$out/latency" crates/mpi/tests/c/latency.c
for r in $(seq "$rounds"); do
  env -u LD_PRELOAD mpirun -np "$np" "$out/latency" "$colls" "$max" </dev/null >"$out/native.$r"
  LD_PRELOAD="$lib" mpirun -x LD_PRELOAD -np "$np" "$out/latency" "$colls" "$max" </dev/null >"$out/topocoll.$r"
done
python3 - "$out" "$rounds" <<'PY'
import csv, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def best(kind):
    m = {}
    for r in range(1, rounds + 1):
        for row in csv.DictReader(open(f"{out}/{kind}.{r}")):
            k = (row["collective"], int(row["size_bytes"]))
            m[k] = min(m.get(k, float("inf")), float(row["us"]))
    return m
nat, tc = best("native"), best("topocoll")
print("| collective | size (B) | native us | topocoll us | topocoll/native |")
print("|---|---:|---:|---:|---:|")
for k in nat:
    print(f"| {k[0]} | {k[1]} | {nat[k]:.1f} | {tc[k]:.1f} | {tc[k]/nat[k]:.2f} |")
PY
