#!/usr/bin/env python3
"""Independent checker for Kalah proof certificates (.kcert files).

Usage: python3 checker/check_certificate.py FILE [--leaves] [--json] [--quiet]

This program was written from two documents only: docs/rules.md (the rules of
Kalah(m,n), both capture rules) and docs/certificate.md (the certificate format).  It
shares no code with the solver: the move rule, the parser and every check below are
implemented here from those texts, using only the Python standard library.

What it checks (any failure rejects the whole file, exit 1, one line on stderr):
  * Framing: ASCII text, every line ends in "\\n", no empty or extra lines, no
    carriage returns; the last line is "crc32 XXXXXXXX" (8 lower-case hex digits) equal
    to zlib.crc32 of every byte before that line; nothing after it (a cut or padded file
    is rejected).
  * Header, in this order: "kalah-certificate 1", "board M N" (1 <= M <= 6, N >= 1,
    2MN <= 127), "rule standard|empty-capture", optionally "line PLY ..." (1 to 32
    plies "A1".."B6" from the start, each the side to move's, none empty, none ending
    the game, replayed with the move rule below), "nodes K" (K >= 1), "leaves L"
    (0 <= L <= K), then one or more "root ID CLAIM" lines (no duplicates), then exactly
    K "node" lines with IDs 0..K-1 in increasing order.  Numbers are canonical decimals
    (no sign on unsigned fields, no "+", no leading zeros, no "-0").
  * Every position is well formed: M counts a row, each 0..127, each row non-empty (the
    game is not over), total seeds <= 2MN.
  * Every claim is possible: ">=B" with B > s, or "<=B" with B < -s (s = seeds in the
    position) is rejected; a trivially true claim is allowed.
  * Every justification, by replaying moves with this file's own sowing rule (own pits
    1..m, own store, opponent pits 1..m, opponent store skipped, laps include the
    emptied pit, extra move on the own store, capture under the file's rule, game end
    and sweep when either row is empty after a move, capture included):
      - "move P C" only with ">=": pit P legal; C is "end" exactly when the move ends
        the game (then the worth itself must be >= B), else C > ID names the node
        holding q' (same view after an extra move, rows swapped otherwise) with a ">="
        claim implying v(q') >= B-g after an extra move, else a "<=" claim implying
        v(q') <= g-B; C is "any" when that needed bound holds for every value of the
        s' seeds of q' (v(q') in [-s', s']).
      - "all C1..Cr" only with "<=": one entry per legal move in increasing pit order,
        each checked like "move" with the directions reversed.
      - "job R BETA RESULT NODES": a leaf; R, NODES unsigned; the claim must follow from
        the job's stated answer (v >= RESULT if RESULT >= BETA, else v <= RESULT), that
        answer must itself be possible, and two leaves citing the same R must agree.
      - "db V": a leaf; V must be a possible value (|V| <= s, V of the parity of s) and
        the claim must follow from v = V.
    "A bound implies" uses the parity rule: v has the parity of s, so ">=c" with c of
    the other parity gives v >= c+1, and "<=c" with c of the other parity gives
    v <= c-1.
  * Counts: K node lines, L of them leaves ("job" or "db").
  * Roots: each root line names a node holding the start position (every pit N), or
    with a line the position after it from its mover's view, and exactly that claim.
    A root claim bounds that position's value v; South's final margin is then
    (South's store - North's store after the line) + v if South is to move, minus v if
    North is (the summary prints both).
  * Every node is reachable from a root through "move"/"all" children.
  * Bounds on one position do not contradict each other (claims, db values and job
    answers of all nodes holding it): with true leaves this never happens.

On success (exit 0) it prints a summary (board, rule, root claims, node and leaf counts,
the seed range of the leaves; --leaves adds one line per leaf; --json prints one JSON
object instead; --quiet prints nothing).  The root claims then rest on the leaves' claims,
which must be re-proved separately.  Usage or I/O errors exit 2.
"""

import json
import re
import sys
import zlib

PROG = "check_certificate"
MAX_DIGITS = 20          # longer numbers are rejected as malformed
RULES = ("standard", "empty-capture")


class CertError(Exception):
    def __init__(self, line, msg):
        Exception.__init__(self, msg)
        self.line = line
        self.msg = msg

    def text(self):
        if self.line is None:
            return "%s: %s" % (PROG, self.msg)
        return "%s: line %d: %s" % (PROG, self.line, self.msg)


