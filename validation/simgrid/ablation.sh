#!/usr/bin/env bash
# How much each SimGrid-matching setting moves topocoll's prediction (docs/VALIDATION.md).
#
#   bash validation/simgrid/ablation.sh
#
# For every scenario of run.sh --quick it runs topocoll with the full SimGrid-matching flags,
# then with one setting changed at a time, and prints the relative change. No SimGrid needed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
topocoll="$repo/target/release/topocoll"
[ -x "$topocoll" ] || (cd "$repo" && cargo build --release --quiet)

full="--fairness rtt --torus-tie simgrid --header-bytes 16 --tcp-window 4194304 --engines 1 --rendezvous"
variants=(
  "eager|${full/ --rendezvous/}"
  "no header|${full/--header-bytes 16 /}"
  "equal shares|${full/--fairness rtt/--fairness equal}"
  "tie plus|${full/--torus-tie simgrid/--torus-tie plus}"
  "9 engines|${full/--engines 1/--engines 9}"
)

run() { # topology collective algorithm bytes flags...
  local topo=$1 coll=$2 alg=$3 bytes=$4
  shift 4
  # shellcheck disable=SC2068
  "$topocoll" simulate --topology "$topo" --collective "$coll" --algorithm "$alg" --size "$bytes" \
    --bandwidth 1e9 --latency 1e-6 $@ --no-verify --sweep --format csv | awk -F, 'NR==2{print $7}'
}

header="| scenario | full model (s) |"
rule="|---|---:|"
for v in "${variants[@]}"; do header+=" ${v%%|*} |"; rule+="---:|"; done
echo "$header"
echo "$rule"
for size in 65536 1048576; do
  for sc in "torus:8x8 alltoall pairwise" "torus:8x8 alltoall ring" \
            "torus:16x16 alltoall pairwise" "torus:16x16 alltoall ring" \
            "torus:16x16 allreduce ring" "torus:8x8x8 bcast binomial"; do
    read -r topo coll alg <<<"$sc"
    base=$(run "$topo" "$coll" "$alg" "$size" $full)
    if [ "$size" -ge 1048576 ]; then label="$((size / 1048576))MiB"; else label="$((size / 1024))KiB"; fi
    line="| $coll/$alg ${topo#torus:} $label | $base |"
    for v in "${variants[@]}"; do
      t=$(run "$topo" "$coll" "$alg" "$size" ${v#*|})
      line+=" $(python3 -c "import sys; b, t = map(float, sys.argv[1:]); print(f'{(t - b) / b:+.2%}')" "$base" "$t") |"
    done
    echo "$line"
  done
done
