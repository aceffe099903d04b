#!/usr/bin/env bash
# Cross-check of topocoll's flow-level simulator against SimGrid 3.32 (SMPI, CM02).
#
#   bash validation/simgrid/run.sh [--quick | --big | --clusters | --all] [--only REGEX] [--keep DIR]
#
#   --quick  the required scenarios: alltoall pair/ring on torus 8x8 and 16x16, allreduce lr
#            on 16x16, bcast binomial_tree on 8x8x8, each at 64 KiB and 1 MiB (default)
#   --big    alltoall pair on torus 32x32 at 64 KiB (SimGrid: ~5 min per mode)
#   --clusters  SimGrid's FAT_TREE and DRAGONFLY clusters, read by topocoll from the same
#            platform file: alltoall pair, allreduce lr, bcast binomial_tree
#   --platforms  SimGrid's own example platforms (tests/data/simgrid-platforms: zones, zone
#            routes, bypass routes, backbones, FATPIPE links), read by both from the same file:
#            alltoall ring, bcast binomial_tree, and allreduce lr where P divides the size
#   --replay the committed application traces (tests/data/traces: NAS IS, EP, DT) replayed
#            by `smpirun -replay` and by `topocoll replay` on SimGrid's own platforms;
#            --record writes SimGrid's times into tests/data/traces/simgrid-times.tsv (CM02)
#            and simgrid-smpi-times.tsv (SMPI, its default model, cross-traffic on and off),
#            simgrid-default-times.tsv (no algorithm options: SimGrid's default selector,
#            both models), defaults/simgrid-times.tsv (its default selector collective
#            by collective), named/simgrid-times.tsv (its algorithm names),
#            platforms/simgrid-times.tsv (two platforms written for the check), and the
#            trace on a platform with profiles (tests/data/profiles) under both; it also
#            prints the traces on a platform whose links and hosts turn off
#            (tests/data/traces/failures): SimGrid's time or the date its replay aborts at
#   --all    all of them
#   --smpi   the scenarios under SimGrid's default model, SMPI's, on both sides (SimGrid with
#            no model option, topocoll --simgrid), rather than CM02
#   --only REGEX   keep only the scenarios whose name matches REGEX (grep -E)
#   --keep DIR     work in DIR and keep every log there (default: a temporary directory, removed)
#   TOPOCOLL_TIMEOUT (seconds, default 3600): limit on each topocoll run
#   TOPOCOLL_MODEL, SG_EXTRA_CFG: change the model flags, for experiments (see below)
#
# Each scenario runs three times: SimGrid live (smpirun on bench.c), SimGrid replay
# (smpirun -replay on a time-independent trace of the same collective) and
# `topocoll simulate` with the same algorithm, network and sharing rule. The table
# gives the three predicted times, topocoll / SimGrid live, and the wall times.
# docs/VALIDATION.md explains the settings and every difference.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

mode=quick
record=0
smpi=0
only=""
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) mode=quick ;;
    --big) mode=big ;;
    --clusters) mode=clusters ;;
    --platforms) mode=platforms ;;
    --replay) mode=replay ;;
    --record) record=1 ;;
    --smpi) smpi=1 ;;
    --all) mode=all ;;
    --only) only="$2"; shift ;;
    --keep) keep="$2"; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