# ---------------------------------------------------------------------------
# The move rule (docs/rules.md), positions pits only from the mover's view.
# ---------------------------------------------------------------------------

def play(pos, pit, m, empty_capture):
    """Play the mover's pit `pit` (1..m) in `pos` (tuple of 2m counts: the mover's pits
    1..m, then the opponent's pits 1..m).

    Returns (g, own, opp, extra, ended): g seeds put into the mover's store (sown plus
    captured), the mover's and the opponent's rows after the move (before any end-of-game
    sweep), whether the last seed fell in the mover's store, and whether either row is now
    empty.  The pit must be non-empty."""
    L = 2 * m + 1
    # slots: 0..m-1 own pits, m own store, m+1..2m opponent pits 1..m
    b = list(pos[:m])
    b.append(0)
    b.extend(pos[m:])
    i = pit - 1
    k = b[i]
    if k <= 0:
        raise ValueError("empty pit")
    b[i] = 0
    full, rem = divmod(k, L)
    if full:
        for j in range(L):
            b[j] += full
    j = i
    for _ in range(rem):
        j += 1
        if j == L:
            j = 0
        b[j] += 1
    last = (i + k) % L
    extra = last == m
    if last < m and b[last] == 1:          # last seed in an own pit that was empty
        opp = 2 * m - last                  # own pit last+1 faces opponent pit m-last
        if b[opp] > 0:
            b[m] += b[opp] + 1
            b[opp] = 0
            b[last] = 0
        elif empty_capture:
            b[m] += 1
            b[last] = 0
    own = tuple(b[:m])
    opp_row = tuple(b[m + 1:])
    ended = sum(own) == 0 or sum(opp_row) == 0
    return b[m], own, opp_row, extra, ended


def effective(op, c, s):
    """The bound a claim `op c` gives on v at a position with s seeds, using that v has
    the parity of s."""
    if (c - s) & 1:
        return c + 1 if op == ">=" else c - 1
    return c


def replay_line(plies, m, n, ecap, ln):
    """The position after a line of plies from the start of Kalah(m,n) ("A2", "B1": the
    side to move's pit, no suffix). Returns (pos, plies, offset, sign): pos pits only from
    the mover's view, offset = South's store - North's store, sign = +1 if South (A) is to
    move, else -1, so that South's final margin = offset + sign * v(pos)."""
    if not plies or len(plies) > 32:
        raise CertError(ln, "expected 'line PLY ...' with 1 to 32 plies")
    pos = (n,) * (2 * m)
    mover, stores = "A", {"A": 0, "B": 0}
    for k, ply in enumerate(plies, 1):
        if not re.fullmatch(r"[AB][1-9]", ply) or int(ply[1]) > m:
            raise CertError(ln, "ply %d %r is not A1..A%d or B1..B%d" % (k, ply, m, m))
        if ply[0] != mover:
            raise CertError(ln, "ply %d %s is out of turn (%s to move)" % (k, ply, mover))
        pit = int(ply[1])
        if pos[pit - 1] == 0:
            raise CertError(ln, "ply %d %s: the pit is empty" % (k, ply))
        g, own, opp, extra, ended = play(pos, pit, m, ecap)
        if ended:
            raise CertError(ln, "ply %d %s ends the game" % (k, ply))
        stores[mover] += g
        if extra:
            pos = own + opp
        else:
            pos = opp + own
            mover = "B" if mover == "A" else "A"
    return pos, list(plies), stores["A"] - stores["B"], 1 if mover == "A" else -1


def margin_claim(op, b, offset, sign):
    """A claim `op b` on the root's value as a claim on South's final margin."""
    x = offset + sign * b
    if sign < 0:
        op = "<=" if op == ">=" else ">="
    return "%s%d" % (op, x)


def fmt_pos(pos, m):
    return ",".join(map(str, pos[:m])) + "/" + ",".join(map(str, pos[m:]))


def fmt_claim(op, b):
    return "%s%d" % (op, b)


# ---------------------------------------------------------------------------
# Parsing helpers
# ---------------------------------------------------------------------------

_DIGITS = frozenset("0123456789")
_PRINTABLE = bytes(range(0x20, 0x7f)) + b"\n"


def _what(what):
    return what[0] % what[1:] if isinstance(what, tuple) else what


