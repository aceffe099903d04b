#!/usr/bin/env bash
# libtopocoll_mpi.so under test suites written elsewhere: MPICH's collective
# tests (mpich-coll/, from pmodels/mpich test/mpi/coll) and the OSU
# micro-benchmarks' blocking collectives with validation on (osu/, OMB 7.4).
# Not part of CI; see README.md here and docs/VALIDATION.md.
#
# Each program runs with the library preloaded:
#   (a) a default set: one algorithm for each of the 13 collectives, at the
#       rank counts of mpich-tests.txt (2, 3, 4, 8; 2 and 5 for the tests
#       that need a divisor of 10);
#   (b) every algorithm of each collective the test exercises forced in turn,
#       at 4 ranks (5 for those tests), on the network it needs;
#   (c) tune tables for all 13 collectives at 4 ranks (TOPOCOLL_TABLE).
# An MPICH test passes when it prints "No Errors" and exits 0 (as MPICH's
# runtests decides); an OSU benchmark when it exits 0 and every size says
# "Pass". TOPOCOLL_REPORT tells which algorithms served calls and what fell
# back; results.tsv and summary.md land in the output directory.
#
#   validation/pmpi/run.sh                  # everything (about 25 minutes on 2 cores)
#   validation/pmpi/run.sh --phases a,osu   # some phases: a b c osu
#   validation/pmpi/run.sh --only coll12    # tests whose name matches a regex
#   validation/pmpi/run.sh --out DIR        # keep builds, logs and reports in DIR
#   validation/pmpi/run.sh --mpich          # MPICH's mpicc.mpich/mpirun.mpich and the
#                                           # library built against MPICH, which needs
#                                           # (not run by this script):
#     MPICC=mpicc.mpich cargo build --release -p topocoll-mpi --target-dir target/mpich
#
# Environment: TIMEOUT (seconds per run, default 15), MPICC, MPIRUN, LIB (the
# .so), TOPOCOLL_BIN (the command line, for `list` and `tune`).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

phases="a,b,c,osu"
only="."
out=""
flavour=openmpi
while [ $# -gt 0 ]; do
  case $1 in
    --phases) phases=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --mpich) flavour=mpich; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

if [ $flavour = mpich ]; then
  MPICC=${MPICC:-mpicc.mpich}
  MPIRUN=${MPIRUN:-mpirun.mpich}
  LIB=${LIB:-$root/target/mpich/release/libtopocoll_mpi.so}
  # Hydra passes the whole environment on; nothing to name.
  pass_env() { :; }
else
  MPICC=${MPICC:-mpicc}
  MPIRUN=${MPIRUN:-mpirun}
  LIB=${LIB:-$root/target/release/libtopocoll_mpi.so}
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1
  pass_env() { local v; for v in "$@"; do printf -- '-x %s ' "${v%%=*}"; done; }
fi
BIN=${TOPOCOLL_BIN:-$root/target/release/topocoll}
TIMEOUT=${TIMEOUT:-15}
[ -f "$LIB" ] || { echo "run.sh: $LIB is missing; build it first (see the header)" >&2; exit 2; }
[ -x "$BIN" ] || { echo "run.sh: $BIN is missing (cargo build --release)" >&2; exit 2; }

if [ -z "$out" ]; then out=$(mktemp -d /tmp/topocoll-pmpi.XXXXXX); fi
mkdir -p "$out/bin" "$out/logs"
results="$out/results.tsv"
printf 'suite\tphase\ttest\tnp\tforcing\tresult\tforced_calls\tran\tfell\n' >"$results"
echo "output: $out"
has() { case ",$phases," in *",$1,"*) return 0 ;; esac; return 1; }

# ---- build ---------------------------------------------------------------
M=$here/mpich-coll
CFLAGS="-O1 -w -I$M/include -include mpi1compat.h"
tests=()
if has a || has b || has c; then
  for f in mtest mtest_common mtest_single run_mpitests; do
    $MPICC $CFLAGS -c "$M/util/$f.c" -o "$out/bin/$f.o" || exit 2
  done
  mapfile -t tests < <(grep -v '^#' "$here/mpich-tests.txt" | awk 'NF {print $1}' | grep -E -- "$only")
fi
for t in "${tests[@]}"; do
  # Tests written as `int run(const char *arg)` take their main from run_mpitests.c.
  extra=""
  grep -q '^int run(const char' "$M/coll/$t.c" && extra="$out/bin/run_mpitests.o"
  $MPICC $CFLAGS -o "$out/bin/$t" "$M/coll/$t.c" "$out/bin/mtest.o" "$out/bin/mtest_common.o" \
    "$out/bin/mtest_single.o" $extra -lm || { echo "run.sh: $t does not build" >&2; exit 2; }
