#!/usr/bin/env python3
"""A decision table for libtopocoll_mpi.so by measurement on this machine.

For one collective, runs the latency benchmark (crates/mpi/tests/c/latency.c)
under mpirun with the MPI library's own collective and with each of topocoll's
algorithms forced in turn (TOPOCOLL_ALGORITHMS), ROUNDS times, and writes, in
the JSON form of `topocoll tune --format json`, a table whose choice at each
size is the fastest measured, `native` (the library's own) included. An
algorithm that did not serve a size (it does not apply there: the report
shows the library's own ran) is listed as skipped at that size.

    scripts/pmpi-table.py --np 4 --collective allreduce [--max 16777216] -o allreduce.json
    TOPOCOLL_TABLE=allreduce.json mpirun -x LD_PRELOAD=.../libtopocoll_mpi.so ...
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def algorithms(topocoll, collective):
    out = subprocess.run([topocoll, "list"], capture_output=True, text=True, check=True).stdout
    names, on = [], False
    for line in out.splitlines():
        if line.startswith("Algorithms"):
            on = True
            continue
        f = line.split()
        if on and len(f) >= 2 and f[0] == collective:
            names.append(f[1])
    return names


def measure(args, exe, alg, tmp):
    """{size: (seconds, served)} for one candidate: the least of ROUNDS runs."""
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    cmd = [args.mpirun, "-np", str(args.np)]
    report = os.path.join(tmp, "report.json")
    if alg != "native":
        env.update(LD_PRELOAD=args.lib, TOPOCOLL_ALGORITHMS=f"{args.collective}={alg}",
                   TOPOCOLL_REPORT=report)
        cmd += ["-x", "LD_PRELOAD"]
    else:
        env.pop("LD_PRELOAD", None)
    cmd += [exe, args.collective, str(args.max)]
    best = {}
    served = set()
    for _ in range(args.rounds):
        if os.path.exists(report):
            os.remove(report)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            sys.exit(f"pmpi-table: {alg}: the benchmark failed: {r.stderr.strip()[-400:]}")
        for row in csv.DictReader(r.stdout.splitlines()):
            size = int(row["size_bytes"])
            best[size] = min(best.get(size, float("inf")), float(row["us"]) * 1e-6)
        if alg == "native":
            served = set(best)
        elif os.path.exists(report):
            for row in json.load(open(report))["rows"]:
                if row["algorithm"] == alg and row["collective"] == args.collective:
                    served.add(row["size_bytes"])
    return {s: (t, s in served) for s, t in best.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--collective", required=True)
    ap.add_argument("--max", type=int, default=16 << 20, help="largest size in bytes")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--mpicc", default=os.environ.get("MPICC", "mpicc"))
    ap.add_argument("--lib", default=os.path.join(ROOT, "target/release/libtopocoll_mpi.so"))
    ap.add_argument("--topocoll", default=os.path.join(ROOT, "target/release/topocoll"))
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    for f in (args.lib, args.topocoll):
        if not os.path.exists(f):
            sys.exit(f"pmpi-table: {f} is missing (cargo build --release -p topocoll-mpi -p topocoll)")
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "latency")
        subprocess.run([args.mpicc, "-O2", "-o", exe,
                        os.path.join(ROOT, "crates/mpi/tests/c/latency.c")], check=True)
        times = {alg: measure(args, exe, alg, tmp)
                 for alg in ["native"] + algorithms(args.topocoll, args.collective)}
    sizes = sorted(times["native"])
    decisions = []
    for s in sizes:
        cands = []
        for alg, m in times.items():
            t, served = m.get(s, (None, False))
            if served and t is not None:
                cands.append({"algorithm": alg, "engines": 0, "time_s": t})
            else:
                cands.append({"algorithm": alg, "engines": 0,
                              "skipped": "does not apply here: the MPI library's own ran"})
        timed = [c for c in cands if "time_s" in c]
        best = min(timed, key=lambda c: c["time_s"])
        decisions.append({"size_bytes": s, "choice": {"algorithm": best["algorithm"], "engines": 0},
                          "predicted_s": best["time_s"], "candidates": cands})
    table = {"version": 1, "key": "measured",
             "description": f"{args.collective} on {args.np} ranks, measured with {args.mpirun}",
             "collective": args.collective, "ranks": args.np, "decisions": decisions}
    with open(args.output, "w") as f:
        json.dump(table, f, indent=1)
    for d in decisions:
        nat = next(c["time_s"] for c in d["candidates"] if c["algorithm"] == "native")
        print(f"{d['size_bytes']:>10} B  {d['choice']['algorithm']:<20} {d['predicted_s']*1e6:10.1f} us"
              f"  (native {nat*1e6:.1f} us)")


if __name__ == "__main__":
    main()
