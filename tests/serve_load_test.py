#!/usr/bin/env python3
"""Load test of `kalah serve` on loopback (ctest: serve-load, release builds only, run
alone: it measures latency).

With the server's default options (and a small database, a 2 s budget), during each attack
a database-covered query, asked over and over from its own address, answers in < 1 s at
p99; within the budget + 1 s after the attack ends the server is idle (CPU) and its RSS is
within 20% of where it started. The attacks, each from many loopback addresses
(127.0.0.2, ...) so that the per-client caps alone cannot refuse them:
  (a) 300 slowloris connections, each sending a header line a second and never the end
      of its head, connecting again when the server cuts it off;
  (b) 200 concurrent hard queries (Kalah(6,6) from the start, far past any budget), each
      client giving up after 3 s and asking again;
  (c) 32 clients asking /app.js with 64 overlapping ranges, again and again.
Then the attacks of 2026-12-03, each on a server of its own (not --quiet: its JSON log is
read), each a few seconds long with a canary: a query the opening book answers
(Kalah(6,4)'s start), asked every ~150 ms from 127.0.0.200, each of which must be answered
200. Latency is measured and printed, never asserted; the bounds below are liveness bounds
(an answer at all), far above what the server takes:
  (1) idle lockout: with the default connection caps (512 in all, 32 an address), 16
      addresses (127.0.1.1..16) each open 32 idle connections and open again each one the
      server closes; then the same from 64 addresses;
  (2) one client holding streams: client A holds two /api/v1/analysis streams of
      Kalah(6,6) (--budget-ms 500); clients B and C ask Kalah(6,5) again and again: each
      request is answered (200 "unknown", or 503) within 20 s;
  (3) a stream closed with FIN: an analysis stream under way (its first event read), its
      client shuts down its sending side (shutdown SHUT_WR) and keeps reading:
      /api/v1/load shows no search within 10 s (the stream budget is 60 s), the log has
      the stream with 499; the same for a FIN before the stream's first event (the
      server knows the answer is a stream once its handler asks whether events are
      wanted, before its search);
  (4) an HTTP/1.0 client leaving: `GET /api/v1/query?pits=6&seeds=6 HTTP/1.0` searching,
      then SHUT_WR: as (3) (the request's budget is 60 s).
The stop times of (3) and (4) (the FIN to /api/v1/load's searching 0) are printed.
Then the connection-state attacks (a body never sent, answers never read, refusals
lingering), each on a server of its own with default options, each connection opened again as soon as the server closes it, the canary as above
for SHARE_SECONDS once the server holds 512 of them; each asserts the canary's share
served (at least 95% of its queries answered 200), not its latency:
  (5) a body never sent: 16 addresses x 32 connections, 250 opened a second, each a
      complete head announcing `Content-Length: 1000` and then nothing;
  (6) answers never read: 64 addresses x 32 connections, 250 opened a second (the
      issue's script opened 100), each with a 2 KB receive buffer, 80 pipelined
      `GET /app.js` sent and nothing ever read (a burst of all 2,048 at once is another
      attack, on the CPU: results/serve.md);
  (7) refusals lingering: 16 addresses x 32 connections, opened again as fast as they
      go, each a request the server refuses (PUT: 405), its answer read, and the
      connection held open after the server's FIN (a byte sent every 0.1 s, which the
      lingering server drops) until the server resets it.
Then the solver's share (default options, a server of its own):
  (8) a one-request client beside a flood of hard searches: 64 addresses x 2 clients ask
      Kalah(6,6) from the start over and over (each answer, 503 at once mostly, asked
      again at once); a client of its own asks Kalah(6,5) (a search past the budget:
      200 "unknown") ONE_SHOT_TRIES times, one at a time: asserts that at least
      ONE_SHOT_SHARE of its tries got the solver (200, not 503), and the canary's share
      as in (5)-(7); the flood's 503s are counted and printed. Before the queue's places went by turn (serve/turns.h), every
      try was 503.
Scenarios can be picked: KALAH_LOAD_ONLY=8 (a comma-separated list of numbers, "a" for
(a)-(c)) runs those alone.
The whole test stops by itself within a few minutes (an alarm ends it as a failure).

usage: serve_load_test.py KALAH_BINARY [more `kalah serve` options]
"""
import atexit
import collections
import errno
import http.client
import json
import math
import os
import resource
import select
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

