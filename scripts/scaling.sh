#!/usr/bin/env bash
# The flow simulator's scaling table (docs/PERFORMANCE.md, "Scaling under
# SimGrid's model"): pairwise, ring and linear all-to-all and the ring
# allreduce, 64 KiB, on 8x8, 16x16, 32x32, 8x8x8 and 16x16x16 tori, each run
# under SimGrid's network model with a wall-time limit. Prints a Markdown
# table: simulated time, events, bandwidth solves, flows solved per solve,
# flows whose end moved per solve, wall time and peak memory.
#
#   bash scripts/scaling.sh [--limit SECONDS] [--only REGEX]
#
# Build first: cargo build --release.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=300
only=.
while [ $# -gt 0 ]; do
  case "$1" in
    --limit) limit=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "scaling.sh: unknown argument '$1' (--limit SECONDS, --only REGEX)" >&2; exit 2 ;;
  esac
done
topocoll=target/release/topocoll
[ -x "$topocoll" ] || { echo "scaling.sh: build first (cargo build --release)" >&2; exit 2; }
model=(--fairness rtt --torus-tie simgrid --header-bytes 16 --tcp-window 4194304 --engines 1 --rendezvous)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "| collective | algorithm | torus | flows | simulated (s) | events | solves | flows solved / solve | ends moved / solve | wall (s) | max RSS (MB) |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for case in "alltoall pairwise" "alltoall ring" "alltoall linear" "allreduce ring"; do
  read -r coll alg <<<"$case"
  for t in 8x8 16x16 32x32 8x8x8 16x16x16; do
    grep -Eq "$only" <<<"$coll $alg $t" || continue
    set +e
    /usr/bin/time -f "%e %M" -o "$work/time" timeout "$limit" "$topocoll" simulate -t "torus:$t" \
      -c "$coll" -a "$alg" --size 64KiB "${model[@]}" --no-verify --format json >"$work/out" 2>"$work/err"
    rc=$?
    set -e
    if [ "$rc" -ne 0 ]; then
      why="> $limit s"
      [ "$rc" -eq 124 ] || why="failed: $(grep -v '^Command' "$work/err" | tail -1)"
      echo "| $coll | $alg | $t | | $why | | | | | | |"
      continue
    fi
    read -r wall rss <"$work/time"
    python3 - "$work/out" "$coll" "$alg" "$t" "$wall" "$rss" <<'EOF'
import json, sys
path, coll, alg, t, wall, rss = sys.argv[1:]
d = json.load(open(path))
r = d["detail"]
solves = r["recomputes"]
per = lambda n: f"{n / solves:.1f}" if solves else "–"
print(f"| {coll} | {alg} | {t} | {d['flows']:,} | {d['time_s']:.6f} | {r['events']:,} | {solves:,} "
      f"| {per(r['recomputed_flows'])} | {per(r['rescheduled_flows'])} | {float(wall):.2f} | {int(rss) / 1024:.0f} |")
EOF
  done
done