def parse_uint(tok, line, what):
    # the file is known to be printable ASCII here, so isdigit() means 0-9 only
    if (not tok.isdigit() or len(tok) > MAX_DIGITS or (tok[0] == "0" and len(tok) > 1)):
        raise CertError(line, "%s: %r is not an unsigned decimal integer" % (_what(what), tok))
    return int(tok)


def parse_int(tok, line, what):
    body = tok[1:] if tok[:1] == "-" else tok
    if (not body.isdigit() or len(body) > MAX_DIGITS
            or (body[0] == "0" and (len(body) > 1 or tok == "-0"))):
        raise CertError(line, "%s: %r is not a signed decimal integer" % (_what(what), tok))
    return int(tok)


def parse_claim(tok, line, what):
    op = tok[:2]
    if op == ">=" or op == "<=":
        b = tok[2:]
        if b.isdigit() and (b[0] != "0" or len(b) == 1) and len(b) <= MAX_DIGITS:
            return op, int(b)
        return op, parse_int(b, line, _what(what) + " bound")
    raise CertError(line, "%s: %r is not a claim '>=B' or '<=B'" % (_what(what), tok))


def pos_parser(m):
    """A fast position parser for M = m: returns parse(tok, line, what) -> tuple."""
    count = r"(?:0|[1-9][0-9]{0,2})"
    row = count + ("," + count) * (m - 1)
    fullmatch = re.compile(row + "/" + row).fullmatch
    cache = {}

    def parse(tok, line, what):
        v = cache.get(tok)
        if v is not None:
            return v
        if fullmatch(tok):
            v = tuple(map(int, tok.replace("/", ",").split(",")))
            if max(v) <= 127:
                if len(cache) < 1000000:
                    cache[tok] = v
                return v
        return parse_pos(tok, m, line, what)    # gives the precise complaint
    return parse


def parse_pos(tok, m, line, what):
    what = _what(what)
    halves = tok.split("/")
    if len(halves) != 2:
        raise CertError(line, "%s: position %r is not 'a1,...,aM/b1,...,bM'" % (what, tok))
    vals = []
    for h in halves:
        parts = h.split(",")
        if len(parts) != m:
            raise CertError(line, "%s: position %r: a row must have %d counts"
                            % (what, tok, m))
        for p in parts:
            if (not p or len(p) > 3 or not set(p) <= _DIGITS
                    or (len(p) > 1 and p[0] == "0")):
                raise CertError(line, "%s: position %r: bad count %r" % (what, tok, p))
            v = int(p)
            if v > 127:
                raise CertError(line, "%s: position %r: count %d > 127" % (what, tok, v))
            vals.append(v)
    return tuple(vals)


def expect_fields(fields, n, line, what):
    if len(fields) != n:
        raise CertError(line, "%s line must have %d fields, has %d" % (what, n, len(fields)))


# ---------------------------------------------------------------------------
# The checker
# ---------------------------------------------------------------------------

class Node(object):
    __slots__ = ("id", "line", "op", "bound", "pos", "seeds", "kind", "args")


