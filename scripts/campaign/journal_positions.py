#!/usr/bin/env python3
"""Lists a campaign journal's records with their positions, as `kalah query --position`
takes them, to re-run chosen jobs as one-off tests (e.g. the same positions on two
database depths).

Usage:
    journal_positions.py JOURNAL [--trace TRACE] [--kind bound|split] [--pass BETA]
                         [--seeds LO-HI] [--nodes LO-HI] [--sample N] [--seed S]

Prints one line a record: index, kind, beta, result, seeds in pits, the job's nodes, the
pass (from --trace: trace.csv's pass_beta, same record order) and the position
'A1,..,Am/B1,..,Bm/0,0/A' (the journal's positions are the mover's pits, stores empty, the
mover as South; the job tested "v >= beta" of that position's value).

The layout read is campaign/journal.h's (version 1): a 64-byte header, then 48-byte
records. This script checks the magic, version, record size and every record's kind,
reserved bytes, pit counts and seed total, and stops at the first record that fails
them; it does not recompute the records' kh64 checksums (`kalah campaign --status` does).
"""
import argparse
import csv
import random
import struct
import sys


def parse_range(text):
    lo, _, hi = text.partition("-")
    return int(lo), int(hi)


def read_journal(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 64 or data[:8] != b"KALAHCJN":
        raise ValueError("not a campaign journal (magic)")
    version, m, n, rule, _res, rec_bytes = struct.unpack_from("<IBBBBI", data, 8)
    if version != 1 or rec_bytes != 48 or not 1 <= m <= 6 or rule not in (0, 1):
        raise ValueError(f"unsupported header (version {version}, m {m}, record {rec_bytes})")
    records = []
    for i in range((len(data) - 64) // 48):
        off = 64 + 48 * i
        kind, res0, beta, result, res1 = struct.unpack_from("<BBhhH", data, off)
        cells = data[off + 8: off + 24]
        nodes, seconds = struct.unpack_from("<Qd", data, off + 24)
        own, opp = list(cells[:m]), list(cells[m + 1: 2 * m + 1])
        seeds = sum(own) + sum(opp)
        if kind not in (1, 2) or res0 or res1 or cells[m] or any(cells[2 * m + 1:]) \
                or seeds > 2 * m * n:
            break  # the good part of the journal ends here
        records.append({"index": i, "kind": "bound" if kind == 1 else "split", "beta": beta,
                        "result": result, "seeds": seeds, "nodes": nodes, "seconds": seconds,
                        "position": ",".join(map(str, own)) + "/" + ",".join(map(str, opp))
                        + "/0,0/A"})
    return {"m": m, "n": n, "rule": "standard" if rule == 0 else "empty-capture"}, records


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("journal")
    ap.add_argument("--trace")
    ap.add_argument("--kind", choices=("bound", "split"))
    ap.add_argument("--pass", dest="beta", type=int)
    ap.add_argument("--seeds", type=parse_range)
    ap.add_argument("--nodes", type=parse_range)
    ap.add_argument("--sample", type=int)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    try:
        params, records = read_journal(a.journal)
        passes = {}
        if a.trace:
            with open(a.trace, newline="") as f:
                for r in csv.DictReader(f):
                    passes[int(r["record"])] = int(r["pass_beta"])
    except (OSError, ValueError, KeyError) as e:
        print(f"journal_positions.py: {e}", file=sys.stderr)
        return 2
    if a.beta is not None and not a.trace:
        print("journal_positions.py: --pass needs --trace", file=sys.stderr)
        return 2
    out = []
    for r in records:
        r["pass"] = passes.get(r["index"])
        if a.kind and r["kind"] != a.kind:
            continue
        if a.beta is not None and r["pass"] != a.beta:
            continue
        if a.seeds and not a.seeds[0] <= r["seeds"] <= a.seeds[1]:
            continue
        if a.nodes and not a.nodes[0] <= r["nodes"] <= a.nodes[1]:
            continue
        out.append(r)
    if a.sample is not None and a.sample < len(out):
        out = sorted(random.Random(a.seed).sample(out, a.sample), key=lambda r: r["index"])
    print(f"# Kalah({params['m']},{params['n']}) {params['rule']}: {len(records)} records read")
    for r in out:
        print(f"{r['index']} {r['kind']} {r['beta']} {r['result']} {r['seeds']} {r['nodes']} "
              f"{r['pass'] if r['pass'] is not None else '-'} {r['position']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
