#!/usr/bin/env python3
"""API tests of `kalah serve` (ctest: serve-api).

Starts the built binary on a free loopback port and checks, over HTTP:
  - every endpoint's object equals the CLI's --json object for the same input (timing
    fields aside), with and without an endgame database;
  - malformed, unknown, repeated, oversized and non-ASCII parameters give 400 (or the front end's
    414 for a URI past its limit), never a crash, and no internal text;
  - methods other than GET are 405;
  - past the solver queue the answer is 503, at once;
  - a request over its budget answers "not known within the budget" and its search stops
    (the server's CPU time stays still afterwards, the solver answers the next request);
  - a position the database covers is answered while every solver is busy;
  - the caps: requests in flight per client address (429), header count (431), no Range
    on the API and at most one range elsewhere (416); a taken port is an error; a path
    cannot forge a log line; a search stops when its client disconnects.

usage: serve_api_test.py KALAH_BINARY
"""
import concurrent.futures
import atexit
import http.client
import json
import os
import socket
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

KALAH = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="kalah_serve_api_")
atexit.register(shutil.rmtree, WORK, ignore_errors=True)
failures = []


def check(cond, what):
    if cond:
        print("ok  ", what)
    else:
        print("FAIL", what)
        failures.append(what)
    return cond


class Server:
    def __init__(self, *args, quiet=True):
        self.proc = subprocess.Popen([KALAH, "serve", "--port", "0", *(["--quiet"] if quiet else []),
                                      *args],
                                     cwd=WORK, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        line = self.proc.stdout.readline()
        if "listening on http://" not in line:
            raise SystemExit("serve did not start: %r %s" % (line, self.proc.stderr.read()))
        self.base = line.split("listening on ")[1].strip().rstrip("/")
        self.port = int(self.base.rsplit(":", 1)[1])
        self.line = line

    def get(self, path, method="GET", data=None, timeout=60):
        req = urllib.request.Request(self.base + path, method=method, data=data)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read()), dict(r.headers)
        except urllib.error.HTTPError as e:
            body = e.read()
            try:
                obj = json.loads(body)
            except ValueError:
                obj = {"raw": body.decode("latin-1")}
            return e.code, obj, dict(e.headers)

    def cpu_seconds(self):
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        self.proc.terminate()
        try:
            code = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = "killed"
        err = self.proc.stderr.read()
        self.log = err
        check(code == 0, "server stops cleanly on SIGTERM (exit %s)" % code)
        check("error" not in err.lower(),
              "server logged no error (stderr: %r)" % err[-300:])


