#!/usr/bin/env bash
# Do MPI libraries run topocoll's choice? For each collective, `topocoll
# tune --ranks 4` decides an algorithm per size (this machine's node model:
# the cache's calibration, else typical figures) and exports the table as
#
# - an Open MPI coll/tuned dynamic rules file: at every size of the table
#   the collective is called under mpirun with the file, and the coll/base
#   function Open MPI ran (logged by trace.c, preloaded) must be the one the
#   rule for that size names;
# - an MPICH selection file (when MPICH's mpicc.mpich and mpirun.mpich are
#   installed), put into MPICH's own selection (read out of the installed
#   libmpich, where it is built in) with --mpich-base: the collective runs
#   with MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE at every size and must
#   finish with the right result (MPICH stops on a rule, an algorithm or a
#   collective it cannot find in the file).
#
#   bash validation/mpi-rules/run.sh [--quick]
#
# --quick: sizes 64B..1MiB by 4x (the default is 64B..16MiB by 2x).
# Prints a table per library; exits 1 on a mismatch.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
topocoll="$root/target/release/topocoll"
[ -x "$topocoll" ] || { echo "run.sh: build first (cargo build --release)" >&2; exit 2; }
sizes=64B..16MiB
step=1
[ "${1:-}" = "--quick" ] && { sizes=64B..1MiB; step=2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TOPOCOLL_CACHE="${TOPOCOLL_CACHE:-$work/cache}"

gcc -O2 -fPIC -shared -o "$work/libtrace.so" "$here/trace.c" -ldl
mpicc.openmpi -O2 -o "$work/coll-ompi" "$here/coll.c"
mpich=0
if command -v mpicc.mpich >/dev/null && command -v mpirun.mpich >/dev/null; then
  mpicc.mpich -O2 -o "$work/coll-mpich" "$here/coll.c"
  # MPICH's own selection: the JSON line of MPIR algorithms in its library.
  lib=$(ldd "$work/coll-mpich" | awk '/libmpich/ {print $3}')
  strings -n 1000 "$lib" | grep '^{"collective=' | grep -m1 'algorithm=MPIR_Bcast_intra_binomial' >"$work/mpich-base.json" || true
  if [ -s "$work/mpich-base.json" ]; then mpich=1; else echo "MPICH: its built-in selection was not found in $lib; skipped"; fi
fi

status=0
for coll in allreduce bcast reduce allgather alltoall reduce_scatter; do
  "$topocoll" tune --ranks 4 -c "$coll" --sizes "$sizes" --format csv \
    --export-ompi "$work/$coll.rules" >"$work/$coll.csv" 2>"$work/$coll.err" \
    || { cat "$work/$coll.err" >&2; exit 1; }
  # The sizes of the table (every other one with --quick), and each one's choice.
  awk -F, -v step="$step" 'NR>1 && $6=="true" {n++; if ((n-1) % step == 0) print $1, $2}' "$work/$coll.csv" >"$work/$coll.sizes"
  # Rules: "from alg 0 seg # ... (function)" lines after the 5 header numbers.
  grep -v '^#' "$work/$coll.rules" | sed -n '5,$p' | sed 's/.*# from \([0-9]*\) B: topocoll \([a-z_]*\) .*(\(.*\))/\1 \2 \3/' >"$work/$coll.map"
  echo "## Open MPI: $coll"
  echo "| size (B) | topocoll's choice | the rule's algorithm | function Open MPI ran | |"
  echo "|---:|---|---|---|---|"
  while read -r size choice; do
    # The rule for this size: the last whose topocoll start is at most it.
    read -r from alg fn < <(awk -v s="$size" '$1 <= s' "$work/$coll.map" | tail -1)
    ran=$(mpirun -np 4 --mca coll_tuned_use_dynamic_rules 1 \
      --mca coll_tuned_dynamic_rules_filename "$work/$coll.rules" \
      -x LD_PRELOAD="$work/libtrace.so" "$work/coll-ompi" "$coll" "$size" 2>&1 </dev/null \
      | awk '$1=="trace" && $2==0 {print $3; exit}') || true
    ok=ok
    [ "$ran" = "$fn" ] || { ok="MISMATCH"; status=1; }
    echo "| $size | $choice | $alg | $ran | $ok |"
  done <"$work/$coll.sizes"
  if [ "$mpich" = 1 ]; then
    "$topocoll" tune --ranks 4 -c "$coll" --sizes "$sizes" --export-mpich "$work/$coll.json" \
      --mpich-base "$work/mpich-base.json" >/dev/null 2>&1 \
      || { echo "MPICH: no file for $coll (no choice maps)"; continue; }
    okn=0; n=0
    while read -r size choice; do
      n=$((n + 1))
      if MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$work/$coll.json" \
        timeout 60 mpirun.mpich -np 4 "$work/coll-mpich" "$coll" "$size" </dev/null >/dev/null 2>"$work/mpich.err"; then
        okn=$((okn + 1))
      else
        echo "MPICH $coll at $size B failed: $(tail -1 "$work/mpich.err")"; status=1
      fi
    done <"$work/$coll.sizes"
    echo "MPICH: $coll with the exported file: $okn of $n sizes ran and checked"
  fi
  echo
done
exit $status