def check(data):
    """Check certificate bytes.  Returns a result dict; raises CertError."""
    if not isinstance(data, (bytes, bytearray)):
        raise CertError(None, "internal: data must be bytes")
    if not data:
        raise CertError(None, "empty file")
    if not data.endswith(b"\n"):
        nl = data.count(b"\n") + 1
        raise CertError(nl, "file does not end with a newline: cut or damaged")
    # printable ASCII and "\n" only
    bad = bytes(data).translate(None, _PRINTABLE)
    if bad:
        at = data.index(bad[0:1])
        ln = data.count(b"\n", 0, at) + 1
        what = "carriage return" if bad[0] == 13 else (
            "non-ASCII byte" if bad[0] > 127 else "control character")
        raise CertError(ln, "%s 0x%02x" % (what, bad[0]))
    if data.startswith(b"\n"):
        raise CertError(1, "empty line")
    at = data.find(b"\n\n")
    if at >= 0:
        raise CertError(data.count(b"\n", 0, at) + 2, "empty line")
    lines = data.decode("ascii").split("\n")
    lines.pop()                    # the empty string after the final "\n"
    nlines = len(lines)
    # crc32 line: must be the last line, and only the last
    for idx, ln in enumerate(lines):
        if ln.startswith("crc32"):
            if idx != nlines - 1:
                raise CertError(idx + 2, "data after the crc32 line (line %d)" % (idx + 1))
            break
    last = lines[-1]
    if not last.startswith("crc32 "):
        raise CertError(nlines, "last line is not 'crc32 XXXXXXXX': file cut or damaged")
    hexpart = last[6:]
    if len(hexpart) != 8 or not set(hexpart) <= set("0123456789abcdef"):
        raise CertError(nlines, "crc32 must be 8 lower-case hex digits, got %r" % hexpart)
    body_len = len(data) - len(last) - 1
    crc = "%08x" % (zlib.crc32(bytes(data[:body_len])) & 0xffffffff)
    if crc != hexpart:
        raise CertError(nlines, "crc32 mismatch: file says %s, bytes before it give %s"
                        % (hexpart, crc))

    # --- header -----------------------------------------------------------------
    def hdr(idx, key):
        if idx >= nlines - 1:
            raise CertError(idx + 1, "missing '%s' line: file cut" % key)
        f = lines[idx].split(" ")
        if f[0] != key:
            raise CertError(idx + 1, "expected a '%s' line, got %r" % (key, lines[idx][:40]))
        return f

    f = hdr(0, "kalah-certificate")
    if lines[0] != "kalah-certificate 1":
        raise CertError(1, "unknown magic/version %r (want 'kalah-certificate 1')" % lines[0])
    f = hdr(1, "board")
    expect_fields(f, 3, 2, "board")
    m = parse_uint(f[1], 2, "board M")
    n = parse_uint(f[2], 2, "board N")
    if not 1 <= m <= 6:
        raise CertError(2, "board M must be 1..6, got %d" % m)
    if n < 1 or 2 * m * n > 127:
        raise CertError(2, "board N must be >= 1 with 2MN <= 127, got M=%d N=%d" % (m, n))
    total = 2 * m * n
    f = hdr(2, "rule")
    expect_fields(f, 2, 3, "rule")
    rule = f[1]
    if rule not in RULES:
        raise CertError(3, "unknown rule %r (want 'standard' or 'empty-capture')" % rule)
    ecap = rule == "empty-capture"
    # The root: the start, or the position after the optional "line" (docs/certificate.md).
    root_pos, line, offset, sign = (n,) * (2 * m), [], 0, 1
    h = 3
    if h < nlines - 1 and lines[h].startswith("line "):
        root_pos, line, offset, sign = replay_line(lines[h].split(" ")[1:], m, n, ecap, h + 1)
        h += 1
    f = hdr(h, "nodes")
    expect_fields(f, 2, h + 1, "nodes")
    K = parse_uint(f[1], h + 1, "nodes K")
    if K < 1:
        raise CertError(h + 1, "nodes must be at least 1")
    f = hdr(h + 1, "leaves")
    expect_fields(f, 2, h + 2, "leaves")
    Lc = parse_uint(f[1], h + 2, "leaves L")
    if Lc > K:
        raise CertError(h + 2, "leaves %d > nodes %d" % (Lc, K))
    leaves_line = h + 2

    roots = []
    seen_roots = set()
    idx = h + 2
    while idx < nlines - 1 and lines[idx].startswith("root "):
        ln = idx + 1
        f = lines[idx].split(" ")
        expect_fields(f, 3, ln, "root")
        rid = parse_uint(f[1], ln, "root ID")
        op, b = parse_claim(f[2], ln, "root claim")
        if rid >= K:
            raise CertError(ln, "root names node %d but there are only %d nodes" % (rid, K))
        if (rid, op, b) in seen_roots:
            raise CertError(ln, "duplicate root line")
        seen_roots.add((rid, op, b))
        roots.append((ln, rid, op, b))
        idx += 1
    if not roots:
        raise CertError(idx + 1, "expected at least one 'root ID CLAIM' line")

    # --- node lines ---------------------------------------------------------------
    nodes = []
    ppos = pos_parser(m)
    for idx in range(idx, nlines - 1):
        ln = idx + 1
        s = lines[idx]
        if not s.startswith("node "):
            if s.startswith("root "):
                raise CertError(ln, "root line after the node lines")
            raise CertError(ln, "unexpected line %r" % s[:40])
        f = s.split(" ")
        if len(f) < 5:
            raise CertError(ln, "node line too short")
        nid = parse_uint(f[1], ln, "node ID")
        expect_id = len(nodes)
        if nid != expect_id:
            raise CertError(ln, "node ID %d out of order: expected %d" % (nid, expect_id))
        if nid >= K:
            raise CertError(ln, "more node lines than 'nodes %d'" % K)
        nd = Node()
        nd.id = nid
        nd.line = ln
        nd.op, nd.bound = parse_claim(f[2], ln, ("node %d claim", nid))
        nd.pos = ppos(f[3], ln, ("node %d", nid))
        own_s = sum(nd.pos[:m])
        opp_s = sum(nd.pos) - own_s
        if not own_s or not opp_s:
            raise CertError(ln, "node %d: position %s has an empty row (game over)"
                            % (nid, f[3]))
        nd.seeds = own_s + opp_s
        if nd.seeds > total:
            raise CertError(ln, "node %d: position %s has %d seeds, more than 2MN = %d"
                            % (nid, f[3], nd.seeds, total))
        kind = f[4]
        args = f[5:]
        if kind == "move":
            if len(args) != 2:
                raise CertError(ln, "node %d: 'move P C' needs 2 fields" % nid)
            p = parse_uint(args[0], ln, ("node %d move pit", nid))
            c = args[1] if args[1] in ("end", "any") else parse_uint(args[1], ln, ("node %d child", nid))
            nd.args = (p, c)
        elif kind == "all":
            if not args:
                raise CertError(ln, "node %d: 'all' needs at least one entry" % nid)
            nd.args = tuple(a if a in ("end", "any") else parse_uint(a, ln, ("node %d child", nid))
                            for a in args)
        elif kind == "job":
            if len(args) != 4:
                raise CertError(ln, "node %d: 'job R BETA RESULT NODES' needs 4 fields" % nid)
            nd.args = (parse_uint(args[0], ln, ("node %d job R", nid)),
                       parse_int(args[1], ln, ("node %d job BETA", nid)),
                       parse_int(args[2], ln, ("node %d job RESULT", nid)),
                       parse_uint(args[3], ln, ("node %d job NODES", nid)))
        elif kind == "db":
            if len(args) != 1:
                raise CertError(ln, "node %d: 'db V' needs 1 field" % nid)
            nd.args = (parse_int(args[0], ln, ("node %d db V", nid)),)
        else:
            raise CertError(ln, "node %d: unknown justification %r" % (nid, kind))
        nd.kind = kind
        nodes.append(nd)
    if len(nodes) != K:
        raise CertError(nlines, "file has %d node lines but says 'nodes %d'"
                        % (len(nodes), K))
    nleaves = sum(1 for nd in nodes if nd.kind in ("job", "db"))
    if nleaves != Lc:
        raise CertError(leaves_line, "file has %d leaves (job/db) but says 'leaves %d'"
                        % (nleaves, Lc))

    # --- roots ----------------------------------------------------------------------
    for ln, rid, op, b in roots:
        nd = nodes[rid]
        if nd.pos != root_pos:
            raise CertError(ln, "root node %d holds %s, not the %s %s"
                            % (rid, fmt_pos(nd.pos, m),
                               "position after the line" if line else "start position",
                               fmt_pos(root_pos, m)))
        if nd.op != op or nd.bound != b:
            raise CertError(ln, "root claims %s but node %d claims %s"
                            % (fmt_claim(op, b), rid, fmt_claim(nd.op, nd.bound)))

    # --- justifications ---------------------------------------------------------------
    parity_uses = 0
    jobs_seen = {}
    children = [()] * K
    pos_str = lambda p: fmt_pos(p, m)

    def check_child(nd, pit, c, need_op, x, g, own, opp, extra, ended, label):
        """The move `pit` of node nd gave (g, own, opp, extra, ended); entry c must give
        v(q') need_op x, or (for 'end') the worth itself must satisfy the node's claim."""
        nonlocal parity_uses
        ln = nd.line
        if ended:
            if c != "end":
                raise CertError(ln, "node %d: %s %d from %s ends the game but names child %s"
                                % (nd.id, label, pit, pos_str(nd.pos), c))
            worth = g + sum(own) - sum(opp)
            if (nd.op == ">=" and worth < nd.bound) or (nd.op == "<=" and worth > nd.bound):
                raise CertError(ln, "node %d: %s %d from %s ends the game with worth %d, "
                                "which does not give %s"
                                % (nd.id, label, pit, pos_str(nd.pos), worth,
                                   fmt_claim(nd.op, nd.bound)))
            return
        if c == "end":
            raise CertError(ln, "node %d: %s %d from %s does not end the game but says 'end'"
                            % (nd.id, label, pit, pos_str(nd.pos)))
        if c == "any":
            # The needed bound must hold for every value the child can have: v in [-s', s'].
            sq = sum(own) + sum(opp)
            if not ((need_op == ">=" and -sq >= x) or (need_op == "<=" and sq <= x)):
                raise CertError(ln, "node %d: %s %d from %s says 'any', but v(child) %s %d "
                                "does not hold for every value of its %d seeds"
                                % (nd.id, label, pit, pos_str(nd.pos), need_op, x, sq))
            return
        if c <= nd.id:
            raise CertError(ln, "node %d: child ID %d is not greater than the node's ID"
                            % (nd.id, c))
        if c >= K:
            raise CertError(ln, "node %d: child ID %d does not exist (nodes %d)"
                            % (nd.id, c, K))
        q = own + opp if extra else opp + own
        ch = nodes[c]
        if ch.pos != q:
            raise CertError(ln, "node %d: %s %d from %s gives child %s (%s) but node %d holds %s"
                            % (nd.id, label, pit, pos_str(nd.pos), pos_str(q),
                               "extra move, same mover" if extra else "opponent to move",
                               c, pos_str(ch.pos)))
        if ch.op != need_op:
            raise CertError(ln, "node %d: %s %d from %s needs child node %d to claim %s%d, "
                            "but it claims %s"
                            % (nd.id, label, pit, pos_str(nd.pos), c, need_op, x,
                               fmt_claim(ch.op, ch.bound)))
        e = effective(ch.op, ch.bound, ch.seeds)
        ok = e >= x if need_op == ">=" else e <= x
        if not ok:
            raise CertError(ln, "node %d: %s %d from %s needs v(child) %s %d (g=%d), but "
                            "node %d (%d seeds) claims only %s"
                            % (nd.id, label, pit, pos_str(nd.pos), need_op, x, g,
                               c, ch.seeds, fmt_claim(ch.op, ch.bound)))
        if (ch.bound < x) if need_op == ">=" else (ch.bound > x):
            parity_uses += 1

    for nd in nodes:
        ln = nd.line
        s = nd.seeds
        op, B = nd.op, nd.bound
        if (op == ">=" and B > s) or (op == "<=" and B < -s):
            raise CertError(ln, "node %d: claim %s is impossible: position %s has %d seeds"
                            % (nd.id, fmt_claim(op, B), pos_str(nd.pos), s))
        kind = nd.kind
        if kind == "move":
            if op != ">=":
                raise CertError(ln, "node %d: 'move' justifies only a '>=' claim, not %s"
                                % (nd.id, fmt_claim(op, B)))
            pit, c = nd.args
            if not 1 <= pit <= m:
                raise CertError(ln, "node %d: move pit %d is not 1..%d" % (nd.id, pit, m))
            if nd.pos[pit - 1] == 0:
                raise CertError(ln, "node %d: move %d from %s: the pit is empty (not legal)"
                                % (nd.id, pit, pos_str(nd.pos)))
            g, own, opp, extra, ended = play(nd.pos, pit, m, ecap)
            if extra:
                check_child(nd, pit, c, ">=", B - g, g, own, opp, extra, ended, "move")
            else:
                check_child(nd, pit, c, "<=", g - B, g, own, opp, extra, ended, "move")
            if c not in ("end", "any"):
                children[nd.id] = (c,)
        elif kind == "all":
            if op != "<=":
                raise CertError(ln, "node %d: 'all' justifies only a '<=' claim, not %s"
                                % (nd.id, fmt_claim(op, B)))
            legal = [p for p in range(1, m + 1) if nd.pos[p - 1] > 0]
            if len(nd.args) != len(legal):
                raise CertError(ln, "node %d: 'all' has %d entries but %s has %d legal moves "
                                "(pits %s)" % (nd.id, len(nd.args), pos_str(nd.pos),
                                               len(legal), ",".join(map(str, legal))))
            for pit, c in zip(legal, nd.args):
                g, own, opp, extra, ended = play(nd.pos, pit, m, ecap)
                if extra:
                    check_child(nd, pit, c, "<=", B - g, g, own, opp, extra, ended,
                                "all: move")
                else:
                    check_child(nd, pit, c, ">=", g - B, g, own, opp, extra, ended,
                                "all: move")
            children[nd.id] = tuple(c for c in nd.args if c not in ("end", "any"))
        elif kind == "job":
            r, beta, result, cnt = nd.args
            if result >= beta:
                jop = ">="
                if result > s:
                    raise CertError(ln, "node %d: job answer v >= %d is impossible: %d seeds"
                                    % (nd.id, result, s))
            else:
                jop = "<="
                if result < -s:
                    raise CertError(ln, "node %d: job answer v <= %d is impossible: %d seeds"
                                    % (nd.id, result, s))
            if op != jop:
                raise CertError(ln, "node %d: job answered v %s %d (BETA %d), which cannot "
                                "prove the claim %s" % (nd.id, jop, result, beta,
                                                        fmt_claim(op, B)))
            e = effective(jop, result, s)
            if (op == ">=" and e < B) or (op == "<=" and e > B):
                raise CertError(ln, "node %d: job answered v %s %d, which does not give "
                                "the claim %s" % (nd.id, jop, result, fmt_claim(op, B)))
            key = (nd.pos, beta, result, cnt)
            prev = jobs_seen.setdefault(r, (key, nd.id))
            if prev[0] != key:
                raise CertError(ln, "node %d: job record %d disagrees with node %d citing "
                                "the same record" % (nd.id, r, prev[1]))
        else:  # db
            (V,) = nd.args
            if V > s or V < -s or (V - s) & 1:
                raise CertError(ln, "node %d: db value %d is not a possible value of %s "
                                "(%d seeds: |V| <= %d, parity of %d)"
                                % (nd.id, V, pos_str(nd.pos), s, s, s))
            if (op == ">=" and V < B) or (op == "<=" and V > B):
                raise CertError(ln, "node %d: db value %d does not give the claim %s"
                                % (nd.id, V, fmt_claim(op, B)))

    # --- reachability -------------------------------------------------------------------
    reach = bytearray(K)
    for _, rid, _, _ in roots:
        reach[rid] = 1
    for nd in nodes:
        if not reach[nd.id]:
            raise CertError(nd.line, "node %d is not reachable from any root" % nd.id)
        for c in children[nd.id]:
            reach[c] = 1

    # --- consistency: bounds on one position must not contradict each other ------------
    # (sound: with true leaves every claim is true; a contradiction means a false leaf)
    bounds = {}
    for nd in nodes:
        lo = hi = None
        if nd.op == ">=":
            lo = effective(">=", nd.bound, nd.seeds)
        else:
            hi = effective("<=", nd.bound, nd.seeds)
        if nd.kind == "db":
            lo = hi = nd.args[0]
        elif nd.kind == "job":
            r, beta, result, cnt = nd.args
            if result >= beta:
                lo = max(lo, effective(">=", result, nd.seeds)) if lo is not None else \
                    effective(">=", result, nd.seeds)
            else:
                hi = min(hi, effective("<=", result, nd.seeds)) if hi is not None else \
                    effective("<=", result, nd.seeds)
        cur = bounds.get(nd.pos)
        if cur is None:
            cur = bounds[nd.pos] = [-999, None, 999, None]
        if lo is not None and lo > cur[0]:
            cur[0], cur[1] = lo, nd.id
        if hi is not None and hi < cur[2]:
            cur[2], cur[3] = hi, nd.id
        if cur[0] > cur[2]:
            raise CertError(nd.line, "node %d: contradictory bounds on %s: node %d gives "
                            "v >= %d, node %d gives v <= %d"
                            % (nd.id, pos_str(nd.pos), cur[1], cur[0], cur[3], cur[2]))

    # --- result -------------------------------------------------------------------------
    leaves = []
    for nd in nodes:
        if nd.kind == "job":
            r, beta, result, cnt = nd.args
            leaves.append({"id": nd.id, "position": pos_str(nd.pos), "seeds": nd.seeds,
                           "claim": fmt_claim(nd.op, nd.bound), "kind": "job",
                           "record": r, "beta": beta, "result": result, "nodes": cnt})
        elif nd.kind == "db":
            leaves.append({"id": nd.id, "position": pos_str(nd.pos), "seeds": nd.seeds,
                           "claim": fmt_claim(nd.op, nd.bound), "kind": "db",
                           "value": nd.args[0]})
    return {
        "ok": True,
        "board": [m, n],
        "rule": rule,
        "line": " ".join(line),
        "roots": [{"id": rid, "claim": fmt_claim(op, b),
                   "margin": margin_claim(op, b, offset, sign)} for _, rid, op, b in roots],
        "nodes": K,
        "internal": K - len(leaves),
        "leaf_kinds": {"job": sum(1 for x in leaves if x["kind"] == "job"),
                       "db": sum(1 for x in leaves if x["kind"] == "db")},
        "leaf_seeds": ([min(x["seeds"] for x in leaves), max(x["seeds"] for x in leaves)]
                       if leaves else None),
        "parity_rule_uses": parity_uses,
        "leaves": leaves,
    }