def cli(*args):
    quiet = ["--quiet"] if args[0] != "show" else []
    r = subprocess.run([KALAH, *args, "--json", *quiet], cwd=WORK, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("kalah %s failed: %s" % (" ".join(args), r.stderr))
    return json.loads(r.stdout)


TIMING = {"nodes", "seconds", "nodes_per_second", "cpu_seconds", "threads", "tt_mib",
          "tt_budget_mib", "pits", "seeds", "db_seeds"}


def same(api_obj, cli_obj, what, drop=TIMING):
    a = {k: v for k, v in api_obj.items() if k not in drop}
    c = {k: v for k, v in cli_obj.items() if k not in drop}
    if not check(a == c, what):
        print("   api:", json.dumps(a)[:400])
        print("   cli:", json.dumps(c)[:400])


def q(**params):
    return "?" + urllib.parse.urlencode(params)


def test_same_as_cli(db):
    s = Server("--db", db, "--budget-ms", "20000")
    try:
        check(s.base.startswith("http://127.0.0.1:"), "listens on 127.0.0.1 by default")
        games = [
            ("3,3,3,3/3,3,3,3/0,0/A", "standard", ""),
            ("3,3,3,3/3,3,3,3/0,0/A", "empty-capture", ""),
            ("3,3,3,3/3,3,3,3/0,0/A", "standard", "A2+ A4 B2"),
            ("4,4,4/4,4,4/0,0/A", "standard", "A1 B2 A3"),
            ("2,2,2/2,2,2/0,0/A", "standard", ""),        # in the m=3 database
            ("2,2,2/2,2,2/0,0/A", "empty-capture", ""),   # no database for this rule
            ("0,0,1/1,0,0/5,3/A", "standard", "A3"),      # the game ends
        ]
        for pos, rule, moves in games:
            status, obj, headers = s.get("/api/v1/query" + q(position=pos, rule=rule, moves=moves))
            ok = check(status == 200, "query %s %s %r: 200" % (pos, rule, moves))
            if ok:
                same(obj, cli("query", "--position", pos, "--rule", rule, "--moves", moves,
                              "--db", db),
                     "query %s %s %r equals kalah query --json" % (pos, rule, moves))
                check(headers.get("Content-Type", "").startswith("application/json"),
                      "query answers application/json")
        status, obj, _ = s.get("/api/v1/query" + q(position="2,2,2/2,2,2/0,0/A"))
        check(status == 200 and obj["nodes"] == 0, "a position in the database: no search (nodes 0)")
        status, obj, _ = s.get("/api/v1/query" + q(pits=4, seeds=3, rule="standard"))
        same(obj, cli("query", "--pits", "4", "--seeds", "3", "--db", db), "query by pits/seeds")
        for rule in ("standard", "empty-capture"):
            status, obj, _ = s.get("/api/v1/pv" + q(position="3,3,3,3/3,3,3,3/0,0/A", rule=rule))
            same(obj, cli("solve", "--pits", "4", "--seeds", "3", "--rule", rule, "--db", db),
                 "pv of the start equals kalah solve --json (%s)" % rule)
        status, obj, _ = s.get("/api/v1/pie" + q(pits=3, seeds=3))
        same(obj, cli("pie", "--pits", "3", "--seeds", "3", "--db", db), "pie equals kalah pie --json")
        record = "A1+ A3 B1 A2 B2"
        status, obj, _ = s.get("/api/v1/annotate" + q(pits=3, seeds=3, moves=record))
        same(obj, cli("annotate", "--pits", "3", "--seeds", "3", "--moves", record, "--db", db),
             "annotate equals kalah annotate --json")
        status, obj, _ = s.get("/api/v1/show" + q(pits=4, seeds=3, moves="A2 A4 B2"))
        same(obj, cli("show", "--pits", "4", "--seeds", "3", "--moves", "A2 A4 B2"),
             "show equals kalah show --json (suffixes filled in)")
        status, obj, _ = s.get("/api/v1/move" + q(position="3,3,3,3/3,3,3,3/0,0/A"))
        check(status == 200 and obj["move"] in obj["best"] and obj["best"] == ["A2+"],
              "move: the perfect engine plays a best move (%s)" % obj)
        check(obj.get("position_after") == cli("show", "--position", "3,3,3,3/3,3,3,3/0,0/A",
                                                 "--moves", obj["move"])["position"],
              "move: position_after is the CLI's position after the move")

        # Bad input: 400 with one message, nothing internal.
        bad = [
            ("/api/v1/query" + q(position="3,3,3/3,3,3,3/0,0/A"), "A pits"),
            ("/api/v1/query" + q(position="3,3,3,3/3,3,3,3/0,0/C"), "side to move"),
            ("/api/v1/query" + q(pits=4, seeds=3, moves="A2 A9"), "ply 2"),
            ("/api/v1/query" + q(pits=4, seeds=3, moves="A2 A4 A1"), "ply 3"),
            ("/api/v1/query" + q(pits=4, seeds=3, rule="nope"), "unknown rule"),
            ("/api/v1/query" + q(pits=9, seeds=3), "parameter 'pits' must be"),
            ("/api/v1/query" + q(pits="x", seeds=3), "pits"),
            ("/api/v1/query" + q(pits=4), "seeds"),
            ("/api/v1/query", "which position"),
            ("/api/v1/query" + q(pits=4, seeds=3, tt_mb=9999), "unknown parameter"),
            ("/api/v1/query?pits=4&seeds=3&rule=standard&rule=empty-capture", "twice"),
            ("/api/v1/query" + q(pits=4, seeds=3, moves="A1 " * 1400), "longer than"),
            ("/api/v1/query" + q(position="3,3,3,3/3,3,3,3/0,0/A" + "1" * 300), "longer than"),
            ("/api/v1/query?pits=4&seeds=3&moves=A1%00", "printable"),
            ("/api/v1/query?pits=4&seeds=3&moves=A1%C3%A9", "printable"),
            ("/api/v1/annotate" + q(pits=3, seeds=3), "no moves"),
            ("/api/v1/pie" + q(position="3,3,3/3,3,3/0,0/B"), "A must be to move"),
            ("/api/v1/move" + q(pits=3, seeds=3, level="godlike"), "unknown level"),
        ]
        for path, needle in bad:
            status, obj, _ = s.get(path)
            msg = obj.get("error", "")
            check(status == 400 and needle in msg and "\n" not in msg,
                  "400 for %s: %r" % (path[:70], msg[:100]))
        status, obj, _ = s.get("/api/v1/query?moves=" + "A1%20" * 2000 + "&pits=4&seeds=3")
        check(status == 414 and "error" in obj, "a URI past 8 KiB: 414 with a JSON error (%d)" % status)
        status, obj, _ = s.get("/api/v1/nothing")
        check(status == 404 and "error" in obj, "unknown endpoint: 404")
        status, obj, _ = s.get("/nothing.html")
        check(status == 404 and "error" in obj, "unknown path: 404")
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            for path in ("/", "/api/v1/query" + q(pits=4, seeds=3)):
                status, obj, headers = s.get(path, method=method, data=b"x" if method != "DELETE" else None)
                check(status == 405 and headers.get("Allow") == "GET, HEAD",
                      "%s %s: 405 (%d)" % (method, path[:30], status))
        # The page and its files, with a policy that keeps the page on this server.
        with urllib.request.urlopen(s.base + "/", timeout=10) as r:
            html = r.read().decode()
            csp = r.headers.get("Content-Security-Policy", "")
        check("/app.js" in html and "<svg" in html, "GET / serves the page")
        check("default-src 'self'" in csp, "the page may load only from this server (CSP)")
        for asset in ("/app.js", "/style.css"):
            with urllib.request.urlopen(s.base + asset, timeout=10) as r:
                check(r.status == 200 and len(r.read()) > 500, "GET %s" % asset)
    finally:
        s.stop()


def test_queue_and_budget(db):
    # One solver, one place in the queue, 1.5 s a request: Kalah(6,6) from the start is far
    # beyond that budget without a database.
    budget = 1.5
    s = Server("--db", db, "--solvers", "1", "--queue", "1", "--budget-ms", str(int(budget * 1000)),
               "--tt-mb", "64", "--per-client", "8")
    try:
        slow = "/api/v1/query" + q(pits=6, seeds=6)
        pool = concurrent.futures.ThreadPoolExecutor(4)

        def timed_get(path):
            t = time.monotonic()
            status, obj, headers = s.get(path)
            return status, obj, headers, time.monotonic() - t

        # Three at 0.3 s intervals: one searches, one waits, one finds the queue full (the
        # order in which the server sees them is not fixed, so neither is which is which).
        # The wait counts in a request's budget: the waiting one gets the solver when the
        # first stops (200 "unknown" at its own deadline), or, if the first overran its
        # budget past the waiting one's deadline (a sanitizer build's first search), answers
        # 503 "no solver was free within the budget" at that deadline.
        slow_replies = []
        for _ in range(3):
            slow_replies.append(pool.submit(timed_get, slow))
            time.sleep(0.3)
        # A position the database covers does not wait for the busy solver.
        t4 = time.monotonic()
        status, obj, _ = s.get("/api/v1/query" + q(position="2,2,2/2,2,2/0,0/A"))
        check(status == 200 and "value" in obj and time.monotonic() - t4 < 1.0,
              "a database position answers while the solver is busy (%.2f s)" % (time.monotonic() - t4))
        replies = [f.result() for f in slow_replies]
        full = [r for r in replies if r[0] == 503 and "requests are waiting" in r[1].get("error", "")]
        waited = [r for r in replies if r[0] == 503 and "within the budget" in r[1].get("error", "")]
        unknown = [r for r in replies if r[0] == 200]
        check(len(full) == 1 and len(unknown) + len(waited) == 2 and len(unknown) >= 1,
              "one solver, a queue of one, three requests: one searched, one waited, one 503 "
              "(%s)" % [(r[0], r[1].get("error", "")) for r in replies])
        for status, obj, headers, secs in full:
            check(headers.get("Retry-After"), "past the queue: 503 busy with Retry-After (%s)" % obj)
            check(secs < 1.0, "the 503 comes at once (%.2f s)" % secs)
        for status, obj, headers, secs in waited:
            check(headers.get("Retry-After") and budget - 0.1 <= secs < budget + 3.0,
                  "a wait past the budget: 503 at the budget, with Retry-After (%.2f s)" % secs)
        for status, obj, headers, secs in unknown:
            check(obj.get("unknown") is True and "value" not in obj
                  and "budget" in obj.get("reason", ""),
                  "over budget: 200 'not known within the budget' (%s)" % obj)
            check(obj.get("budget_ms") == int(budget * 1000)
                  and obj.get("position") == "6,6,6,6,6,6/6,6,6,6,6,6/0,0/A",
                  "the unknown answer names the position and the budget")
            # The solver checks its stop flag every 65 k nodes: milliseconds in a release
            # build, seconds under TSan on a loaded machine. Not a timing test: the bound
            # only tells a search that stopped from one that ran on (to the client's 60 s).
            check(obj.get("seconds", 99) < budget + 30.0,
                  "the search stopped at the budget (%.2f s of %.1f)" % (obj.get("seconds", 99), budget))
        check(max(r[3] for r in unknown) < 2 * budget + 3.0,
              "the queued request ran after the other, within its own budget (%.2f s)"
              % max(r[3] for r in unknown))
        # The searches have stopped: the server's CPU time stands still.
        time.sleep(0.2)
        c0 = s.cpu_seconds()
        time.sleep(1.0)
        used = s.cpu_seconds() - c0
        check(used < 0.1, "no search runs on after its budget (%.2f s CPU in 1 s)" % used)
        # The stopped solver answers the next request.
        status, obj, _ = s.get("/api/v1/query" + q(pits=4, seeds=3))
        check(status == 200 and obj.get("value") == 6, "the solver answers after a stopped search")
    finally:
        s.stop()


def raw_request(port, text, source="127.0.0.1", timeout=10):
    """Sends `text` as is and returns everything the server sends back until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                  source_address=(source, 0)) as c:
        c.sendall(text.encode("latin-1"))
        out = b""
        try:
            while True:
                chunk = c.recv(65536)
                if not chunk:
                    break
                out += chunk
        except socket.timeout:
            pass
        return out.decode("latin-1")


def status_of(reply):
    return int(reply.split(" ", 2)[1]) if reply.startswith("HTTP/1.1 ") else None


def test_hardening(db):
    slow = "/api/v1/query" + q(pits=6, seeds=6)
    covered = "/api/v1/query" + q(position="2,2,2/2,2,2/0,0/A")
    s = Server("--db", db, "--solvers", "1", "--queue", "2", "--budget-ms", "60000",
               "--tt-mb", "64", "--per-client", "1", quiet=False)
    try:
        # A second server on the same port does not start.
        r = subprocess.run([KALAH, "serve", "--port", str(s.port), "--quiet"], cwd=WORK,
                           capture_output=True, text=True, timeout=30)
        check(r.returncode != 0 and "cannot listen" in r.stderr,
              "a taken port is an error (exit %d, %r)" % (r.returncode, r.stderr.strip()))

        # One search from 127.0.0.1 in flight: a second request from there is 429, one
        # from another address is answered.
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
        conn.request("GET", slow)
        # The slow request is in flight once the server says it searches (/api/v1/load,
        # outside --per-client); no time limit here: ctest's timeout is the bound.
        while s.get("/api/v1/load")[1].get("searching") != 1:
            time.sleep(0.05)
        status, obj, headers = s.get(covered)
        check(status == 429 and "too many" in obj.get("error", "") and headers.get("Retry-After"),
              "a second request of one client in flight: 429 (%d %s)" % (status, obj))
        other = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10,
                                           source_address=("127.0.0.2", 0))
        other.request("GET", covered)
        reply = other.getresponse()
        check(reply.status == 200 and "value" in json.loads(reply.read()),
              "another address is answered meanwhile (%d)" % reply.status)
        other.close()

        # The client of the search goes away: its search stops, not at its 60 s budget.
        c0 = s.cpu_seconds()
        conn.close()
        time.sleep(1.0)
        c1 = s.cpu_seconds()
        time.sleep(1.0)
        used = s.cpu_seconds() - c1
        check(used < 0.1, "a disconnected client's search stops (%.2f s CPU in the 2nd second; "
              "%.2f in the first)" % (used, c1 - c0))
        status, obj, _ = s.get("/api/v1/query" + q(pits=4, seeds=3))
        check(status == 200 and obj.get("value") == 6, "the solver is free after the disconnect")

        # Caps on what a request may ask.
        many = "".join("X-H%d: 1\r\n" % i for i in range(100))
        reply = raw_request(s.port, "GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\n%sConnection: close\r\n\r\n" % many)
        check(status_of(reply) == 431, "100 headers: 431 (%s)" % reply[:40])
        reply = raw_request(s.port, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=0-3\r\n"
                            "Connection: close\r\n\r\n" % covered)
        check(status_of(reply) == 416, "Range on the API: 416 (%s)" % reply[:40])
        reply = raw_request(s.port, "GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=0-,0-,0-\r\n"
                            "Connection: close\r\n\r\n")
        check(status_of(reply) == 416 and len(reply) < 2000,
              "three ranges: 416, a short answer (%d bytes)" % len(reply))
        reply = raw_request(s.port, "GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=0-9\r\n"
                            "Connection: close\r\n\r\n")
        check(status_of(reply) == 206, "one range on a file: 206 (%s)" % reply[:40])

        # A path cannot forge a line of the log.
        s.get("/no/such%0Aforged%0D%1B")
    finally:
        s.stop()
    # The log is a JSON object a line (docs/serve.md, "Log"): the target as sent, %0A and all.
    forged = [l for l in s.log.splitlines() if "forged" in l]
    check(not any(line.startswith("forged") for line in s.log.splitlines()) and len(forged) == 1
          and json.loads(forged[0])["target"] == "/no/such%0Aforged%0D%1B",
          "a %%0A in a path is logged escaped (%r)" % [l for l in s.log.splitlines() if "forged" in l])


def main():
    db = os.path.join(WORK, "db")
    # One OpenMP thread: a tiny database, and TSan cannot follow libgomp (tests/suites.cmake).
    r = subprocess.run([KALAH, "build-db", "--pits", "3", "--max-seeds", "12", "--db", db, "--quiet"],
                       cwd=WORK, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if r.returncode != 0:
        raise SystemExit("build-db failed: " + r.stderr)
    test_same_as_cli(db)
    test_queue_and_budget(db)
    test_hardening(db)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
