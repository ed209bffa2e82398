#!/usr/bin/env python3
"""Browser test of `kalah serve` (ctest: serve-browser): Debian's headless chromium, driven
by Debian's chromedriver and python3-selenium, against the built binary on Kalah(4,3).

Checks that the board matches the URL, that every pit's value equals `kalah query --json`
for the same position, that clicking the best pit plays it (an extra move keeps the side),
that keys, the value graph and the back button restore positions, that a pasted record gives
the CLI's final position, that bad input shows an inline error and a 4xx, that the engine
answers and takeback returns, and that no request leaves the server's own address.

usage: serve_browser_test.py KALAH_BINARY [--screenshots DIR]
  --screenshots DIR: also write DIR/serve-desktop.png and DIR/serve-phone.png (Kalah(6,3)).
Exit 77 (ctest: skipped) only when no browser, driver or selenium is installed.
"""
import atexit
import json
import random
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

KALAH = os.path.abspath(sys.argv[1])
SHOTS = sys.argv[sys.argv.index("--screenshots") + 1] if "--screenshots" in sys.argv else None

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    print("SKIPPED: python3-selenium is not installed (apt-get install python3-selenium)")
    sys.exit(77)
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
if not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)):
    print("SKIPPED: no browser: apt-get install chromium chromium-driver (.ci/run installs them)")
    sys.exit(77)

WORK = tempfile.mkdtemp(prefix="kalah_serve_browser_")
atexit.register(shutil.rmtree, WORK, ignore_errors=True)
START = "3,3,3,3/3,3,3,3/0,0/A"
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def cli(*args):
    quiet = [] if args[0] == "show" else ["--quiet", "--db", os.path.join(WORK, "none")]
    r = subprocess.run([KALAH, *args, "--json", *quiet], cwd=WORK, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("kalah %s: %s" % (" ".join(args), r.stderr))
    return json.loads(r.stdout)


def cli_position(start, moves, rule="standard"):
    return cli("show", "--position", start, "--moves", moves, "--rule", rule)["position"]


def main():
    # A small database (m=4 standard, up to 8 seeds in pits) for the value's source line.
    db = os.path.join(WORK, "db")
    subprocess.run([KALAH, "build-db", "--pits", "4", "--max-seeds", "8", "--db", db, "--quiet"],
                   cwd=WORK, check=True, capture_output=True)
    server = subprocess.Popen([KALAH, "serve", "--port", "0", "--quiet", "--db", db, "--tt-mb", "64"],
                              cwd=WORK, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    if "listening on http://127.0.0.1:" not in line:
        raise SystemExit("serve did not start: %r %s" % (line, server.stderr.read()))
    base = line.split("listening on ")[1].strip().rstrip("/")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1280,900",
                 "--user-data-dir=" + os.path.join(WORK, "profile")):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    try:
        run(driver, base)
        if SHOTS:
            screenshots(driver, base)
    finally:
        driver.quit()
        server.terminate()
        server.wait(timeout=20)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


def wait(driver, cond, what, timeout=30):
    try:
        WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: cond())
        return True
    except Exception:
        return check(False, "timed out waiting: " + what)


def board(driver):
    return driver.find_element(By.ID, "board")


def page_state(driver):
    b = board(driver)
    return b.get_attribute("data-position"), b.get_attribute("data-state")


def wait_ready(driver, position=None):
    def ready():
        pos, st = page_state(driver)
        return st == "ready" and (position is None or pos == position)
    wait(driver, ready, "the board shows %s with its values" % position)


def url_game(driver):
    p = urllib.parse.parse_qs(urllib.parse.urlparse(driver.current_url).query)
    start = p.get("start", [START])[0]
    moves = p.get("moves", [""])[0].split()
    ply = int(p["ply"][0]) if "ply" in p else len(moves)
    return start, moves, ply, p.get("rule", ["standard"])[0]


