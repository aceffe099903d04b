#!/usr/bin/env bash
# NCCL's cost model against the simulator: for each example server (and the
# two-server cluster) of tests/data/nccl and each collective NCCL runs, the
# simulated time of NCCL's own choice (`simulate --algorithm nccl`) over the
# time NCCL's model gives it (`nccl_model_s`), at sizes from 8 B to 1 GiB.
# Prints a Markdown table (docs/machines.md, "NCCL's model against the
# simulator"); extra arguments go to every `simulate` (e.g. --latency 0).
#   bash scripts/nccl-model.sh [target/release/topocoll] [simulate flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/release/topocoll}
shift || true
SIZES=8B,64KiB,1MiB,64MiB,1GiB
echo "| machine | collective | 8 B | 64 KiB | 1 MiB | 64 MiB | 1 GiB |"
echo "|---|---|---|---|---|---|---|"
for f in dgx-a100-nvswitch.xml p4d-24xl-topo.xml azure-ndv4-topo.xml \
         rccl-mi300x-8p-940.xml cluster-p4d-x2.toml; do
    for c in allreduce allgather reduce_scatter bcast; do
        "$BIN" simulate -t "tests/data/nccl/$f" -c "$c" -a nccl -s "$SIZES" \
            --format json-compact "$@" |
        python3 -c '
import json, sys
cells = []
for r in json.load(sys.stdin):
    if "time_s" not in r:
        cells.append("—")
        continue
    choice = r["algorithm"].removeprefix("nccl:")
    cells.append("%.2f (%s)" % (r["time_s"] / r["nccl_model_s"], choice))
print("| `%s` | %s | %s |" % (sys.argv[1], sys.argv[2], " | ".join(cells)))
' "$f" "$c"
    done
done
