#!/usr/bin/env bash
# How well does the simulator predict the runtime, and is --algorithm auto
# faster than the MPI library's own collective? On this machine's shared
# memory, 4 ranks under mpirun:
#
# 1. `topocoll tune --calibrate --backend mpi` fits the node model;
# 2. for each of allreduce, bcast, reduce, allgather and alltoall,
#    `topocoll bench --backend mpi --baseline native --predict` times every
#    algorithm that applies, `auto`, and the MPI library's own collective,
#    each row with the simulator's prediction for its schedule;
# 3. the tables: auto against the native collective, predicted against
#    measured time, and the hit rate (auto's algorithm is the fastest
#    topocoll algorithm measured, or within 10% of it);
# 4. `topocoll bench --backend threads,mpi --baseline native -a auto` from
#    8 B to 1 GiB (block collectives: 256 MiB blocks, 1 GiB per rank): the
#    table of native / auto on both backends, and from 1 MiB up the native
#    collective's time over the least time any implementation can take: the
#    bytes it must copy over the machine's copy rate (copy_bandwidth.c, two
#    threads, on buffers as large as the collective's). With --repeat N the
#    benches run N times and each ratio is the median of the N (with the
#    lowest and highest);
# 5. persistent.c: an 8-byte recursive-doubling allreduce with MPI_Isend, with
#    persistent requests (MPI_Send_init, MPI_Startall) and MPI_Allreduce, on
#    4 and 2 ranks: whether persistent requests would make the mpi backend's
#    small messages cheaper.
#
#   bash validation/tuning/run.sh [--quick] [--sizes LIST] [--ratios-only] [--repeat N] [--out DIR]
#
# Needs a build with the MPI backend: cargo build --release --features mpi.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
topocoll="$root/target/release/topocoll"
sizes=8B,64B,512B,4KiB,32KiB,256KiB,2MiB,16MiB,64MiB
ratio_sizes=8B,64B,512B,4KiB,32KiB,256KiB,1MiB,4MiB,16MiB,64MiB,256MiB,1GiB
repeat=1
out=""
algorithms=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) sizes=8B,4KiB,256KiB,4MiB; ratio_sizes=$sizes; shift ;;
    --sizes) sizes=$2; ratio_sizes=$2; shift 2 ;;
    --ratios-only) algorithms=no; shift ;;
    --repeat) repeat=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "run.sh: unknown argument '$1' (--quick, --sizes LIST, --ratios-only, --repeat N, --out DIR)" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=${out:-$(mktemp -d)}
mkdir -p "$work"
export TOPOCOLL_CACHE="$work/cache"
mpirun -np 4 "$topocoll" tune --calibrate --backend mpi </dev/null | tee "$work/calibration.txt"
collectives="allreduce bcast reduce allgather alltoall"
[ "$algorithms" = yes ] || collectives=""
for c in $collectives; do
  algs=$("$topocoll" list | awk -v c="$c" '/^Algorithms/ {a=1} a && $1==c {print $2}' | paste -sd, -)
  mpirun -np 4 "$topocoll" bench --backend mpi --baseline native --predict -c "$c" \
    -a "auto,$algs" --sizes "$sizes" --format csv </dev/null >"$work/$c.csv"
done
[ "$algorithms" = yes ] && python3 - "$work" <<'PY'
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

# 4. auto on both backends against the native collective, 8 B to 1 GiB.
gcc -O2 -pthread "$here/copy_bandwidth.c" -o "$work/copy_bandwidth"
for r in $(seq "$repeat"); do
  for c in allreduce bcast reduce allgather alltoall; do
    s=$ratio_sizes
    case $c in allgather | alltoall) s=$(echo "$s" | sed 's/,1GiB//') ;; esac
    mpirun -np 4 "$topocoll" bench --backend threads,mpi --baseline native -c "$c" -a auto \
      --sizes "$s" --format csv </dev/null >"$work/$c-auto-$r.csv"
  done
