#!/usr/bin/env python3
"""Helpers for validation/pmpi/run.sh.

  report.py served REPORT FORCING
      One line, tab-separated: the calls the forced algorithms served
      (FORCING is `coll=alg,...`; `*` for "any algorithm but native"), what
      served calls (`coll:alg=calls ...`) and what fell back
      (`coll:reason=calls|...`), from a TOPOCOLL_REPORT file.

  report.py summarize RESULTS.tsv
      Markdown tables of a run's results.tsv: per phase, test and rank count
      the passes and failures; the algorithms that served calls; the
      fallbacks and their reasons; every failure.
"""
import collections
import json
import sys


def served(report, forcing):
    try:
        with open(report) as f:
            rows = json.load(f).get("rows", [])
    except (OSError, ValueError):
        print("0\t-\t-")
        return
    want = {}
    for pair in forcing.split(","):
        if "=" in pair:
            coll, alg = pair.split("=", 1)
            want[coll] = alg
    forced = 0
    ran = collections.Counter()
    fell = collections.Counter()
    for r in rows:
        alg = r["algorithm"].split("/")[0]
        if alg == "native":
            fell[(r["collective"], r.get("fallback", "?"))] += r["calls"]
            continue
        ran[(r["collective"], alg)] += r["calls"]
        w = want.get(r["collective"])
        if w is not None and (w == "*" or w == alg):
            forced += r["calls"]
    def fmt(c, sep):
        return sep.join(f"{k[0]}:{k[1]}={v}" for k, v in sorted(c.items())) or "-"

    # Algorithm names have no spaces; fallback reasons do, hence the `|`.
    print(f"{forced}\t{fmt(ran, ' ')}\t{fmt(fell, '|')}")


def summarize(path):
    rows = []
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) < 9 or p[0] == "suite":
                continue
            rows.append(dict(zip(
                ["suite", "phase", "test", "np", "forcing", "result", "forced_calls", "ran", "fell"], p)))
    names = {"a": "(a) default set", "b": "(b) each algorithm forced", "c": "(c) tune tables"}

    print("### Results\n")
    print("| suite | phase | test | ranks | runs | pass | fail | timeout | skipped | runs the forced algorithm served |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    groups = collections.OrderedDict()
    for r in rows:
        groups.setdefault((r["suite"], r["phase"], r["test"], r["np"]), []).append(r)
    for (suite, phase, test, np), rs in groups.items():
        c = collections.Counter(r["result"].split(" ")[0] for r in rs)
        srv = sum(1 for r in rs if r["result"] == "pass" and int(r["forced_calls"] or 0) > 0)
        print(f"| {suite} | {names.get(phase, phase)} | {test} | {np} | {len(rs)} | {c['pass']} "
              f"| {c['fail']} | {c['timeout']} | {c['skipped']} | {srv} |")

    print("\n### Totals\n")
    print("| suite | phase | runs | pass | fail | timeout | skipped |")
    print("|---|---|---|---|---|---|---|")
    tot = collections.OrderedDict()
    for r in rows:
        tot.setdefault((r["suite"], r["phase"]), collections.Counter())[r["result"].split(" ")[0]] += 1
    for (suite, phase), c in tot.items():
        print(f"| {suite} | {names.get(phase, phase)} | {sum(c.values())} | {c['pass']} | {c['fail']} "
              f"| {c['timeout']} | {c['skipped']} |")

    print("\n### Algorithms that served calls in passing runs\n")
    ran = collections.defaultdict(collections.Counter)
    for r in rows:
        if r["result"] != "pass" or r["ran"] == "-":
            continue
        for item in r["ran"].split(" "):
            k, v = item.rsplit("=", 1)
            coll, alg = k.split(":", 1)
            ran[coll][alg] += int(v)
    print("| collective | algorithm: calls |")
    print("|---|---|")
    for coll in sorted(ran):
        print(f"| {coll} | " + ", ".join(f"{a}: {n}" for a, n in sorted(ran[coll].items())) + " |")

    print("\n### Fallbacks (calls, all runs)\n")
    fell = collections.Counter()
    for r in rows:
        if r["fell"] == "-":
            continue
        for part in r["fell"].split("|"):
            if "=" in part:
                k, v = part.rsplit("=", 1)
                fell[k] += int(v)
    print("| collective: reason | calls |")
    print("|---|---|")
    for k, v in sorted(fell.items()):
        print(f"| {k} | {v} |")

    bad = [r for r in rows if r["result"] not in ("pass", "skipped")]
    print("\n### Failures\n")
    if not bad:
        print("none")
    for r in bad:
        print(f"- {r['suite']} {r['test']} -np {r['np']} {r['forcing'] or '(no forcing)'}: {r['result']}")


if __name__ == "__main__":
    if sys.argv[1] == "served":
        served(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "summarize":
        summarize(sys.argv[2])
    else:
        sys.exit(__doc__)
