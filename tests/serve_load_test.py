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
The whole test stops by itself within a few minutes (an alarm ends it as a failure).

usage: serve_load_test.py KALAH_BINARY [more `kalah serve` options]
"""
import atexit
import http.client
import math
import os
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
failures = []


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


SERVER = []


def give_up(*_):
    print("FAIL the load test took over 240 s")
    for p in SERVER:
        p.kill()
    shutil.rmtree(WORK, ignore_errors=True)
    sys.stdout.flush()
    os._exit(1)


def main():
    # Stops by itself: past 240 s something hangs, and that is a failure.
    signal.signal(signal.SIGALRM, give_up)
    signal.alarm(240)
    db = os.path.join(WORK, "db")
    r = subprocess.run([KALAH, "build-db", "--pits", "3", "--max-seeds", "12", "--db", db, "--quiet"],
                       cwd=WORK, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if r.returncode != 0:
        raise SystemExit("build-db failed: " + r.stderr)
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
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
