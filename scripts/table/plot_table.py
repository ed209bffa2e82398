#!/usr/bin/env python3
"""Draws results/table.csv as results/table.png: per rule, the value grid beside the effort grid.

One row of panels per rule. Left: each Kalah(m,n) start position's value (South's final
margin under perfect play), blue for a South win, red for a loss, yellow for a draw, deeper
with the margin; a tick marks a value equal to the published one, "≠" one that is not;
"?" on grey is a cell not solved (or the bounds its proof campaign proved, e.g. ">= +2 W"). Right: the effort of that solve, seconds on a log colour
scale with the time and the node count written in the cell. The title carries the date,
solver version and machine the CSV records.

Usage: scripts/table/plot_table.py [results/table.csv] [results/table.png]
Needs python3 (standard library) and gnuplot with the pngcairo terminal
(Debian: apt-get install gnuplot-nox). scripts/table/reproduce_table.py calls it at its end.
"""
import csv
import math
import os
import shutil
import subprocess
import sys

RULES = ["standard", "empty-capture"]
SIZE = range(1, 7)  # m and n
WIN, LOSS, DRAW, UNSOLVED = (0x2166AC, 0xB2182B, 0xF2D45C, 0xBDBDBD)
MARGIN_FULL = 12  # margins at or above this get the deepest colour


def gnuplot_missing():
    """None when gnuplot can draw PNGs here, else a sentence on how to get it."""
    if not shutil.which("gnuplot"):
        return "gnuplot missing (Debian: apt-get install gnuplot-nox)"
    r = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
    if "pngcairo" not in r.stdout + r.stderr:
        return "gnuplot lacks the pngcairo terminal (Debian: apt-get install gnuplot-nox)"
    return None


def blend(rgb, t):
    """rgb faded towards white: t = 1 is rgb itself, t = 0 white."""
    out = 0
    for shift in (16, 8, 0):
        c = (rgb >> shift) & 0xFF
        out |= round(255 + (c - 255) * t) << shift
    return out


def value_colour(v):
    if v == 0:
        return DRAW
    t = 0.35 + 0.55 * min(abs(v), MARGIN_FULL) / MARGIN_FULL
    return blend(WIN if v > 0 else LOSS, t)


def fmt_seconds(s):
    if s < 0.001:
        return "<1 ms"
    if s < 1:
        return f"{s * 1000:.0f} ms"
    if s < 100:
        return f"{s:.3g} s"
    if s < 3600:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def fmt_count(x):
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= div:
            return f"{x / div:.3g}{unit}"
    return str(x)


def quoted(s):
    return '"' + s.replace('"', "'") + '"'


def spread(rows, key):
    """The distinct values of a column, in order (numbers sorted), joined for a title."""
    seen = []
    for r in rows:
        v = (r.get(key) or "").strip()
        if v and v not in seen:
            seen.append(v)
    if all(v.lstrip("-").isdigit() for v in seen):
        seen.sort(key=int)  # numbers (threads, database seeds) from smallest to largest
    return ", ".join(seen) if len(seen) <= 3 else f"{seen[0]} .. {seen[-1]} ({len(seen)} kinds)"


def bound_text(lower, upper, total):
    """A proven interval [lower, upper] of South's margin (|margin| <= total seeds) as the
    table shows it: the tighter side(s) and the result when the bounds decide it."""
    if lower > -total and upper < total:
        text = f"{lower:+d}..{upper:+d}" if lower else f"0..{upper:+d}"
    elif lower > -total:
        text = f">= {lower:+d}" if lower else ">= 0"
    elif upper < total:
        text = f"<= {upper:+d}" if upper else "<= 0"
    else:
        return "-"
    if lower > 0:
        text += " W"
    elif upper < 0:
        text += " L"
    return text


