#!/usr/bin/env bash
# Builds topocoll with the MPI backend and runs its tests under mpirun:
# every registered algorithm on the mpi backend, checked against the
# references, plus fault injection; then `topocoll run --backend mpi
# --check` smoke tests through the command line, one of them executing an
# optimal tree broadcast written by `topocoll optimize --schedule-out`, and
# the grid algorithms on a grid of three sites; then the PMPI library
# (libtopocoll_mpi.so) preloaded into committed C programs.
#
#   scripts/mpi-tests.sh            # mpirun -np 4
#   MPI_NPS="1 2 3 4 7 8 16" scripts/mpi-tests.sh
#
# Needs an MPI library and libclang (Debian/Ubuntu: libopenmpi-dev
# openmpi-bin libclang-dev). As root, Open MPI needs the two ALLOW_RUN_AS_ROOT
# variables; on a machine with fewer cores than ranks, oversubscription.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
CARGO="${CARGO:-cargo}"
$CARGO build --release --features mpi
# The test target's own artifact (the messages also name the topocoll
# binary the tests run, in no fixed order).
bin=$($CARGO test --release --features mpi --test mpi --no-run --message-format=json \
  | grep '"kind":\["test"\]' | grep '"name":"mpi"' \
  | grep -o '"executable":"[^"]*"' | sed 's/"executable":"//; s/"$//' | tail -1)
[ -x "$bin" ] || { echo "mpi test binary not found" >&2; exit 1; }
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for np in ${MPI_NPS:-4}; do
  echo "== mpirun -np $np $bin"
  timeout 900 mpirun -np "$np" "$bin" || status=1
done
echo "== topocoll run --backend mpi --check (mpirun -np 4)"
timeout 300 mpirun -np 4 target/release/topocoll run --backend mpi \
  --collective allreduce --algorithm ring --size 1MiB --check || status=1
echo "== topocoll run --backend mpi --schedule (optimal broadcast, mpirun -np 8)"
sched=$(mktemp --suffix=.json)
target/release/topocoll optimize --whole-message --topology examples/dual-cpu-cluster.toml \
  --collective bcast --size 64KiB --schedule-out "$sched" >/dev/null || status=1
timeout 300 mpirun -np 8 target/release/topocoll run --backend mpi \
  --schedule "$sched" --check || status=1
rm -f "$sched"
echo "== topocoll run/bench --backend mpi --schedule (MSCCL XML, mpirun -np 4)"
# (Small messages: these files' threadblocks send, then receive, which MPI's
# rendezvous protocol cannot run above its eager limit; docs/runtime.md.)
timeout 300 mpirun -np 4 target/release/topocoll run --backend mpi \
  --schedule tests/msccl/allreduce_ring_fused.xml --size 4KiB --check || status=1
timeout 300 mpirun -np 4 target/release/topocoll bench --backend mpi \
  --schedule tests/msccl/allgather_ring.xml --sizes 1KiB --iterations 2 >/dev/null || status=1
echo "== topocoll run --backend mpi --check (two ranks a host, mpirun -np 8)"
timeout 300 mpirun -np 8 target/release/topocoll run --backend mpi --topology torus:2x2 \
  --ranks-per-node 2 --map cyclic --collective alltoall --algorithm pairwise --size 4KiB --check || status=1
echo "== alltoallv and allgatherv with skewed counts, node-aware, --check (mpirun -np 8)"
# The same counts on the threads backend give the same output bits: the
# test binary above compares them rank by rank; here the command line.
for ca in alltoallv:node_aware:hot:2 alltoallv:pairwise:zipf:1.2 \
  allgatherv:node_aware:zipf:1.2 allgatherv:bruck:hot:1; do
  IFS=: read -r c alg gen k <<<"$ca"
  timeout 300 mpirun -np 8 target/release/topocoll run --backend mpi --topology torus:2x2 \
    --ranks-per-node 2 --collective "$c" --algorithm "$alg" --counts "$gen:$k" --seed 1 \
    --size 4KiB --dtype f32 --check || status=1
