#!/usr/bin/env python3
"""Runs this project's solver and the published solvers on the same positions, alternately.

The anchors of issue 21, built outside the project (nothing of their code is in it):
- girving/kalah (Irving's solver for "Solving Kalah", 2000; the empty-capture rule, 6 pits):
  `make serial` gives `kalah-s` (with GCC 12: `make serial CFLAGS="-O3 -funroll-loops
  -fcommon -fgnu89-inline -w"`); it needs an endgame file even without a database, so
  "without a database" means one of 1 seed (`generator`, answers `4`, `c 1`, `s`, `q`).
  Run as `kalah-s -v -t 26 -e E -E FILE s N` (transposition table 2^26 entries of 12 bytes).
- LifesLight/CMancala (the standard rule, 6 pits): its interactive solve of the start
  (`stones N`, `time 0`, `player 1 ai`, `player 2 human`, `start`, `step`, `last`), one
  thread, cache 2^C entries (--cm-cache; the program's default is 24).
This project: `kalah solve --json --no-book --threads 1 --db /nonexistent --memory-db off`
(no opening book, no database and no layers built in memory; `--db DIR` in ec-db), default table (1 GiB).

For each configuration, runs the two solvers alternately --reps times each, one process at a
time, and prints a Markdown table: value, nodes, the search seconds each solver reports
(loading excluded), wall seconds and process CPU seconds of every run, their medians, and
the ratios this project / anchor. The machine is shared: the CPU seconds (getrusage of the
child) are less disturbed by other jobs than the wall seconds; both are printed. The anchors
count nodes differently: girving/kalah's "nodes searched" leave out the children it only
"peeked" at (game over, database, bounds, table cut-off), which this project counts as
nodes; CMancala counts every node it enters.

Usage: scripts/bench/peers.py [--kalah build/kalah] [--kalah-args '--db-layout lines']
                        [--girving BIN --girving-eg FILE]
                        [--kalah-db DIR --girving-db FILE [--girving-db-seeds 24]]
                        [--cmancala BIN] [--seeds 4] [--reps 3] [--only NAME,...]
Configurations: ec-nodb (empty-capture, against girving/kalah), ec-db (the same with
databases: --kalah-db DIR, a directory holding this project's empty-capture layers 0..K, and
--girving-db FILE --girving-db-seeds K, girving/kalah's endgame file of K seeds built by its
`generator`: answers `4`, `c K`, `s`, `q`), std-nodb (standard, against CMancala); an
anchor not given is skipped. Needs python3 (standard library only).
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time


def timed(cmd, stdin=None, cwd="/"):
    """Runs cmd; returns (stdout, wall seconds, None)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=cwd)
    out, err = p.communicate(stdin)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"peers: {' '.join(cmd)} failed ({p.returncode}): {err.strip()[:500]}")
    return out, wall, None


def run_kalah(kalah, n, rule, db=None, extra=()):
    before = os.times()
    where = ["--db", os.path.abspath(db)] if db else ["--db", "/nonexistent", "--memory-db", "off"]
    out, wall, _ = timed([kalah, "solve", "--json", "-q", "--no-book", "--pits", "6", "--seeds", str(n),
                          "--rule", rule, "--threads", "1"] + where + list(extra))
    after = os.times()
    j = json.loads(out)
    cpu = (after.children_user - before.children_user) + (after.children_system -
                                                          before.children_system)
    return {"value": j["value"], "nodes": j["nodes"], "seconds": j["seconds"], "wall": wall,
            "cpu": cpu}


def run_girving(binary, eg_file, eg_seeds, tt_bits, n):
    before = os.times()
    out, wall, _ = timed([binary, "-v", "-t", str(tt_bits), "-e", str(eg_seeds), "-E",
                          os.path.abspath(eg_file), "s", str(n)])
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system -
                                                          before.children_system)
    value = int(re.search(r"Move: s \d+, m \d+, r (-?\d+)", out).group(1))
    nodes = int(re.search(r"Nodes searched:\s+(\d+)", out).group(1))
    peeks = int(re.search(r"Nodes peeked:\s+(\d+)", out).group(1))
    secs = 0.0
    for part in re.search(r"Thinking time:\s+(\S+)", out).group(1).split(":"):
        secs = secs * 60 + float(part)  # "s.sss", or "m:ss" from a minute on
    return {"value": value, "nodes": nodes, "peeks": peeks, "seconds": secs, "wall": wall,
            "cpu": cpu}