done
O=$here/osu
osu_benches="allreduce bcast reduce allgather allgatherv alltoall alltoallv gather scatter reduce_scatter_block barrier"
if has osu; then
  for f in osu_util osu_util_mpi osu_util_graph osu_util_papi osu_util_validation; do
    $MPICC -O2 -w -I"$O/util" -c "$O/util/$f.c" -o "$out/bin/$f.o" || exit 2
  done
  for b in $osu_benches; do
    $MPICC -O2 -w -I"$O/util" -o "$out/bin/osu_$b" "$O/collective/osu_$b.c" "$out"/bin/osu_util*.o -lm \
      || { echo "run.sh: osu_$b does not build" >&2; exit 2; }
  done
fi

# ---- running -------------------------------------------------------------
# The default set: algorithms that apply at any rank count.
DEFAULT="allreduce=rabenseifner,bcast=binomial,reduce=binomial,allgather=bruck,reduce_scatter=ring"
DEFAULT+=",alltoall=bruck,scatter=binomial,gather=binomial,barrier=dissemination"
DEFAULT+=",scan=recursive_doubling,exscan=recursive_doubling,allgatherv=ring,alltoallv=linear"
any=$(echo "$DEFAULT" | sed 's/=[a-z_]*/=*/g')

# The network an algorithm needs at 4 ranks (empty: none).
network() {
  case $1 in
    node_aware|node_aware_multi) echo "TOPOCOLL_TOPOLOGY=mesh:2 TOPOCOLL_RANKS_PER_NODE=2" ;;
    multilane|single_lane|hierarchical) echo "TOPOCOLL_TOPOLOGY=$here/../../crates/mpi/tests/c/two-sites-4.toml" ;;
    trinaryx3|a2and|a2at|a2at_sync|*_torus|bucket|neighbor) echo "TOPOCOLL_TOPOLOGY=torus:2x2" ;;
    *) echo "" ;;
  esac
}

# algorithms COLL: every registered algorithm of COLL.
algorithms() {
  "$BIN" list | awk -v c="$1" '/^Algorithms/{f=1; next} f && $1 == c {print $2}'
}

declare -A native_ok
# native_result PROGRAM NP ARGS...: whether the program passes without the library (cached).
native_result() {
  local key="$1:$2"
  if [ -z "${native_ok[$key]:-}" ]; then
    local prog=$1 np=$2
    shift 2
    if timeout "$TIMEOUT" "$MPIRUN" -np "$np" "$out/bin/$prog" "$@" >"$out/logs/native-$prog-$np.log" \
      2>"$out/logs/native-$prog-$np.err" </dev/null \
      && check "$prog" "$out/logs/native-$prog-$np.log"; then
      native_ok[$key]=pass
    else
      native_ok[$key]=fail
    fi
  fi
  echo "${native_ok[$key]}"
}

# check PROGRAM LOG: whether the program's standard output says it passed
# (stderr is kept apart: the library's warnings would break its lines).
check() {
  case $1 in
    osu_barrier) grep -q 'Avg Latency' "$2" ;; # no validation to report
    osu_*) grep -q ' Pass$' "$2" && ! grep -q ' Fail$' "$2" ;;
    *) grep -q '^ *No Errors' "$2" ;;
  esac
}

declare -A timeouts
# one SUITE PHASE PROGRAM NP FORCING KEY [--env ENV=... --] ARGS...: one preloaded run,
# appended to results.tsv. KEY groups runs for the timeout rule: after two
# timeout under one KEY the rest are skipped (a hang costs TIMEOUT seconds).
one() {
  local suite=$1 phase=$2 prog=$3 np=$4 forcing=$5 key=$6
  shift 6
  local envs=()
  if [ "${1:-}" = "--env" ]; then
    shift
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
  fi
  local tag="$phase-$prog-$np-${forcing//[^a-z0-9_=]/_}${T:+-$T}"
  local log="$out/logs/$tag.log" rep="$out/logs/$tag.json"
  if [ "${timeouts[$key]:-0}" -ge 1 ]; then
    printf '%s\t%s\t%s\t%s\t%s\tskipped\t0\t-\t-\n' "$suite" "$phase" "$prog" "$np" "$forcing" >>"$results"
    return
  fi
  local all=(LD_PRELOAD="$LIB" TOPOCOLL_REPORT="$rep" "${envs[@]}")
  case $forcing in
    default) all+=(TOPOCOLL_ALGORITHMS="$DEFAULT") ;;
    table) ;;
    *) all+=(TOPOCOLL_ALGORITHMS="$forcing") ;;
  esac
  rm -f "$rep"
  # shellcheck disable=SC2046
  env "${all[@]}" timeout "$TIMEOUT" "$MPIRUN" $(pass_env "${all[@]}") -np "$np" "$out/bin/$prog" "$@" \
    >"$log" 2>"${log%.log}.err" </dev/null
  local rc=$? result
  if [ $rc = 0 ] && check "$prog" "$log"; then
    result=pass
  elif [ $rc = 124 ]; then
    result="timeout (${TIMEOUT}s)"
    timeouts[$key]=$((${timeouts[$key]:-0} + 1))
  else
    result="fail (exit $rc; native $(native_result "$prog" "$np" "$@"))"
  fi
  # The calls to count as served: the forced algorithm's, or any but native.
  local want=$forcing
  [ "$forcing" = default ] || [ "$forcing" = table ] && want=$any
  local s
  s=$(python3 "$here/report.py" served "$rep" "$want")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$suite" "$phase" "$prog" "$np" "$forcing" "$result" "$s" >>"$results"
  if [ "$result" != pass ]; then
    echo "  $prog -np $np $forcing: $result"
    grep -h -v -e '^--*$' -e 'Process name' -e 'Exit code' -e 'Primary job' -e 'non-zero exit' \
      -e 'mpirun' -e 'to be terminated' -e 'first process' -e '^ *$' "$log" "${log%.log}.err" \
      | head -3 | sed 's/^/    /'
  fi
}

