#!/usr/bin/env bash
# libtopocoll_mpi.so preloaded into unchanged MPI programs (crates/mpi/tests/c/):
#
#  1. every registered algorithm forced in turn (TOPOCOLL_ALGORITHMS), each
#     on the network it needs (TOPOCOLL_TOPOLOGY, TOPOCOLL_RANKS_PER_NODE), with
#     every predefined type and operator, in place and not, checked against
#     the MPI library's own collective; the report must show the algorithm ran;
#  2. one algorithm per collective at other rank counts;
#  3. a tune table (TOPOCOLL_TABLE) and directories of schedules (TOPOCOLL_SCHEDULES:
#     topocoll JSON, a forest optimize writes, MSCCL XML);
#  4. communicators split, duplicated, freed and made again, with the
#     application's own wildcard receive pending across the collectives;
#  5. bad configuration refused at MPI_Init in one line, the program exiting non-zero.
#
#   scripts/pmpi-tests.sh                 # Open MPI (mpicc, mpirun)
#   scripts/pmpi-tests.sh --mpich         # MPICH (mpicc.mpich, mpiexec.mpich; built in target/mpich)
#   PMPI_NPS="2 3 5 8" scripts/pmpi-tests.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
CARGO="${CARGO:-cargo}"
if [ "${1:-}" = "--mpich" ]; then
  # The library serves the MPI it was built against: MPICH's in a target
  # directory of its own. Hydra's mpiexec passes the whole environment.
  export MPICC="${MPICC:-mpicc.mpich}"
  MPIRUN="${MPIRUN:-mpiexec.mpich}"
  $CARGO build --release -p topocoll-mpi --target-dir target/mpich
  lib="$PWD/target/mpich/release/libtopocoll_mpi.so"
  pass=()
else
  MPICC="${MPICC:-mpicc}"
  MPIRUN="${MPIRUN:-mpirun}"
  $CARGO build --release -p topocoll-mpi
  lib="$PWD/target/release/libtopocoll_mpi.so"
  pass=(-x LD_PRELOAD)
fi
# The command line (for `list`, `tune`, `schedule`): any build of it serves.
[ -x target/release/topocoll ] || $CARGO build --release
bin="$PWD/target/release/topocoll"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
$MPICC -O2 -o "$out/collectives" crates/mpi/tests/c/collectives.c
$MPICC -O2 -o "$out/communicators" crates/mpi/tests/c/communicators.c
status=0

# run NP ENV... -- PROGRAM ARGS: the program preloaded; its stdout and stderr in $out/log.
run() {
  local np=$1
  shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" LD_PRELOAD="$lib" TOPOCOLL_REPORT="$out/report.json" \
    timeout 300 "$MPIRUN" "${pass[@]}" -np "$np" "$@" >"$out/log" 2>&1 </dev/null
}

# Calls the report gives algorithm $1.
ran() {
  python3 -c "import json,sys; d=json.load(open('$out/report.json')); print(sum(r['calls'] for r in d['rows'] if r['algorithm']==sys.argv[1]))" "$1" 2>/dev/null || echo 0
}

echo "== 1. every algorithm forced in turn, mpirun -np 4"
# The networks the algorithms that need one run on: a 2x2 torus (grid
# algorithms, Trinaryx3), two hosts of two ranks (node-aware ones), two
# sites of two hosts (the grid-of-sites ones).
networks=("" "TOPOCOLL_TOPOLOGY=torus:2x2" "TOPOCOLL_TOPOLOGY=mesh:2 TOPOCOLL_RANKS_PER_NODE=2"
  "TOPOCOLL_TOPOLOGY=crates/mpi/tests/c/two-sites-4.toml")