def datablocks(rows):
    """gnuplot datablocks per rule (cell colours and labels), and the top of the effort scale."""
    blocks, top = [], 1.0
    for rule in RULES:
        cells = {(int(r["pits"]), int(r["seeds"])): r for r in rows if r["rule"] == rule}
        val, mark, eff, grey, bnd = [], [], [], [], []
        for m in SIZE:
            for n in SIZE:
                r = cells.get((m, n), {})
                v = (r.get("value") or "").strip()
                secs = (r.get("seconds") or "").strip()
                pub = (r.get("published") or "").strip()
                if v:
                    v = int(v)
                    val.append(f"{n} {m} {value_colour(v)} {quoted(f'{v:+d}' if v else '0')}")
                    if pub == "match":
                        mark.append(f'{n + 0.32} {m + 0.3} "\u2713"')
                    elif pub == "differs":
                        mark.append(f'{n + 0.32} {m + 0.3} "\u2260"')
                elif (r.get("lower") or "").strip():
                    # Unsolved, with the bounds a proof campaign proved.
                    text = bound_text(int(r["lower"]), int(r["upper"]), 2 * m * n)
                    val.append(f'{n} {m} {UNSOLVED} ""')
                    bnd.append(f'{n} {m} {quoted(text)}')
                else:
                    val.append(f'{n} {m} {UNSOLVED} "?"')
                if v != "" and secs:
                    s = float(secs)
                    top = max(top, s)
                    nodes = (r.get("nodes") or "").strip()
                    nodes = fmt_count(int(nodes)) if nodes and int(nodes) else ""
                    eff.append(f"{n} {m} {max(s, 0.001)} {quoted(fmt_seconds(s))} {quoted(nodes)}")
                else:
                    if secs.startswith(">"):
                        top = max(top, float(secs[1:]))
                        text, note = f"{secs} s", "unfinished"
                    elif secs and (r.get("lower") or "").strip():
                        top = max(top, float(secs))
                        text, note = fmt_seconds(float(secs)), "campaign"
                    else:
                        text, note = "not run", ""
                    grey.append(f"{n} {m} {UNSOLVED} {quoted(text)} {quoted(note)}")
        for name, lines in (("val", val), ("mark", mark), ("eff", eff), ("grey", grey),
                            ("bnd", bnd)):
            # gnuplot cannot plot an empty datablock: a point outside the view stands in.
            lines = lines or ['-9 -9 1 "" ""']
            blocks.append(f"${name}_{rule.replace('-', '_')} << EOD\n" + "\n".join(lines) + "\nEOD")
    return "\n".join(blocks), 10 ** math.ceil(math.log10(top))


def legend():
    """The value colours and marks, drawn once along the bottom of the picture."""
    items = [(blend(WIN, 0.8), "South (first player) wins"), (blend(LOSS, 0.8), "South loses"),
             (DRAW, "draw"), (UNSOLVED, "? not solved (or the bounds a campaign proved)")]
    g, x = [], 0.05
    for i, (rgb, text) in enumerate(items):
        g.append(f"set object {100 + i} rect from screen {x}, screen 0.022 to screen {x + 0.018}, "
                 f"screen 0.037 fc rgb '#{rgb:06x}' fs solid 1.0 noborder front")
        g.append(f"set label {100 + i} {quoted(text)} at screen {x + 0.024}, screen 0.0295 left")
        x += 0.05 + 0.0064 * len(text)
    note = ("deeper colour = larger margin;  \u2713 equals the published value;  "
            "\u2260 differs from it (a bug)")
    g.append(f"set label 110 {quoted(note)} at screen 0.05, screen 0.008 left")
    return g