def run_cmancala(binary, n, cache):
    script = (f"stones {n}\ntime 0\ndepth 0\ncache {cache}\nprogress false\nplayer 1 ai\n"
              "player 2 human\nautoplay false\nstart\nstep\nlast\nquit\n")
    before = os.times()
    out, wall, _ = timed([binary], stdin=script)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system -
                                                          before.children_system)
    value = int(re.search(r"Evaluation: (-?\d+)", out).group(1))
    nodes = round(float(re.search(r"Total nodes: ([\d.]+) million", out).group(1)) * 1e6)
    secs = float(re.search(r"Total time:\s+([\d.]+) seconds", out).group(1))
    return {"value": value, "nodes": nodes, "seconds": secs, "wall": wall, "cpu": cpu}


def med(runs, key):
    xs = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(xs) if xs else None


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kalah", default="build/kalah")
    ap.add_argument("--kalah-args", default="",
                    help="more options for this project's solve, e.g. '--db-layout lines'")
    ap.add_argument("--girving", help="girving/kalah's kalah-s")
    ap.add_argument("--girving-eg", help="its endgame file")
    ap.add_argument("--girving-eg-seeds", type=int, default=1)
    ap.add_argument("--girving-tt-bits", type=int, default=26)
    ap.add_argument("--kalah-db", help="this project's database directory for ec-db "
                    "(the same seeds as --girving-db's)")
    ap.add_argument("--girving-db", help="girving/kalah's endgame file for ec-db")
    ap.add_argument("--girving-db-seeds", type=int, default=24)
    ap.add_argument("--cmancala", help="CMancala's Mancala binary")
    ap.add_argument("--cm-cache", type=int, default=24)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    kalah = os.path.abspath(a.kalah)
    configs = []
    if a.girving:
        configs.append(("ec-nodb", "empty-capture", "girving/kalah",
                        lambda: run_girving(a.girving, a.girving_eg, a.girving_eg_seeds,
                                            a.girving_tt_bits, a.seeds)))
    if a.girving and a.girving_db and a.kalah_db:
        configs.append(("ec-db", "empty-capture", "girving/kalah",
                        lambda: run_girving(a.girving, a.girving_db, a.girving_db_seeds,
                                            a.girving_tt_bits, a.seeds)))
    if a.cmancala:
        configs.append(("std-nodb", "standard", "CMancala",
                        lambda: run_cmancala(a.cmancala, a.seeds, a.cm_cache)))
    only = set(filter(None, a.only.split(",")))
    print(f"peers.py, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, Kalah(6,{a.seeds}), "
          f"one thread each, {a.reps} alternated runs", flush=True)
    print()
    print("| configuration | solver | value | nodes | search s (runs) | wall s (runs) | "
          "cpu s (runs) | median wall | median cpu |")
    print("|---|---|---|---|---|---|---|---|---|")
    summary = []
    for name, rule, anchor, run_anchor in configs:
        if only and name not in only:
            continue
        ours, theirs = [], []
        for _ in range(a.reps):
            ours.append(run_kalah(kalah, a.seeds, rule, a.kalah_db if name == "ec-db" else None,
                                  a.kalah_args.split()))
            theirs.append(run_anchor())
        for who, runs in (("kalah", ours), (anchor, theirs)):
            nodes = f"{runs[0]['nodes']:,}"
            if "peeks" in runs[0]:
                nodes += f" (+{runs[0]['peeks']:,} peeked)"
            print(f"| {name} | {who} | {runs[0]['value']:+d} | {nodes} | "
                  f"{', '.join(fmt(r['seconds']) for r in runs)} | "
                  f"{', '.join(fmt(r['wall']) for r in runs)} | "
                  f"{', '.join(fmt(r['cpu']) for r in runs)} | {fmt(med(runs, 'wall'))} | "
                  f"{fmt(med(runs, 'cpu'))} |", flush=True)
        summary.append((name, anchor, med(ours, "wall") / med(theirs, "wall"),
                        med(ours, "cpu") / med(theirs, "cpu"),
                        ours[0]["nodes"] / theirs[0]["nodes"]))
    print()
    for name, anchor, rw, rc, rn in summary:
        print(f"{name}: kalah / {anchor}: wall {rw:.2f}x, cpu {rc:.2f}x, nodes {rn:.2f}x")


if __name__ == "__main__":
    main()
