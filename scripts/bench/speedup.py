#!/usr/bin/env python3
"""Measures the speedup of T threads over one thread on `kalah solve`.

For each configuration, runs `kalah solve --json` alternately with --threads 1 and
--threads T, --reps times each, one process at a time, and prints a Markdown table: every
run's search seconds (the database load excluded), the medians, the speedup of the
medians, and nodes and CPU seconds per thread count. Alternating the runs spreads the
machine's drift (on a VM, ~10% between half-hours) over both thread counts.

Usage: scripts/bench/speedup.py [--kalah build/kalah] [--db kalah-db] [--threads 2] [--reps 3]
                          [--only NAME,...]
Beside each multi-thread run it records the machine's core-to-core round trip (the
BM_CoreToCoreRoundTrip benchmark of build/kalah_bench, when that was built), measured
just before the run: on a VM it can change from minute to minute, and the parallel
search's speed follows it (results/parallel.md, "The second thread's cost is the
core-to-core round trip").
Configurations: the six of results/parallel.md's speedup table (Kalah(6,4) with and
without layers 0..26 and Kalah(5,5) with layers 0..22, both rules). A configuration whose database layers are
missing is skipped with a note on stderr. Needs python3 (standard library only).
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys

CONFIGS = [
    # name, pits, seeds, rule, database layers needed (0..max) or None for no database
    ("64-std-nodb", 6, 4, "standard", None),
    ("64-ec-nodb", 6, 4, "empty-capture", None),
    ("55-std-db22", 5, 5, "standard", 22),
    ("55-ec-db22", 5, 5, "empty-capture", 22),
    ("64-std-db26", 6, 4, "standard", 26),
    ("64-ec-db26", 6, 4, "empty-capture", 26),
]


def has_layers(db, m, rule, top):
    return all(os.path.isfile(os.path.join(db, f"kalah-m{m}-{rule}-s{s}.kdb"))
               for s in range(top + 1))


def core_to_core_ns(bench):
    """The core-to-core round trip in ns now, or None without the benchmark binary."""
    if not os.path.exists(bench):
        return None
    out = subprocess.run([bench, "--benchmark_filter=BM_CoreToCoreRoundTrip",
                          "--benchmark_min_time=0.2", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["benchmarks"][0]["real_time"]


def run(kalah, m, n, rule, threads, db):
    cmd = [kalah, "solve", "--json", "--no-book", "--pits", str(m), "--seeds", str(n), "--rule", rule,
           "--threads", str(threads), "--db", db]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd="/")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kalah", default="build/kalah")
    ap.add_argument("--db", default="kalah-db")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated configuration names")
    a = ap.parse_args()
    kalah = os.path.abspath(a.kalah)
    db = os.path.abspath(a.db)
    only = set(filter(None, a.only.split(",")))
    bench = os.path.join(os.path.dirname(kalah), "kalah_bench")
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"{platform.node()}, nproc {os.cpu_count()}, {cpu}; "
          f"`scripts/bench/speedup.py --threads {a.threads} --reps {a.reps}`\n")
    t = a.threads
    print(f"| configuration | T = 1 seconds | T = {t} seconds | T = 1 median | T = {t} median "
          f"| speedup | nodes T = 1 / T = {t} (M) | CPU s T = 1 / T = {t} (medians) "
          f"| core-to-core ns before each T = {t} run |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, m, n, rule, top in CONFIGS:
        if only and name not in only:
            continue
        if top is None:
            where = "/nonexistent"
        elif has_layers(db, m, rule, top):
            where = db
        else:
            print(f"speedup: {name}: no layers 0..{top} of m={m} {rule} in {db}; skipped",
                  file=sys.stderr)
            continue
        res = {1: [], t: []}
        values = set()
        c2c = []
        for _ in range(a.reps):
            for threads in (1, t):
                if threads > 1:
                    ns = core_to_core_ns(bench)
                    c2c.append("-" if ns is None else f"{ns:.0f}")
                r = run(kalah, m, n, rule, threads, where)
                values.add(r["value"])
                res[threads].append(r)
                print(f"  {name} T={threads}: {r['seconds']:.3f} s, {r['nodes']} nodes",
                      file=sys.stderr)
        if len(values) != 1:
            sys.exit(f"speedup: {name}: thread counts disagree on the value: {sorted(values)}")
        med = {k: statistics.median(x["seconds"] for x in v) for k, v in res.items()}
        nodes = {k: statistics.median(x["nodes"] for x in v) / 1e6 for k, v in res.items()}
        cpus = {k: statistics.median(x["cpu_seconds"] for x in v) for k, v in res.items()}
        secs = {k: ", ".join(f"{x['seconds']:.2f}" for x in v) for k, v in res.items()}
        print(f"| {name} | {secs[1]} | {secs[t]} | {med[1]:.2f} | {med[t]:.2f} | "
              f"{med[1] / med[t]:.2f}x | {nodes[1]:.2f} / {nodes[t]:.2f} | "
              f"{cpus[1]:.1f} / {cpus[t]:.1f} | {', '.join(c2c)} |", flush=True)


if __name__ == "__main__":
    main()