done
python3 - "$work" "$repeat" <<'PY'
import csv, statistics, subprocess, sys
work, repeat = sys.argv[1], int(sys.argv[2])
P = 4
# Bytes any implementation must copy (or the equivalent memory traffic, in
# bytes read and written over two) for one collective of `n` bytes (a block
# for allgather and alltoall) on P ranks with separate buffers, and the
# bytes of all ranks' buffers (where the copies run: caches or memory).
least = {
    "allreduce": lambda n: P * n,            # read P inputs, write P outputs
    "bcast": lambda n: (P - 1) * n,          # P - 1 copies of the root's data
    "reduce": lambda n: (P + 1) * n / 2,     # read P inputs, write one output
    "allgather": lambda n: P * P * n,        # every block into every output
    "alltoall": lambda n: P * P * n,
}
buffers = {
    "allreduce": lambda n: 2 * P * n,
    "bcast": lambda n: P * n,
    "reduce": lambda n: (P + 1) * n,
    "allgather": lambda n: P * (P + 1) * n,
    "alltoall": lambda n: 2 * P * P * n,
}
def copy_rate(total):
    # Two threads, each copying a buffer into another: four buffers in all.
    out = subprocess.run([f"{work}/copy_bandwidth", str(int(total // 4)), "2"],
                         capture_output=True, text=True, check=True).stdout
    return max(float(l.split()[1]) for l in out.split("\n") if l) * 1e9
def spread(v):
    v = sorted(v)
    med = statistics.median(v)
    return f"{med:.2f}" if len(v) == 1 else f"{med:.2f} ({v[0]:.2f}–{v[-1]:.2f})"
runs = f"median of {repeat} runs (lowest–highest)" if repeat > 1 else "one run"
print(f"native / auto: the native collective's average time over auto's, {runs}")
print()
print("| collective | size (B) | auto, threads | native / auto, threads | auto, mpi | native / auto, mpi | native (us) | least time (us) | native / least time |")
print("|---|---:|---|---:|---|---:|---:|---:|---:|")
for c in ["allreduce", "bcast", "reduce", "allgather", "alltoall"]:
    tables = [[r for r in csv.DictReader(open(f"{work}/{c}-auto-{k}.csv")) if r["avg_s"]]
              for k in range(1, repeat + 1)]
    for size in sorted({int(r["size_bytes"]) for r in tables[0]}):
        th_ratio, mp_ratio, natives, th_alg, mp_alg = [], [], [], set(), set()
        for rows in tables:
            at = {(r["algorithm"] == "native", r["backend"]): r
                  for r in rows if int(r["size_bytes"]) == size}
            native = next(r for (nat, _), r in at.items() if nat)
            th, mp = at[(False, "threads")], at[(False, "mpi")]
            n = float(native["avg_s"])
            natives.append(n)
            th_ratio.append(n / float(th["avg_s"]))
            mp_ratio.append(n / float(mp["avg_s"]))
            th_alg.add(th["algorithm"][5:])
            mp_alg.add(mp["algorithm"][5:])
        n = statistics.median(natives)
        bound = " | "
        if size >= 1 << 20:
            t = least[c](size) / copy_rate(buffers[c](size))
            bound = f"{t*1e6:.0f} | {n / t:.2f}"
        print(f"| {c} | {size} | {', '.join(sorted(th_alg))} | {spread(th_ratio)} | "
              f"{', '.join(sorted(mp_alg))} | {spread(mp_ratio)} | {n*1e6:.2f} | {bound} |")
PY

# 5. Persistent requests against MPI_Isend, 4 and 2 ranks.
mpicc -O2 "$here/persistent.c" -o "$work/persistent"
for np in 4 2; do
  echo "persistent requests, $np ranks (median time per 8-byte allreduce):"
  mpirun -np "$np" "$work/persistent" </dev/null
done
