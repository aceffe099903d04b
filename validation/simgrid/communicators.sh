#!/usr/bin/env bash
# The trace with communicators (tests/data/communicators/comm-split4) against SimGrid 3.32,
# CM02 on both sides and the same algorithms (its cfg):
#   - SimGrid's recording as its tracer writes it (no communicator: every call on the world),
#     replayed by `smpirun -replay` and by `topocoll replay`;
#   - the same lines with their communicators (comm_split, comm_dup, comm=ID), replayed by
#     topocoll, against SimGrid's live run of comm_split.c less its live run of split_only.c
#     (SMPI's MPI_Comm_split moves messages, SimGrid's replay and topocoll's charge none).
# --record rewrites the trace's simgrid-times.tsv and its recorded/ files.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dir="$repo/tests/data/communicators/comm-split4"
topocoll="${TOPOCOLL:-$repo/target/release/topocoll}"
xml="$repo/tests/data/simgrid-platforms/cluster_backbone.xml"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
read -r -a cfg <<<"$(cat "$dir/cfg")"
sg=(--cfg=network/model:CM02 --cfg=network/crosstraffic:0 "${cfg[@]}" --log=root.fmt:%.9d%e%m%n)
tc=(--topology "$xml" --fairness rtt --header-bytes 16 --rendezvous --tcp-window 4194304 "${cfg[@]}" --format json)
python3 "$here/hosts.py" "$xml" | head -n 4 >"$work/hosts" || true
cd "$work"
for p in comm_split split_only; do smpicc -O2 "$dir/$p.c" -o "$p" 2>/dev/null; done
live() { smpirun -np 4 -platform "$xml" -hostfile hosts --cfg=smpi/simulate-computation:no \
  --cfg=smpi/display-timing:yes "${sg[@]}" "$@" 2>&1 | awk '/Simulated time/ { print $1 }'; }
t_live=$(live --cfg=tracing/filename:T.txt -trace-ti ./comm_split)
t_split=$(live ./split_only)
if [ "${1:-}" = --record ]; then
  i=1; for f in $(cat T.txt); do cp "$f" "$dir/recorded/files/rank-$i.txt"; i=$((i + 1)); done
fi
t_replay=$(cd "$dir/recorded" && smpirun -np 4 -platform "$xml" -hostfile "$work/hosts" -replay index.txt \
  "${sg[@]}" 2>&1 | awk '/Simulation time/ { print $1 }')
time_s() { python3 -c "import json,sys; print(json.load(sys.stdin)['time_s'])"; }
tc_rec=$("$topocoll" replay "$dir/recorded/index.txt" --map hosts "${tc[@]}" | time_s)
tc_comm=$("$topocoll" replay "$dir/index.txt" --map hosts "${tc[@]}" | time_s)
echo "| trace | SimGrid (s) | topocoll (s) | topocoll / SimGrid |"
echo "|---|---:|---:|---:|"
python3 - "$t_replay" "$tc_rec" "$t_live" "$t_split" "$tc_comm" <<'PY'
import sys
rep, tc_rec, live, split, tc_comm = map(float, sys.argv[1:])
print(f"| recorded, every call on the world (smpirun -replay) | {rep:.9e} | {tc_rec:.9e} | {tc_rec / rep:.6f} |")
print(f"| with its communicators (live run {live:.9e} less its split {split:.9e}) | {live - split:.9e} | {tc_comm:.9e} | {tc_comm / (live - split):.6f} |")
PY
if [ "${1:-}" = --record ]; then
  printf 'run\tplatform\tranks\tsimgrid_s\nreplay of recorded\tcluster_backbone\t4\t%s\nlive comm_split\tcluster_backbone\t4\t%s\nlive split_only\tcluster_backbone\t4\t%s\n' \
    "$t_replay" "$t_live" "$t_split" >"$dir/simgrid-times.tsv"
fi
