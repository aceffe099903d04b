#!/usr/bin/env bash
# Bytes each algorithm puts on a dragonfly's global (blue) links and on a
# fat tree's upper level (level 1-2), 64 ranks one per host, as the table
# of docs/allreduce.md gives them: 1 MiB buffers (bcast, reduce,
# reduce_scatter, allreduce) or 16 KiB blocks (the others).
# Usage: scripts/link-classes.sh [path/to/topocoll] [RANKS]
#   RANKS: 64 (the default; examples/dragonfly-64.xml, examples/fat-tree-64.xml)
#   or 48 (examples/dragonfly-48.xml, examples/fat-tree-48.xml: not a power of two)
set -euo pipefail
bin=${1:-target/release/topocoll}
ranks=${2:-64}
df=examples/dragonfly-$ranks.xml
ft=examples/fat-tree-$ranks.xml
[ -f "$df" ] && [ -f "$ft" ] || { echo "no $df or $ft: RANKS is 64 or 48" >&2; exit 2; }
class() { # topology collective algorithm size class; "n/a" where the algorithm does not apply
    local root=() out
    case $2 in bcast | reduce | scatter | gather) root=(--root 0) ;; esac
    out=$("$bin" simulate -t "$1" -c "$2" -a "$3" -s "$4" "${root[@]}" 2>/dev/null) || { echo n/a; return; }
    sed -n 's/^bytes by class  //p' <<<"$out" | tr ',' '\n' |
        awk -v c="$5" '{ if ($0 ~ c" ") { print $NF } }'
}
echo "| collective | algorithm | dragonfly global (blue) bytes | fat tree upper level bytes |"
echo "|---|---|---:|---:|"
while read -r coll size algs; do
    for a in $algs; do
        printf '| %s | `%s` | %s | %s |\n' "$coll" "$a" \
            "$(class $df "$coll" "$a" "$size" blue)" "$(class $ft "$coll" "$a" "$size" 'level 1-2')"
    done
done <<'LIST'
bcast 1MiB binomial binary scatter_allgather bine
reduce 1MiB binomial bine
scatter 16KiB linear binomial bine
gather 16KiB linear binomial bine
allgather 16KiB ring recursive_doubling bruck swing bine
reduce_scatter 1MiB ring recursive_halving swing bine
allreduce 1MiB ring recursive_doubling rabenseifner reduce_bcast swing_lat swing_bw bine
alltoall 16KiB linear pairwise bruck bine
LIST