done
echo "== topocoll run --backend mpi --check (grid of three sites, mpirun -np 8)"
for ca in scatter:multilane scatter:single_lane scatter:hierarchical \
  gather:multilane gather:single_lane gather:hierarchical \
  bcast:multilane allgather:multilane; do
  root=(--root 4)
  [ "${ca%%:*}" = allgather ] && root=()
  timeout 300 mpirun -np 8 target/release/topocoll run --backend mpi \
    --topology examples/three-sites.toml --collective "${ca%%:*}" \
    --algorithm "${ca##*:}" "${root[@]}" --size 4KiB --check || status=1
done
echo "== --algorithm auto on the mpi backend, checked (mpirun -np 4)"
for c in allreduce bcast reduce allgather alltoall; do
  TOPOCOLL_CACHE=$(mktemp -d) timeout 300 mpirun -np 4 target/release/topocoll run --backend mpi \
    --collective "$c" --algorithm auto --size 64KiB --check >/dev/null || status=1
done
for c in alltoallv allgatherv; do
  TOPOCOLL_CACHE=$(mktemp -d) timeout 300 mpirun -np 4 target/release/topocoll run --backend mpi \
    --collective "$c" --algorithm auto --counts hot:1 --size 64KiB --check >/dev/null || status=1
done
echo "== bench --backend threads --baseline native: both rows (mpirun -np 4)"
out=$(timeout 300 mpirun -np 4 target/release/topocoll bench --backend threads --baseline native \
  --collective allreduce --algorithm ring --sizes 4KiB --iterations 3 --format csv </dev/null) || status=1
if ! grep -q '^4096,ring,threads,' <<<"$out" || ! grep -q '^4096,native,mpi:MPI_Allreduce,' <<<"$out"; then
  echo "bench --baseline native with the threads backend: $out" >&2
  status=1
fi
echo "== tune --calibrate under mpirun: an error names each rank, exit 2"
code=0
err=$(timeout 120 mpirun -np 2 target/release/topocoll tune --calibrate --backend mpi \
  --ranks 3 --cache-dir "$(mktemp -d)" 2>&1 >/dev/null) || code=$?
if [ "$code" -ne 2 ] || ! grep -q "rank 1: --ranks 3 but mpirun started 2" <<<"$err"; then
  echo "calibrate error: exit $code: $err" >&2
  status=1
fi
echo "== a sweep spread under mpirun writes what one process writes (np 1, 2, 3; wall_s aside)"
sweep=(simulate -t torus:4x4 -c allreduce -a ring,recursive_doubling,rabenseifner,bine
  -s 1KiB,64KiB,1MiB --engines 1,4)
# The wall time (CSV's 13th column, JSON's wall_s) is each run's own.
no_wall() {
  if [ "$1" = csv ]; then cut -d, -f1-12,14; else sed -E 's/"wall_s": ?[0-9.e+-]+//g'; fi
}
for fmt in csv json json-compact; do
  target/release/topocoll "${sweep[@]}" --format "$fmt" | no_wall "$fmt" >"$tmp/sweep-alone.$fmt"
  for np in 1 2 3; do
    timeout 300 mpirun -np "$np" target/release/topocoll "${sweep[@]}" --format "$fmt" \
      | no_wall "$fmt" >"$tmp/sweep-$np.$fmt" || status=1
    if ! cmp -s "$tmp/sweep-alone.$fmt" "$tmp/sweep-$np.$fmt"; then
      echo "sweep --format $fmt under mpirun -np $np differs from one process" >&2
      diff "$tmp/sweep-alone.$fmt" "$tmp/sweep-$np.$fmt" | head -5 >&2
      status=1
    fi
  done