# Fields of mpich-tests.txt for a test.
field() { awk -v t="$1" -v f="$2" '$1 == t {print $f}' "$here/mpich-tests.txt"; }

if has a; then
  echo "== (a) MPICH tests, default set"
  for t in "${tests[@]}"; do
    for np in $(field "$t" 3 | tr , ' '); do
      one mpich a "$t" "$np" default "a:$t"
    done
  done
fi

if has b; then
  echo "== (b) MPICH tests, every algorithm forced in turn"
  for t in "${tests[@]}"; do
    np=$(field "$t" 4)
    for coll in $(field "$t" 2 | tr , ' '); do
      for alg in $(algorithms "$coll"); do
        net=$(network "$alg")
        if [ -n "$net" ]; then
          # shellcheck disable=SC2086
          one mpich b "$t" "$np" "$coll=$alg" "b:$t:$coll" --env $net --
        else
          one mpich b "$t" "$np" "$coll=$alg" "b:$t:$coll"
        fi
      done
    done
  done
fi

tables=""
if has c || has osu; then
  for coll in allreduce bcast reduce allgather reduce_scatter alltoall scatter gather barrier scan exscan allgatherv alltoallv; do
    "$BIN" tune --ranks 4 -c "$coll" --sizes 8B..1MiB --format json --no-cache \
      -o "$out/table-$coll.json" >/dev/null 2>"$out/logs/tune-$coll.log" \
      && tables+="${tables:+,}$out/table-$coll.json" \
      || echo "  tune $coll: $(tail -1 "$out/logs/tune-$coll.log")"
  done
fi

if has c; then
  echo "== (c) MPICH tests, tune tables"
  for t in "${tests[@]}"; do
    # The tables are for 4 ranks; the tests that need a divisor of 10 run on 5,
    # where every call falls back.
    one mpich c "$t" "$(field "$t" 4)" table "c:$t" --env TOPOCOLL_TABLE="$tables" --
  done
fi

if has osu; then
  echo "== OSU micro-benchmarks, validation on (-c)"
  # OMB 7.4's own check of MPI_CHAR sums fails at 16 B and up with Open MPI's
  # own reduce and reduce_scatter_block (char overflow), so those two run on
  # int and float; the rest on char, int and float (-T all).
  osu_args() {
    case $1 in
      barrier) echo "-i 20 -x 2" ;; # osu_barrier has no -c
      *) echo "-c -m 1:65536 -i 5 -x 1" ;;
    esac
  }
  osu_types() {
    case $1 in
      reduce|reduce_scatter_block) echo "mpi_int mpi_float" ;;
      barrier) echo "none" ;;
      *) echo "all" ;;
    esac
  }
  osu_coll() { case $1 in reduce_scatter_block) echo reduce_scatter ;; *) echo "$1" ;; esac; }
  for b in $osu_benches; do
    echo "osu_$b" | grep -q -E -- "$only" || continue
    for T in $(osu_types "$b"); do
      targs=""; [ "$T" != none ] && targs="-T $T"
      # shellcheck disable=SC2046
      for np in 2 3 4 8; do
        one osu a "osu_$b" "$np" default "oa:$b:$T" $(osu_args "$b") $targs
      done
      coll=$(osu_coll "$b")
      for alg in $(algorithms "$coll"); do
        net=$(network "$alg")
        # shellcheck disable=SC2046,SC2086
        if [ -n "$net" ]; then
          one osu b "osu_$b" 4 "$coll=$alg" "ob:$b:$T" --env $net -- $(osu_args "$b") $targs
        else
          one osu b "osu_$b" 4 "$coll=$alg" "ob:$b:$T" $(osu_args "$b") $targs
        fi
      done
    done
  done
fi

python3 "$here/report.py" summarize "$results" >"$out/summary.md"
echo "results: $results"
echo "summary: $out/summary.md"
awk -F'\t' 'NR > 1 {n++; if ($6 == "pass") p++; else if ($6 == "skipped") s++; else f++}
  END {printf "%d runs: %d pass, %d fail or timeout, %d skipped\n", n, p, f, s}' "$results"
! awk -F'\t' 'NR > 1 && $6 != "pass" {bad = 1} END {exit !bad}' "$results"