def summary(res, with_leaves):
    m, n = res["board"]
    out = ["check_certificate: OK",
           "board: Kalah(%d,%d)" % (m, n),
           "rule: %s" % res["rule"]]
    claims = {}
    line = res["line"]
    if line:
        out.append("line: %s (the root is the position after it)" % line)
    for r in res["roots"]:
        if line:
            out.append("root: node %d: v(root) %s, so South's final margin %s"
                       % (r["id"], r["claim"], r["margin"]))
        else:
            out.append("root: node %d: v(start) %s" % (r["id"], r["claim"]))
        claims.setdefault(r["margin"][2:], set()).add(r["margin"][:2])
    for b, ops in sorted(claims.items(), key=lambda kv: int(kv[0])):
        if ops == {">=", "<="}:
            out.append("value: Kalah(%d,%d) under %s%s = %s (both bounds proved)"
                       % (m, n, res["rule"], " after " + line if line else "", b))
    lk = res["leaf_kinds"]
    out.append("nodes: %d (internal %d, leaves %d: job %d, db %d)"
               % (res["nodes"], res["internal"], lk["job"] + lk["db"], lk["job"], lk["db"]))
    if res["leaf_seeds"]:
        out.append("leaf seeds: %d..%d" % tuple(res["leaf_seeds"]))
        out.append("the root claims rest on the %d leaf claims (re-prove them separately)"
                   % (lk["job"] + lk["db"]))
    else:
        out.append("leaf seeds: none (no leaves: the root claims are proved by this file)")
    out.append("parity-rule uses: %d" % res["parity_rule_uses"])
    if with_leaves:
        for x in res["leaves"]:
            if x["kind"] == "job":
                tail = "job %d %d %d %d" % (x["record"], x["beta"], x["result"], x["nodes"])
            else:
                tail = "db %d" % x["value"]
            out.append("leaf %d %s %s %s" % (x["id"], x["position"], x["claim"], tail))
    return "\n".join(out)


