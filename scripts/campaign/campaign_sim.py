#!/usr/bin/env python3
"""Predicts a proof campaign's wall time and speedup on P = 1, 2, 4, ..., 1024 workers from
its job trace (trace.csv of `kalah campaign --dir D`; columns in campaign/trace.h).

Usage:
    campaign_sim.py TRACE [--measured TRACE_W] [--extra X] [--extra-size S] [--latency L]
                    [--manager-seconds C] [--max-workers N] [--json]

TRACE is the trace of a campaign run with one worker. --measured gives the trace of the
same campaign (same board, rule, budget, fresh directory) run with W workers: the script
then sets the extra jobs X, their size S and the latency L from it (unless given) and
prints the predicted wall time for W workers beside the measured one.

The model (see results/campaign.md, simulator):
- Jobs are the trace's lines, in the journal's order (the order the one worker ran them),
  each costing its measured `seconds` plus the manager's time per job C (its fsync, tree
  update and choice of the next job). C is measured from a one-worker trace as (wall time
  of its runs - summed job seconds) / jobs, wall time being each run's first hand-out to
  its last record; --manager-seconds overrides it (0 when the trace had several workers).
- Passes (the trace's pass_beta) run one after another: a pass starts when the previous
  one has ended. Inside a pass a job can start once the split job that added its position
  to the tree (the trace's `after`) has finished, if that split is of the same pass.
- A pass is list-scheduled on P workers: jobs in trace order, each to the worker free
  first, starting when that worker is free and its split is done. The manager handles
  one job at a time, so a pass lasts at least its jobs times C.
- More workers make the manager hand out jobs that one worker never ran (the next most-
  proving job, chosen before the results in flight are known). The model takes that as a
  parameter X: each doubling of the workers multiplies the jobs of every pass by (1 + X),
  the added jobs copies of the pass's own (dependencies, and sizes times S), spread
  evenly. From a W-worker trace: X = (its jobs / the 1-worker trace's) to the power
  1 / log2 W, minus 1 (at W = 2: the ratio minus 1), and S = (nodes ratio - 1) / (jobs
  ratio - 1) (S < 1: the extra jobs are smaller than the average). Nodes, not seconds:
  the W workers may have run slower per node (a shared or loaded machine), which is not
  extra work. How X grows beyond the measured W is not measured (compounding is an
  assumption, pessimistic if the extra jobs mostly fill workers that would otherwise
  idle).
- With more than one worker the jobs travel between processes (MPI): each job holds its
  worker L seconds longer, L measured from a W-worker trace as the median over its jobs
  of (finished - submitted - seconds), which also holds the time a record waited for the
  busy manager; 0 without a measured trace (--latency sets it).
- Bound: no schedule of these jobs beats the longest chain of split dependencies of each
  pass (C included), summed over the passes, nor the manager's jobs times C; speedup <=
  the one-worker time over that.

The check against the measured W-worker trace prints the prediction for free workers
(each as fast per node as the one worker was) and, beside it, the prediction with every
job slowed by the measured ratio of seconds per node (W-worker trace over 1-worker
trace): that one is comparable with the measured wall time on the same machine.

What the model does not know: that parallel jobs also change which jobs are needed (it
keeps the one-worker campaign's jobs, plus the X copies), the transport's latency, a
worker's table warming differently, and machines of other speeds.

Every byte of a trace is untrusted: a line that does not parse is skipped (a torn last
line is expected after a kill; the count of skipped lines goes to stderr); a file that is
not a trace is one line on stderr and exit status 1.
"""

import argparse
import csv
import heapq
import json
import math
import sys

COLUMNS = [
    "record", "run_started", "submitted", "finished", "worker", "in_flight", "pass_beta",
    "beta", "kind", "result", "seeds", "depth", "after", "nodes", "seconds",
]


class TraceError(Exception):
    pass


class Job:
    __slots__ = ("record", "run", "submitted", "finished", "worker", "in_flight", "pass_beta",
                 "split", "after", "nodes", "seconds")


def finite(text):
    v = float(text)
    if not math.isfinite(v):
        raise ValueError("not finite")
    return v


def parse_row(row):
    if len(row) != len(COLUMNS):
        raise ValueError("wrong field count")
    f = dict(zip(COLUMNS, row))
    j = Job()
    j.record = int(f["record"])
    j.run = finite(f["run_started"])
    j.submitted = finite(f["submitted"])
    j.finished = finite(f["finished"])
    j.worker = int(f["worker"])
    j.in_flight = int(f["in_flight"])
    j.pass_beta = int(f["pass_beta"])
    int(f["beta"]), int(f["result"]), int(f["seeds"]), int(f["depth"])
    if f["kind"] not in ("bound", "split"):
        raise ValueError("bad kind")
    j.split = f["kind"] == "split"
    j.after = int(f["after"])
    j.nodes = int(f["nodes"])
    j.seconds = finite(f["seconds"])
    if (j.record < 0 or j.in_flight < 1 or j.worker < 0 or j.nodes < 0 or j.seconds < 0
            or not -1 <= j.after < j.record or j.finished < j.submitted):
        raise ValueError("value out of range")
    return j