# --- prerequisites -------------------------------------------------------------------------
need_install=0
command -v smpirun >/dev/null || need_install=1
command -v smpicc >/dev/null || need_install=1
ls /usr/lib/*/simgrid/smpireplaymain >/dev/null 2>&1 || need_install=1
if [ "$need_install" = 1 ]; then
  echo "== installing SimGrid (libsimgrid-dev)" >&2
  sudo_=""
  [ "$(id -u)" -ne 0 ] && sudo_="sudo"
  $sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq libsimgrid-dev gcc python3 >&2
fi
ver="$(dpkg-query -W -f='${Version}' libsimgrid-dev 2>/dev/null || echo unknown)"
case "$ver" in
  3.32*) ;;
  *) echo "run.sh: warning: libsimgrid-dev $ver, the notes and figures are for 3.32" >&2 ;;
esac

# TOPOCOLL_BIN: a topocoll binary to use as it is (say, from another CARGO_TARGET_DIR).
topocoll="${TOPOCOLL_BIN:-$repo/target/release/topocoll}"
if [ -z "${TOPOCOLL_BIN:-}" ] && { [ ! -x "$topocoll" ] || [ -n "$(find "$repo/src" "$repo/crates" "$repo/Cargo.toml" -newer "$topocoll" -print -quit)" ]; }; then
  echo "== building topocoll (release)" >&2
  if [ -e /tmp/cargo.lock ] && command -v flock >/dev/null; then
    (cd "$repo" && flock /tmp/cargo.lock cargo build --release --quiet)
  else
    (cd "$repo" && cargo build --release --quiet)
  fi
fi

if [ -n "$keep" ]; then
  work="$(mkdir -p "$keep" && cd "$keep" && pwd)"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
# smpirun puts its per-run copies of the program in TMPDIR (passing -tmpdir breaks on this
# version); keep them in the work directory.
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"

smpicc -O2 -o "$work/bench" "$here/bench.c" 2>"$work/smpicc.log" || { cat "$work/smpicc.log" >&2; exit 1; }

now() { date +%s.%N; }
# first_hosts XML N FILE: the platform's first N hosts in topocoll's rank order, a line each,
# into FILE; fails when the platform has fewer.
first_hosts() {
  python3 "$here/hosts.py" "$1" >"$3.all"
  [ "$(wc -l <"$3.all")" -ge "$2" ] || return 1
  head -n "$2" "$3.all" >"$3"
}
# last_date LOG [FORMAT]: the latest date a SimGrid replay log prints, its simulated time.
last_date() { awk -v f="${2:-%.9e}" '{ if ($1 + 0 > e) e = $1 + 0 } END { printf f, e }' "$1"; }
# json_time: `time_s` of the topocoll JSON report on standard input.
json_time() { python3 -c "import json,sys; print(json.load(sys.stdin)['time_s'])"; }
# each_replay GLOB FN: FN for each trace folder GLOB names on each of the platforms with
# hosts enough for it, as --only keeps them (dir, t, ranks, cfg, p, xml and hosts set).
each_replay() {
  for dir in $1; do
    [ -f "$dir/index.txt" ] || continue  # a folder of shared traces (defaults)
    t="$(basename "$dir")"
    ranks=$(wc -l <"$dir/index.txt")
    read -r -a cfg <<<"$(cat "$dir/cfg")"
    for p in cluster_backbone small_platform griffon cluster_multi; do
      xml="$repo/tests/data/simgrid-platforms/$p.xml"
      hosts="$work/hosts_$p.txt"
      first_hosts "$xml" "$ranks" "$hosts" || continue
      if [ -n "$only" ] && ! grep -Eq -- "$only" <<<"$t $p"; then continue; fi
      "$2"
    done
  done
}
# model_flags MODEL: the options of CM02 or SMPI's model, SimGrid's in sgm and topocoll's in tcm.
model_flags() {
  sgm=(); tcm=(--simgrid)
  if [ "$1" = CM02 ]; then
    sgm=(--cfg=network/model:CM02 --cfg=network/crosstraffic:0)
    tcm=(--fairness rtt --header-bytes 16 --rendezvous --tcp-window 4194304)
  fi
}
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }

# --- application traces (--replay) ---------------------------------------------------------
# Each committed trace on each platform with enough hosts: SimGrid's replay and topocoll's,
# the same algorithms (the trace's cfg), CM02 on both sides.
if [ "$mode" = replay ] || [ "$mode" = all ]; then
  times="$work/simgrid-times.tsv"
  printf 'trace\tplatform\tranks\tsimgrid_s\n' >"$times"
  echo "| trace | platform | ranks | SimGrid replay (s) | topocoll replay (s) | topocoll / SimGrid | wall SimGrid / topocoll (s) |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  cm02_row() {
    t0=$(now)
    # SimGrid reads the index's file names from its working directory.
    (cd "$dir" && smpirun -np "$ranks" -platform "$xml" -hostfile "$hosts" -replay index.txt \
        --cfg=network/model:CM02 --cfg=network/crosstraffic:0 "${cfg[@]}" \
        --log=smpi_replay.thresh:verbose --log=root.fmt:%.9d%e%m%n) >"$work/$t.$p.out" 2>&1 \
      || sg_failed=1
    t1=$(now)
    if [ "${sg_failed:-0}" = 1 ]; then
      sg_failed=0
      # SimGrid 3.32's replay aborts on a wait with no request pending (LULESH's traces);
      # topocoll replays them (docs/workloads.md): its time is held to SimGrid's live run.
      if grep -q "not preceded by any irecv or isend" "$work/$t.$p.out"; then
        tc=$("$topocoll" replay "$dir/index.txt" --topology "$xml" --map "$hosts" --fairness rtt \
          --header-bytes 16 --rendezvous --tcp-window 4194304 "${cfg[@]}" --format json | json_time)
        echo "| $t | $p | $ranks | aborts (a wait with no request) | $tc | — | — |"
        return
      fi
      echo "smpirun -replay failed, see $work/$t.$p.out" >&2; tail -5 "$work/$t.$p.out" >&2; exit 1
    fi
    sg=$(last_date "$work/$t.$p.out")
    tc=$("$topocoll" replay "$dir/index.txt" --topology "$xml" --map "$hosts" --fairness rtt \
      --header-bytes 16 --rendezvous --tcp-window 4194304 "${cfg[@]}" --format json | json_time)
    t2=$(now)
    printf '%s\t%s\t%s\t%s\n' "$t" "$p" "$ranks" "$sg" >>"$times"
    python3 -c "import sys; s, t = float(sys.argv[1]), float(sys.argv[2]); print(f'| {sys.argv[3]} | {sys.argv[4]} | {sys.argv[5]} | {s:.9e} | {t:.9e} | {t / s:.6f} | {sys.argv[6]} / {sys.argv[7]} |')" \
      "$sg" "$tc" "$t" "$p" "$ranks" "$(elapsed "$t0" "$t1")" "$(elapsed "$t1" "$t2")"
  }
  each_replay "$repo/tests/data/traces/*/" cm02_row
  if [ "$record" = 1 ]; then cp "$times" "$repo/tests/data/traces/simgrid-times.tsv"; fi

  # The same under SimGrid's default model, SMPI's (smpirun's default; topocoll --simgrid),
  # cross-traffic on (SimGrid's default) and off.
  smpi_times="$work/simgrid-smpi-times.tsv"
  printf 'trace\tplatform\tranks\tcrosstraffic\tsimgrid_s\n' >"$smpi_times"
  echo
  echo "| trace | platform | ranks | cross-traffic | SimGrid replay, SMPI (s) | topocoll replay --simgrid (s) | topocoll / SimGrid |"
  echo "|---|---|---:|---|---:|---:|---:|"
  smpi_row() {
    for ct in 1 0; do
      (cd "$dir" && smpirun -np "$ranks" -platform "$xml" -hostfile "$hosts" -replay index.txt \
          --cfg=network/crosstraffic:$ct "${cfg[@]}" \
          --log=smpi_replay.thresh:verbose --log=root.fmt:%.9d%e%m%n) >"$work/$t.$p.smpi$ct.out" 2>&1 \
        || { echo "smpirun -replay failed, see $work/$t.$p.smpi$ct.out" >&2; exit 1; }
      sg=$(last_date "$work/$t.$p.smpi$ct.out")
      off=(); [ "$ct" = 0 ] && off=(--cfg=network/crosstraffic:0)
      tc=$("$topocoll" replay "$dir/index.txt" --topology "$xml" --map "$hosts" --simgrid "${off[@]}" \
        "${cfg[@]}" --format json | json_time)
      printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$p" "$ranks" "$ct" "$sg" >>"$smpi_times"
      python3 -c "import sys; s, t = float(sys.argv[1]), float(sys.argv[2]); print(f'| {sys.argv[3]} | {sys.argv[4]} | {sys.argv[5]} | {sys.argv[6]} | {s:.9e} | {t:.9e} | {t / s:.6f} |')" \
        "$sg" "$tc" "$t" "$p" "$ranks" "$([ "$ct" = 1 ] && echo on || echo off)"
    done
  }
  each_replay "$repo/tests/data/traces/nas-*/ $repo/tests/data/traces/hpcg8/" smpi_row
  if [ "$record" = 1 ]; then cp "$smpi_times" "$repo/tests/data/traces/simgrid-smpi-times.tsv"; fi

  # The same traces with no algorithm options on either side: SimGrid's default selector
  # against topocoll's defaults (docs/workloads.md), CM02 and SMPI (cross-traffic on).
  default_times="$work/simgrid-default-times.tsv"
  printf 'trace\tplatform\tranks\tmodel\tsimgrid_s\n' >"$default_times"
  echo
  echo "| trace | platform | ranks | model | SimGrid replay, default algorithms (s) | topocoll replay, default algorithms (s) | topocoll / SimGrid |"
  echo "|---|---|---:|---|---:|---:|---:|"
  default_row() {
    for model in CM02 SMPI; do
      model_flags "$model"
      (cd "$dir" && smpirun -np "$ranks" -platform "$xml" -hostfile "$hosts" -replay index.txt \
          "${sgm[@]}" --log=smpi_replay.thresh:verbose --log=root.fmt:%.9d%e%m%n) \
          >"$work/$t.$p.default$model.out" 2>&1 \
        || { echo "smpirun -replay failed, see $work/$t.$p.default$model.out" >&2; exit 1; }
      sg=$(last_date "$work/$t.$p.default$model.out")
      tc=$("$topocoll" replay "$dir/index.txt" --topology "$xml" --map "$hosts" "${tcm[@]}" \
        --format json | json_time)
      printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$p" "$ranks" "$model" "$sg" >>"$default_times"
      python3 -c "import sys; s, t = float(sys.argv[1]), float(sys.argv[2]); print(f'| {sys.argv[3]} | {sys.argv[4]} | {sys.argv[5]} | {sys.argv[6]} | {s:.9e} | {t:.9e} | {t / s:.6f} |')" \
        "$sg" "$tc" "$t" "$p" "$ranks" "$model"
    done
  }
  each_replay "$repo/tests/data/traces/nas-*/ $repo/tests/data/traces/hpcg8/" default_row
  if [ "$record" = 1 ]; then cp "$default_times" "$repo/tests/data/traces/simgrid-default-times.tsv"; fi

  # SimGrid's default selector collective by collective, the alltoall at each of Open MPI's
  # picks: one shared trace a case (tests/data/traces/defaults), two platforms, both models.
  defaults="$repo/tests/data/traces/defaults"
  defaults_times="$work/defaults-times.tsv"
  printf 'trace\tplatform\tranks\tmodel\tsimgrid_s\talgorithms\n' >"$defaults_times"
  echo
  echo "| trace | platform | model | SimGrid, default selector (s) | topocoll: algorithms, replay (s) | topocoll / SimGrid |"
  echo "|---|---|---|---:|---|---:|"
  for f in "$defaults"/*.txt; do
    t="$(basename "$f" .txt)"
    ranks=$(awk '{print $1}' "$f" | sort -u | wc -l)
    echo "$f" >"$work/$t.list"
    for p in griffon cluster_backbone; do
      xml="$repo/tests/data/simgrid-platforms/$p.xml"
      hosts="$work/hosts_defaults_${p}_$ranks.txt"
      first_hosts "$xml" "$ranks" "$hosts"
      for model in CM02 SMPI; do
        model_flags "$model"
        smpirun -np "$ranks" -platform "$xml" -hostfile "$hosts" -replay "$work/$t.list" "${sgm[@]}" \
            --log=smpi_replay.thresh:verbose --log=root.fmt:%.9d%e%m%n >"$work/$t.$p.$model.out" 2>&1 \
          || { echo "smpirun -replay failed, see $work/$t.$p.$model.out" >&2; exit 1; }
        sg=$(last_date "$work/$t.$p.$model.out")
        read -r tc algs < <("$topocoll" replay "$f" --topology "$xml" --map "$hosts" "${tcm[@]}" --format json \
          | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['time_s'], ','.join(c['algorithm'] for c in d['calls']))")
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$p" "$ranks" "$model" "$sg" "$algs" >>"$defaults_times"
        python3 -c "import sys; s, t = float(sys.argv[1]), float(sys.argv[2]); print(f'| {sys.argv[3]} | {sys.argv[4]} | {sys.argv[5]} | {s:.9e} | {sys.argv[6]}: {t:.9e} | {t / s:.6f} |')" \
          "$sg" "$tc" "$t" "$p" "$model" "$algs"
      done
    done
  done
  if [ "$record" = 1 ]; then cp "$defaults_times" "$defaults/simgrid-times.tsv"; fi

  # SimGrid's algorithm names, each in a shared trace named COLLECTIVE-NAME-RANKS
  # (tests/data/traces/named), chosen on both sides by --cfg=smpi/COLLECTIVE:NAME,
  # griffon, both models.
  named="$repo/tests/data/traces/named"
  gxml="$repo/tests/data/simgrid-platforms/griffon.xml"
  named_times="$work/named-times.tsv"
  printf 'trace\tplatform\tranks\tmodel\tsimgrid_s\n' >"$named_times"
  echo
  echo "| trace | model | SimGrid (s) | topocoll (s) | topocoll / SimGrid |"
  echo "|---|---|---:|---:|---:|"
  for f in "$named"/*.txt; do
    t="$(basename "$f" .txt)"
    coll="${t%%-*}"; rest="${t#*-}"; name="${rest%-*}"; ranks="${rest##*-}"
    hosts="$work/hosts_named_$ranks.txt"
    first_hosts "$gxml" "$ranks" "$hosts"
    echo "$f" >"$work/$t.list"
    for model in CM02 SMPI; do
      model_flags "$model"
      smpirun -np "$ranks" -platform "$gxml" -hostfile "$hosts" -replay "$work/$t.list" "${sgm[@]}" \
          "--cfg=smpi/$coll:$name" --log=smpi_replay.thresh:verbose --log=root.fmt:%.9d%e%m%n \
          >"$work/$t.$model.out" 2>&1 \
        || { echo "smpirun -replay failed, see $work/$t.$model.out" >&2; exit 1; }
      sg=$(last_date "$work/$t.$model.out")
      tc=$("$topocoll" replay "$f" --topology "$gxml" --map "$hosts" "${tcm[@]}" "--cfg=smpi/$coll:$name" \
        --format json | json_time)
      printf '%s\tgriffon\t%s\t%s\t%s\n' "$t" "$ranks" "$model" "$sg" >>"$named_times"
      python3 -c "import sys; s, t = float(sys.argv[1]), float(sys.argv[2]); print(f'| {sys.argv[3]} | {sys.argv[4]} | {s:.9e} | {t:.9e} | {t / s:.6f} |')" \
        "$sg" "$tc" "$t" "$model"
    done
  done
  if [ "$record" = 1 ]; then cp "$named_times" "$named/simgrid-times.tsv"; fi

  # Two small platforms written for the check (tests/data/traces/platforms): Floyd routes
  # over links of unlike bandwidths and latencies, and hosts on shared links behind a
  # FATPIPE switch; the ring allreduce (SimGrid's lr) at 64 KiB and 1 MiB, a pairwise
  # alltoall and a ring of send-receives, both models.
  pdir="$repo/tests/data/traces/platforms"
  platforms_times="$work/platforms-times.tsv"
  printf 'trace\tplatform\tmodel\tsimgrid_s\n' >"$platforms_times"
  echo
  echo "| trace | platform | model | SimGrid (s) | topocoll (s) | topocoll / SimGrid |"
  echo "|---|---|---|---:|---:|---:|"
  for xml in "$pdir"/*.xml; do
    p="$(basename "$xml" .xml)"
    for f in "$pdir"/*.txt; do
      t="$(basename "$f" .txt)"
      case "$t" in
        allreduce-*) alg=(--cfg=smpi/allreduce:lr) ;;
        alltoall-*) alg=(--cfg=smpi/alltoall:pair) ;;
        *) alg=() ;;
      esac
      echo "$f" >"$work/$t.list"
      for model in CM02 SMPI; do
        model_flags "$model"
        smpirun -np 4 -platform "$xml" -hostfile "$pdir/hosts" -replay "$work/$t.list" "${sgm[@]}" \
            "${alg[@]}" --log=smpi_replay.thresh:verbose --log=root.fmt:%.9d%e%m%n \
            >"$work/$t.$p.$model.out" 2>&1 \
          || { echo "smpirun -replay failed, see $work/$t.$p.$model.out" >&2; exit 1; }
        sg=$(last_date "$work/$t.$p.$model.out")
        tc=$("$topocoll" replay "$f" --topology "$xml" --map "$pdir/hosts" "${tcm[@]}" "${alg[@]}" \
          --format json | json_time)
        printf '%s\t%s\t%s\t%s\n' "$t" "$p" "$model" "$sg" >>"$platforms_times"
        python3 -c "import sys; s, t = float(sys.argv[1]), float(sys.argv[2]); print(f'| {sys.argv[3]} | {sys.argv[4]} | {sys.argv[5]} | {s:.9e} | {t:.9e} | {t / s:.6f} |')" \
          "$sg" "$tc" "$t" "$p" "$model"
      done
    done
  done
  if [ "$record" = 1 ]; then cp "$platforms_times" "$pdir/simgrid-times.tsv"; fi

  # A trace on a platform that changes while it runs (tests/data/profiles), both models.
  pp="$repo/tests/data/profiles/pingpong"
  pxml="$repo/tests/data/simgrid-platforms/small_platform_profile.xml"
  pp_times="$work/profile-times.tsv"
  printf 'model\tsimgrid_s\n' >"$pp_times"
  echo
  echo "| trace | platform | model | SimGrid replay (s) | topocoll replay (s) | topocoll / SimGrid |"
  echo "|---|---|---|---:|---:|---:|"
  for model in CM02 SMPI; do
    opts=(); [ "$model" = CM02 ] && opts=(--cfg=network/model:CM02 --cfg=network/crosstraffic:0)
    (cd "$pp" && smpirun -np 2 -platform "$pxml" -hostfile hosts -replay index.txt "${opts[@]}" \
        --log=smpi_replay.thresh:verbose --log=root.fmt:%.9d%e%m%n) >"$work/pingpong.$model.out" 2>&1 \
      || { echo "smpirun -replay failed, see $work/pingpong.$model.out" >&2; exit 1; }
    sg=$(last_date "$work/pingpong.$model.out" %.9f)
    tc=$("$topocoll" replay "$pp/index.txt" --topology "$pxml" --map "$pp/hosts" --simgrid "${opts[@]}" \
      --format json | json_time)
    printf '%s\t%s\n' "$model" "$sg" >>"$pp_times"
    python3 -c "import sys; s, t = float(sys.argv[1]), float(sys.argv[2]); print(f'| pingpong | small_platform_profile | {sys.argv[3]} | {s:.9e} | {t:.9e} | {t / s:.9f} |')" \
      "$sg" "$tc" "$model"
  done
  if [ "$record" = 1 ]; then cp "$pp_times" "$pp/simgrid-times.tsv"; fi

  # Links and hosts that turn off (tests/data/traces/failures, small_platform_failures.xml):
  # SimGrid's time where the run meets no failure, else the date its replay aborts at.
  fdir="$repo/tests/data/traces/failures"
  fxml="$repo/tests/data/simgrid-platforms/small_platform_failures.xml"
  echo
  echo "| trace | hosts | model | SimGrid replay | topocoll replay |"
  echo "|---|---|---|---|---|"
  for row in "transfer hosts-ginette CM02 SMPI" "after hosts-ginette CM02 SMPI" "under hosts-ginette SMPI" \
      "transfer hosts-fafard SMPI" "transfer hosts-jupiter SMPI"; do
    read -r t h models <<<"$row"
    for model in $models; do
      model_flags "$model"
      if (cd "$fdir" && smpirun -np 2 -platform "$fxml" -hostfile "$h" -replay "$t.txt" "${sgm[@]}" \
          --log=smpi_replay.thresh:verbose --log=root.fmt:%.9d%e%m%n) >"$work/$t.$h.$model.out" 2>&1; then
        sg=$(last_date "$work/$t.$h.$model.out" %.9f)
      else
        # Its last dated line is the failure's: the date, and SimGrid's reason.
        sg=$(python3 - "$work/$t.$h.$model.out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
date = max(float(m) for m in re.findall(r"^(\d+\.\d+) ", text, re.M))
why = re.search(r"Cannot launch actor '[^']*' on failed host '[^']+'|Caused by \S+ by \S+: (.*)", text)
print(f"aborts at {date:g} s: {why.group(1) or why.group(0) if why else '?'}")
PY
)
      fi
      # A run that meets a failure ends with its one line and exit 2.
      out=$("$topocoll" replay "$fdir/$t.txt" --topology "$fxml" --map "$fdir/$h" "${tcm[@]}" --format json 2>&1) \
        || true
      tc=$(python3 -c "import json,sys; t=sys.argv[1]; print(json.loads(t)['time_s'] if t.startswith('{') else t)" "$out")
      echo "| $t | $h | $model | $sg | $tc |"
    done
  done
  [ "$mode" = replay ] && exit 0
fi

# --- scenarios -----------------------------------------------------------------------------
# name topology collective topocoll-algorithm simgrid-algorithm bytes
scenarios=()
if [ "$mode" = quick ] || [ "$mode" = all ]; then
  for size in 65536 1048576; do
    for tp in 8x8 16x16; do
      scenarios+=("torus:$tp alltoall pairwise pair $size")
      scenarios+=("torus:$tp alltoall ring ring $size")
    done
    scenarios+=("torus:16x16 allreduce ring lr $size")
    scenarios+=("torus:8x8x8 bcast binomial binomial_tree $size")
  done
fi
if [ "$mode" = big ] || [ "$mode" = all ]; then
  scenarios+=("torus:32x32 alltoall pairwise pair 65536")
fi
if [ "$mode" = clusters ] || [ "$mode" = all ]; then
  for size in 65536 1048576; do
    for tp in 'fattree:2;8,8;1,4;1,2' 'dragonfly:2,2;2,2;4,1;2'; do
      scenarios+=("$tp alltoall pairwise pair $size")
      scenarios+=("$tp allreduce ring lr $size")
      scenarios+=("$tp bcast binomial binomial_tree $size")
    done
  done
fi

if [ "$mode" = platforms ] || [ "$mode" = all ]; then
  for p in cluster_backbone cluster_multi routing_cluster meta_cluster bypassRoute bypassZoneRoute \
           small_platform small_platform_with_routers two_hosts_platform_shared three_multicore_hosts \
           griffon ns3-big-cluster cluster_torus cluster_fat_tree cluster_dragonfly; do
    scenarios+=("platform:$p alltoall ring ring 65536")
    scenarios+=("platform:$p bcast binomial binomial_tree 65536")
    scenarios+=("platform:$p allreduce ring lr 65536")
  done
fi

BW=1e9      # bytes/s per link and direction
LAT=1e-6    # s per link (hop)
# SimGrid: CM02 (no correction factors: latency and bandwidth factors 1, weight-S 0), no reverse
# traffic, nothing charged for the host code or MPI_Wtime.
SG_CFG=(--cfg=network/model:CM02 --cfg=network/crosstraffic:0
        --cfg=smpi/simulate-computation:no --cfg=smpi/wtime:0)
# topocoll: the same network and the same node behaviour (docs/VALIDATION.md):
#   --fairness rtt        max-min weighted by 1 / route latency (CM02's penalty = summed latency)
#   --torus-tie simgrid   SimGrid's direction at exactly half an even ring
#   --header-bytes 16     SMPI's envelope, added to every message
#   --tcp-window 4194304  CM02's TCP-gamma bound, gamma / (2 x route latency) (never binding here)
#   --engines 1           a rank's transfers start in program order, each held until its data has
#                         arrived: SimGrid's blocking send / sendrecv (messages >= 64 KiB)
#   --rendezvous          a transfer starts only when its receive is posted (SimGrid's mailboxes)
# TOPOCOLL_MODEL replaces this list, for experiments (e.g. without --rendezvous).
read -r -a TC_MODEL <<<"${TOPOCOLL_MODEL:---fairness rtt --header-bytes 16 --tcp-window 4194304 --engines 1 --rendezvous}"
TC_FLAGS=("${TC_MODEL[@]}" --no-verify --sweep --format csv)
# --smpi: SimGrid's default model on both sides, SMPI's (factors, weight-S, cross-traffic).
if [ "$smpi" = 1 ]; then
  SG_CFG=(--cfg=smpi/simulate-computation:no --cfg=smpi/wtime:0)
  read -r -a TC_MODEL <<<"${TOPOCOLL_MODEL:---simgrid --engines 1}"
  TC_FLAGS=("${TC_MODEL[@]}" --no-verify --sweep --format csv)
fi
# SG_EXTRA_CFG adds SimGrid options, for experiments (e.g. --cfg=network/optim:Full).
read -r -a SG_EXTRA <<<"${SG_EXTRA_CFG:-}"
SG_CFG+=("${SG_EXTRA[@]}")


human() { # bytes -> 64KiB / 1MiB
  local b=$1
  if [ $((b % 1048576)) -eq 0 ]; then echo "$((b / 1048576))MiB"
  elif [ $((b % 1024)) -eq 0 ]; then echo "$((b / 1024))KiB"
  else echo "${b}B"; fi
}

results="$work/results.tsv"
: >"$results"
for sc in "${scenarios[@]}"; do
  read -r topo coll talg salg bytes <<<"$sc"
  case "$topo" in torus:*|platform:*) name="$coll/$talg ${topo#*:} $(human "$bytes")" ;; *) name="$coll/$talg $topo $(human "$bytes")" ;; esac
  if [ -n "$only" ] && ! grep -Eq -- "$only" <<<"$name"; then continue; fi
  shape="$(tr -c 'a-zA-Z0-9\n' '_' <<<"${topo#*:}")"
  tag="${coll}_${talg}_${shape}_${bytes}"
  xml="$work/platform_$shape.xml"
  hosts="$work/hosts_$shape.txt"
  case "$topo" in
    platform:*)
      cp "$repo/tests/data/simgrid-platforms/${topo#platform:}.xml" "$xml"
      python3 "$here/hosts.py" "$xml" >"$hosts" ;;
    *) [ -f "$xml" ] || python3 "$here/platform.py" "$topo" --bandwidth "$BW" --latency "$LAT" --xml "$xml" --hostfile "$hosts" ;;
  esac
  ranks=$(wc -l <"$hosts")
  # lr's remainder pass (n mod P elements) is not topocoll's ring: only sizes P divides.
  if [ "$coll" = allreduce ] && [ $((bytes % ranks)) -ne 0 ]; then continue; fi
  # A torus by topocoll's own spec (SimGrid's tie rule on even rings); a fat tree or a
  # dragonfly from the SimGrid platform file itself, links and routes as SimGrid builds them.
  case "$topo" in
    torus:*) tc_topo=(--topology "$topo" --bandwidth "$BW" --latency "$LAT" --torus-tie simgrid) ;;
    *) tc_topo=(--topology "$xml") ;;
  esac
  echo "== $name ($ranks ranks)" >&2
  # A host file of one line runs no collective worth comparing.
  if [ "$ranks" -lt 2 ]; then continue; fi

  # Buffers: SMPI_SHARED_MALLOC maps its file once per block; one block per buffer keeps
  # 1,024 ranks under the kernel's memory-map limit.
  case "$coll" in
    alltoall) buf=$((bytes * ranks)) ;;
    *) buf=$bytes ;;
  esac
  common=(-np "$ranks" -platform "$xml" -hostfile "$hosts" -no-privatize
          "${SG_CFG[@]}" "--cfg=smpi/$coll:$salg")

  # SimGrid live.
  t0=$(now)
  smpirun "${common[@]}" "--cfg=smpi/shared-malloc-blocksize:$buf" \
    "$work/bench" "$coll" "$bytes" >"$work/$tag.live.out" 2>"$work/$tag.live.err" \
    || { echo "smpirun (live) failed, see $work/$tag.live.err" >&2; tail -5 "$work/$tag.live.err" >&2; exit 1; }
  t1=$(now)
  sg_live_wall=$(elapsed "$t0" "$t1")
  read -r n maxstart sg_live < <(awk '$1=="TIME"{n++; if($3>s)s=$3; if($4>e)e=$4} END{printf "%d %.12e %.12e\n", n, s, e}' "$work/$tag.live.out")
  if [ "$n" -ne "$ranks" ]; then echo "live: $n of $ranks ranks reported" >&2; exit 1; fi
  if ! python3 -c "import sys; sys.exit(float(sys.argv[1]) != 0.0)" "$maxstart"; then
    echo "live: warning: a rank started the collective at $maxstart s, not 0" >&2
  fi

  # SimGrid replay: one shared trace, counts in bytes (init without argument: MPI_BYTE).
  trace="$work/$tag.trace"
  case "$coll" in
    alltoall) action="alltoall $bytes $bytes" ;;
    allreduce) action="allreduce $bytes 0" ;;
    bcast) action="bcast $bytes 0" ;;
  esac
  awk -v p="$ranks" -v a="$action" 'BEGIN{for(r=0;r<p;r++)print r" init"; for(r=0;r<p;r++)print r" "a; for(r=0;r<p;r++)print r" finalize"}' >"$trace"
  echo "$trace" >"$trace.list"
  t0=$(now)
  smpirun "${common[@]}" -replay "$trace.list" \
    --log=smpi_replay.thresh:verbose --log=root.fmt:%.9d%e%m%n \
    >"$work/$tag.replay.out" 2>"$work/$tag.replay.err" \
    || { echo "smpirun (replay) failed, see $work/$tag.replay.err" >&2; tail -5 "$work/$tag.replay.err" >&2; exit 1; }
  t1=$(now)
  sg_replay_wall=$(elapsed "$t0" "$t1")
  # Each action is logged at its end as "<clock> <rank> <action> <args> <duration>".
  read -r n sg_replay < <(awk -v c="$coll" '$3==c{n++; if($1>e)e=$1} END{printf "%d %.9e\n", n, e}' "$work/$tag.replay.err")
  if [ "$n" -ne "$ranks" ]; then echo "replay: $n of $ranks ranks logged the collective" >&2; exit 1; fi

  # topocoll.
  t0=$(now)
  timeout "${TOPOCOLL_TIMEOUT:-3600}" "$topocoll" simulate "${tc_topo[@]}" --collective "$coll" \
    --algorithm "$talg" --size "$bytes" "${TC_FLAGS[@]}" >"$work/$tag.topocoll.csv" 2>"$work/$tag.topocoll.err" \
    && tc_ok=1 || tc_ok=0
  t1=$(now)
  tc_wall=$(elapsed "$t0" "$t1")
  if [ "$tc_ok" = 1 ]; then
    tc=$(awk -F, 'NR==2{print $7}' "$work/$tag.topocoll.csv")
  else
    tc=nan
    echo "topocoll did not finish (timeout ${TOPOCOLL_TIMEOUT:-3600} s or error), see $work/$tag.topocoll.err" >&2
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$sg_live" "$sg_replay" "$tc" \
    "$sg_live_wall" "$sg_replay_wall" "$tc_wall" "$ranks" >>"$results"
done

# --- table ---------------------------------------------------------------------------------
python3 - "$results" <<'EOF'
import math, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print("| scenario | SimGrid live (s) | SimGrid replay (s) | topocoll (s) | topocoll / SimGrid | SimGrid wall live / replay (s) | topocoll wall (s) |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name, live, replay, tc, wl, wr, wt, _ in rows:
    live, replay, tc = float(live), float(replay), float(tc)
    ratio = tc / live if not math.isnan(tc) else float("nan")
    rep = f"{replay:.6e}" + ("" if abs(replay - live) <= 1e-9 * max(live, 1e-30) + 1e-9 else " (≠)")
    print(f"| {name} | {live:.6e} | {rep} | {tc:.6e} | {ratio:.4f} | {wl} / {wr} | {wt} |")
EOF