done
echo "== tune spread under mpirun writes what one process writes, and the same cache (np 2, 3)"
tuning=(tune -t torus:4x4 -c allreduce --sizes 1KiB..1MiB --engines 1,4 --format json)
TOPOCOLL_CACHE="$tmp/cache-alone" target/release/topocoll "${tuning[@]}" >"$tmp/tune-alone.json"
for np in 2 3; do
  TOPOCOLL_CACHE="$tmp/cache-$np" timeout 300 mpirun -np "$np" target/release/topocoll \
    "${tuning[@]}" >"$tmp/tune-$np.json" || status=1
  if ! cmp -s "$tmp/tune-alone.json" "$tmp/tune-$np.json" \
    || ! diff -r "$tmp/cache-alone" "$tmp/cache-$np" >/dev/null; then
    echo "tune under mpirun -np $np differs from one process" >&2
    diff "$tmp/tune-alone.json" "$tmp/tune-$np.json" | head -5 >&2
    status=1
  fi
done
code=0
err=$(TOPOCOLL_CACHE="$tmp/cache-bad" timeout 120 mpirun -np 2 target/release/topocoll tune \
  -t torus:4x4 -c allreduce --sizes 1KiB,1125899906842625 2>&1 >/dev/null) || code=$?
if [ "$code" -ne 2 ] || [ "$(grep -c '^topocoll: ' <<<"$err")" -ne 1 ]; then
  echo "tune refused under mpirun: exit $code: $err" >&2
  status=1
fi
echo "== optimize shared under mpirun writes what one process writes, and the same schedule (np 2, 3)"
# solve_s is each run's own.
no_solve() { sed -E 's/"solve_s": ?[0-9.e+-]+//'; }
for args in "-t torus:4x4 -c allreduce -s 1MiB" "-t torus:4x4 --fail random:3 --seed 1 -c bcast -s 4MiB" \
  "-t examples/dual-cpu-cluster.toml -c reduce_scatter -s 1MiB"; do
  # shellcheck disable=SC2086
  target/release/topocoll optimize $args --format json --schedule-out "$tmp/opt-alone.json" \
    | no_solve >"$tmp/opt-alone.out"
  for np in 2 3; do
    # shellcheck disable=SC2086
    timeout 300 mpirun -np "$np" target/release/topocoll optimize $args --format json \
      --schedule-out "$tmp/opt-$np.json" | no_solve >"$tmp/opt-$np.out" || status=1
    if ! cmp -s "$tmp/opt-alone.out" "$tmp/opt-$np.out" || ! cmp -s "$tmp/opt-alone.json" "$tmp/opt-$np.json"; then
      echo "optimize $args under mpirun -np $np differs from one process" >&2
      diff "$tmp/opt-alone.out" "$tmp/opt-$np.out" | head -5 >&2
      status=1
    fi
  done
done
code=0
err=$(timeout 120 mpirun -np 2 target/release/topocoll optimize --whole-message \
  -t examples/dual-cpu-cluster.toml -c bcast -s 1MiB 2>&1 >/dev/null) || code=$?
if [ "$code" -ne 2 ] || [ "$(grep -c '^topocoll: ' <<<"$err")" -ne 1 ]; then
  echo "optimize --whole-message under mpirun: exit $code: $err" >&2
  status=1
fi
echo "== a sweep whose processes disagree on their arguments: one line, exit 2"
code=0
err=$(timeout 120 mpirun -np 1 target/release/topocoll simulate -t torus:4x4 -c bcast -a binomial -s 1KiB,2KiB \
  : -np 1 target/release/topocoll simulate -t torus:4x4 -c bcast -a binomial -s 1KiB,4KiB 2>&1 >/dev/null) || code=$?
if [ "$code" -ne 2 ] || [ "$(grep -c '^topocoll: ' <<<"$err")" -ne 1 ] \
  || ! grep -q "given different arguments" <<<"$err"; then
  echo "disagreeing sweep: exit $code: $err" >&2
  status=1
fi
echo "== libtopocoll_mpi.so preloaded into MPI programs (scripts/pmpi-tests.sh)"
$CARGO test --release -p topocoll-mpi || status=1
bash scripts/pmpi-tests.sh || status=1
echo "== tune's exported Open MPI rules run the algorithms they name"
bash validation/mpi-rules/run.sh --quick >/dev/null || status=1
exit $status