def read_trace(path):
    """The trace's jobs by record index (a later line for the same record wins: the journal
    was cut back and the record index reused), and the number of lines skipped."""
    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise TraceError(f"{path}: cannot read: {e.strerror}")
    lines = text.split("\n")
    if not lines or lines[0].strip("\r") != ",".join(COLUMNS):
        raise TraceError(f"{path}: not a campaign trace (its first line is not the header)")
    jobs, skipped = {}, 0
    for row in csv.reader(line for line in lines[1:] if line):
        try:
            j = parse_row(row)
        except (ValueError, OverflowError):
            skipped += 1
            continue
        jobs[j.record] = j
    if not jobs:
        raise TraceError(f"{path}: no jobs in the trace")
    return [jobs[k] for k in sorted(jobs)], skipped


def measured_wall(jobs):
    """Wall time of the runs: each run's first hand-out to its last record, summed."""
    runs = {}
    for j in jobs:
        lo, hi = runs.get(j.run, (j.submitted, j.finished))
        runs[j.run] = (min(lo, j.submitted), max(hi, j.finished))
    return sum(hi - lo for lo, hi in runs.values())


def workers_of(jobs):
    return max(max(j.in_flight for j in jobs), len({j.worker for j in jobs}))


def passes_of(jobs):
    """The passes in order of their first job, each its jobs in record order."""
    order, by = [], {}
    for j in jobs:
        if j.pass_beta not in by:
            by[j.pass_beta] = []
            order.append(j.pass_beta)
        by[j.pass_beta].append(j)
    return [by[b] for b in order]