KALAH = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="kalah_serve_load_")
atexit.register(shutil.rmtree, WORK, ignore_errors=True)
BUDGET = 2.0
COVERED = "/api/v1/query?" + urllib.parse.urlencode({"position": "3,2,1/1,2,3/0,0/A"})
HARD = "/api/v1/query?pits=6&seeds=6"
SAMPLES = 150
CANARY = "/api/v1/query?pits=6&seeds=4"  # the built-in opening book's: no search
CANARY_ADDRESS = "127.0.0.200"
LOAD_ADDRESS = "127.0.0.201"  # asks /api/v1/load
STREAM = "/api/v1/analysis?pits=6&seeds=6"
# A stream whose first event comes within about a second and whose search then runs far
# past the liveness bound of (3) (over 30 s alone on the 2-core machine).
STREAM_EVENTS = "/api/v1/analysis?" + urllib.parse.urlencode(
    {"position": "4,4,4,4,3,3/4,4,4,4,3,3/0,0/A"})
HARD5 = "/api/v1/query?pits=6&seeds=5"
SCENARIO_SECONDS = 4.0
SHARE_SECONDS = 6.0  # the canary's time in (5)-(7): about 40 queries
SHARE = 0.95         # the least share of the canary's queries served in (5)-(7)
ONE_SHOT_TRIES = 6    # (8): the one-request client's tries, each about a budget (5 s) long
ONE_SHOT_SHARE = 0.6  # (8): "most tries" get the solver
ONLY = set(filter(None, os.environ.get("KALAH_LOAD_ONLY", "").split(",")))
failures = []
figures = []  # (scenario, what) printed again at the end


def check(cond, what):
    print(("ok  " if cond else "FAIL"), what)
    if not cond:
        failures.append(what)


def proc_stat(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    with open("/proc/%d/status" % pid) as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    return cpu, rss


def get(port, path, source="127.0.0.1", timeout=30):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0))
    try:
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        return r.status
    finally:
        c.close()


def attacker_address(i):
    return "127.0.%d.%d" % (1 + i // 250, 2 + i % 250)


def hard_queries(port, i, stop):
    while not stop.is_set():
        try:
            get(port, HARD, attacker_address(i), timeout=3)
        except (OSError, http.client.HTTPException):
            pass


def multi_range(port, i, stop):
    ranges = ",".join("0-" for _ in range(64))
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5,
                                          source_address=(attacker_address(i), 0)) as c:
                c.sendall(("GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=%s\r\n\r\n"
                           % ranges).encode())
                c.recv(65536)
        except OSError:
            pass


def slowloris(port, i, stop):
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5,
                                          source_address=(attacker_address(i), 0)) as c:
                c.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                while not stop.wait(1.0):
                    c.sendall(b"X-a: b\r\n")
        except OSError:
            stop.wait(0.1)


