#!/usr/bin/env python3
"""Tests for checker/check_certificate.py, the independent certificate checker.

Run from the repository root:  python3 checker/test_check_certificate.py [-k SUBSTRING] [--big]
(ctest certificate-checker runs it.)
The last line printed is "N passed, M failed"; the exit status is non-zero on any failure.
Set CHECKER=/path/to/check_certificate.py to test another copy of the checker.

Like the checker, this file is written from docs/rules.md and docs/certificate.md
alone.  It has its own seed-by-seed move simulator on the full board (South/North rows and
stores), its own minimax, and a generator of valid certificates; it imports the checker
only to test its move function and its check() entry point, and runs it as a subprocess.
"""

import copy
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

sys.setrecursionlimit(100000)

HERE = os.path.dirname(os.path.abspath(__file__))
# The checker beside this file (both in checker/), unless CHECKER names another copy.
CHECKER = os.environ.get("CHECKER", os.path.join(HERE, "check_certificate.py"))


def load_checker():
    spec = importlib.util.spec_from_file_location("check_certificate_under_test", CHECKER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CC = load_checker()


# ---------------------------------------------------------------------------
# Reference rules: full board, seed by seed (docs/rules.md), independent of the checker.
# Board layout (absolute): 0..m-1 = A1..Am, m = South store, m+1..2m = B1..Bm,
# 2m+1 = North store.
# ---------------------------------------------------------------------------

def ref_move(board, m, south, pit, empty_capture):
    """South (south=True) or North plays its pit `pit` (1..m).  Returns
    (board_after, extra, ended, captured) with no end-of-game sweep applied."""
    b = list(board)
    own_store = m if south else 2 * m + 1
    opp_store = 2 * m + 1 if south else m
    first = 0 if south else m + 1
    own_pits = range(first, first + m)
    src = first + pit - 1
    seeds = b[src]
    assert seeds > 0
    b[src] = 0
    j = src
    before = None
    while seeds:
        j = (j + 1) % (2 * m + 2)
        if j == opp_store:
            continue
        before = b[j]
        b[j] += 1
        seeds -= 1
    extra = j == own_store
    captured = 0
    if j in own_pits and before == 0:
        opposite = 2 * m - j          # A_i <-> B_(m+1-i)
        if b[opposite] > 0:
            captured = b[opposite] + 1
            b[own_store] += captured
            b[opposite] = 0
            b[j] = 0
        elif empty_capture:
            captured = 1
            b[own_store] += 1
            b[j] = 0
    south_row = sum(b[0:m])
    north_row = sum(b[m + 1:2 * m + 1])
    ended = south_row == 0 or north_row == 0
    return b, extra, ended, captured


def sweep(board, m):
    b = list(board)
    b[m] += sum(b[0:m])
    b[2 * m + 1] += sum(b[m + 1:2 * m + 1])
    for i in list(range(0, m)) + list(range(m + 1, 2 * m + 1)):
        b[i] = 0
    return b


def ref_step(pos, pit, m, empty_capture):
    """Same contract as the checker's play(): mover's view, pits only."""
    board = list(pos[:m]) + [0] + list(pos[m:]) + [0]
    b, extra, ended, _ = ref_move(board, m, True, pit, empty_capture)
    return b[m], tuple(b[0:m]), tuple(b[m + 1:2 * m + 1]), extra, ended


class Solver(object):
    """Plain memoised minimax over pits-only positions (mover's view)."""

    def __init__(self, m, empty_capture, step=ref_step):
        self.m = m
        self.ec = empty_capture
        self.step = step
        self.memo = {}

    def moves(self, pos):
        """[(pit, g, child_pos_or_None, extra, ended, worth_or_None)] for legal moves."""
        m = self.m
        out = []
        for p in range(1, m + 1):
            if pos[p - 1] == 0:
                continue
            g, own, opp, extra, ended = self.step(pos, p, m, self.ec)
            if ended:
                out.append((p, g, None, extra, True, g + sum(own) - sum(opp)))
            elif extra:
                out.append((p, g, own + opp, True, False, None))
            else:
                out.append((p, g, opp + own, False, False, None))
        return out

    def worth(self, mv):
        p, g, q, extra, ended, w = mv
        if ended:
            return w
        return g + self.value(q) if extra else g - self.value(q)

    def value(self, pos):
        r = self.memo.get(pos)
        if r is None:
            r = max(self.worth(mv) for mv in self.moves(pos))
            self.memo[pos] = r
        return r


_SOLVERS = {}


def solver(m, ec):
    key = (m, ec)
    if key not in _SOLVERS:
        _SOLVERS[key] = Solver(m, ec)
    return _SOLVERS[key]


# ---------------------------------------------------------------------------
# Certificate generator (valid by construction) and serializer
# ---------------------------------------------------------------------------

def fpos(pos, m):
    return ",".join(map(str, pos[:m])) + "/" + ",".join(map(str, pos[m:]))


class Cert(object):
    """nodes: list of dicts {op, b, pos, kind, args}; roots: list of (id, op, b)."""

    def __init__(self, m, n, rule, nodes, roots, value):
        self.m, self.n, self.rule = m, n, rule
        self.nodes, self.roots, self.value = nodes, roots, value

    def copy(self):
        return copy.deepcopy(self)

    def text(self, nodes_count=None, leaves_count=None, crc=True):
        m = self.m
        out = ["kalah-certificate 1", "board %d %d" % (m, self.n), "rule %s" % self.rule]
        leaves = sum(1 for x in self.nodes if x["kind"] in ("job", "db"))
        out.append("nodes %d" % (len(self.nodes) if nodes_count is None else nodes_count))
        out.append("leaves %d" % (leaves if leaves_count is None else leaves_count))
        for rid, op, b in self.roots:
            out.append("root %d %s%d" % (rid, op, b))
        for i, x in enumerate(self.nodes):
            just = x["kind"]
            if x["args"]:
                just += " " + " ".join(map(str, x["args"]))
            out.append("node %d %s%d %s %s" % (i, x["op"], x["b"], fpos(x["pos"], m), just))
        body = "\n".join(out) + "\n"
        return with_crc(body) if crc else body

    def children(self, i):
        x = self.nodes[i]
        if x["kind"] in ("move", "all"):
            return [c for c in (x["args"][1:] if x["kind"] == "move" else x["args"])
                    if c != "end"]
        return []

    def parents(self, i):
        return [j for j in range(len(self.nodes)) if i in self.children(j)]


def with_crc(body):
    return body + "crc32 %08x\n" % (zlib.crc32(body.encode("latin-1")) & 0xffffffff)


def recrc(text):
    """Replace the last line by a crc32 line matching the rest."""
    body = text[:text.rstrip("\n").rfind("\n") + 1]
    return with_crc(body)


def generate(m, n, rule, depth, leaf="mix", roots=(">=", "<="), seed=0, max_nodes=None,
             dedup=True, pick="best"):
    """A valid certificate of Kalah(m,n) whose roots claim the true value.  Nodes deeper
    than `depth` plies become leaves ('db', 'job' or 'mix'); depth=None: no leaves.
    dedup=False writes a tree (repeated positions get new nodes); pick="random" proves a
    '>=' node by a random sufficient move instead of the best one."""
    ec = rule == "empty-capture"
    S = solver(m, ec)
    rng = random.Random(seed)
    start = (n,) * (2 * m)
    v = S.value(start)
    recs = {}            # key -> dict(pos, op, b, kind, args(with keys))
    job_counter = [0]

    def node(pos, op, b, d):
        key = (pos, op, b) if dedup else (pos, op, b, len(recs))
        if key in recs:
            return key
        rec = {"pos": pos, "op": op, "b": b}
        recs[key] = rec
        true_v = S.value(pos)
        assert (true_v >= b) if op == ">=" else (true_v <= b), (pos, op, b, true_v)
        too_many = max_nodes is not None and len(recs) > max_nodes
        if (depth is not None and d >= depth) or too_many:
            kind = leaf if leaf != "mix" else rng.choice(("db", "job"))
            if kind == "db":
                rec["kind"], rec["args"] = "db", [true_v]
            else:
                beta = b if op == ">=" else b + 1
                rec["kind"] = "job"
                rec["args"] = [job_counter[0], beta, true_v, rng.randint(1, 10 ** 6)]
                job_counter[0] += 1
            return key
        mvs = S.moves(pos)
        if op == ">=":
            if pick == "best":
                best = max(mvs, key=S.worth)
            else:
                best = rng.choice([mv for mv in mvs if S.worth(mv) >= b])
            p, g, q, extra, ended, w = best
            if ended:
                c = "end"
            elif extra:
                c = node(q, ">=", b - g, d + 1)
            else:
                c = node(q, "<=", g - b, d + 1)
            rec["kind"], rec["args"] = "move", [p, c]
        else:
            cs = []
            for p, g, q, extra, ended, w in mvs:
                if ended:
                    cs.append("end")
                elif extra:
                    cs.append(node(q, "<=", b - g, d + 1))
                else:
                    cs.append(node(q, ">=", g - b, d + 1))
            rec["kind"], rec["args"] = "all", cs
        return key

    root_keys = [node(start, op, v, 0) for op in roots]
    # topological order: reverse DFS post-order from the roots
    post, seen = [], set()

    def kids(key):
        r = recs[key]
        if r["kind"] == "move":
            return [r["args"][1]] if r["args"][1] != "end" else []
        if r["kind"] == "all":
            return [c for c in r["args"] if c != "end"]
        return []

    for rk in root_keys:
        stack = [(rk, iter(kids(rk)))]
        seen.add(rk)
        while stack:
            k, it = stack[-1]
            for c in it:
                if c not in seen:
                    seen.add(c)
                    stack.append((c, iter(kids(c))))
                    break
            else:
                post.append(k)
                stack.pop()
    topo = post[::-1]
    ids = {k: i for i, k in enumerate(topo)}
    nodes = []
    for k in topo:
        r = recs[k]
        args = list(r["args"])
        if r["kind"] == "move":
            args[1] = ids[args[1]] if args[1] != "end" else "end"
        elif r["kind"] == "all":
            args = [ids[c] if c != "end" else "end" for c in args]
        nodes.append({"op": r["op"], "b": r["b"], "pos": r["pos"], "kind": r["kind"],
                      "args": args})
    return Cert(m, n, rule, nodes, [(ids[rk], op, v) for rk, op in zip(root_keys, roots)], v)


# ---------------------------------------------------------------------------
# Running the checker
# ---------------------------------------------------------------------------

_TMP = tempfile.mkdtemp(prefix="kcert_test_")


def run_checker(text, *opts):
    path = os.path.join(_TMP, "c.kcert")
    with open(path, "wb") as fh:
        fh.write(text.encode("latin-1") if isinstance(text, str) else text)
    p = subprocess.run([sys.executable, CHECKER, path] + list(opts),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def check_inproc(text):
    """(ok, message)"""
    data = text.encode("latin-1") if isinstance(text, str) else text
    try:
        res = CC.check(data)
        return True, res
    except CC.CertError as e:
        return False, e.text()


def assert_accepts(text):
    rc, out, err = run_checker(text, "--json")
    assert rc == 0, "checker rejected a valid certificate: rc=%d %s" % (rc, err.strip())
    res = json.loads(out)
    assert res["ok"] is True
    return res


def assert_rejects(text, must_contain=None):
    rc, out, err = run_checker(text)
    assert rc == 1, "expected rejection (exit 1), got rc=%d out=%r err=%r" % (rc, out[:200], err)
    lines = err.splitlines()
    assert len(lines) == 1, "expected one stderr line, got %r" % err
    assert lines[0].startswith("check_certificate: "), lines[0]
    assert "Traceback" not in err
    if must_contain is not None:
        for s in ([must_contain] if isinstance(must_contain, str) else must_contain):
            assert s in lines[0], "message %r lacks %r" % (lines[0], s)
    return lines[0]


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def both_steps():
    return [("checker", CC.play), ("reference", ref_step)]


# --- docs/rules.md worked examples -------------------------------------------------

@test
def rules_example_1_2_opening():
    m = 6
    start = (4,) * 12
    for name, step in both_steps():
        g, own, opp, extra, ended = step(start, 3, m, False)
        assert (g, own, extra, ended) == (1, (4, 4, 0, 5, 5, 5), True, False), (name, g, own)
        assert opp == (4,) * 6
        g2, own2, opp2, extra2, ended2 = step(own + opp, 6, m, False)
        assert g2 == 1 and not extra2 and not ended2, name
        assert own2 == (4, 4, 0, 5, 5, 0), name
        assert opp2 == (5, 5, 5, 5, 4, 4), name
        assert sum(own2) + sum(opp2) + g + g2 == 48


@test
def rules_example_3_capture():
    m = 6
    # A2 = 1, A3 empty, B4 (opposite A3) = 5
    pos = (4, 1, 0, 4, 4, 4) + (4, 4, 4, 5, 4, 4)
    for name, step in both_steps():
        for ec in (False, True):
            g, own, opp, extra, ended = step(pos, 2, m, ec)
            assert g == 6 and not extra and not ended, (name, ec, g)
            assert own == (4, 0, 0, 4, 4, 4) and opp == (4, 4, 4, 0, 4, 4), (name, own, opp)


@test
def rules_example_4_empty_opposite():
    m = 6
    pos = (4, 1, 0, 4, 4, 4) + (4, 4, 4, 0, 4, 4)
    for name, step in both_steps():
        g, own, opp, extra, ended = step(pos, 2, m, False)
        assert g == 0 and own == (4, 0, 1, 4, 4, 4) and not extra, (name, g, own)
        g, own, opp, extra, ended = step(pos, 2, m, True)
        assert g == 1 and own == (4, 0, 0, 4, 4, 4) and not extra, (name, g, own)
        assert opp == (4, 4, 4, 0, 4, 4)


@test
def rules_example_5_exact_lap():
    m = 6
    # A2 = 13, B5 (opposite A2) empty
    pos = (2, 13, 1, 1, 1, 1) + (1, 1, 1, 1, 0, 1)
    for name, step in both_steps():
        for ec in (False, True):
            g, own, opp, extra, ended = step(pos, 2, m, ec)
            assert g == 3, (name, ec, g)          # 1 sown + 2 captured (A2x2)
            assert own == (3, 0, 2, 2, 2, 2), (name, own)
            assert opp == (2, 2, 2, 2, 0, 2), (name, opp)
            assert not extra and not ended


@test
def rules_example_6_end_sweep():
    m = 6
    # North has one seed left in B6 and plays it into North's store; South's row holds 5.
    board = [1, 1, 1, 1, 1, 0, 21, 0, 0, 0, 0, 0, 1, 21]
    b, extra, ended, _ = ref_move(board, m, False, 6, False)
    assert extra and ended
    final = sweep(b, m)
    assert (final[m], final[2 * m + 1]) == (26, 22), final
    # the checker's play from North's view: worth = g + own - opp = 1 + 0 - 5 = -4
    g, own, opp, extra, ended = CC.play((0, 0, 0, 0, 0, 1) + (1, 1, 1, 1, 1, 0), 6, m, False)
    assert ended and g + sum(own) - sum(opp) == -4


@test
def rules_example_7_kalah43_values():
    """Kalah(4,3): +8 under empty-capture, +6 under standard (checker's move function,
    plain memoised minimax)."""
    for ec, want in ((True, 8), (False, 6)):
        S = Solver(4, ec, step=CC.play)
        got = S.value((3,) * 8)
        assert got == want, (ec, got, want)


@test
def move_function_matches_reference():
    rng = random.Random(7)
    for _ in range(20000):
        m = rng.randint(1, 6)
        pos = [rng.choice((0, 0, 1, 2, 3, 5, 8, 13, 14, 26)) for _ in range(2 * m)]
        if rng.random() < 0.1:
            pos[rng.randrange(2 * m)] = rng.randint(0, 127)
        p = rng.randint(1, m)
        if pos[p - 1] == 0:
            pos[p - 1] = rng.randint(1, 40)
        pos = tuple(pos)
        for ec in (False, True):
            a = CC.play(pos, p, m, ec)
            b = ref_step(pos, p, m, ec)
            assert a == b, (m, pos, p, ec, a, b)


@test
def small_values_both_rules():
    # Values computed with the reference simulator and the checker's move function agree.
    for m, n in ((2, 2), (3, 2), (2, 3), (3, 3), (2, 4)):
        for ec in (False, True):
            a = solver(m, ec).value((n,) * (2 * m))
            b = Solver(m, ec, step=CC.play).value((n,) * (2 * m))
            assert a == b, (m, n, ec, a, b)
    # Kalah(2,4) is a board where the two rules give different values.
    assert solver(2, False).value((4,) * 4) != solver(2, True).value((4,) * 4)


@test
def parity_helper():
    e = CC.effective
    assert e(">=", 3, 4) == 4 and e(">=", 4, 4) == 4 and e(">=", -1, 4) == 0
    assert e("<=", 3, 4) == 2 and e("<=", 2, 4) == 2 and e("<=", -3, 6) == -4


# --- valid certificates ------------------------------------------------------------

VALID_CONFIGS = [
    (2, 2, None, "db"), (2, 3, None, "db"), (2, 4, None, "db"),
    (3, 2, 4, "mix"), (3, 2, None, "db"),
    (3, 3, 6, "mix"), (3, 3, 3, "job"),
    (4, 2, 5, "db"), (4, 2, 7, "mix"),
]


@test
def valid_certificates_accepted():
    for m, n, depth, leaf in VALID_CONFIGS:
        for rule in ("standard", "empty-capture"):
            c = generate(m, n, rule, depth, leaf=leaf, seed=m * 10 + n)
            t = c.text()
            ok, res = check_inproc(t)
            assert ok, (m, n, rule, depth, res)
            res = assert_accepts(t)
            assert res["board"] == [m, n] and res["rule"] == rule
            assert res["nodes"] == len(c.nodes)
            # At the start South's margin is the root's value: the same claim.
            want_roots = [{"id": rid, "claim": "%s%d" % (op, b), "margin": "%s%d" % (op, b)}
                          for rid, op, b in c.roots]
            assert res["roots"] == want_roots, (res["roots"], want_roots)
            nleaves = sum(1 for x in c.nodes if x["kind"] in ("job", "db"))
            assert len(res["leaves"]) == nleaves
            if depth is None:
                assert nleaves == 0


@test
def single_root_and_leaf_root_accepted():
    c = generate(3, 3, "standard", 4, roots=(">=",))
    assert_accepts(c.text())
    # a certificate whose root node is itself a leaf
    for kind, args in (("db", [2]), ("job", [0, 2, 2, 99])):
        c = Cert(3, 3, "standard",
                 [{"op": ">=", "b": 2, "pos": (3,) * 6, "kind": kind, "args": args}],
                 [(0, ">=", 2)], 2)
        assert_accepts(c.text())


@test
def trivially_true_leaf_claim_allowed():
    c = Cert(3, 3, "standard",
             [{"op": ">=", "b": -30, "pos": (3,) * 6, "kind": "db", "args": [2]}],
             [(0, ">=", -30)], 2)
    assert_accepts(c.text())
    c.nodes[0].update(op="<=", b=18)
    c.roots = [(0, "<=", 18)]
    assert_accepts(c.text())


@test
def summary_and_leaves_output():
    c = generate(3, 3, "empty-capture", 4, leaf="mix", seed=5)
    t = c.text()
    rc, out, err = run_checker(t)
    assert rc == 0 and err == "", err
    assert "board: Kalah(3,3)" in out and "rule: empty-capture" in out
    assert "value: Kalah(3,3) under empty-capture = %d" % c.value in out, out
    njob = sum(1 for x in c.nodes if x["kind"] == "job")
    ndb = sum(1 for x in c.nodes if x["kind"] == "db")
    assert "job %d, db %d" % (njob, ndb) in out, out
    assert "leaf seeds: " in out
    rc, out2, err = run_checker(t, "--leaves")
    leaf_lines = [l for l in out2.splitlines() if l.startswith("leaf ") and l[5].isdigit()]
    assert len(leaf_lines) == njob + ndb
    i = next(i for i, x in enumerate(c.nodes) if x["kind"] == "job")
    x = c.nodes[i]
    want = "leaf %d %s %s%d job %s" % (i, fpos(x["pos"], 3), x["op"], x["b"],
                                        " ".join(map(str, x["args"])))
    assert want in leaf_lines, (want, leaf_lines[:3])
    rc, out3, err = run_checker(t, "--quiet")
    assert rc == 0 and out3 == "" and err == ""
    res = assert_accepts(t)
    for k in ("ok", "board", "rule", "roots", "nodes", "leaves"):
        assert k in res
    lf = res["leaves"][0]
    for k in ("id", "position", "claim", "kind"):
        assert k in lf


@test
def usage_errors_exit_2():
    for args in ([], ["a", "b"], ["--bogus", "x"]):
        p = subprocess.run([sys.executable, CHECKER] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        assert p.returncode == 2, (args, p.returncode)
        assert b"Traceback" not in p.stderr
    p = subprocess.run([sys.executable, CHECKER, os.path.join(_TMP, "no-such-file")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode == 2 and b"Traceback" not in p.stderr


# --- mutations: each must be rejected ------------------------------------------------

def base_cert(rule="standard"):
    return generate(3, 3, rule, 5, leaf="mix", seed=11)


def find(c, pred):
    for i, x in enumerate(c.nodes):
        if pred(i, x):
            return i
    raise AssertionError("no node found for mutation")


@test
def mut_leaf_claim_weakened():
    """A leaf's claim is weakened (bound moved by 2, still consistent with its own db/job
    fields), so its parent's bound no longer follows."""
    c = base_cert()
    i = find(c, lambda i, x: x["kind"] in ("db", "job") and x["op"] == ">=" and c.parents(i))
    c.nodes[i]["b"] -= 2
    assert_rejects(c.text(), "node %d" % min(c.parents(i)))
    c = base_cert()
    i = find(c, lambda i, x: x["kind"] in ("db", "job") and x["op"] == "<=" and c.parents(i))
    c.nodes[i]["b"] += 2
    if c.nodes[i]["kind"] == "job":
        c.nodes[i]["args"][1] += 2
    assert_rejects(c.text(), "node %d" % min(c.parents(i)))


@test
def mut_move_pit_changed():
    c = base_cert()
    m = c.m
    i = find(c, lambda i, x: x["kind"] == "move"
             and sum(1 for p in range(m) if x["pos"][p] > 0) >= 2)
    x = c.nodes[i]
    other = next(p for p in range(1, m + 1) if x["pos"][p - 1] > 0 and p != x["args"][0])
    x["args"][0] = other
    assert_rejects(c.text(), "node %d" % i)
    # an empty pit, and a pit out of range
    c = base_cert()
    i = find(c, lambda i, x: x["kind"] == "move" and 0 in x["pos"][:m])
    c.nodes[i]["args"][0] = c.nodes[i]["pos"][:m].index(0) + 1
    assert_rejects(c.text(), ["node %d" % i, "empty"])
    c = base_cert()
    i = find(c, lambda i, x: x["kind"] == "move")
    c.nodes[i]["args"][0] = m + 1
    assert_rejects(c.text(), "node %d" % i)


@test
def mut_child_position_changed():
    """A leaf child's position is changed (one seed moved within a row, still well formed);
    the crc is recomputed, so only the replay catches it."""
    c = base_cert()
    m = c.m
    i = find(c, lambda i, x: x["kind"] in ("db", "job") and c.parents(i)
             and x["pos"][0] > 0 and sum(x["pos"][:m]) > 1 or False)
    pos = list(c.nodes[i]["pos"])
    pos[0] -= 1
    pos[1] += 1
    c.nodes[i]["pos"] = tuple(pos)
    assert_rejects(c.text(), ["node %d" % min(c.parents(i)), "holds"])


@test
def mut_all_missing_a_move():
    c = base_cert()
    i = find(c, lambda i, x: x["kind"] == "all" and len(x["args"]) >= 2)
    c.nodes[i]["args"].pop()
    # keep the dropped child reachable if possible, so the 'all' check is what fails
    assert_rejects(c.text(), "node %d" % i)
    # entries in the wrong order (two different children swapped)
    c = base_cert()
    i = find(c, lambda i, x: x["kind"] == "all" and len(set(map(str, x["args"]))) >= 2
             and x["args"][0] != x["args"][1])
    a = c.nodes[i]["args"]
    a[0], a[1] = a[1], a[0]
    assert_rejects(c.text(), "node %d" % i)
    # an extra entry
    c = base_cert()
    i = find(c, lambda i, x: x["kind"] == "all")
    c.nodes[i]["args"].append(c.nodes[i]["args"][-1])
    assert_rejects(c.text(), "node %d" % i)


@test
def mut_root_strengthened():
    """Root '>= v+2' (root line and node claim changed, crc recomputed): the arithmetic of
    the root's move rejects it.  Second variant also shifts the child's bound, so the
    failure moves one level down."""
    c = base_cert()
    rid = next(r for r, op, b in c.roots if op == ">=")
    v = c.value
    c.roots = [(r, op, b + 2 if op == ">=" else b) for r, op, b in c.roots]
    c.nodes[rid]["b"] = v + 2
    assert_rejects(c.text(), "node %d" % rid)
    # shift the child's bound as the writer would have to
    x = c.nodes[rid]
    if x["args"][1] != "end":
        ch = c.nodes[x["args"][1]]
        ch["b"] += -2 if ch["op"] == "<=" else 2
        msg = assert_rejects(c.text())
        assert "node %d:" % rid not in msg, msg
    # root '<= v-2'
    c = base_cert()
    rid = next(r for r, op, b in c.roots if op == "<=")
    c.roots = [(r, op, b - 2 if op == "<=" else b) for r, op, b in c.roots]
    c.nodes[rid]["b"] = v - 2
    assert_rejects(c.text(), "node %d" % rid)
    # root line disagreeing with its node, and root naming a non-start node
    c = base_cert()
    c.roots[0] = (c.roots[0][0], c.roots[0][1], c.roots[0][2] + 2)
    assert_rejects(c.text(), "root")
    c = base_cert()
    c.roots.append((len(c.nodes) - 1, c.nodes[-1]["op"], c.nodes[-1]["b"]))
    assert_rejects(c.text(), "start position")


def swap_ids(c, a, b):
    """Exchange node IDs a and b everywhere and re-sort the lines."""
    perm = {a: b, b: a}
    f = lambda i: perm.get(i, i) if i != "end" else i
    for x in c.nodes:
        if x["kind"] == "move":
            x["args"][1] = f(x["args"][1])
        elif x["kind"] == "all":
            x["args"] = [f(y) for y in x["args"]]
    c.nodes[a], c.nodes[b] = c.nodes[b], c.nodes[a]
    c.roots = [(f(r), op, v) for r, op, v in c.roots]


@test
def mut_child_id_not_greater():
    c = base_cert()
    i = find(c, lambda i, x: x["kind"] == "move" and x["args"][1] != "end" and i > 1)
    ch = c.nodes[i]["args"][1]
    swap_ids(c, i, ch)
    assert_rejects(c.text(), ["node %d" % ch, "not greater"])
    # a self-reference
    c = base_cert()
    i = find(c, lambda i, x: x["kind"] == "all" and i > 0)
    c.nodes[i]["args"][0] = i
    assert_rejects(c.text(), "node %d" % i)
    # a child ID past the end
    c = base_cert()
    i = find(c, lambda i, x: x["kind"] == "move" and x["args"][1] != "end")
    c.nodes[i]["args"][1] = len(c.nodes)
    assert_rejects(c.text(), "node %d" % i)


@test
def mut_unreachable_node():
    c = base_cert()
    leaf = next(x for x in c.nodes if x["kind"] == "db")
    c.nodes.append(copy.deepcopy(leaf))
    assert_rejects(c.text(), ["node %d" % (len(c.nodes) - 1), "reachable"])
    # an unreachable internal node (a copy of the root subtree's top)
    c = base_cert()
    assert 0 in [r for r, _, _ in c.roots]
    c.nodes.insert(0, copy.deepcopy(c.nodes[0]))
    for x in c.nodes:
        if x["kind"] == "move" and x["args"][1] != "end":
            x["args"][1] += 1
        elif x["kind"] == "all":
            x["args"] = [y + 1 if y != "end" else y for y in x["args"]]
    c.roots = [(r + 1, op, b) for r, op, b in c.roots]
    assert_rejects(c.text(), ["node 0", "reachable"])


@test
def mut_wrong_crc():
    t = base_cert().text()
    head, last = t[:-9], t[-9:-1]
    flipped = "%08x" % (int(last, 16) ^ 1)
    assert_rejects(head + flipped + "\n", "crc32")
    assert_rejects(head + last.upper() + "\n" if last != last.upper() else
                   head + "ZZZZZZZZ\n", "crc32")
    # a body byte changed without recomputing the crc
    i = t.index("node 3 ")
    assert_rejects(t[:i] + t[i:].replace(">=", "<=", 1) if ">=" in t[i:i + 20]
                   else t[:i] + t[i:].replace("<=", ">=", 1), "crc32")


@test
def mut_cut_file():
    t = base_cert().text()
    rng = random.Random(3)
    cuts = [len(t) - 1, len(t) - 9, t.rfind("crc32"), t.rfind("crc32") - 1, len(t) // 2,
            10, 1] + [rng.randrange(1, len(t)) for _ in range(10)]
    for k in cuts:
        assert_rejects(t[:k])
    # cut at a line boundary with a recomputed crc: node count no longer matches
    lines = t.split("\n")
    assert_rejects(with_crc("\n".join(lines[:-3]) + "\n"), "node")
    assert_rejects(with_crc(""))
    assert_rejects(b"")


@test
def mut_blank_and_extra_lines():
    t = base_cert().text()
    lines = t.split("\n")
    for at in (1, 5, 7, len(lines) - 2):
        u = "\n".join(lines[:at] + [""] + lines[at:])
        assert_rejects(recrc(u), "empty line")
        assert_rejects(u)
    assert_rejects(t + "\n")                       # blank line after crc
    assert_rejects(t + "node 999 >=0 1,1/1,1 db 0\n")
    assert_rejects(t + t)                           # two certificates glued
    assert_rejects(recrc(t.replace("\n", "\r\n")))  # CRLF
    assert_rejects(recrc(t.replace("board 3 3", "board 3 3 ")))  # trailing space
    assert_rejects(recrc(t.replace("rule standard", "rule  standard")))
    u = "\n".join(lines[:6] + ["# a comment"] + lines[6:])
    assert_rejects(recrc(u))
    # counts that do not match
    c = base_cert()
    assert_rejects(c.text(nodes_count=len(c.nodes) + 1))
    assert_rejects(c.text(nodes_count=len(c.nodes) - 1))
    nl = sum(1 for x in c.nodes if x["kind"] in ("job", "db"))
    assert_rejects(c.text(leaves_count=nl + 1), "leaves")
    assert_rejects(c.text(leaves_count=nl - 1), "leaves")


def replays_differ(c):
    """Does some move replayed by c's 'move'/'all' nodes give a different result under
    the other capture rule?"""
    m = c.m
    for x in c.nodes:
        if x["kind"] == "move":
            pits = [x["args"][0]]
        elif x["kind"] == "all":
            pits = [p for p in range(1, m + 1) if x["pos"][p - 1] > 0]
        else:
            continue
        for p in pits:
            if ref_step(x["pos"], p, m, False) != ref_step(x["pos"], p, m, True):
                return True
    return False


@test
def mut_wrong_rule():
    """A certificate valid under one rule, checked as the other.  Full proofs (no leaves)
    of Kalah(2,4), whose value differs between the rules (-10 standard, -12
    empty-capture), must fail relabelled; so must a full Kalah(3,3) and a depth-9 Kalah(4,2)
    ones in which some replayed move differs between the rules."""
    for rule, other in (("standard", "empty-capture"), ("empty-capture", "standard")):
        for m, n, depth in ((2, 4, None), (3, 3, None), (4, 2, 9)):
            c = generate(m, n, rule, depth, leaf="mix", seed=2)
            assert_accepts(c.text())
            assert replays_differ(c), (m, n, depth)
            c.rule = other
            assert_rejects(c.text())
        c.rule = "Standard"
        assert_rejects(c.text(), "rule")


@test
def mut_claim_kind_mismatch():
    # 'move' with a '<=' claim and 'all' with a '>=' claim (at the roots, root lines
    # changed to match, so only the justification rule catches it)
    for op, kind in ((">=", "move"), ("<=", "all")):
        c = base_cert()
        k = next(k for k, r in enumerate(c.roots) if r[1] == op)
        rid = c.roots[k][0]
        assert c.nodes[rid]["kind"] == kind
        other = "<=" if op == ">=" else ">="
        c.nodes[rid]["op"] = other
        c.roots[k] = (rid, other, c.roots[k][2])
        assert_rejects(c.text(), ["node %d" % rid, "'%s' justifies only" % kind])
    # a child with the right position but the wrong claim direction
    c = base_cert()
    i = find(c, lambda i, x: x["kind"] == "db" and c.parents(i))
    x = c.nodes[i]
    x["op"] = "<=" if x["op"] == ">=" else ">="
    x["b"] = x["args"][0]
    assert_rejects(c.text(), "node %d" % min(c.parents(i)))


@test
def any_child_only_where_the_seeds_give_the_bound():
    # Kalah(2,1), 4 seeds: "<= 4" holds whatever the moves do. Pit 1 passes the turn with
    # g = 0 (needs v(q') >= -4 of 4 seeds), pit 2 is an extra move with g = 1 (needs
    # v(q') <= 3 of 3 seeds): both hold for any value, so both entries may be "any".
    head = "kalah-certificate 1\nboard 2 1\nrule standard\nnodes 1\nleaves 0\n"
    assert_accepts(with_crc(head + "root 0 <=4\nnode 0 <=4 1,1/1,1 all any any\n"))
    # "<= 2" needs v(q') >= -2 after pit 1 and v(q') <= 1 after pit 2: not for any value.
    assert_rejects(with_crc(head + "root 0 <=2\nnode 0 <=2 1,1/1,1 all any any\n"),
                   "any")
    # A move that ends the game is "end", never "any".
    head1 = "kalah-certificate 1\nboard 1 1\nrule standard\nnodes 1\nleaves 0\n"
    assert_rejects(with_crc(head1 + "root 0 >=0\nnode 0 >=0 1/1 move 1 any\n"))
    assert_accepts(with_crc(head1 + "root 0 >=0\nnode 0 >=0 1/1 move 1 end\n"))


def leaf_root(claim, just, m=3, n=3, rule="standard"):
    """A one-node certificate: the start position as a leaf root."""
    op, b = claim[:2], int(claim[2:])
    kind, args = just.split(" ")[0], just.split(" ")[1:]
    return Cert(m, n, rule, [{"op": op, "b": b, "pos": (n,) * (2 * m), "kind": kind,
                              "args": args}], [(0, op, b)], None).text()


def ref_line(m, n, plies, ec):
    """The reference's view of a line from the start: (pos of the mover, offset, sign),
    played seed by seed on the absolute board."""
    board = [n] * m + [0] + [n] * m + [0]
    south = True
    for ply in plies:
        assert ply[0] == ("A" if south else "B")
        board, extra, ended, _ = ref_move(board, m, south, int(ply[1]), ec)
        assert not ended
        if not extra:
            south = not south
    a, b = tuple(board[0:m]), tuple(board[m + 1:2 * m + 1])
    pos = a + b if south else b + a
    return pos, board[m] - board[2 * m + 1], 1 if south else -1


def line_cert(m, n, rule, plies, claims, pos=None):
    """A certificate rooted after `plies`: a db leaf of the root's true value for each
    claim (ops), at the position the line leads to or a given one."""
    ec = rule == "empty-capture"
    root, _, _ = ref_line(m, n, plies, ec)
    v = solver(m, ec).value(root)
    body = ["kalah-certificate 1", "board %d %d" % (m, n), "rule %s" % rule,
            "line " + " ".join(plies), "nodes %d" % len(claims), "leaves %d" % len(claims)]
    body += ["root %d %s%d" % (i, op, v) for i, op in enumerate(claims)]
    node_pos = root if pos is None else pos
    body += ["node %d %s%d %s db %d" % (i, op, v, fpos(node_pos, m), v)
             for i, op in enumerate(claims)]
    return with_crc("\n".join(body) + "\n"), v


@test
def line_certificates():
    """A certificate rooted after a line: the root is the position the line leads to,
    its claims read as South's margin through the stores and the side to move."""
    for rule in ("standard", "empty-capture"):
        ec = rule == "empty-capture"
        for plies in (["A2", "A1"], ["A1"], ["A2", "A3"], ["A4", "B2"]):
            pos, offset, sign = ref_line(4, 3, plies, ec)
            text, v = line_cert(4, 3, rule, plies, [">="])
            res = assert_accepts(text)
            assert res["line"] == " ".join(plies)
            want = offset + sign * v
            assert res["roots"][0]["margin"] == ("%s%d" % (">=" if sign > 0 else "<=", want)), \
                (plies, res["roots"], offset, sign, v)
            both, _ = line_cert(4, 3, rule, plies, [">=", "<="])
            rc, out, err = run_checker(both)
            assert rc == 0 and ("= %d (both bounds proved)" % want) in out, out
    # The root node must hold the position after the line, not the start.
    text, _ = line_cert(4, 3, "standard", ["A2", "A1"], [">="], pos=(3,) * 8)
    assert_rejects(text, "not the position after the line")
    # Plies: out of turn, an empty pit, a pit off the board, a suffix, the game's end.
    for plies, msg in ((["A2", "B1"], "out of turn"), (["A1", "A1"], "out of turn"),
                       (["A2", "A2"], "empty"), (["A5"], "not A1..A4"),
                       (["A2+"], "not A1..A4")):
        body = ("kalah-certificate 1\nboard 4 3\nrule standard\nline %s\nnodes 1\nleaves 1\n"
                "root 0 >=0\nnode 0 >=0 3,3,3,3/3,3,3,3 db 0\n" % " ".join(plies))
        assert_rejects(with_crc(body), msg)
    # Kalah(1,1): A1 sows into the store and empties South's row: the game is over.
    body = ("kalah-certificate 1\nboard 1 1\nrule standard\nline A1\nnodes 1\nleaves 1\n"
            "root 0 >=0\nnode 0 >=0 1/1 db 0\n")
    assert_rejects(with_crc(body), "ends the game")


@test
def mut_leaf_fields():
    """Leaf claims and fields, on one-node certificates (start position of Kalah(3,3),
    18 seeds, value 2 under both rules)."""
    good = [(">=2", "db 2"), ("<=2", "db 2"), (">=-18", "db 2"), ("<=18", "db -4"),
            (">=18", "db 18"), ("<=-18", "db -18"), (">=-40", "db 0"),
            (">=2", "job 0 2 2 100"), (">=2", "job 7 -5 4 1"), ("<=2", "job 3 3 2 0"),
            (">=2", "job 0 1 1 5"),        # v >= 1 with 18 seeds means v >= 2 (parity)
            ("<=2", "job 0 4 3 5"),        # v <= 3 means v <= 2
            ]
    for claim, just in good:
        assert_accepts(leaf_root(claim, just))
    bad = [(">=19", "db 18", "impossible"), ("<=-19", "db -18", "impossible"),
           (">=20", "job 0 20 20 1", "impossible"),
           (">=2", "db 3", "possible value"), (">=2", "db 20", "possible value"),
           (">=2", "db -20", "possible value"), (">=2", "db 0", "does not give"),
           ("<=2", "db 4", "does not give"),
           (">=2", "job 0 3 1 5", "cannot prove"),     # answered v <= 1
           ("<=2", "job 0 2 2 5", "cannot prove"),     # answered v >= 2
           (">=2", "job 0 0 0 5", "does not give"),    # v >= 0 does not give v >= 2
           ("<=2", "job 0 6 4 5", "does not give"),    # v <= 4 (even): not v <= 2
           (">=2", "job 0 -20 -20 5", None),           # harmless but does not give
           (">=2", "job 0 2 20 5", "impossible"),      # answer v >= 20 > 18 seeds
           ("<=2", "job 0 2 -20 5", "impossible"),
           (">=2", "job -1 2 2 5", "job R"), (">=2", "job 0 2 2 -5", "job NODES"),
           (">=2", "job 0 2 2", "4 fields"), (">=2", "job 0 2 2 5 6", "4 fields"),
           (">=2", "db", "1 field"), (">=2", "db 2 2", "1 field"), (">=2", "db +2", "db V"),
           (">=2", "db 02", "db V"), (">=2", "db -0", "db V"),
           (">=2", "job 0 2 2 " + "9" * 30, "job NODES"),
           (">=2", "move 1 end", None), ("<=2", "all end end end", None)]
    for claim, just, msg in bad:
        assert_rejects(leaf_root(claim, just), msg)
    # two leaves citing one journal record with different fields
    c = base_cert()
    jobs = [i for i, x in enumerate(c.nodes) if x["kind"] == "job"]
    assert len(jobs) >= 2
    c.nodes[jobs[1]]["args"][0] = c.nodes[jobs[0]]["args"][0]
    assert_rejects(c.text(), ["node %d" % jobs[1], "record"])


@test
def mut_contradictory_leaves():
    """Two leaves on one position whose bounds contradict each other (some leaf must be
    false) are rejected; agreeing ones are accepted."""
    start = (3,) * 6

    def two(a, b):
        nodes = [{"op": a[0], "b": a[1], "pos": start, "kind": a[2], "args": a[3]},
                 {"op": b[0], "b": b[1], "pos": start, "kind": b[2], "args": b[3]}]
        return Cert(3, 3, "standard", nodes, [(0, a[0], a[1]), (1, b[0], b[1])], None).text()
    assert_accepts(two((">=", 2, "db", [2]), ("<=", 2, "db", [2])))
    assert_accepts(two((">=", 2, "job", [0, 2, 2, 1]), ("<=", 2, "job", [1, 3, 2, 1])))
    assert_rejects(two((">=", 2, "db", [2]), ("<=", 0, "db", [0])), "contradictory")
    assert_rejects(two((">=", 0, "db", [2]), ("<=", 4, "db", [4])), "contradictory")
    assert_rejects(two((">=", 2, "job", [0, 2, 2, 1]), ("<=", 0, "job", [1, 1, 0, 1])),
                   "contradictory")
    assert_rejects(two((">=", 1, "job", [0, 1, 1, 1]), ("<=", 1, "job", [1, 2, 1, 1])),
                   "contradictory")    # with 18 seeds: v >= 2 and v <= 0


@test
def mut_malformed_fields():
    c = base_cert()
    t = c.text()
    bad_subs = [
        ("kalah-certificate 1", "kalah-certificate 2"),
        ("kalah-certificate 1", "kalah-certificate 01"),
        ("board 3 3", "board 3 03"),
        ("board 3 3", "board 7 3"),
        ("board 3 3", "board 3 0"),
        ("board 3 3", "board 3 +3"),
        ("nodes ", "nodes -"),
        ("\nroot 0 ", "\nroot 00 "),
        ("\nnode 0 ", "\nnode 00 "),
        ("\nnode 1 ", "\nnode 2 "),
        ("\nnode 1 ", "\nnode  1 "),
    ]
    for a, b in bad_subs:
        assert a in t, a
        assert_rejects(recrc(t.replace(a, b, 1)))
    # claims written badly
    line = next(l for l in t.split("\n") if l.startswith("node 2 "))
    assert t.count("\n" + line + "\n") == 1
    f = line.split(" ")
    for bad_claim in ("=>" + f[2][2:], f[2][:2] + " " + f[2][2:], f[2][:2] + "+1",
                      f[2][:2] + "-0", f[2][:2] + "01", f[2][:2] + "x", f[2][:2]):
        g = list(f)
        g[2] = bad_claim
        assert_rejects(recrc(t.replace("\n" + line + "\n", "\n" + " ".join(g) + "\n")))
    # positions written badly
    for bad_pos in ("3,3,3/3,3", "3,3,3,3/3,3,3", "3,3,3/3,3,3/1", "3,3,03/3,3,3",
                    "3,3,128/3,3,3", "0,0,0/3,3,3", "3,3,3/0,0,0", "3,3,,/3,3,3",
                    "18,1,0/0,0,1", "3;3;3/3,3,3", "-1,3,3/3,3,3"):
        g = list(f)
        g[3] = bad_pos
        assert_rejects(recrc(t.replace("\n" + line + "\n", "\n" + " ".join(g) + "\n")),
                       "node 2")
    assert_rejects(recrc(t.replace("\nnode 3 ", "\nnode 3  ", 1)))
    # root line after node lines, duplicate root, no root
    lines = t.split("\n")
    roots = [l for l in lines if l.startswith("root ")]
    rest = [l for l in lines if not l.startswith("root ")]
    assert_rejects(recrc("\n".join(rest[:5] + roots[:1] + rest[5:-2] + roots[1:] + rest[-2:])),
                   "root line after")
    assert_rejects(recrc("\n".join(rest[:5] + roots + roots[:1] + rest[5:])), "duplicate")
    assert_rejects(recrc("\n".join(rest)))
    # an unknown justification and a non-ASCII byte
    assert_rejects(recrc(t.replace(" db ", " dbx ", 1)))
    assert_rejects(recrc(t.replace("rule standard", "rule st\u00e4ndard")))


@test
def mut_end_mismatch():
    """'end' for a move that does not end the game, and a child ID for one that does."""
    c = generate(3, 3, "standard", None)
    i = find(c, lambda i, x: x["kind"] == "move" and x["args"][1] != "end"
             and len(c.parents(x["args"][1])) == 1 and c.nodes[x["args"][1]]["kind"] != "move")
    c.nodes[i]["args"][1] = "end"
    ok, msg = check_inproc(c.text())
    assert not ok
    # the orphaned subtree is unreachable, but the 'end' error comes first
    assert_rejects(c.text(), ["node %d" % i, "end"])
    c = generate(3, 3, "standard", None)
    i = find(c, lambda i, x: x["kind"] == "all" and "end" in x["args"])
    k = c.nodes[i]["args"].index("end")
    leaf = {"op": ">=", "b": -20, "pos": (1, 1, 1, 1, 1, 1), "kind": "db", "args": [0]}
    c.nodes.append(leaf)
    c.nodes[i]["args"][k] = len(c.nodes) - 1
    assert_rejects(c.text(), ["node %d" % i, "ends the game"])


@test
def parity_rule_accept_and_reject():
    """A child bound one weaker than needed but of the other parity than its seeds is
    accepted (only through the parity rule); one weaker and of the same parity is not."""
    for rule in ("standard", "empty-capture"):
        base = generate(3, 3, rule, 6, leaf="mix", seed=4)
        root_ids = {r for r, _, _ in base.roots}
        done = 0
        for op in (">=", "<="):
            c = base.copy()
            # p: a non-root node whose claim we weaken by one (other parity than its seeds)
            p = find(c, lambda i, x: i not in root_ids and x["op"] == op
                     and x["kind"] in ("move", "all") and
                     any(c.nodes[ch]["kind"] in ("db", "job") for ch in c.children(i)))
            x = c.nodes[p]
            s = sum(x["pos"])
            assert (x["b"] - s) % 2 == 0
            x["b"] += -1 if op == ">=" else 1
            res = assert_accepts(c.text())
            assert res["parity_rule_uses"] >= 1, res["parity_rule_uses"]
            # now p needs a bound y of the other parity from a leaf child q; give q a
            # claim one weaker than y, of q's parity: must be rejected at p.
            m = c.m
            kids = c.children(p)
            q = next(ch for ch in kids if c.nodes[ch]["kind"] in ("db", "job"))
            # recompute y by replaying p's move to q
            if x["kind"] == "move":
                pits = [x["args"][0]]
            else:
                legal = [k for k in range(1, m + 1) if x["pos"][k - 1] > 0]
                pits = [legal[k] for k, a in enumerate(x["args"]) if a == q]
            g, own, opp, extra, ended = ref_step(x["pos"], pits[0], m, rule == "empty-capture")
            B = x["b"]
            if op == ">=":
                need_op, y = (">=", B - g) if extra else ("<=", g - B)
            else:
                need_op, y = ("<=", B - g) if extra else (">=", g - B)
            qn = c.nodes[q]
            sq = sum(qn["pos"])
            assert qn["op"] == need_op and (y - sq) % 2 == 1
            newb = y - 1 if need_op == ">=" else y + 1       # same parity as sq
            # keep q's own fields consistent with its new (weaker) claim
            qn["b"] = newb
            if qn["kind"] == "job" and need_op == "<=":
                qn["args"][1] = newb + 1
            if qn["kind"] == "job" and need_op == ">=":
                qn["args"][1] = newb
            d = c.copy()
            # q might have other parents; only p's check matters for the first error if
            # p is the lowest-numbered parent
            first = min(d.parents(q))
            assert_rejects(d.text(), "node %d" % first)
            # and the exact needed bound y (other parity) is accepted trivially
            qn["b"] = y
            if qn["kind"] == "job":
                qn["args"][1] = y if need_op == ">=" else y + 1
            ok, msg = check_inproc(c.text())
            if len(c.parents(q)) == 1:
                assert ok, msg
            done += 1
        assert done == 2


@test
def fuzz_no_traceback():
    """Random damage with the crc recomputed: the checker must only ever raise its own
    CertError (reject) or accept; never another exception."""
    c = generate(3, 2, "standard", 4, leaf="mix", seed=9)
    t = c.text()
    body = t[:t.rfind("crc32")]
    rng = random.Random(12345)
    alphabet = "0123456789,/-<>= \nabcdejmnorstvxz"
    rejected = 0
    for trial in range(1500):
        b = list(body)
        for _ in range(rng.randint(1, 3)):
            k = rng.randrange(len(b))
            r = rng.random()
            if r < 0.4:
                b[k] = rng.choice(alphabet)
            elif r < 0.7:
                del b[k]
            else:
                b.insert(k, rng.choice(alphabet))
        u = with_crc("".join(b)) if rng.random() < 0.9 else "".join(b)
        try:
            CC.check(u.encode("ascii"))
        except CC.CertError:
            rejected += 1
    assert rejected > 1000, rejected


def time_check(c, label):
    t = c.text()
    path = os.path.join(_TMP, "big.kcert")
    with open(path, "w") as fh:
        fh.write(t)
    t0 = time.time()
    p = subprocess.run([sys.executable, CHECKER, path, "--quiet"])
    dt = time.time() - t0
    assert p.returncode == 0
    nleaves = sum(1 for x in c.nodes if x["kind"] in ("job", "db"))
    print("    %s: %d nodes (%d leaves), %d bytes checked in %.2f s"
          % (label, len(c.nodes), nleaves, len(t), dt))
    return dt, len(c.nodes)


@test
def big_certificate_timing():
    """Checking time.  By default a Kalah(4,2) proof of a few thousand nodes; with --big
    two Kalah(4,3) certificates of ~100k nodes (depth 22 with leaves; a full proof)."""
    if not BIG:
        c = generate(4, 2, "empty-capture", None, seed=1, pick="random")
        dt, k = time_check(c, "Kalah(4,2) full proof")
        assert dt < 5.0, dt
        return
    for depth in (22, None):
        c = generate(4, 3, "empty-capture", depth, leaf="mix", seed=1, pick="random")
        dt, k = time_check(c, "Kalah(4,3) depth %s" % depth)
        assert dt < 10.0 * k / 100000.0, dt      # generous: a few seconds per 100k


# ---------------------------------------------------------------------------

BIG = False


def main(argv):
    global BIG
    only = None
    args = list(argv)
    if "--big" in args:
        BIG = True
        args.remove("--big")
    if len(args) == 2 and args[0] == "-k":
        only = args[1]
    passed = failed = 0
    for fn in TESTS:
        if only and only not in fn.__name__:
            continue
        t0 = time.time()
        try:
            fn()
        except Exception as e:  # AssertionError and anything else is a failure
            failed += 1
            msg = str(e)
            if len(msg) > 400:
                msg = msg[:400] + "..."
            print("FAIL %s: %s: %s" % (fn.__name__, type(e).__name__, msg))
        else:
            passed += 1
            print("ok   %s (%.1f s)" % (fn.__name__, time.time() - t0))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        rc = main(sys.argv[1:])
    finally:
        shutil.rmtree(_TMP, ignore_errors=True)
    sys.exit(rc)
