#!/usr/bin/env bash
# How well does the simulator predict the runtime, and does --algorithm auto
# pick the fastest? On this machine's shared memory, 4 ranks under mpirun:
#
# 1. `topocoll tune --calibrate --backend mpi` fits the node model;
# 2. for each of allreduce, bcast, reduce, allgather and alltoall,
#    `topocoll bench --backend mpi --baseline native --predict` times every
#    algorithm that applies, `auto`, and the MPI library's own collective,
#    each row with the simulator's prediction for its schedule;
# 3. the tables: auto against the native collective, predicted against
#    measured time, and the hit rate (auto's algorithm is the fastest
#    topocoll algorithm measured, or within 10% of it).
#
#   bash validation/tuning/run.sh [--quick] [--sizes LIST] [--out DIR]
#
# Needs a build with the MPI backend: cargo build --release --features mpi.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
topocoll="$root/target/release/topocoll"
sizes=8B,64B,512B,4KiB,32KiB,256KiB,2MiB,16MiB,64MiB
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) sizes=8B,4KiB,256KiB,4MiB; shift ;;
    --sizes) sizes=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "run.sh: unknown argument '$1' (--quick, --sizes LIST, --out DIR)" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=${out:-$(mktemp -d)}
mkdir -p "$work"
export TOPOCOLL_CACHE="$work/cache"
mpirun -np 4 "$topocoll" tune --calibrate --backend mpi </dev/null | tee "$work/calibration.txt"
for c in allreduce bcast reduce allgather alltoall; do
  algs=$("$topocoll" list | awk -v c="$c" '/^Algorithms/ {a=1} a && $1==c {print $2}' | paste -sd, -)
  mpirun -np 4 "$topocoll" bench --backend mpi --baseline native --predict -c "$c" \
    -a "auto,$algs" --sizes "$sizes" --format csv </dev/null >"$work/$c.csv"
done
python3 - "$work" <<'PY'
import csv, sys, statistics
work = sys.argv[1]
hits = near = points = 0
print("| collective | size (B) | auto's choice | auto (us) | native (us) | native / auto | fastest measured | predicted / measured, auto |")
print("|---|---:|---|---:|---:|---:|---|---:|")
errors = {}
for c in ["allreduce", "bcast", "reduce", "allgather", "alltoall"]:
    rows = [r for r in csv.DictReader(open(f"{work}/{c}.csv")) if r["avg_s"]]
    for size in sorted({int(r["size_bytes"]) for r in rows}):
        at = [r for r in rows if int(r["size_bytes"]) == size]
        auto = next(r for r in at if r["algorithm"].startswith("auto:"))
        native = next(r for r in at if r["algorithm"] == "native")
        ours = [r for r in at if r["algorithm"] != "native"]
        best = min(ours, key=lambda r: float(r["avg_s"]))
        choice = auto["algorithm"][5:].split("/")[0]
        hit = best is auto or best["algorithm"].split("/")[0] == choice
        close = float(auto["avg_s"]) <= 1.1 * float(best["avg_s"])
        points += 1; hits += hit; near += close
        for r in ours:
            if r["predicted_s"] and not r["algorithm"].startswith("auto:"):
                errors.setdefault(c, []).append(float(r["predicted_s"]) / float(r["avg_s"]))
        t, n = float(auto["avg_s"]), float(native["avg_s"])
        print(f"| {c} | {size} | {auto['algorithm'][5:]} | {t*1e6:.2f} | {n*1e6:.2f} | {n/t:.2f} | "
              f"{best['algorithm']}{' (hit)' if hit else ''} | {float(auto['predicted_s'])/t:.2f} |")
print()
print(f"hit rate: {hits}/{points} exact, {near}/{points} within 10% of the fastest measured")
print()
print("| collective | rows | predicted / measured: median | 10th percentile | 90th percentile |")
print("|---|---:|---:|---:|---:|")
for c, e in errors.items():
    e.sort()
    q = lambda f: e[min(len(e) - 1, int(f * len(e)))]
    print(f"| {c} | {len(e)} | {statistics.median(e):.2f} | {q(0.1):.2f} | {q(0.9):.2f} |")
PY