def attack(port, pid, name, target, clients, cpu_rss0):
    stop = threading.Event()
    threads = [threading.Thread(target=target, args=(port, i, stop), daemon=True)
               for i in range(clients)]
    for t in threads:
        t.start()
    time.sleep(1.0)  # the attack under way
    latencies, errors = [], []
    for _ in range(SAMPLES):
        t0 = time.monotonic()
        try:
            status = get(port, COVERED, timeout=10)
            if status != 200:
                errors.append(status)
        except (OSError, http.client.HTTPException) as e:
            errors.append(repr(e))
        latencies.append(time.monotonic() - t0)
    stop.set()
    t_end = time.monotonic()
    for t in threads:
        t.join(10)
    latencies.sort()
    p99 = latencies[math.ceil(0.99 * len(latencies)) - 1]
    print("   %s: %d covered queries, median %.1f ms, p99 %.1f ms, max %.1f ms"
          % (name, len(latencies), 1000 * latencies[len(latencies) // 2], 1000 * p99,
             1000 * latencies[-1]))
    check(not errors, "%s: every covered query answered 200 (%s)" % (name, errors[:5]))
    check(p99 < 1.0, "%s: covered query p99 %.3f s < 1 s" % (name, p99))
    # Idle within the budget + 1 s of the attack's end: CPU still over the next 0.5 s.
    time.sleep(max(0.0, t_end + BUDGET + 1.0 - time.monotonic()))
    cpu0, _ = proc_stat(pid)
    time.sleep(0.5)
    cpu1, rss = proc_stat(pid)
    print("   %s: after, %.2f s CPU in 0.5 s, RSS %d KiB (start %d KiB)"
          % (name, cpu1 - cpu0, rss, cpu_rss0[1]))
    check(cpu1 - cpu0 < 0.1, "%s: idle %.0f s after the attack (%.2f s CPU in 0.5 s)"
          % (name, BUDGET + 1, cpu1 - cpu0))
    check(rss <= 1.2 * cpu_rss0[1], "%s: RSS %d KiB within 20%% of %d KiB"
          % (name, rss, cpu_rss0[1]))


def percentile(sorted_values, q):
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


class Server:
    """A `kalah serve` of its own, its JSON log (stderr) read as it comes; or, log_file,
    written to a file and read when asked (a flood's log is not read while it runs, so
    that the reader cannot fall behind and hold the server up on a full pipe)."""

    def __init__(self, db, options, log_file=None):
        self.log_file = log_file
        self.proc = subprocess.Popen(
            [KALAH, "serve", "--port", "0", "--db", db, "--tt-mb", "64", *options,
             *sys.argv[2:]],
            cwd=WORK, stdout=subprocess.PIPE,
            stderr=open(log_file, "w") if log_file else subprocess.PIPE, text=True)
        SERVER.append(self.proc)
        self.log = []  # the JSON objects of the log, in order
        self.reader = threading.Thread(target=self._read_log, daemon=True)
        if not log_file:
            self.reader.start()
        line = self.proc.stdout.readline()
        if "listening on http://" not in line:
            self.proc.kill()
            raise SystemExit("serve did not start: %r" % line)
        self.port = int(line.strip().rstrip("/").rsplit(":", 1)[1])

    def _read_log(self):
        for line in self.proc.stderr:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # the server's own messages ("kalah serve: ...")
            if isinstance(entry, dict):
                self.log.append(entry)

    def log_line(self, client, target_prefix, timeout=5.0):
        """The log's line for client's request to target_prefix (waits up to timeout)."""
        deadline = time.monotonic() + timeout
        while True:
            for e in list(self.log):
                if e.get("client") == client and str(e.get("target", "")).startswith(target_prefix):
                    return e
            if time.monotonic() > deadline:
                return None
            time.sleep(0.02)

    def events(self, event):
        if self.log_file:
            with open(self.log_file) as f:
                return sum(1 for line in f if '"event": "%s"' % event in line)
        return sum(1 for e in list(self.log) if e.get("event") == event)

    def load(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10,
                                       source_address=(LOAD_ADDRESS, 0))
        try:
            c.request("GET", "/api/v1/load")
            r = c.getresponse()
            return json.loads(r.read())
        finally:
            c.close()

    def wait_load(self, cond, timeout):
        """Polls /api/v1/load until cond(load) holds; the seconds it took, or None."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            try:
                if cond(self.load()):
                    return time.monotonic() - t0
            except (OSError, http.client.HTTPException, ValueError):
                pass
            time.sleep(0.001)
        return None

    def stop(self, name):
        self.proc.terminate()
        try:
            code = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = "killed"
        if not self.log_file:
            self.reader.join(5)
        check(code == 0, "%s: server stops cleanly (exit %s)" % (name, code))


class Canary:
    """The book-answered query every ~150 ms from its own address while a scenario runs."""

    def __init__(self, port):
        self.port = port
        self.stop_event = threading.Event()
        self.latencies, self.errors = [], []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop_event.is_set():
            t0 = time.monotonic()
            try:
                status = get(self.port, CANARY, CANARY_ADDRESS, timeout=10)
                if status != 200:
                    self.errors.append(status)
            except (OSError, http.client.HTTPException) as e:
                self.errors.append(repr(e))
            self.latencies.append(time.monotonic() - t0)
            self.stop_event.wait(0.15)

    def finish_share(self, name):
        """Stops; checks that at least SHARE of the canary's queries were answered 200."""
        self.stop_event.set()
        self.thread.join(15)
        lat = sorted(self.latencies)
        served = len(lat) - len(self.errors)
        what = "canary %d of %d queries served (%.0f%%)" % (
            served, len(lat), 100.0 * served / max(1, len(lat)))
        if lat:
            what += ": p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (
                1000 * percentile(lat, 0.5), 1000 * percentile(lat, 0.99), 1000 * lat[-1])
        print("   %s: %s" % (name, what))
        figures.append((name, what))
        check(len(lat) >= 5 and served >= SHARE * len(lat),
              "%s: at least %.0f%% of the canary's queries answered 200 (%d of %d; not: %s)"
              % (name, 100 * SHARE, served, len(lat), self.errors[:3]))

    def finish(self, name):
        self.stop_event.set()
        self.thread.join(15)
        lat = sorted(self.latencies)
        if lat:
            what = ("canary %d queries: p50 %.1f ms, p99 %.1f ms, max %.1f ms"
                    % (len(lat), 1000 * percentile(lat, 0.5), 1000 * percentile(lat, 0.99),
                       1000 * lat[-1]))
        else:
            what = "canary: no query"
        print("   %s: %s" % (name, what))
        figures.append((name, what))
        check(len(lat) >= 5 and not self.errors,
              "%s: every canary query answered 200 (%d queries, %d not: %s)"
              % (name, len(lat), len(self.errors), self.errors[:3]))


