#!/usr/bin/env python3
"""Where a proof campaign's jobs and nodes go, per pass: from its job trace (trace.csv of
`kalah campaign --dir D`; columns in campaign/trace.h).

Usage:
    trace_costs.py TRACE [--pass BETA] [--json]

For each pass (the trace's pass_beta: the test v >= BETA), or only the one given:
- the jobs that finished (a bound record) against those that ran out of their budget and
  were split (their position expanded, their moves new jobs), with their nodes and
  seconds: the share of the pass that went into searches that did not decide;
- the same by depth (moves from the root) and by seeds in the pits;
- what became of each split's moves: the jobs that the split added (the trace's `after`),
  and how many of them were answered for almost nothing (at most --cheap nodes, default
  1000: from the worker's carried table, so the split's search did decide that move), the
  nodes of the whole subtree a split started (itself and every job below it, recursively)
  against its own nodes.
"""
import argparse
import collections
import csv
import json
import sys


def load(path):
    rows = []
    need = {"record", "pass_beta", "kind", "seeds", "depth", "after", "nodes", "seconds"}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if not need <= set(reader.fieldnames or []):
            raise ValueError("not a campaign trace (columns " + ", ".join(sorted(need)) + ")")
        for r in reader:
            rows.append({
                "record": int(r["record"]),
                "pass": int(r["pass_beta"]),
                "kind": r["kind"],
                "seeds": int(r["seeds"]),
                "depth": int(r["depth"]),
                "after": int(r["after"]),
                "nodes": int(r["nodes"]),
                "seconds": float(r["seconds"]),
            })
    if not rows:
        raise ValueError("no job in the trace")
    return rows


def quantiles(values, qs):
    if not values:
        return [None for _ in qs]
    v = sorted(values)
    return [v[min(len(v) - 1, int(q * len(v)))] for q in qs]


def pass_report(rows, all_rows, cheap):
    out = {}
    split = [r for r in rows if r["kind"] == "split"]
    bound = [r for r in rows if r["kind"] != "split"]
    total_nodes = sum(r["nodes"] for r in rows)
    out["jobs"] = len(rows)
    out["splits"] = len(split)
    out["nodes"] = total_nodes
    out["seconds"] = round(sum(r["seconds"] for r in rows), 1)
    out["split_nodes"] = sum(r["nodes"] for r in split)
    out["split_seconds"] = round(sum(r["seconds"] for r in split), 1)
    out["split_node_share"] = round(out["split_nodes"] / total_nodes, 4) if total_nodes else 0
    qs = (0.5, 0.75, 0.9, 0.99)
    out["bound_nodes_quantiles"] = dict(zip(map(str, qs), quantiles([r["nodes"] for r in bound], qs)))
    out["split_nodes_quantiles"] = dict(zip(map(str, qs), quantiles([r["nodes"] for r in split], qs)))

    def by(key):
        t = collections.defaultdict(lambda: [0, 0, 0, 0])
        for r in rows:
            x = t[r[key]]
            if r["kind"] == "split":
                x[0] += 1
                x[1] += r["nodes"]
            else:
                x[2] += 1
                x[3] += r["nodes"]
        return {k: {"splits": v[0], "split_nodes": v[1], "bound": v[2], "bound_nodes": v[3]}
                for k, v in sorted(t.items())}

    out["by_depth"] = by("depth")
    out["by_seeds"] = by("seeds")

    # The jobs each split added, in any pass after it (a later pass reuses the tree).
    children = collections.defaultdict(list)
    for r in all_rows:
        if r["after"] >= 0:
            children[r["after"]].append(r)

    def subtree_nodes(rec, seen):
        total = 0
        for c in children.get(rec, []):
            if c["record"] in seen:
                continue
            seen.add(c["record"])
            total += c["nodes"] + (subtree_nodes(c["record"], seen) if c["kind"] == "split" else 0)
        return total

    kids = [len(children.get(r["record"], [])) for r in split]
    cheap_kids = [sum(1 for c in children.get(r["record"], []) if c["nodes"] <= cheap) for r in split]
    below = [subtree_nodes(r["record"], set()) for r in split]
    out["split_children_jobs"] = sum(kids)
    out["split_children_cheap"] = sum(cheap_kids)
    # Splits all of whose jobs below finished without a further split: the nodes below
    # against the split's own (how much of the decision the failed search left undone).
    leafy = []
    for r in split:
        cs = children.get(r["record"], [])
        if cs and all(c["kind"] != "split" for c in cs):
            leafy.append((r["nodes"], sum(c["nodes"] for c in cs)))
    out["splits_with_only_finished_children"] = len(leafy)
    if leafy:
        ratios = [b / a for a, b in leafy if a]
        out["their_children_nodes_over_own_quantiles"] = dict(
            zip(map(str, qs), [round(x, 3) for x in quantiles(ratios, qs)]))
    out["subtree_nodes_below_splits"] = sum(below)
    return out


def print_report(beta, rep):
    g = 1e9
    print(f"pass v >= {beta:+d}: {rep['jobs']} jobs, {rep['splits']} split; "
          f"{rep['nodes'] / g:.2f} G nodes, {rep['seconds']:.0f} job s")
    print(f"  split jobs: {rep['split_nodes'] / g:.2f} G nodes ({100 * rep['split_node_share']:.1f}%), "
          f"{rep['split_seconds']:.0f} s")
    print(f"  nodes of a finished job, quantiles 50/75/90/99%: "
          + ", ".join(f"{(v or 0) / 1e6:.1f} M" for v in rep["bound_nodes_quantiles"].values()))
    print(f"  nodes of a split job, quantiles 50/75/90/99%: "
          + ", ".join(f"{(v or 0) / 1e6:.1f} M" for v in rep["split_nodes_quantiles"].values()))
    print(f"  jobs the splits added: {rep['split_children_jobs']}, of them "
          f"{rep['split_children_cheap']} answered at <= the cheap bound (the carried table)")
    if rep["splits_with_only_finished_children"]:
        print(f"  splits whose jobs all finished: {rep['splits_with_only_finished_children']}; "
              f"their jobs' nodes / the split's own, quantiles 50/75/90/99%: "
              + ", ".join(str(v) for v in rep["their_children_nodes_over_own_quantiles"].values()))
    for key, title in (("by_depth", "depth"), ("by_seeds", "seeds")):
        print(f"  by {title}: {title} splits split-G finished finished-G")
        for k, v in rep[key].items():
            print(f"    {k:>3} {v['splits']:>5} {v['split_nodes'] / g:>8.2f} {v['bound']:>6} "
                  f"{v['bound_nodes'] / g:>8.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--pass", dest="beta", type=int, help="only the pass testing v >= BETA")
    ap.add_argument("--cheap", type=int, default=1000, help="nodes of a job answered for nothing")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    try:
        rows = load(a.trace)
    except (OSError, KeyError, ValueError) as e:
        print(f"trace_costs.py: {a.trace}: {e}", file=sys.stderr)
        return 2
    betas = list(dict.fromkeys(r["pass"] for r in rows))  # in the order the passes ran
    if a.beta is not None:
        if a.beta not in betas:
            print(f"trace_costs.py: {a.trace}: no pass v >= {a.beta}", file=sys.stderr)
            return 2
        betas = [a.beta]
    reports = {b: pass_report([r for r in rows if r["pass"] == b], rows, a.cheap) for b in betas}
    if a.json:
        print(json.dumps({str(b): r for b, r in reports.items()}, indent=1))
    else:
        for b in betas:
            print_report(b, reports[b])
    return 0


if __name__ == "__main__":
    sys.exit(main())