USAGE = "usage: check_certificate.py FILE [--leaves] [--json] [--quiet]"


def main(argv):
    opts = {"--leaves": False, "--json": False, "--quiet": False}
    files = []
    for a in argv:
        if a in ("-h", "--help"):
            print(USAGE)
            print("  --leaves  also list every leaf (id, position, claim, justification)")
            print("  --json    print one JSON object instead of the text summary")
            print("  --quiet   print nothing on success (errors still go to stderr)")
            return 0
        if a in opts:
            opts[a] = True
        elif a.startswith("-") and a != "-":
            sys.stderr.write("%s: unknown option %s\n%s\n" % (PROG, a, USAGE))
            return 2
        else:
            files.append(a)
    if len(files) != 1:
        sys.stderr.write("%s: expected exactly one FILE\n%s\n" % (PROG, USAGE))
        return 2
    try:
        if files[0] == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(files[0], "rb") as fh:
                data = fh.read()
    except OSError as e:
        sys.stderr.write("%s: cannot read %s: %s\n" % (PROG, files[0], e.strerror or e))
        return 2
    try:
        res = check(data)
    except CertError as e:
        sys.stderr.write(e.text() + "\n")
        if opts["--json"] and not opts["--quiet"]:
            sys.stdout.write(json.dumps({"ok": False, "line": e.line, "error": e.msg}) + "\n")
        return 1
    except Exception as e:  # never accept, never a traceback
        sys.stderr.write("%s: internal error, rejecting: %s: %s\n"
                         % (PROG, type(e).__name__, e))
        return 1
    if opts["--quiet"]:
        return 0
    if opts["--json"]:
        sys.stdout.write(json.dumps(res) + "\n")
    else:
        sys.stdout.write(summary(res, opts["--leaves"]) + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