def idle_flood(port, addresses, per_address, stop, stats):
    """per_address idle connections from each address, each opened again once closed."""
    sel = selectors.DefaultSelector()
    retry = []

    def open_one(addr):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.bind((addr, 0))
            err = s.connect_ex(("127.0.0.1", port))
            if err not in (0, errno.EINPROGRESS):
                raise OSError(err, os.strerror(err))
        except OSError:
            s.close()
            retry.append(addr)
            return
        sel.register(s, selectors.EVENT_READ, addr)
        stats["opened"] += 1

    for addr in addresses:
        for _ in range(per_address):
            open_one(addr)
    stats["ready"].set()
    last_retry = time.monotonic()
    while not stop.is_set():
        for key, _ in sel.select(timeout=0.05):
            try:
                data = key.fileobj.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if data:
                continue
            sel.unregister(key.fileobj)  # closed by the server: open another
            key.fileobj.close()
            stats["closed"] += 1
            open_one(key.data)
        if retry and time.monotonic() - last_retry > 0.05:
            last_retry = time.monotonic()
            pending, retry[:] = retry[:], []
            for addr in pending:
                open_one(addr)
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    sel.close()


def connection_flood(port, addresses, per_address, payload, mode, rate, stop, stats):
    """per_address connections from each address, each sending `payload` at once and
    opened again as soon as the server closes (or resets) it; at most `rate` connections
    opened a second (None: as fast as they go). mode "never_read": a 2 KB receive buffer,
    and what the server sends is never read (a close is seen only when it gets through,
    POLLRDHUP); "read": what it sends is read and dropped, its FIN is its close; "hold": as
    "read", but after the server's FIN the connection is held open, a byte sent every
    0.1 s, until the server resets it (its linger over). stats["ready"] is set once as many
    are open as the server's default cap (512), or all are. Runs until stop."""
    never_read = mode == "never_read"
    held = {}  # fd -> when it last sent a byte (mode "hold", after the server's FIN)
    poller = select.poll()
    conns = {}  # fd -> [socket, address, bytes of the payload sent]
    to_open = collections.deque(addr for addr in addresses for _ in range(per_address))
    closed_mask = select.POLLHUP | select.POLLERR | select.POLLRDHUP
    full = min(512, len(to_open))

    def open_one(addr):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            if never_read:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
            s.bind((addr, 0))
            err = s.connect_ex(("127.0.0.1", port))
            if err not in (0, errno.EINPROGRESS):
                raise OSError(err, os.strerror(err))
        except OSError:
            s.close()
            to_open.append(addr)  # tried again in turn
            return
        # The payload at once, before the server can accept (a loopback connect completes
        # within the call): the connection is never seen waiting for its request.
        sent = 0
        try:
            sent = s.send(payload)
        except OSError:
            pass  # not connected yet: sent when it is (POLLOUT)
        conns[s.fileno()] = [s, addr, sent]
        poller.register(s, (0 if sent == len(payload) else select.POLLOUT) | closed_mask |
                        (0 if never_read else select.POLLIN))
        stats["opened"] += 1
        if stats["opened"] >= full:
            stats["ready"].set()

    def closed(fd):
        held.pop(fd, None)
        s, addr, _ = conns.pop(fd)
        poller.unregister(fd)
        s.close()
        stats["closed"] += 1
        to_open.append(addr)

    t0 = time.monotonic()
    while not stop.is_set():
        # Open what the rate allows so far (a bounded number a pass).
        allowed = len(to_open) if rate is None else int((time.monotonic() - t0) * rate) - stats["opened"]
        for _ in range(min(allowed, len(to_open), 256)):
            open_one(to_open.popleft())
        for fd, ev in poller.poll(0 if to_open else 50):
            if fd not in conns:
                continue
            s = conns[fd][0]
            if ev & select.POLLIN and not never_read:
                try:
                    if s.recv(65536):
                        continue
                except BlockingIOError:
                    continue
                except OSError:
                    closed(fd)  # reset by the server
                    continue
                if mode == "hold" and not ev & (select.POLLERR | select.POLLHUP):
                    held[fd] = 0.0  # the server's FIN: held open (POLLERR, POLLHUP only)
                    poller.modify(fd, 0)
                else:
                    closed(fd)  # closed by the server
                continue
            if ev & (select.POLLERR | select.POLLHUP) or (ev & closed_mask and fd not in held):
                closed(fd)
                continue
            if ev & select.POLLOUT and conns[fd][2] < len(payload):
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    closed(fd)
                    continue
                try:
                    conns[fd][2] += s.send(payload[conns[fd][2]:])
                except BlockingIOError:
                    continue
                except OSError:
                    closed(fd)
                    continue
                if conns[fd][2] == len(payload):
                    poller.modify(fd, closed_mask | (0 if never_read else select.POLLIN))
        now = time.monotonic()
        for fd in [fd for fd, t in held.items() if now - t > 0.1]:
            try:
                conns[fd][0].send(b"x")  # dropped by a lingering server; reset once closed
                held[fd] = now
            except OSError:
                closed(fd)
        if to_open and rate is not None:
            time.sleep(0.005)
    for s, _, _ in conns.values():
        s.close()


