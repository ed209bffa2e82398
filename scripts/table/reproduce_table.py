#!/usr/bin/env python3
"""Solves every Kalah(m,n), m <= 6, n <= 6, under both rules and writes results/table.{md,csv}.

Each cell runs `kalah solve ... --json` with a time budget; a cell over budget is recorded as
unfinished (empty value). Kalah(6,6) is attempted only when --budget-66 is given. Endgame
databases are built first (or reused) per (m, rule) with `kalah build-db`.

Usage: scripts/table/reproduce_table.py [--kalah build/kalah] [--budget 600] [--budget-66 SECONDS]
                                  [--db-dir kalah-db] [--deep-db DIR] [--threads N]
                                  [--only M,N,...] [--cells "M,N M,N ..."]

--deep-db DIR: a directory of deeper databases built beforehand (results/db.md gives the
build-db commands, e.g. 6 pits to 30 seeds); a (m, rule) with layers there is solved with
them instead of the default database. --cells: solve only these cells and keep every other
row of the existing table.csv in --out (e.g. --cells "6,5 5,6" after a deep build).
--campaign DIR (repeatable): a proof campaign's directory (its journal.kcj; results/
campaign-6-6-*/ hold the committed ones). A cell left without a value gets the bounds that
campaign proved (`kalah campaign --status --json`: South's margin in [lower, upper]), shown
as a bound, e.g. `>= +2 W`, with the journal, its nodes and the date as evidence; where the
campaign proved the value (lower = upper) the cell gets it, checked against the published one. To redraw
the Kalah(6,6) cells from the journals alone, solving nothing:
  scripts/table/reproduce_table.py --cells 6,6 --campaign results/campaign-6-6-standard \
      --campaign results/campaign-6-6-empty-capture
Needs python3 (standard library only). At its end it draws results/table.png with
scripts/table/plot_table.py when gnuplot is installed (Debian: apt-get install gnuplot-nox), and
says how to get it when not.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import subprocess
import sys
import time

import plot_table
from plot_table import bound_text

# Published values (docs/reference-values.md). empty-capture: Irving, Donkers & Uiterwijk
# 2000, Tables 9/10 (exact margins for m >= 4, W/L/D for m <= 3), Kalah(6,6) Rawlings 2015.
# standard: Rawlings 2015 / CMancala.
PUBLISHED = {
    "empty-capture": {
        (1, 1): "D", (1, 2): "L", (1, 3): "W", (1, 4): "L", (1, 5): "W", (1, 6): "D",
        (2, 1): "W", (2, 2): "L", (2, 3): "L", (2, 4): "L", (2, 5): "W", (2, 6): "W",
        (3, 1): "D", (3, 2): "W", (3, 3): "W", (3, 4): "W", (3, 5): "W", (3, 6): "L",
        (4, 1): 2, (4, 2): 6, (4, 3): 8, (4, 4): 2, (4, 5): 2, (4, 6): 0,
        (5, 1): 0, (5, 2): 0, (5, 3): 8, (5, 4): 12, (5, 5): 2, (5, 6): 2,
        (6, 1): 2, (6, 2): 10, (6, 3): 2, (6, 4): 10, (6, 5): 12, (6, 6): 2,
    },
    "standard": {(6, 3): 2, (6, 4): 8, (6, 5): 10, (4, 3): 6},
}
RULES = ["standard", "empty-capture"]


def wld(v):
    return "W" if v > 0 else ("L" if v < 0 else "D")


def check(rule, m, n, value):
    pub = PUBLISHED[rule].get((m, n))
    if pub is None:
        return "not published"
    if value is None:
        return "unfinished"
    if isinstance(pub, str):
        return "match" if wld(value) == pub else "differs"
    return "match" if value == pub else "differs"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run(cmd, timeout=None):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def db_seeds(m):
    # Largest database layer per m: small boards take it all, 6 pits a size that builds in
    # minutes on a 2-core machine (see results/db.md).
    return {1: 12, 2: 24, 3: 24, 4: 24, 5: 22, 6: 22}[m]


def campaign_bounds(kalah, dirs):
    """{(pits, seeds, rule): status} of each campaign directory's journal."""
    out = {}
    for d in dirs:
        r = run([kalah, "campaign", "--status", "--dir", d, "--json"])
        if r.returncode != 0:
            sys.exit(f"reproduce_table: campaign --status --dir {d} failed: {r.stderr.strip()}")
        j = json.loads(r.stdout)
        j["journal"] = os.path.join(d, "journal.kcj")
        # The date of the journal's last record: its trace's last finish (a checkout's file
        # times say when it was copied), else the journal file's time.
        stamp = os.path.getmtime(j["journal"])
        trace = os.path.join(d, "trace.csv")
        if os.path.exists(trace):
            with open(trace, newline="") as f:
                finished = [float(r["finished"]) for r in csv.DictReader(f) if r.get("finished")]
            if finished:
                stamp = max(finished)
        j["journal_date"] = datetime.datetime.fromtimestamp(
            stamp, datetime.timezone.utc).date().isoformat()
        out[(j["pits"], j["seeds"], j["rule"])] = j
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kalah", default="build/kalah")
    ap.add_argument("--budget", type=float, default=600, help="seconds per cell (default 600)")
    ap.add_argument("--budget-66", type=float, default=0,
                    help="seconds for Kalah(6,6) per rule; 0 (default) skips it as unfinished")
    ap.add_argument("--db-dir", default="kalah-db")
    ap.add_argument("--no-db", action="store_true", help="solve without endgame databases")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--tt-mb", type=int, default=8192)
    ap.add_argument("--only", default="", help="comma list of m values to run (default all)")
    ap.add_argument("--deep-db", default="",
                    help="directory of deeper databases, used for the (m, rule) it holds")
    ap.add_argument("--cells", default="",
                    help='solve only these cells ("M,N M,N"), keeping the other rows of table.csv')
    ap.add_argument("--out", default="results")
    ap.add_argument("--campaign", action="append", default=[],
                    help="a campaign directory whose proven bounds fill its unsolved cell")
    args = ap.parse_args()

    if not os.access(args.kalah, os.X_OK):
        sys.exit(f"reproduce_table: no kalah binary at {args.kalah} (run scripts/setup.sh)")
    version = run([args.kalah, "--version"]).stdout.strip()
    commit = run(["git", "rev-parse", "--short", "HEAD"]).stdout.strip()
    if commit:
        version += f" ({commit})"
    machine = f"{os.cpu_count()} cores, {cpu_model()}"
    date = datetime.date.today().isoformat()
    bounds = campaign_bounds(args.kalah, args.campaign)
    only = {int(x) for x in args.only.split(",") if x}
    only_cells = {tuple(int(x) for x in c.split(",")) for c in args.cells.split()}
    kept = []  # rows of the existing table that --cells leaves alone
    if only_cells:
        only |= {m for m, _ in only_cells}
        old_csv = os.path.join(args.out, "table.csv")
        if os.path.exists(old_csv):
            with open(old_csv, newline="") as f:
                for r in csv.DictReader(f):
                    for key in ("pits", "seeds", "threads"):
                        r[key] = int(r[key])
                    for key in ("value", "lower", "upper"):
                        r[key] = int(r[key]) if r.get(key, "") != "" else ""
                    if (r["pits"], r["seeds"]) not in only_cells:
                        kept.append(r)
    rows = []
    for rule in RULES:
        for m in range(1, 7):
            if only and m not in only:
                continue
            db_args, db_size = [], 0
            deep = args.deep_db and os.path.exists(
                os.path.join(args.deep_db, f"kalah-m{m}-{rule}-s0.kdb"))
            solves = any(args.budget_66 if (m, n) == (6, 6) else args.budget
                         for n in range(1, 7) if not only_cells or (m, n) in only_cells)
            if solves and deep and not args.no_db:
                db_args, db_size = ["--db", args.deep_db], ""
            elif solves and not args.no_db:
                k = db_seeds(m)
                t0 = time.time()
                b = run([args.kalah, "build-db", "--pits", str(m), "--rule", rule,
                         "--max-seeds", str(k), "--db", args.db_dir,
                         "--threads", str(args.threads)])
                if b.returncode != 0:
                    sys.exit(f"reproduce_table: build-db m={m} {rule} failed: {b.stderr.strip()}")
                print(f"database m={m} {rule} to {k} seeds ready ({time.time() - t0:.0f} s)",
                      file=sys.stderr)
                db_args = ["--db", args.db_dir]
                db_size = k
            for n in range(1, 7):
                if only_cells and (m, n) not in only_cells:
                    continue
                budget = args.budget_66 if (m, n) == (6, 6) else args.budget
                row = {"pits": m, "seeds": n, "rule": rule, "value": "", "result": "",
                       "best": "", "nodes": "", "seconds": "", "threads": args.threads,
                       "db_seeds": db_size, "date": date, "machine": machine,
                       "version": version}
                value = None
                if budget > 0:
                    # --no-book: the table's nodes and seconds are the search's (the
                    # built-in book values Kalah(6,4) at once).
                    cmd = [args.kalah, "solve", "--no-book", "--pits", str(m), "--seeds", str(n),
                           "--rule", rule, "--json", "--threads", str(args.threads), "--tt-mb",
                           str(args.tt_mb)]
                    t0 = time.time()
                    try:
                        r = run(cmd + db_args, timeout=budget)
                        if r.returncode != 0:
                            sys.exit(f"reproduce_table: {' '.join(cmd)} failed: {r.stderr.strip()}")
                        j = json.loads(r.stdout)
                        value = j["value"]
                        row.update(value=value, result=j["result"], best=j["best_turn"],
                                   nodes=j["nodes"], seconds=round(j["seconds"], 3))
                        if j.get("db_seeds", -1) >= 0:
                            row["db_seeds"] = j["db_seeds"]
                    except subprocess.TimeoutExpired:
                        row.update(seconds=f">{budget:.0f}")
                    print(f"Kalah({m},{n}) {rule}: {row['value'] if value is not None else 'unfinished'}"
                          f" ({time.time() - t0:.1f} s)", file=sys.stderr)
                row["published"] = check(rule, m, n, value)
                row.update(lower="", upper="", evidence="")
                b = bounds.get((m, n, rule))
                if value is None and b is not None:
                    row.update(lower=b["lower"], upper=b["upper"], nodes=b["campaign_nodes"],
                               seconds=round(b["job_seconds"], 1),
                               machine="the campaign's (results/campaign.md)",
                               evidence=f"{b['journal']} ({b['jobs']} jobs, {b['journal_date']})")
                    if b["lower"] == b["upper"]:
                        # The campaign proved the value: the cell is solved, its best turns
                        # those the journal proves worth exactly the value.
                        value = b["lower"]
                        best = [t["turn"] for t in b.get("turns", [])
                                if t["lower"] == t["upper"] == value]
                        row.update(value=value, result=b["result"], best=", ".join(best))
                        row["published"] = check(rule, m, n, value)
                    print(f"Kalah({m},{n}) {rule}: proven bounds {b['lower']:+d}..{b['upper']:+d}"
                          f" from {b['journal']}", file=sys.stderr)
                rows.append(row)

    rows += kept
    rows.sort(key=lambda r: (RULES.index(r["rule"]), r["pits"], r["seeds"]))
    os.makedirs(args.out, exist_ok=True)
    fields = ["pits", "seeds", "rule", "value", "result", "best", "nodes", "seconds", "threads",
              "db_seeds", "date", "machine", "version", "published", "lower", "upper", "evidence"]
    csv_path = os.path.join(args.out, "table.csv")
    with open(csv_path + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, restval="")
        w.writeheader()
        w.writerows(rows)
    os.replace(csv_path + ".tmp", csv_path)

    md_path = os.path.join(args.out, "table.md")
    this_run = (f"Machine: {machine}. Solver: {version}. Command: `scripts/table/reproduce_table.py "
                f"{' '.join(sys.argv[1:])}`.")
    runs = [this_run]
    if only_cells and os.path.exists(md_path):
        # The runs that made the kept rows stay named (each row has its date in the table).
        with open(md_path) as f:
            earlier = [line.strip() for line in f
                       if line.startswith("Machine:") or line.startswith("Cells ")]
        runs = earlier + [f"Cells {args.cells} re-solved {date}. " + this_run]
    with open(md_path + ".tmp", "w") as f:
        f.write(f"# Kalah(m,n) values, reproduced {date}\n\n")
        f.write("\n".join(runs) + "\n")
        f.write("Value = South's final margin under perfect play; `*` marks a cell that differs "
                "from the published value, `?` a cell not published, `-` unfinished; an unfinished cell with a "
                "proof campaign shows the bounds it proved (`>= +2 W`: South wins by at least 2; "
                "`a..b`: the margin lies in [a, b]), its evidence in the table below.\n")
        f.write("Picture: `table.png`, each rule's values beside the time and nodes of each solve "
                "(`scripts/table/plot_table.py`, which this script runs when gnuplot is installed).\n\n")
        for rule in RULES:
            cells = {(r["pits"], r["seeds"]): r for r in rows if r["rule"] == rule}
            if not cells:
                continue
            f.write(f"## Rule `{rule}`\n\n| m \\ n | 1 | 2 | 3 | 4 | 5 | 6 |\n|---|---|---|---|---|---|---|\n")
            for m in range(1, 7):
                if (m, 1) not in cells:
                    continue
                out = []
                for n in range(1, 7):
                    r = cells[(m, n)]
                    if r["value"] == "":
                        out.append(bound_text(r["lower"], r["upper"], 2 * m * n)
                                   if r.get("lower", "") != "" else "-")
                        continue
                    mark = {"match": "", "differs": " *", "not published": " ?"}[r["published"]]
                    out.append(f"{r['value']:+d}{mark}" if r["value"] else f"0{mark}")
                f.write(f"| {m} | " + " | ".join(out) + " |\n")
            f.write("\n| m | n | value | best | nodes | seconds | threads | database | date | published |\n"
                    "|---|---|---|---|---|---|---|---|---|---|\n")
            evidence = []
            for (m, n), r in sorted(cells.items()):
                db = f"0..{r['db_seeds']}" if str(r["db_seeds"]) not in ("", "0", "-1") else "none"
                if r.get("evidence"):
                    db = "the campaign's"
                value = r["value"]
                if value == "" and r.get("lower", "") != "":
                    value = bound_text(r["lower"], r["upper"], 2 * m * n) + " (bounds)"
                    evidence.append(f"Kalah({m},{n}): South's margin proven in "
                                    f"[{r['lower']:+d}, {r['upper']:+d}] by the campaign journal "
                                    f"`{r['evidence']}`; nodes and seconds are the campaign's.")
                elif r.get("evidence"):
                    evidence.append(f"Kalah({m},{n}): South's margin proven exactly {value:+d} by "
                                    f"the campaign journal `{r['evidence']}` (best turns: the "
                                    f"first turns it proves worth the value); nodes and seconds "
                                    f"are the campaign's.")
                f.write(f"| {m} | {n} | {value} | {r['best']} | {r['nodes']} | {r['seconds']} | "
                        f"{r['threads']} | {db} | {r['date']} | {r['published']} |\n")
            f.write("\n")
            for e in evidence:
                f.write(e + "\n\n")
    os.replace(md_path + ".tmp", md_path)
    png_path = os.path.join(args.out, "table.png")
    why = plot_table.plot(csv_path, png_path)
    print(f"plot: not drawn, {why}" if why else f"wrote {png_path}", file=sys.stderr)
    differs = [r for r in rows if r["published"] == "differs"]
    print(f"wrote {csv_path} and {md_path}; {len(differs)} cell(s) differ from published values",
          file=sys.stderr)
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