def script(rows, out):
    blocks, cbmax = datablocks(rows)
    solved = sum(1 for r in rows if (r.get("value") or "").strip())
    checked = sum(1 for r in rows if r.get("published") == "match")
    differs = sum(1 for r in rows if r.get("published") == "differs")
    threads = spread(rows, "threads")
    # Two lines: a table whose cells come from several runs names every date, version and
    # machine, and one line of them all is wider than the picture.
    meta = (f"results/table.csv: {spread(rows, 'date')}; {spread(rows, 'version')}\\n"
            f"{spread(rows, 'machine')}; {threads} thread{'s' if threads != '1' else ''}; "
            f"databases to {spread(rows, 'db_seeds')} seeds")
    summary = (f"{solved} of {len(rows)} cells solved, {checked} checked against a published value"
               + (f", {differs} DIFFERS from it (\u2260)" if differs else ", none differs"))
    title = ("Kalah(m,n), m pits a side, n seeds a pit: South's final margin under perfect play, "
             f"and the effort to prove it\\n{summary}\\n{meta}")
    cell = "using 1:2:(0.47):(0.47):3 with boxxyerror fs solid 1.0 noborder"
    g = [
        "set terminal pngcairo size 1200,1280 font 'DejaVu Sans,11' noenhanced",
        f"set output {quoted(out)}",
        blocks,
        f'set multiplot layout 2,2 title "{title}" font ",12" '
        "margins 0.05,0.91,0.07,0.88 spacing 0.08,0.08",
        "set xrange [0.5:6.5]", "set yrange [6.5:0.5]", "set size ratio -1",
        "set x2tics 1 scale 0 font ',12'", "set ytics 1 scale 0 font ',12'", "set link x2",
        "unset xtics", "unset key", "set border 0",
        "set x2label 'n (seeds a pit)'", "set ylabel 'm (pits a side)'",
        "set palette defined (0 '#fff7d6', 0.45 '#fdae61', 0.75 '#e5603b', 1 '#9e2a2b')",
        f"set cbrange [0.001:{cbmax}]", "set logscale cb",
        "set cbtics ('1 ms' 0.001, '10 ms' 0.01, '0.1 s' 0.1, '1 s' 1, '10 s' 10, "
        "'100 s' 100, '1000 s' 1000, '10000 s' 10000)",
    ]
    for i, rule in enumerate(RULES):
        r = rule.replace("-", "_")
        g += ["unset colorbox", f"set title \"{rule} rule: value (South's margin)\" font ',14'"]
        g.append(f"plot $val_{r} {cell} lc rgb variable, "
                 f"'' using 1:2:4 with labels font ',18', "
                 f"$mark_{r} using 1:2:3 with labels font ',11', "
                 f"$bnd_{r} using 1:2:3 with labels font ',11'")
        g += ["set colorbox",
              f"set title '{rule} rule: time to solve (nodes searched below)' font ',14'"]
        if i == len(RULES) - 1:
            g += legend()
        g.append(f"plot $eff_{r} {cell} lc palette, $grey_{r} {cell} lc rgb variable, "
                 f"$eff_{r} using 1:($2-0.1):4 with labels font ',12', "
                 f"'' using 1:($2+0.2):5 with labels font ',9', "
                 f"$grey_{r} using 1:($2-0.1):4 with labels font ',12', "
                 f"'' using 1:($2+0.2):5 with labels font ',9'")
    g.append("unset multiplot")
    return "\n".join(g) + "\n"


def plot(csv_path="results/table.csv", out="results/table.png"):
    """Writes out from csv_path; returns None, or the reason nothing was drawn."""
    why = gnuplot_missing()
    if why:
        return why
    try:
        with open(csv_path, newline="") as f:
            rows = list(csv.DictReader(f))
        if not rows:
            return f"no rows in {csv_path}"
        tmp = out + ".tmp"
        text = script(rows, tmp)
    except (OSError, KeyError, ValueError) as e:
        return f"cannot read {csv_path}: {e!r}"
    r = subprocess.run(["gnuplot"], input=text, capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(tmp):
        if os.path.exists(tmp):
            os.remove(tmp)
        return "gnuplot failed: " + r.stderr.strip()
    os.replace(tmp, out)
    return None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    results = os.path.normpath(os.path.join(here, "..", "..", "results"))
    csv_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(results, "table.csv")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(results, "table.png")
    if not os.path.exists(csv_path):
        sys.exit(f"plot_table: no {csv_path} (run scripts/table/reproduce_table.py)")
    why = plot(csv_path, out)
    if why:
        sys.exit(f"plot_table: {why}")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