def scenario_share(db, name, n_addresses, payload, mode, rate):
    """A connection flood (connection_flood) from n_addresses x 32 beside the canary: at
    least SHARE of the canary's queries served."""
    server = Server(db, [], os.path.join(WORK, "share.log"))  # default options
    try:
        stop = threading.Event()
        stats = {"opened": 0, "closed": 0, "ready": threading.Event()}
        addresses = ["127.0.%d.%d" % (6 + i // 250, 1 + i % 250) for i in range(n_addresses)]
        flood = threading.Thread(target=connection_flood,
                                 args=(server.port, addresses, 32, payload, mode, rate,
                                       stop, stats), daemon=True)
        flood.start()
        stats["ready"].wait(30)
        time.sleep(1.0)  # the server holds them
        canary = Canary(server.port)
        time.sleep(SHARE_SECONDS)
        canary.finish_share(name)
        stop.set()
        flood.join(15)
        print("   %s: %d connections opened, %d closed by the server; log: %d evicted, "
              "%d refused, %d timed out" % (name, stats["opened"], stats["closed"],
                                            server.events("evicted"), server.events("refused"),
                                            server.events("timeout")))
    finally:
        server.stop(name)


def scenario_idle_lockout(db, n_addresses):
    name = "(1) idle lockout, %d addresses x 32" % n_addresses
    server = Server(db, [])  # the default caps: 512 connections, 32 an address
    try:
        stop = threading.Event()
        stats = {"opened": 0, "closed": 0, "ready": threading.Event()}
        addresses = ["127.0.1.%d" % (1 + i) for i in range(n_addresses)]
        flood = threading.Thread(target=idle_flood, args=(server.port, addresses, 32, stop, stats),
                                 daemon=True)
        flood.start()
        stats["ready"].wait(30)
        time.sleep(0.5)  # the server holds them
        canary = Canary(server.port)
        time.sleep(SCENARIO_SECONDS)
        canary.finish(name)
        stop.set()
        flood.join(15)
        print("   %s: %d connections opened, %d closed by the server; log: %d evicted, "
              "%d refused" % (name, stats["opened"], stats["closed"], server.events("evicted"),
                              server.events("refused")))
    finally:
        server.stop(name)


def hold_stream(port, address, stop, opened):
    """One analysis stream held open (read, never answered) until stop; again if it ends."""
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2,
                                          source_address=(address, 0)) as c:
                c.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % STREAM).encode())
                opened.append(time.monotonic())
                while not stop.is_set():
                    try:
                        if not c.recv(65536):
                            break
                    except socket.timeout:
                        pass
        except OSError:
            stop.wait(0.1)


