#!/usr/bin/env bash
# Runs a fixed set of commands with a given topocoll binary and writes what
# each prints (stdout, stderr and exit code) into OUTDIR, one file a command,
# with every CSV of `reproduce --quick`. Two builds that should behave the
# same are compared with `diff -r OUT1 OUT2`.
#   bash scripts/golden.sh target/release/topocoll /tmp/golden-a
set -uo pipefail
BIN=$(realpath "$1")
OUT=$(realpath -m "$2")
cd "$(dirname "$0")/.."
rm -rf "$OUT"; mkdir -p "$OUT"
n=0
run() {
    n=$((n + 1))
    local f
    f=$(printf '%s/%03d.txt' "$OUT" "$n")
    { echo "\$ topocoll $*"; "$BIN" "$@" 2>&1; echo "exit $?"; } >"$f"
}
run list
run list --links --topology torus:4x4
run verify --topology torus:8x8 --collective allreduce --algorithm ring --size 1MiB
run schedule --ranks 8 --collective allreduce --algorithm ring --size 1KiB --format json
run schedule --ranks 8 --collective allreduce --algorithm ring --size 1KiB --format msccl
run schedule --ranks 4 --collective bcast --algorithm binomial --size 1KiB --format goal
run simulate --topology torus:16x16 --collective alltoall --algorithm a2at --size 64KiB --engines 4 --format json
run simulate --topology torus:4x3x4 --collective allreduce --algorithm trinaryx3 --size 1MiB --engines 4 --overhead 1.27e-6 --compute-bandwidth 6.58e9 --format json
run simulate --topology torus:8x8 --collective alltoall --algorithm linear,a2and,a2at --size 1KiB,64KiB --engines 1,2,4 --format csv
run simulate --topology tests/data/simgrid-platforms/small_platform.xml --collective allreduce --algorithm ring,rabenseifner --size 1MiB --format json
run simulate --topology torus:4x4 --ranks-per-node 4 --collective allreduce --algorithm node_aware,node_aware_multi --size 1MiB --format json
run simulate --topology torus:4x4 -c alltoallv -a linear,pairwise,bruck --counts hot:2 --seed 1 -s 64KiB --format json
run simulate --topology examples/grid-paper.toml --collective scatter --algorithm single_lane,multilane --size 64KiB --format json
run simulate --model packet --topology dragonnet:16 --collective alltoall --algorithm dragon_net --size 16KiB --buffer 512 --link-rate 1.3e6 --packet-time 1.9e-4 --switch-time 1e-3 --latency 0 --format json
run simulate --topology hypercube:5 --collective bcast --algorithm binomial,binary,pipeline,scatter_allgather,knomial,two_tree,bine --size 256KiB --root 3 --format csv
run simulate --topology mesh:6x5 --collective allgather --algorithm ring,recursive_doubling,bruck,neighbor,bucket,swing,swing_torus,bine --size 4KiB --format csv
run simulate --topology torus:4x4 --collective reduce_scatter --algorithm ring,recursive_halving,swing,bucket,bine --size 1MiB --format csv
run simulate --topology torus:4x4 --collective scan --algorithm linear,recursive_doubling --size 64KiB --format csv
run simulate --topology torus:4x4 --collective barrier --algorithm dissemination,tree --size 0 --format csv
run simulate --topology torus:4x4 --collective allreduce --algorithm auto --size 1KiB,1MiB --format csv
run model multilane --topology examples/grid-paper.toml --size 64KiB
run tune --topology torus:4x4 --collective allreduce --sizes 8B..1MiB --no-cache
run optimize --topology torus:4x4 --fail random:3 --seed 1 --collective allgather --size 1MiB --engines 16 --format json
run optimize --whole-message --topology examples/dual-cpu-cluster.toml --collective bcast --root 0 --size 1MiB
run run --collective allreduce --algorithm ring --ranks 8 --size 64KiB --dtype f64 --check
run simulate --topology torus:4x4 --collective allreduce --algorithm nope --size 1MiB
run simulate --topology torus:4x --collective allreduce --algorithm ring --size 1MiB
run simulate --topology torus:4x4 --collective bcast --algorithm ring --size 1MiB
run verify --topology torus:4x4 --collective allgather --algorithm ring --size 3B --dtype f64
for exp in a2at trinaryx3 treebcast multilane dragonnet swing; do
    "$BIN" reproduce "$exp" --quick -o "$OUT/reproduce-$exp" >"$OUT/reproduce-$exp.txt" 2>&1
    echo "exit $?" >>"$OUT/reproduce-$exp.txt"
    find "$OUT/reproduce-$exp" -type f ! -name '*.csv' -delete
done
# Wall times are not behaviour: JSON keys, CSV columns and "in X s" phrases
# that measure the run itself are blanked.
python3 - "$OUT" <<'PY'
import csv, io, json, os, re, sys
WALL = re.compile(r'(wall|elapsed|solve_s|build_s|verify_s|sweeps)')
def blank_json(v):
    if isinstance(v, dict):
        return {k: ('T' if WALL.search(k) else blank_json(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [blank_json(x) for x in v]
    return v
def blank(text):
    try:
        return json.dumps(blank_json(json.loads(text)), indent=1) + "\n"
    except ValueError:
        pass
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if "," in line and i + 1 < len(lines) and WALL.search(line):
            cols = [j for j, h in enumerate(line.split(",")) if WALL.search(h)]
            for k in range(i, len(lines)):
                cells = lines[k].split(",")
                if len(cells) == len(line.split(",")):
                    for j in cols:
                        cells[j] = "T"
                    lines[k] = ",".join(cells)
    text = "\n".join(lines)
    return re.sub(r'\b(in|took|after|time) [0-9.]+(e-?[0-9]+)? ?(s|ms|µs)\b', r'\1 T s', text)
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        path = os.path.join(root, f)
        text = open(path).read()
        if f.endswith(".txt"):
            head, _, rest = text.partition("\n")
            body, _, tail = rest.rpartition("exit ")
            text = head + "\n" + blank(body) + "exit " + tail
        else:
            text = blank(text)
        open(path, "w").write(text)
PY