def with_extra(pass_jobs, factor, size):
    """The pass's jobs and round(n * (factor - 1)) copies spread evenly, each copy right
    after its original and `size` times as long: (seconds, after, record) triples, `after`
    a record index."""
    n = len(pass_jobs)
    extra = max(0, round(n * (factor - 1)))
    copies = [0] * n
    for k in range(extra):
        copies[(k * n) // extra if extra <= n else k % n] += 1
    out = []
    for j, c in zip(pass_jobs, copies):
        out.append((j.seconds, j.after, j.record))
        out.extend([(j.seconds * size, j.after, j.record)] * c)
    return out


def simulate_pass(items, workers, c, latency):
    """Makespan of one pass: list scheduling in order on `workers`, each item's split done
    first (when it is of this pass), at least len(items) * c for the manager."""
    free = [0.0] * min(workers, len(items))
    heapq.heapify(free)
    done = {}  # record -> finish of its (first) run in this pass
    end = 0.0
    for seconds, after, record in items:
        ready = done.get(after, 0.0)
        start = max(heapq.heappop(free), ready)
        finish = start + seconds + c + latency
        heapq.heappush(free, finish)
        done.setdefault(record, finish)
        end = max(end, finish)
    return max(end, len(items) * c)


def critical_path(pass_jobs, c):
    """Longest chain of split dependencies inside the pass (each job's seconds + c)."""
    chain = {}
    best = 0.0
    for j in pass_jobs:
        chain[j.record] = j.seconds + c + chain.get(j.after, 0.0)
        best = max(best, chain[j.record])
    return max(best, len(pass_jobs) * c)


def predict(jobs, workers, extra, c, latency=0.0, size=1.0, slow=1.0):
    factor = (1 + extra) ** math.log2(workers)
    latency = latency if workers > 1 else 0.0
    total, n = 0.0, 0
    for p in passes_of(jobs):
        items = [(sec * slow, after, rec) for sec, after, rec in with_extra(p, factor, size)]
        n += len(items)
        total += simulate_pass(items, workers, c, latency)
    return total, n


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="trace.csv of a one-worker run")
    ap.add_argument("--measured", help="trace.csv of the same campaign with W workers")
    ap.add_argument("--extra", type=float, help="extra jobs per doubling of the workers (X)")
    ap.add_argument("--extra-size", type=float, help="extra jobs' size / the average (S)")
    ap.add_argument("--latency", type=float, help="seconds a job's transport adds (L)")
    ap.add_argument("--manager-seconds", type=float, help="the manager's time per job (C)")
    ap.add_argument("--max-workers", type=int, default=1024)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    try:
        jobs, skipped = read_trace(a.trace)
        measured = read_trace(a.measured) if a.measured else None
    except TraceError as e:
        print(f"campaign_sim: {e}", file=sys.stderr)
        return 1
    for path, n in [(a.trace, skipped)] + ([(a.measured, measured[1])] if measured else []):
        if n:
            print(f"campaign_sim: {path}: skipped {n} line(s) that do not parse "
                  f"(a torn last line is expected after a kill)", file=sys.stderr)

    work = sum(j.seconds for j in jobs)
    nodes = sum(j.nodes for j in jobs)
    wall1 = measured_wall(jobs)
    w1 = workers_of(jobs)
    if a.manager_seconds is not None:
        c = max(0.0, a.manager_seconds)
    else:
        c = max(0.0, (wall1 - work) / len(jobs)) if w1 == 1 else 0.0
    extra = max(0.0, a.extra) if a.extra is not None else 0.0
    latency = max(0.0, a.latency) if a.latency is not None else 0.0
    size = max(0.0, a.extra_size) if a.extra_size is not None else 1.0
    m = None
    if measured:
        mjobs = measured[0]
        mwork = sum(j.seconds for j in mjobs)
        mnodes = sum(j.nodes for j in mjobs)
        mw = workers_of(mjobs)
        jobs_ratio = len(mjobs) / len(jobs)
        if a.extra is None and mw > 1:
            extra = max(0.0, jobs_ratio ** (1 / math.log2(mw)) - 1)
        if a.extra_size is None and jobs_ratio > 1 and nodes > 0:
            size = max(0.0, (mnodes / nodes - 1) / (jobs_ratio - 1))
        slow = (mwork / mnodes) / (work / nodes) if mnodes and nodes and work else 1.0
        if a.latency is None and mw > 1:
            gaps = sorted(max(0.0, j.finished - j.submitted - j.seconds) for j in mjobs)
            latency = gaps[len(gaps) // 2]
        m = {"workers": mw, "jobs": len(mjobs), "job_seconds": mwork, "nodes": mnodes,
             "seconds_per_node_ratio": slow, "wall": measured_wall(mjobs)}
        m["predicted_wall_as_measured"] = predict(jobs, mw, extra, c, latency, size, slow)[0]
        m["predicted_wall"] = predict(jobs, mw, extra, c, latency, size)[0]
        m["predicted_wall_no_latency"] = predict(jobs, mw, extra, c, 0.0, size)[0]
        m["predicted_wall_no_extra"] = predict(jobs, mw, 0.0, c)[0]

    t1 = predict(jobs, 1, 0.0, c)[0]
    if t1 <= 0:
        print(f"campaign_sim: {a.trace}: its jobs took no time: nothing to predict",
              file=sys.stderr)
        return 1
    bound_wall = sum(critical_path(p, c) for p in passes_of(jobs))
    rows = []
    p = 1
    while p <= a.max_workers:
        t0, _ = predict(jobs, p, 0.0, c)
        tx, nx = predict(jobs, p, extra, c, latency, size)
        rows.append({"workers": p, "jobs": nx, "wall_no_extra": t0, "speedup_no_extra": t1 / t0,
                     "wall": tx, "speedup": t1 / tx})
        p *= 2
    out = {"trace": a.trace, "jobs": len(jobs), "passes": len(passes_of(jobs)),
           "trace_workers": w1, "job_seconds": work, "nodes": nodes, "measured_wall": wall1,
           "manager_seconds_per_job": c, "extra_per_doubling": extra, "extra_size": size,
           "latency": latency,
           "critical_path": bound_wall, "speedup_bound": t1 / bound_wall,
           "rows": rows, "measured": m}
    if a.json:
        print(json.dumps(out))
        return 0
    print(f"{a.trace}: {len(jobs)} jobs in {out['passes']} passes, {work:.3f} s of jobs, "
          f"measured wall {wall1:.3f} s with {w1} worker(s)")
    print(f"manager per job C = {c * 1000:.3f} ms, extra jobs per doubling X = {extra:.3f} "
          f"of size S = {size:.2f}, latency L = {latency * 1000:.3f} ms; longest chains {bound_wall:.3f} s: "
          f"speedup <= {out['speedup_bound']:.1f}")
    print(f"{'workers':>7} {'jobs':>8} {'wall X,L=0':>11} {'speedup':>8} {'wall':>11} "
          f"{'speedup':>8}")
    for r in rows:
        print(f"{r['workers']:>7} {r['jobs']:>8} {r['wall_no_extra']:>11.3f} "
              f"{r['speedup_no_extra']:>8.2f} {r['wall']:>11.3f} {r['speedup']:>8.2f}")
    if m:
        print(f"measured with {m['workers']} workers: {m['jobs']} jobs, {m['nodes']} nodes "
              f"({m['nodes'] / nodes:.2f}x), {m['job_seconds']:.3f} s of jobs "
              f"({m['seconds_per_node_ratio']:.2f}x the seconds per node), "
              f"wall {m['wall']:.3f} s")
        print(f"predicted with {m['workers']} workers: {m['predicted_wall_as_measured']:.3f} s "
              f"at the measured seconds per node; on free workers {m['predicted_wall']:.3f} s "
              f"({m['predicted_wall_no_latency']:.3f} s with L = 0, "
              f"{m['predicted_wall_no_extra']:.3f} s with X = L = 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