def hard_client(port, address, deadline, answers):
    """HARD5 again and again until deadline; each answer (status, unknown, seconds)."""
    while time.monotonic() < deadline:
        t0 = time.monotonic()
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=20, source_address=(address, 0))
        try:
            c.request("GET", HARD5)
            r = c.getresponse()
            body = r.read()
            unknown = False
            if r.status == 200:
                unknown = json.loads(body).get("unknown") is True
            answers.append((r.status, unknown, time.monotonic() - t0))
        except (OSError, http.client.HTTPException, ValueError) as e:
            answers.append((repr(e), False, time.monotonic() - t0))
            return  # no answer within 20 s: the scenario fails
        finally:
            c.close()
        time.sleep(0.15)


def scenario_streams_held(db):
    name = "(2) one client holding 2 streams"
    server = Server(db, ["--budget-ms", "500"])
    stop = threading.Event()
    try:
        opened = []
        streams = [threading.Thread(target=hold_stream, args=(server.port, "127.0.3.1", stop, opened),
                                    daemon=True) for _ in range(2)]
        streams[0].start()
        check(server.wait_load(lambda l: l["searching"] >= 1, 10) is not None,
              "%s: A's first stream searching" % name)
        streams[1].start()
        check(server.wait_load(lambda l: l["searching"] + l["waiting"] >= 2, 10) is not None,
              "%s: A's second stream waiting" % name)
        canary = Canary(server.port)
        deadline = time.monotonic() + SCENARIO_SECONDS
        answers = {"B": [], "C": []}
        clients = [threading.Thread(target=hard_client,
                                    args=(server.port, addr, deadline, answers[who]), daemon=True)
                   for who, addr in (("B", "127.0.3.2"), ("C", "127.0.3.3"))]
        for t in clients:
            t.start()
        for t in clients:
            t.join(SCENARIO_SECONDS + 25)
        canary.finish(name)
        for who in ("B", "C"):
            got = answers[who]
            bad = [a for a in got if not ((a[0] == 200 and a[1]) or a[0] == 503)]
            secs = sorted(a[2] for a in got)
            what = ("%s: %d hard queries, %d x 503, %d x 200 unknown, max %.2f s"
                    % (who, len(got), sum(1 for a in got if a[0] == 503),
                       sum(1 for a in got if a[0] == 200), secs[-1] if secs else 0))
            print("   %s: %s" % (name, what))
            figures.append((name, what))
            check(got and not bad,
                  "%s: each of %s's hard queries answered (200 unknown or 503) within 20 s (%s)"
                  % (name, who, bad[:3]))
        print("   %s: A opened %d streams" % (name, len(opened)))
    finally:
        stop.set()
        server.stop(name)


def flood_searches(port, address, stop, counts):
    """HARD again and again from address until stop; counts answers by status."""
    while not stop.is_set():
        try:
            status = get(port, HARD, address, timeout=20)
            counts[status] = counts.get(status, 0) + 1
        except (OSError, http.client.HTTPException):
            counts["error"] = counts.get("error", 0) + 1
            stop.wait(0.1)