def check_matches_url(driver, what, quiet=False):
    """The board shows the URL's position, and every pit its CLI value (quiet: print
    failures only)."""
    report = (lambda cond, text: cond or check(cond, text)) if quiet else check
    start, moves, ply, rule = url_game(driver)
    want = cli_position(start, " ".join(moves[:ply]), rule)
    wait_ready(driver, want)
    pos, _ = page_state(driver)
    report(pos == want, "%s: the board matches the URL (%s)" % (what, want))
    seeds = {}
    for g in driver.find_elements(By.CSS_SELECTOR, "#board g.pit"):
        seeds[g.get_attribute("data-pit")] = int(g.get_attribute("data-seeds"))
    rows = want.split("/")
    expect = {"A%d" % (i + 1): int(x) for i, x in enumerate(rows[0].split(","))}
    expect.update({"B%d" % (i + 1): int(x) for i, x in enumerate(rows[1].split(","))})
    report(seeds == expect, "%s: every pit holds the position's seeds" % what)
    page_values = {g.get_attribute("data-move"): int(g.get_attribute("data-value"))
                   for g in driver.find_elements(By.CSS_SELECTOR, "#board g.pit[data-value]")}
    q = cli("query", "--position", want, "--rule", rule)
    cli_values = {m["move"]: m["value"] for m in q["moves"]}
    report(page_values == cli_values,
          "%s: every legal pit's value equals kalah query --json %s" % (what, cli_values))
    badges = driver.find_elements(By.CSS_SELECTOR, "#board g.badge text")
    report(sorted(b.text for b in badges) == sorted(("+%d" % v if v > 0 else str(v)) for v in cli_values.values()),
          "%s: the values are drawn on the pits" % what)
    return want, q


def keys(driver, *k):
    driver.find_element(By.TAG_NAME, "body").send_keys(*k)