served=0
unserved=()
while read -r coll alg; do
  done_=0
  for net in "${networks[@]}"; do
    # shellcheck disable=SC2086
    if ! run 4 TOPOCOLL_ALGORITHMS="$coll=$alg" $net -- "$out/collectives" "$coll"; then
      echo "FAIL $coll $alg ${net:-(no network)}:" >&2
      tail -5 "$out/log" >&2
      status=1
      done_=1
      break
    fi
    if [ "$(ran "$alg")" -gt 0 ]; then
      served=$((served + 1))
      done_=1
      break
    fi
  done
  [ $done_ = 1 ] || unserved+=("$coll/$alg")
done < <("$bin" list | awk '/^Algorithms/{f=1; next} f && NF >= 2 && $1 ~ /^[a-z_]+$/ {print $1, $2}')
echo "$served algorithms ran and matched the MPI library's results; not applicable on 4 ranks: ${unserved[*]:-none}"

echo "== 2. one algorithm per collective at other rank counts"
fixed="allreduce=rabenseifner,bcast=binomial,reduce=binomial,allgather=ring,reduce_scatter=ring"
fixed+=",alltoall=bruck,scatter=binomial,gather=binomial,barrier=dissemination,scan=linear"
fixed+=",exscan=linear,allgatherv=ring,alltoallv=linear"
for np in ${PMPI_NPS:-2 3 5 8}; do
  if ! run "$np" TOPOCOLL_ALGORITHMS="$fixed" -- "$out/collectives"; then
    echo "FAIL collectives on $np ranks:" >&2
    tail -5 "$out/log" >&2
    status=1
  fi
  grep '^collectives' "$out/log" || true
done

echo "== 3. a tune table and a directory of schedules, mpirun -np 4"
"$bin" tune --ranks 4 --collective allreduce --sizes 8B..256KiB --format json \
  --no-cache -o "$out/table.json" >/dev/null
if ! run 4 TOPOCOLL_TABLE="$out/table.json" -- "$out/collectives" allreduce; then
  echo "FAIL collectives with a tune table:" >&2
  tail -5 "$out/log" >&2
  status=1
fi
table_calls=$(python3 -c "import json; d=json.load(open('$out/report.json')); print(sum(r['calls'] for r in d['rows'] if r['algorithm']!='native'))")
echo "tune table: $table_calls allreduce calls ran the table's choice"
[ "$table_calls" -gt 0 ] || { echo "FAIL: the table's choices never ran" >&2; status=1; }
mkdir -p "$out/schedules"
# 20,000 doubles: one of the program's allreduces. A reduce_scatter_block
# of 1,031 MPI_INT a rank: the file counts the whole vector (4 x 1,031).
"$bin" schedule --ranks 4 --collective allreduce --algorithm ring --dtype f64 --size 160000 \
  --format json -o "$out/schedules/ring-160000.json" >/dev/null
"$bin" schedule --ranks 4 --collective reduce_scatter --algorithm ring --dtype i32 --size 16496 \
  --format json -o "$out/schedules/rs-16496.json" >/dev/null
# A broadcast of 20,000 doubles as optimize synthesises it on a 2x2 torus:
# a forest of trees, which the library expands into its schedule.
"$bin" optimize --topology torus:2x2 --collective bcast --size 160000 \
  --schedule-out "$out/schedules/forest-bcast-160000.json" >/dev/null
grep -q '"topocoll-forest/' "$out/schedules/forest-bcast-160000.json" \
  || { echo "FAIL: optimize wrote no forest for the broadcast" >&2; status=1; }
for case in "allreduce ring-160000.json" "reduce_scatter rs-16496.json" \
  "bcast forest-bcast-160000.json"; do
  set -- $case
  if ! run 4 TOPOCOLL_SCHEDULES="$out/schedules" -- "$out/collectives" "$1"; then
    echo "FAIL collectives with a schedule directory:" >&2
    tail -5 "$out/log" >&2
    status=1
  fi
  file_calls=$(ran "$2")
  echo "schedule directory: $file_calls $1 calls ran $2"
  [ "$file_calls" -gt 0 ] || { echo "FAIL: the schedule file $2 never ran" >&2; status=1; }
done