def scenario_solver_share(db):
    name = "(8) one-request client beside 64 x 2 hard searches"
    server = Server(db, [], os.path.join(WORK, "solver_share.log"))  # default options
    stop = threading.Event()
    try:
        counts = {}
        flood = [threading.Thread(target=flood_searches,
                                  args=(server.port, "127.0.10.%d" % (1 + i // 2), stop, counts),
                                  daemon=True) for i in range(128)]
        for t in flood:
            t.start()
        check(server.wait_load(lambda l: l["searching"] >= 1 and l["waiting"] >= 4, 20) is not None,
              "%s: the flood holds the solver and fills the queue" % name)
        canary = Canary(server.port)
        got = []
        for _ in range(ONE_SHOT_TRIES):
            t0 = time.monotonic()
            c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30,
                                           source_address=("127.0.0.202", 0))
            try:
                c.request("GET", HARD5)
                r = c.getresponse()
                body = r.read()
                obj = json.loads(body)
                got.append((r.status, obj.get("unknown") if r.status == 200 else obj.get("error"),
                            time.monotonic() - t0))
            except (OSError, http.client.HTTPException, ValueError) as e:
                got.append((repr(e), None, time.monotonic() - t0))
            finally:
                c.close()
            time.sleep(0.3)
        canary.finish_share(name)
        served = sum(1 for g in got if g[0] == 200)
        secs = sorted(g[2] for g in got)
        what = ("one-request client %d of %d tries searched (200), statuses %s, %.1f-%.1f s "
                "a try; flood answers %s" % (served, len(got), [g[:2] for g in got], secs[0],
                                             secs[-1], dict(sorted(counts.items(), key=str))))
        print("   %s: %s" % (name, what))
        figures.append((name, what))
        check(served >= ONE_SHOT_SHARE * len(got),
              "%s: at least %.0f%% of the one-request client's tries searched (%d of %d)"
              % (name, 100 * ONE_SHOT_SHARE, served, len(got)))
    finally:
        stop.set()
        server.stop(name)
        for t in flood:
            t.join(25)


def close_reading(sock):
    """Closes sock, waking a thread blocked reading it."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def read_until_closed(sock, got):
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                break
            got.append(data)
    except OSError:
        pass


def wait_for(cond, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.005)
    return False


def fin_before_first_event(server, name):
    """A stream's FIN before its first event: its search stops within 10 s."""
    address = "127.0.4.100"
    with socket.create_connection(("127.0.0.1", server.port), timeout=15,
                                  source_address=(address, 0)) as sock:
        got = []
        reader = threading.Thread(target=read_until_closed, args=(sock, got), daemon=True)
        sock.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % STREAM).encode())
        reader.start()
        if server.wait_load(lambda l: l["searching"] >= 1, 10) is None:
            return
        t0 = time.monotonic()
        sock.shutdown(socket.SHUT_WR)
        stopped = server.wait_load(lambda l: l["searching"] == 0, 10)
        what = ("FIN before the first event: %s"
                % ("stopped after %.1f ms" % (1000 * (time.monotonic() - t0)) if stopped is not None
                   else "still searching 10 s after the FIN, %d bytes read (%r)"
                   % (len(b"".join(got)), b"".join(got)[:40])))
        check(stopped is not None, "%s: a stream's FIN before its first event stops its search"
              % name)
        close_reading(sock)
    print("   %s: %s" % (name, what))
    figures.append((name, what))


def scenario_fin(db, name, options, request, target_prefix, address_base, first_event):
    """request sent, its search under way (first_event: its first event read), then
    SHUT_WR: the search must stop (499)."""
    server = Server(db, options)
    try:
        canary = Canary(server.port)
        t_start = time.monotonic()
        stops = []
        for k in range(3):
            address = "%s.%d" % (address_base, 1 + k)
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=15,
                                            source_address=(address, 0))
            got = []
            reader = threading.Thread(target=read_until_closed, args=(sock, got), daemon=True)
            try:
                sock.sendall(request.encode())
                reader.start()
                searching = server.wait_load(lambda l: l["searching"] >= 1, 10)
                if searching is not None and first_event:
                    searching = wait_for(lambda: b"data:" in b"".join(got), 20) or None
                check(searching is not None, "%s #%d: the search under way%s"
                      % (name, k + 1, " (its first event read)" if first_event else ""))
                if searching is None:
                    break
                t0 = time.monotonic()
                sock.shutdown(socket.SHUT_WR)  # FIN; still reading
                stopped = server.wait_load(lambda l: l["searching"] == 0, 10)
                check(stopped is not None,
                      "%s #%d: no search within 10 s of the FIN (%s)"
                      % (name, k + 1, "%.1f ms" % (1000 * (time.monotonic() - t0))
                         if stopped is not None else "still searching"))
                if stopped is None:
                    break
                stops.append(1000 * (time.monotonic() - t0))
                entry = server.log_line(address, target_prefix)
                check(entry is not None and entry.get("status") == 499,
                      "%s #%d: the log has it with status 499 (%s)" % (name, k + 1, entry))
                reader.join(5)
            finally:
                close_reading(sock)
        time.sleep(max(0.0, t_start + SCENARIO_SECONDS - time.monotonic()))
        canary.finish(name)
        if stops:
            what = "stop after the FIN: %s ms" % ", ".join("%.1f" % s for s in stops)
            print("   %s: %s" % (name, what))
            figures.append((name, what))
        if first_event and server.wait_load(lambda l: l["searching"] == 0, 1) is not None:
            fin_before_first_event(server, name)
    finally:
        server.stop(name)