def run(driver, base):
    # 1. A game in the URL.
    driver.get(base + "/?" + urllib.parse.urlencode({"start": START, "moves": "A2+ A4"}))
    check_matches_url(driver, "URL with moves")
    status = driver.find_element(By.ID, "status").text
    check("value" in status and "searched" in status, "the status gives the value and its source: %r" % status)

    # 2. Click the best pit at the start: A2+, an extra move, keeps A to move.
    driver.get(base + "/?" + urllib.parse.urlencode({"start": START}))
    pos, q = check_matches_url(driver, "start")
    best_extra = [m for m in q["best"] if m.endswith("+")]
    check(best_extra == ["A2+"], "the start's best move is the extra move A2+")
    driver.find_element(By.CSS_SELECTOR, '#board g.pit[data-pit="A2"] text.seeds').click()
    after, _ = check_matches_url(driver, "after clicking A2")
    check(after == cli_position(START, "A2") and after.endswith("/A"),
          "clicking the best pit plays it and A moves again")
    check(url_game(driver)[1] == ["A2+"], "the URL holds the move in notation")

    # 3. Keys: space = best move, 1..m = sow pit, arrows, Home/End; back restores.
    q = cli("query", "--position", after)
    keys(driver, " ")
    wait_ready(driver, cli_position(START, "A2 " + q["best"][0]))
    check_matches_url(driver, "space played the best move " + q["best"][0])
    two = page_state(driver)[0]
    keys(driver, "1")
    three, _ = check_matches_url(driver, "key 1 sowed B's first pit")
    check(url_game(driver)[1][-1].startswith("B1"), "key 1 played B1")
    keys(driver, Keys.ARROW_LEFT)
    wait_ready(driver, two)
    check_matches_url(driver, "left arrow")
    keys(driver, Keys.HOME)
    wait_ready(driver, START)
    check_matches_url(driver, "Home")
    keys(driver, Keys.END)
    wait_ready(driver, three)
    check_matches_url(driver, "End")
    driver.back()
    wait_ready(driver, START)
    check_matches_url(driver, "back after End")
    driver.back()
    wait_ready(driver, two)
    check_matches_url(driver, "back again")
    driver.forward()
    wait_ready(driver, START)
    check(page_state(driver)[0] == START, "forward")
    # The value graph: click ply 1.
    driver.find_element(By.CSS_SELECTOR, '#graph circle[data-ply="1"]').click()
    wait_ready(driver, after)
    check_matches_url(driver, "a click on the value graph")

    # The source of a value: a position of 4 seeds is in the database.
    driver.get(base + "/?" + urllib.parse.urlencode({"start": "1,0,1,0/0,1,0,1/10,10/A"}))
    check_matches_url(driver, "a database position")
    status = driver.find_element(By.ID, "status").text
    check("from the endgame database" in status, "the status names the database: %r" % status)

    # Edit mode: e, a click on A1 adds a seed, e again starts the game there.
    driver.get(base + "/?" + urllib.parse.urlencode({"start": START}))
    wait_ready(driver, START)
    keys(driver, "e")
    driver.find_element(By.CSS_SELECTOR, '#board g.pit[data-pit="A1"] text.seeds').click()
    keys(driver, "s")
    keys(driver, "e")
    edited = "4,3,3,3/3,3,3,3/0,0/B"
    wait_ready(driver, edited)
    check(url_game(driver)[0] == edited, "edit mode: the edited position is the game's start")
    check_matches_url(driver, "edited position")

    # 4. f flips the board: B's row at the bottom, and back.
    cy = lambda pit: float(driver.find_element(By.CSS_SELECTOR, '#board g.pit[data-pit="%s"] circle' % pit).get_attribute("cy"))
    check(cy("A1") > cy("B1"), "South's row is at the bottom")
    keys(driver, "f")
    check(cy("A1") < cy("B1"), "f flips the board (South's row on top)")
    keys(driver, "f")

    # 5. A pasted record gives the CLI's final position; a bad one an inline error and a 4xx.
    driver.get(base + "/?" + urllib.parse.urlencode({"start": START}))
    wait_ready(driver, START)
    record = "A2+ A4 B2 A1+ A3"
    want = cli_position(START, record)
    box = driver.find_element(By.ID, "paste")
    box.clear()
    box.send_keys("1. " + record)
    driver.find_element(By.CSS_SELECTOR, "#paste-form button").click()
    wait_ready(driver, want)
    check_matches_url(driver, "pasted record")
    check(driver.find_element(By.ID, "paste-error").text == "", "no error for a good record")
    moves_text = [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#moves li")]
    check(len(moves_text) == 5 and moves_text[0].startswith("1.") and "A2+" in moves_text[0],
          "the move list shows the record in notation: %s" % moves_text)
    box.clear()
    box.send_keys("A2+ A4 A1")
    driver.find_element(By.CSS_SELECTOR, "#paste-form button").click()
    err = driver.find_element(By.ID, "paste-error")
    wait(driver, lambda: err.text != "", "an inline error")
    check("400" in err.text and "ply 3" in err.text, "the error is inline, names the ply and the 400: %r" % err.text)
    check(page_state(driver)[0] == want, "a bad record leaves the game as it was")
    box.clear()
    box.send_keys("3,3,3/3,3,3,3/0,0/A")
    driver.find_element(By.CSS_SELECTOR, "#paste-form button").click()
    wait(driver, lambda: "A pits" in err.text, "an inline error for a bad position")
    check("400" in err.text, "a bad position: inline error with its 400: %r" % err.text)

    # 6. Random games to the end under both rules, sown with the keys 1..m: after every
    # move the page's board is the CLI's and every value the CLI's.
    rnd = random.Random(23)
    for rule in ("standard", "empty-capture", "standard", "empty-capture", "standard", "empty-capture"):
        driver.get(base + "/?" + urllib.parse.urlencode({"start": START, "rule": rule}))
        pos, q = check_matches_url(driver, "random game, %s, start" % rule, quiet=True)
        plies = 0
        while q["moves"] and not failures:
            pit = rnd.choice(q["moves"])["move"][1]
            keys(driver, pit)
            plies += 1
            pos, q = check_matches_url(driver, "random game, %s, ply %d" % (rule, plies), quiet=True)
        check(pos.split("/")[0] == "0,0,0,0" or pos.split("/")[1] == "0,0,0,0",
              "random game under %s: %d plies to the end, every board and value the CLI's" % (rule, plies))
        status = driver.find_element(By.ID, "status").text
        check("game over" in status, "the end shows the final score: %r" % status)

    # 6. Against the engine (B): A plays A1, the engine answers with a best move; takeback.
    driver.get(base + "/?" + urllib.parse.urlencode({"start": START}))
    wait_ready(driver, START)
    driver.find_element(By.CSS_SELECTOR, '#engine option[value="B"]').click()
    wait_ready(driver, START)
    check(not driver.find_elements(By.CSS_SELECTOR, "#board g.badge"), "playing the engine hides the values")
    keys(driver, "h")
    check(len(driver.find_elements(By.CSS_SELECTOR, "#board g.badge")) == 4, "h (hint) shows them")
    keys(driver, "4")
    a4 = cli_position(START, "A4")
    wait(driver, lambda: len(url_game(driver)[1]) >= 2 and page_state(driver)[0].endswith("/A"),
         "the engine's reply")
    start, moves, ply, _ = url_game(driver)
    qb = cli("query", "--position", a4)
    check(moves[1] in qb["best"], "the engine played a best move (%s of %s)" % (moves[1], qb["best"]))
    keys(driver, "t")
    wait_ready(driver, START)
    check(url_game(driver)[1] == [], "takeback returns to the person's last turn")
    driver.find_element(By.CSS_SELECTOR, '#engine option[value=""]').click()

    # 7. Every request of the page went to this server, and the bad record's was a 400.
    urls, statuses = [], {}
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
        elif msg["method"] == "Network.responseReceived":
            r = msg["params"]["response"]
            statuses[r["url"]] = r["status"]
    # (chrome:// pages are the browser's own new tab before the first page loads; data:
    # URLs are inline, they reach no address.)
    web = [u for u in urls if not u.startswith(("chrome://", "data:"))]
    foreign = [u for u in web if not u.startswith(base + "/")]
    check(len(web) > 10 and not foreign, "%d requests, none to another address %s" % (len(web), foreign[:3]))
    bad = [s for u, s in statuses.items() if "/api/v1/show" in u and "A1" in u and s == 400]
    check(bool(bad), "the bad record's request was answered 400")
    errors = [e["message"] for e in driver.get_log("browser")
              if e["level"] == "SEVERE" and "status of 400" not in e["message"]
              and "favicon" not in e["message"]]
    check(not errors, "no script errors in the console %s" % errors[:3])


def screenshots(driver, base):
    os.makedirs(SHOTS, exist_ok=True)
    record = "A5 B4+ B5 A1x4 B1x6 A4 B3+ B1 A5 B2"  # A1x4?? turns a win into a loss
    url = base + "/?" + urllib.parse.urlencode({"start": "3,3,3,3,3,3/3,3,3,3,3,3/0,0/A", "moves": record})
    for name, w, h, mobile in (("serve-desktop.png", 1280, 860, False), ("serve-phone.png", 390, 844, True)):
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": w, "height": h, "deviceScaleFactor": 2 if mobile else 1, "mobile": mobile})
        driver.get(url)
        wait_ready(driver)
        # The game's other values, for the graph and the marks.
        wait(driver, lambda: len(driver.find_elements(By.CSS_SELECTOR, "#graph circle")) == 11,
             "the value graph", timeout=120)
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": mobile})
        import base64
        with open(os.path.join(SHOTS, name), "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        print("wrote", os.path.join(SHOTS, name))


if __name__ == "__main__":
    sys.exit(main())