# MSCCL XML, built at each call's size: a ring allreduce for any size (its
# minBytes and maxBytes take every one; sizes its chunks do not divide go
# to the next choice, the MPI library's own here).
mkdir -p "$out/msccl"
"$bin" schedule --ranks 4 --collective allreduce --algorithm ring --size 64KiB \
  --format msccl -o "$out/msccl/ring.xml" >/dev/null
if ! run 4 TOPOCOLL_SCHEDULES="$out/msccl" -- "$out/collectives" allreduce; then
  echo "FAIL collectives with an MSCCL XML schedule:" >&2
  tail -5 "$out/log" >&2
  status=1
fi
xml_calls=$(ran ring.xml)
echo "schedule directory: $xml_calls allreduce calls ran ring.xml"
[ "$xml_calls" -gt 0 ] || { echo "FAIL: the MSCCL XML file never ran" >&2; status=1; }
# MSCCL's own files, as msccl-tools writes them (tests/data/msccl/README.md):
# an out-of-place allreduce and an alltoall, every message in a threadblock
# of its own direction.
mkdir -p "$out/msccl-tools"
cp tests/data/msccl/msccl-tools/allreduce_allpairs_outofplace.xml \
  tests/data/msccl/msccl-tools/alltoall_allpairs.xml "$out/msccl-tools/"
for case in "allreduce allreduce_allpairs_outofplace.xml" "alltoall alltoall_allpairs.xml"; do
  set -- $case
  if ! run 4 TOPOCOLL_SCHEDULES="$out/msccl-tools" -- "$out/collectives" "$1"; then
    echo "FAIL collectives with msccl-tools' $2:" >&2
    tail -5 "$out/log" >&2
    status=1
  fi
  xml_calls=$(ran "$2")
  echo "schedule directory: $xml_calls $1 calls ran $2"
  [ "$xml_calls" -gt 0 ] || { echo "FAIL: $2 never ran" >&2; status=1; }
done

echo "== 4. communicators"
for np in 4 6; do
  if ! run "$np" TOPOCOLL_ALGORITHMS="allreduce=ring,bcast=binomial,alltoall=linear,allgather=recursive_doubling,barrier=dissemination" \
    -- "$out/communicators"; then
    echo "FAIL communicators on $np ranks:" >&2
    tail -5 "$out/log" >&2
    status=1
  fi
  grep '^communicators' "$out/log" || true
done

echo "== 5. bad configuration: one line at MPI_Init, exit non-zero"
refuse() {
  local what=$1 want=$2
  shift 2
  if run 2 "$@" -- "$out/communicators"; then
    echo "FAIL $what: the program ran" >&2
    status=1
  elif [ "$(grep -c '^topocoll-mpi: ' "$out/log")" -ne 1 ] || ! grep -q "$want" "$out/log"; then
    echo "FAIL $what: expected one line naming '$want':" >&2
    cat "$out/log" >&2
    status=1
  else
    grep '^topocoll-mpi: ' "$out/log"
  fi
}
refuse "a misspelt algorithm" "did you mean 'ring'" TOPOCOLL_ALGORITHMS=allreduce=rnig
refuse "a missing table" "missing.json" TOPOCOLL_TABLE="$out/missing.json"
echo '{"not": "a table"}' >"$out/bad.json"
refuse "a malformed table" "bad.json" TOPOCOLL_TABLE="$out/bad.json"
refuse "a missing schedule directory" "nodir" TOPOCOLL_SCHEDULES="$out/nodir"
mkdir -p "$out/badsched"
echo '{"format": "topocoll-schedule/1"}' >"$out/badsched/x.json"
refuse "a malformed schedule" "x.json" TOPOCOLL_SCHEDULES="$out/badsched"
mkdir -p "$out/badxml"
echo '<algo name="x" ngpus="2" coll="allreduce">' >"$out/badxml/x.xml"
refuse "a malformed MSCCL XML schedule" "x.xml" TOPOCOLL_SCHEDULES="$out/badxml"
exit $status