SERVER = []


def give_up(*_):
    print("FAIL the load test took over 280 s")
    for p in SERVER:
        p.kill()
    shutil.rmtree(WORK, ignore_errors=True)
    sys.stdout.flush()
    os._exit(1)


def attacks_abc(db):
    """(a)-(c) on one server with the 2 s budget."""
    proc = subprocess.Popen([KALAH, "serve", "--port", "0", "--quiet", "--db", db,
                             "--budget-ms", str(int(BUDGET * 1000)), "--tt-mb", "64",
                             *sys.argv[2:]],
                            cwd=WORK, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    SERVER.append(proc)
    try:
        line = proc.stdout.readline()
        if "listening on http://" not in line:
            raise SystemExit("serve did not start: %r" % line)
        port = int(line.strip().rstrip("/").rsplit(":", 1)[1])
        # Warm up: the page, the database, one budget-long search (the solver's table).
        for path in ("/", "/app.js", COVERED):
            get(port, path)
        get(port, HARD, "127.0.0.250")
        start = proc_stat(proc.pid)
        print("   start: RSS %d KiB" % start[1])
        attack(port, proc.pid, "(a) 300 slowloris", slowloris, 300, start)
        attack(port, proc.pid, "(b) 200 hard queries", hard_queries, 200, start)
        attack(port, proc.pid, "(c) 32 multi-range", multi_range, 32, start)
    finally:
        proc.terminate()
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = "killed"
        check(code == 0, "server stops cleanly (exit %s)" % code)


def main():
    # Stops by itself: past 280 s something hangs, and that is a failure.
    signal.signal(signal.SIGALRM, give_up)
    signal.alarm(280)
    # (1) opens 2048 connections at once.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < 8192:
        resource.setrlimit(resource.RLIMIT_NOFILE,
                           (8192 if hard == resource.RLIM_INFINITY else min(8192, hard), hard))
    db = os.path.join(WORK, "db")

    def wanted(n):
        return not ONLY or n in ONLY

    r = subprocess.run([KALAH, "build-db", "--pits", "3", "--max-seeds", "12", "--db", db, "--quiet"],
                       cwd=WORK, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if r.returncode != 0:
        raise SystemExit("build-db failed: " + r.stderr)
    if wanted("a"):
        attacks_abc(db)
    # The attacks of 2026-12-03, each on a server of its own with its log.
    if wanted("1"):
        scenario_idle_lockout(db, 16)
        scenario_idle_lockout(db, 64)
    if wanted("2"):
        scenario_streams_held(db)
    if wanted("3"):
        scenario_fin(db, "(3) stream closed with FIN", ["--stream-budget-ms", "60000"],
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % STREAM_EVENTS,
                     "/api/v1/analysis", "127.0.4", True)
    if wanted("4"):
        scenario_fin(db, "(4) HTTP/1.0 client leaving", ["--budget-ms", "60000"],
                     "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" % HARD, "/api/v1/query",
                     "127.0.5", False)
    if wanted("5"):
        scenario_share(db, "(5) a body never sent, 16 addresses x 32", 16,
                       b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n",
                       "read", 250)
    if wanted("6"):
        scenario_share(db, "(6) answers never read, 64 addresses x 32", 64,
                       b"GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 80, "never_read", 250)
    if wanted("7"):
        scenario_share(db, "(7) refusals lingering, 16 addresses x 32", 16,
                       b"PUT / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "hold", None)
    if wanted("8"):
        scenario_solver_share(db)
    print("   figures:")
    for name, what in figures:
        print("   %s: %s" % (name, what))
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
