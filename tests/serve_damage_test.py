#!/usr/bin/env python3
"""`kalah serve` over a database whose mapped twin is truncated under it (ctest: serve-damage).

Builds Kalah(3) layers 0..8 with their packed twins (so the server maps them), starts the
server on a free loopback port and, over HTTP only:
  - values a position of 8 seeds in pits and one of 5 (200, from the database);
  - truncates the twin of layer 8 to nothing (what a build-db replacing a stale twin in
    place would do to a running server);
  - the 8-seed position is then the documented 500 {"error": "internal error"}, with one
    line on the server's stderr naming the twin, never a dead server (SIGBUS);
  - the 5-seed position (layers below 8 only) is still answered, with the same value, as
    is a board of other pits (no database), before and after a second try at layer 8.

usage: serve_damage_test.py KALAH_BINARY
"""
import atexit
import glob
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

KALAH = os.path.abspath(sys.argv[1])
WORK = tempfile.mkdtemp(prefix="kalah_serve_damage_")
atexit.register(shutil.rmtree, WORK, ignore_errors=True)
failures = []


def check(cond, what):
    print("ok  " if cond else "FAIL", what)
    if not cond:
        failures.append(what)
    return cond


def get(base, path):
    try:
        with urllib.request.urlopen(base + path, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        body = e.read()
        try:
            return e.code, json.loads(body)
        except ValueError:
            return e.code, {"raw": body.decode("latin-1")}
    except (urllib.error.URLError, ConnectionError, http.client.HTTPException) as e:
        return None, {"no answer": str(e)}  # the server is gone


def query(base, position):
    return get(base, "/api/v1/query?" + urllib.parse.urlencode({"position": position}))


def main():
    db = os.path.join(WORK, "db")
    r = subprocess.run([KALAH, "build-db", "--pits", "3", "--max-seeds", "8", "--db", db,
                        "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("build-db failed: " + r.stderr)
    twins = glob.glob(os.path.join(db, "*-s8.kpk"))
    if len(twins) != 1:
        raise SystemExit("no twin of layer 8 in %s: %s" % (db, os.listdir(db)))
    twin = twins[0]

    err_path = os.path.join(WORK, "serve.err")
    with open(err_path, "w") as err:
        proc = subprocess.Popen([KALAH, "serve", "--port", "0", "--quiet", "--db", db,
                                 "--budget-ms", "20000"],
                                cwd=WORK, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        line = proc.stdout.readline()
        if "listening on http://" not in line:
            raise SystemExit("serve did not start: %r" % line)
        base = line.split("listening on ")[1].strip().rstrip("/")

        eight = "2,1,1/1,2,1/0,0/A"  # 8 seeds in pits: layer 8
        five = "1,1,0/1,1,1/3,2/A"   # 5 seeds in pits: layers 0..5 only
        other = "1,1,1,1/1,1,1,1/0,0/A"  # 4 pits: no database
        status, before8 = query(base, eight)
        check(status == 200 and "value" in before8, "layer 8 answered before the cut: %s" % before8)
        status, before5 = query(base, five)
        check(status == 200 and "value" in before5, "layer 5 answered before the cut: %s" % before5)

        os.truncate(twin, 0)
        for attempt in (1, 2):
            status, obj = query(base, eight)
            check(status == 500 and obj == {"error": "internal error"},
                  "try %d at layer 8 after the cut: the documented 500 (%s %s)" % (attempt, status, obj))
            check(proc.poll() is None, "try %d: the server is still running" % attempt)
            status, obj = query(base, five)
            check(status == 200 and obj.get("value") == before5.get("value"),
                  "try %d: layer 5 still answered, same value (%s %s)" % (attempt, status, obj))
            status, obj = query(base, other)
            check(status == 200 and "value" in obj,
                  "try %d: a board without a database still answered (%s)" % (attempt, status))
    finally:
        proc.terminate()
        try:
            code = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = "killed"
    check(code == 0, "the server shut down cleanly (exit %s)" % code)
    with open(err_path) as f:
        lines = f.read().splitlines()
    named = [l for l in lines if os.path.basename(twin) in l]
    check(len(named) == 2 and all("truncated while mapped" in l for l in named),
          "one stderr line naming the twin per failed request: %s" % named)
    if failures:
        print("%d failed" % len(failures))
        sys.exit(1)
    print("all passed")


main()
