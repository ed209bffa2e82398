#!/usr/bin/env python3
"""Jobs and nodes of a campaign spent under each first turn of the root's mover, per pass.

Usage:
    turn_costs.py JOURNAL TRACE --turns "A1+ A2,A1+ A3,A2,..." [--kalah BIN] [--json]

Each record (journal.kcj, read by journal_positions.py) is charged to the first turn above
it: the trace's `after` column names the split that added a record's position to the tree,
and the chain of those splits is followed up to a position that one of the turns reaches
(`kalah show --moves TURN` gives it). Records on the root itself, or on a position a turn
passes through (after "A1+"), are charged to that position, named as the moves leading
there ("(root)", "A1+"). A position reached by two turns (a transposition) is charged to
the first listed. The turns are those `kalah campaign --status` prints ("first turns").
"""
import argparse
import collections
import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from journal_positions import read_journal  # noqa: E402


def key_of(show_position):
    """'A-row/B-row/stores/side' -> the journal's 'own/opp' (mover's view)."""
    a, b, _stores, side = show_position.split("/")
    return f"{a}/{b}" if side == "A" else f"{b}/{a}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("journal")
    ap.add_argument("trace")
    ap.add_argument("--turns", required=True, help="comma-separated turns, e.g. 'A1+ A2,A2'")
    ap.add_argument("--kalah", default="build/kalah")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    try:
        params, records = read_journal(a.journal)
        with open(a.trace, newline="") as f:
            trace = {int(r["record"]): r for r in csv.DictReader(f)}
    except (OSError, ValueError, KeyError) as e:
        print(f"turn_costs.py: {e}", file=sys.stderr)
        return 2
    turns = [t.strip() for t in a.turns.split(",") if t.strip()]
    label = {}  # position key -> the turn (or the prefix) that reaches it

    def position_after(moves):
        args = [a.kalah, "show", "--pits", str(params["m"]), "--seeds", str(params["n"]),
                "--rule", params["rule"], "--json"]
        if moves:
            args += ["--moves", moves]
        out = subprocess.run(args, capture_output=True, text=True)
        if out.returncode != 0:
            raise ValueError(f"kalah show --moves '{moves}': {out.stderr.strip()}")
        return key_of(json.loads(out.stdout)["position"])

    try:
        label.setdefault(position_after(""), "(root)")
        for t in turns:
            parts = t.split()
            for i in range(1, len(parts)):  # the positions the turn passes through
                label.setdefault(position_after(" ".join(parts[:i])), " ".join(parts[:i]))
        for t in turns:
            label.setdefault(position_after(t), t)
    except ValueError as e:
        print(f"turn_costs.py: {e}", file=sys.stderr)
        return 2
    by_index = {r["index"]: r for r in records}

    def owner(idx):
        seen = set()
        while idx >= 0 and idx not in seen:
            seen.add(idx)
            r = by_index.get(idx)
            if r is None:
                return None
            key = r["position"].rsplit("/", 2)[0]
            if key in label:
                return label[key]
            idx = int(trace[idx]["after"]) if idx in trace else -1
        return None

    table = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0, 0]))
    for r in records:
        t = owner(r["index"])
        p = int(trace[r["index"]]["pass_beta"]) if r["index"] in trace else None
        x = table[t if t is not None else "(unplaced)"][p]
        x[0] += 1
        x[1] += r["nodes"]
        x[2] += r["kind"] == "split"
    order = ["(root)"] + [k for k in dict.fromkeys(label.values()) if k != "(root)"] + ["(unplaced)"]
    out = {t: {str(p): {"jobs": v[0], "nodes": v[1], "splits": v[2]} for p, v in sorted(
        table[t].items(), key=lambda kv: (kv[0] is None, kv[0]))} for t in order if t in table}
    if a.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"# Kalah({params['m']},{params['n']}) {params['rule']}: {len(records)} records")
    for t, passes in out.items():
        cells = "; ".join(f"v >= {int(p):+d}: {v['jobs']} jobs ({v['splits']} split), "
                          f"{v['nodes'] / 1e9:.2f} G nodes" if p != "None" else
                          f"(no trace line): {v['jobs']} jobs, {v['nodes'] / 1e9:.2f} G"
                          for p, v in passes.items())
        print(f"{t}: {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
