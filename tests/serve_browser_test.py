#!/usr/bin/env python3
"""Browser test of `kalah serve` (ctest: serve-browser): Debian's headless chromium, driven
by Debian's chromedriver and python3-selenium, against the built binary on Kalah(4,3).

Checks that the board matches the URL, that every pit's value equals `kalah query --json`
for the same position, that clicking the best pit plays it (an extra move keeps the side),
that keys, the value graph and the back button restore positions, that a pasted record gives
the CLI's final position, that bad input shows an inline error and a 4xx, that the engine
answers and takeback returns, and that no request leaves the server's own address. Then
the analysis features: variations (a tree in the URL that a link restores), the copy
buttons (the text and the clipboard), the rule switch failing (the select goes back) and
succeeding, keys after a dropdown and a button, values and marks in the move list, graph
axes, the evaluation bar, one point of view (South's margin) for sign and colour, values
hidden hiding marks, values, bar and graph, the phone layout (375 px: pit labels >= 12 px
on screen, badges inside the board and apart), one API request at a time with
cancellation, the default board (Kalah(6,4)) answered from the built-in opening book (every
value the book's, no node searched), and, on a second server with a 1.5 s budget
(--budget-ms) and no book (--no-book), Kalah(6,4)'s unknown value: a spinner, then the message once, "best move" saying why, and the engine
saying it cannot move and asking again on retry (no stall). Last the analysis stream, on a
third server without a database: Kalah(5,4)'s start shows a proven bound before its exact
value, and leaving a position while its stream runs ends that stream (the server logs the
request as ended and its CPU time stays still).

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
import urllib.request

KALAH = os.path.abspath(sys.argv[1])
SHOTS = sys.argv[sys.argv.index("--screenshots") + 1] if "--screenshots" in sys.argv else None

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select
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
        analysis(driver, base)
        phone(driver, base)
        requests_one_at_a_time(driver, base)
        opening_book(driver, base)
        unknown_within_budget(driver)
        streaming(driver)
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


def read_board(read, tries=40):
    """read() of the board's elements, read again from the start when the board re-rendered
    under it (a stale element): what is returned comes from one rendering."""
    for _ in range(tries - 1):
        try:
            return read()
        except StaleElementReferenceException:
            time.sleep(0.05)
    return read()


def check_matches_url(driver, what, quiet=False):
    """The board shows the URL's position, and every pit its CLI value (quiet: print
    failures only)."""
    report = (lambda cond, text: cond or check(cond, text)) if quiet else check
    start, moves, ply, rule = url_game(driver)
    want = cli_position(start, " ".join(moves[:ply]), rule)
    wait_ready(driver, want)
    pos, _ = page_state(driver)
    report(pos == want, "%s: the board matches the URL (%s)" % (what, want))
    seeds = read_board(lambda: {g.get_attribute("data-pit"): int(g.get_attribute("data-seeds"))
                                for g in driver.find_elements(By.CSS_SELECTOR, "#board g.pit")})
    rows = want.split("/")
    expect = {"A%d" % (i + 1): int(x) for i, x in enumerate(rows[0].split(","))}
    expect.update({"B%d" % (i + 1): int(x) for i, x in enumerate(rows[1].split(","))})
    report(seeds == expect, "%s: every pit holds the position's seeds" % what)
    page_values = read_board(lambda: {
        g.get_attribute("data-move"): int(g.get_attribute("data-value"))
        for g in driver.find_elements(By.CSS_SELECTOR, "#board g.pit[data-value]")})
    q = cli("query", "--position", want, "--rule", rule)
    cli_values = {m["move"]: m["value"] for m in q["moves"]}
    report(page_values == cli_values,
          "%s: every legal pit's value equals kalah query --json %s" % (what, cli_values))
    badges = read_board(lambda: sorted(
        b.text for b in driver.find_elements(By.CSS_SELECTOR, "#board g.badge text")))
    report(badges == sorted(("+%d" % v if v > 0 else str(v)) for v in cli_values.values()),
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


def line_items(driver):
    """The move list: (class, ply, text) of each move, variations included."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#moves li[data-node]')]"
        ".map((li) => [li.className.split(' ')[0], li.dataset.ply, li.dataset.move]);")


def press(driver, *k):
    """Keys to whatever has the focus, as a person types them."""
    ActionChains(driver).send_keys(*k).perform()


def analysis(driver, base):
    # Variations: back one move and play another: a branch, the tree in the URL.
    driver.get(base + "/?" + urllib.parse.urlencode({"start": START, "moves": "A2+ A4"}))
    wait_ready(driver, cli_position(START, "A2 A4"))
    keys(driver, Keys.ARROW_LEFT)
    wait_ready(driver, cli_position(START, "A2"))
    keys(driver, "1")
    varpos = cli_position(START, "A2 A1")
    wait_ready(driver, varpos)
    items = line_items(driver)
    check([c for c, _, _ in items] == ["main", "main", "var"] and items[2][1] == "2",
          "a move off the line starts a variation, the line kept: %s" % items)
    check(url_game(driver)[1][:2] == ["A2+", "A1"], "the URL's line is the variation shown")
    frag = urllib.parse.unquote(urllib.parse.urlparse(driver.current_url).fragment)
    check(frag.startswith("tree=A2+ A4 (A1"), "the URL's hash holds the tree: %r" % frag)
    link = driver.current_url
    driver.get("about:blank")
    driver.get(link)
    wait_ready(driver, varpos)
    check(line_items(driver) == items, "the link restores the tree: %s" % line_items(driver))
    main_a4 = driver.find_element(By.CSS_SELECTOR, '#moves li.main[data-ply="2"]')
    main_a4.click()
    wait_ready(driver, cli_position(START, "A2 A4"))
    check_matches_url(driver, "a click on the main line's move after the variation")
    check(len(line_items(driver)) == 3, "going back to the main line keeps the variation")

    # Copy buttons: the text each would copy, and the clipboard itself.
    try:
        driver.execute_cdp_cmd("Browser.grantPermissions", {
            "origin": base, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    except Exception as e:
        print("note: no clipboard permission (%s)" % str(e)[:80])
    for button, want in (("copy-record", "A2+ A4"), ("copy-position", cli_position(START, "A2 A4")),
                         ("copy-link", driver.current_url)):
        driver.find_element(By.ID, button).click()
        b = driver.find_element(By.ID, button)
        wait(driver, lambda: b.get_attribute("data-copied") is not None, button)
        check(b.get_attribute("data-copied") == want, "%s copies %r" % (button, b.get_attribute("data-copied")))
        clip = driver.execute_async_script(
            "const done = arguments[0]; navigator.clipboard.readText().then(done, (e) => done('ERR ' + e));")
        check(clip == want, "%s: the clipboard holds %r" % (button, clip))
    # The copied record, pasted, gives the same position.
    box = driver.find_element(By.ID, "paste")
    box.clear()
    box.send_keys(driver.find_element(By.ID, "copy-record").get_attribute("data-copied"))
    driver.find_element(By.CSS_SELECTOR, "#paste-form button").click()
    wait_ready(driver, cli_position(START, "A2 A4"))

    # The rule switch: a game that is not legal under empty-capture keeps its rule, and the
    # select goes back; a legal one switches.
    record = "A1 B4 A1 B1 A4 B4"
    driver.get(base + "/?" + urllib.parse.urlencode({"start": START, "moves": record}))
    want = cli_position(START, record)
    wait_ready(driver, want)
    Select(driver.find_element(By.ID, "rule")).select_by_value("empty-capture")
    err = driver.find_element(By.ID, "paste-error")
    wait(driver, lambda: err.text != "", "the failed rule switch's error")
    check("empty-capture" in err.text and "400" in err.text, "the failed switch says why: %r" % err.text)
    check(driver.find_element(By.ID, "rule").get_attribute("value") == "standard",
          "a failed rule switch puts the select back")
    check(url_game(driver)[3] == "standard" and page_state(driver)[0] == want,
          "a failed rule switch leaves the game under its rule")
    driver.get(base + "/?" + urllib.parse.urlencode({"start": START, "moves": "A2+ A4"}))
    wait_ready(driver, cli_position(START, "A2 A4"))
    Select(driver.find_element(By.ID, "rule")).select_by_value("empty-capture")
    wait(driver, lambda: url_game(driver)[3] == "empty-capture", "the rule switch")
    check_matches_url(driver, "after switching to empty-capture")
    check(driver.execute_script("return document.activeElement.tagName") != "SELECT",
          "the rule select gives the focus back")

    # Keys after a dropdown: the level select, then f flips the board and 1 plays B1... .
    Select(driver.find_element(By.ID, "level")).select_by_visible_text("hard")
    cy = lambda pit: float(driver.find_element(By.CSS_SELECTOR, '#board g.pit[data-pit="%s"] circle' % pit).get_attribute("cy"))
    before = cy("A1") > cy("B1")
    press(driver, "f")
    check((cy("A1") > cy("B1")) != before, "f works right after choosing in a dropdown")
    press(driver, "f")
    driver.find_element(By.ID, "flip").click()
    press(driver, " ")
    q = cli("query", "--position", cli_position(START, "A2 A4"), "--rule", "empty-capture")
    wait_ready(driver, cli_position(START, "A2 A4 " + q["best"][0], "empty-capture"))
    driver.find_element(By.ID, "flip").click()

    # One point of view: a badge's sign and colour are South's margin.
    driver.get(base + "/?" + urllib.parse.urlencode({"start": START, "moves": "A2+ A4"}))
    _, q = check_matches_url(driver, "one point of view")
    tones = {g.get_attribute("data-move"): g.find_element(By.CSS_SELECTOR, "g.badge").get_attribute("class")
             for g in driver.find_elements(By.CSS_SELECTOR, "#board g.pit[data-value]")}
    want_tones = {m["move"]: "badge " + ("south" if m["value"] > 0 else "north" if m["value"] < 0 else "draw")
                  for m in q["moves"]}
    check(tones == want_tones, "badges coloured by South's margin, as signed: %s" % tones)
    legend = driver.find_element(By.ID, "legend").text
    check("South's margin" in legend, "the legend names the point of view: %r" % legend)
    bar = driver.find_element(By.ID, "evalbar")
    check(bar.is_displayed() and bar.get_attribute("data-value") == str(q["value"]),
          "the evaluation bar shows the value %s" % bar.get_attribute("data-value"))

    # Values and marks in the move list, axes on the graph; values hidden hides them all.
    record = "A2 A4 B2 A1 A3"
    driver.get(base + "/?" + urllib.parse.urlencode({"start": START, "moves": record}))
    wait(driver, lambda: len(driver.find_elements(By.CSS_SELECTOR, "#graph circle")) == 6,
         "the graph's points")
    moves = driver.execute_script(
        "return [...document.querySelectorAll('#moves li[data-node]')].map((li) => li.textContent);")
    check(moves[4].startswith("5.A3?") and moves[4].endswith("+4") and moves[0].endswith("+6"),
          "the move list shows marks and values (South's margin): %s" % moves)
    labels = sorted(t.text for t in driver.find_elements(By.CSS_SELECTOR, "#graph .axis-label"))
    check(labels == ["South\u2019s margin", "ply"], "the graph's axes are labelled: %s" % labels)
    Select(driver.find_element(By.ID, "engine")).select_by_value("A")
    wait(driver, lambda: not driver.find_elements(By.CSS_SELECTOR, "#graph circle"), "the graph hidden")
    check(not driver.find_elements(By.CSS_SELECTOR, "#moves .mark, #moves .val"),
          "playing the engine hides the marks and values of the move list")
    check(not driver.find_element(By.ID, "evalbar").is_displayed(), "and the evaluation bar")
    Select(driver.find_element(By.ID, "engine")).select_by_value("")


def rect(e):
    return e.rect  # x, y, width, height in CSS pixels


def inside(a, b):
    return (a["x"] >= b["x"] - 0.5 and a["y"] >= b["y"] - 0.5 and
            a["x"] + a["width"] <= b["x"] + b["width"] + 0.5 and a["y"] + a["height"] <= b["y"] + b["height"] + 0.5)


def overlap(a, b):
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"] or
                a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def phone(driver, base):
    """A 375 px wide phone: pit labels of at least 12 px on screen, badges inside the board,
    apart from each other and from the pits."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 375, "height": 812, "deviceScaleFactor": 2, "mobile": True})
    try:
        mid6 = cli_position("3,3,3,3,3,3/3,3,3,3,3,3/0,0/A", "A5 B4 B5 A1 B1 A4 B3 B1 A5 B2")
        for start in (mid6, START):
            driver.get(base + "/?" + urllib.parse.urlencode({"start": start}))
            wait_ready(driver, start)
            width = driver.execute_script("return document.documentElement.scrollWidth")
            check(width <= 375, "phone: the page is no wider than the screen (%s px)" % width)
            sizes = driver.execute_script(
                "const s = document.getElementById('board').getScreenCTM().a;"
                "return [...document.querySelectorAll('#board g.pit text.label')]"
                ".map((t) => parseFloat(getComputedStyle(t).fontSize) * s);")
            check(len(sizes) == 2 * len(start.split("/")[0].split(",")) and min(sizes) >= 12,
                  "phone, %s: pit labels %.1f px at least" % (start, min(sizes)))
            board_box = rect(driver.find_element(By.CSS_SELECTOR, "#board rect.board-bg"))
            badges = [rect(b) for b in driver.find_elements(By.CSS_SELECTOR, "#board g.badge rect")]
            pits = [rect(c) for c in driver.find_elements(By.CSS_SELECTOR, "#board g.pit circle")]
            text = driver.execute_script(
                "const s = document.getElementById('board').getScreenCTM().a;"
                "return Math.min(...[...document.querySelectorAll('#board g.badge text')]"
                ".map((t) => parseFloat(getComputedStyle(t).fontSize) * s));")
            check(badges and all(inside(b, board_box) for b in badges),
                  "phone, %s: %d badges inside the board" % (start, len(badges)))
            check(not any(overlap(a, b) for i, a in enumerate(badges) for b in badges[i + 1:]) and
                  not any(overlap(a, p) for a in badges for p in pits),
                  "phone, %s: badges overlap neither each other nor the pits" % start)
            check(text >= 12, "phone, %s: badge text %.1f px" % (start, text))
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def api_log(driver):
    """The page's API requests from the performance log, in order: (event, id, url)."""
    out = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        p = msg["params"]
        if msg["method"] == "Network.requestWillBeSent" and "/api/v1/" in p["request"]["url"]:
            out.append(("sent", p["requestId"], p["request"]["url"]))
        elif msg["method"] == "Network.eventSourceMessageReceived" and (
                '"event": "value"' in p["data"] or '"event": "unknown"' in p["data"]):
            # The analysis stream's last event: the page closes it there.
            out.append(("done", p["requestId"], ""))
        elif msg["method"] in ("Network.loadingFinished", "Network.loadingFailed"):
            out.append(("failed" if p.get("canceled") else "done", p["requestId"], ""))
    return out


def most_at_once(log):
    """The most API requests open at once. A request the page cancelled is left out: the
    page aborts it before it sends the next, but its event arrives later."""
    cancelled = {rid for ev, rid, _ in log if ev == "failed"}
    open_, most = set(), 0
    for ev, rid, _ in log:
        if rid in cancelled:
            continue
        if ev == "sent":
            open_.add(rid)
            most = max(most, len(open_))
        else:
            open_.discard(rid)
    return most


def requests_one_at_a_time(driver, base):
    """A game's values are asked for one position at a time; leaving a position cancels its
    request."""
    driver.get_log("performance")
    record = "A2 A4 B2 A1 A3 B1 A2 B4"
    driver.get(base + "/?" + urllib.parse.urlencode({"start": START, "moves": record}))
    wait(driver, lambda: len(driver.find_elements(By.CSS_SELECTOR, "#graph circle")) == 9,
         "the game's values")
    log = api_log(driver)
    check(most_at_once(log) == 1, "one API request at a time (%d at most)" % most_at_once(log))


BOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "book",
                    "kalah-6-4-standard.book")


def opening_book(driver, base):
    """The default board, Kalah(6,4), answered from the built-in opening book: the start and
    the position after its best move show every pit's value as the book holds it, and the
    API says no node was searched."""
    book = {}
    with open(BOOK) as f:
        for line in f:
            words = line.split()
            if len(words) == 2 and not line.startswith("#"):
                book[words[0]] = int(words[1])
    start = "4,4,4,4,4,4/4,4,4,4,4,4/0,0/A"
    t0 = time.time()
    driver.get(base + "/")
    wait_ready(driver, start)
    print("Kalah(6,4)'s start ready %.2f s after the page was asked for" % (time.time() - t0))
    for moves in ("", "A3+"):
        pos = cli_position(start, moves) if moves else start
        if moves:
            keys(driver, "3")
            wait_ready(driver, pos)
        page_values = {g.get_attribute("data-move"): int(g.get_attribute("data-value"))
                       for g in driver.find_elements(By.CSS_SELECTOR, "#board g.pit[data-value]")}
        want = {}
        side = pos.rsplit("/", 1)[1]
        for pit in range(1, 7):
            try:
                child = cli_position(pos, "%s%d" % (side, pit))
            except SystemExit:
                continue  # an empty pit
            want[side + str(pit)] = book[child]
        got = {k.rstrip("+#").split("x")[0]: v for k, v in page_values.items()}
        check(got == want, "Kalah(6,4) after '%s': every pit's value is the book's %s" % (moves, want))
        status = driver.find_element(By.ID, "status").text
        check("from the opening book" in status and "endgame database" not in status,
              "Kalah(6,4) after '%s': the status names the opening book: %r" % (moves, status))
        with urllib.request.urlopen(base + "/api/v1/query?" + urllib.parse.urlencode(
                {"position": pos})) as r:
            obj = json.loads(r.read())
        check(obj.get("value") == book[pos] and obj.get("nodes") == 0 and obj.get("source") == "book",
              "Kalah(6,4) after '%s': the API's value is the book's, no node searched (%s, %s, %s)"
              % (moves, obj.get("value"), obj.get("nodes"), obj.get("source")))


def unknown_within_budget(driver):
    """A server with a 1.5 s budget, no database and no opening book (--no-book) cannot
    value Kalah(6,4)'s start."""
    server = subprocess.Popen([KALAH, "serve", "--port", "0", "--quiet", "--budget-ms", "1500",
                               "--stream-budget-ms", "1500", "--tt-mb", "64", "--no-book"], cwd=WORK, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        base = server.stdout.readline().split("listening on ")[1].strip().rstrip("/")
        status = lambda: driver.find_element(By.ID, "status")
        spinning = lambda: bool(driver.find_elements(By.CSS_SELECTOR, "#status .spinner"))
        driver.get_log("performance")
        driver.get(base + "/")
        check(wait(driver, spinning, "a spinner while asking", timeout=10), "a spinner while the server searches")
        # Leaving the position while it is searched cancels its request.
        keys(driver, "1")
        wait(driver, lambda: page_state(driver)[1] == "unknown", "the unknown value after A1", timeout=30)
        keys(driver, Keys.ARROW_LEFT)
        wait(driver, lambda: page_state(driver)[1] == "unknown" and page_state(driver)[0].endswith("/A"),
             "the start's unknown value", timeout=30)
        log = api_log(driver)
        cancelled = [u for ev, rid, _ in log if ev == "failed" for e, r2, u in log if e == "sent" and r2 == rid]
        check(any("4%2C4%2C4%2C4%2C4%2C4%2F4" in u and "%2FA" in u for u in cancelled),
              "moving on cancels the start's request %s" % cancelled[:2])
        check(most_at_once(log) == 1, "still one request at a time")
        text = status().text
        check(text.count("not known within") == 1 and not spinning(),
              "the unknown value: the message once, no spinner: %r" % text)
        check(bool(driver.find_elements(By.ID, "retry")), "a retry button")
        keys(driver, " ")
        note = driver.find_element(By.ID, "note").text if driver.find_elements(By.ID, "note") else ""
        check("not known" in note, "best move says why it does nothing: %r" % note)
        # The engine as North: after A1 it answers, or says it cannot and offers a retry.
        Select(driver.find_element(By.ID, "engine")).select_by_value("B")
        press(driver, "1")
        stuck = lambda: "cannot move" in status().text and bool(driver.find_elements(By.ID, "retry"))
        check(wait(driver, stuck, "the engine's answer", timeout=30),
              "the engine says it cannot move within the budget: %r" % status().text)
        driver.find_element(By.ID, "retry").click()
        check(wait(driver, lambda: "choosing" in status().text, "the engine asked again", timeout=10),
              "retry asks the engine again")
        check(wait(driver, stuck, "the engine's second answer", timeout=30), "and it answers again")
        Select(driver.find_element(By.ID, "engine")).select_by_value("")
    finally:
        server.terminate()
        server.wait(timeout=20)


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def streaming(driver):
    """The analysis stream: bounds shown before the value; moving on ends the stream."""
    import threading
    server = subprocess.Popen([KALAH, "serve", "--port", "0", "--tt-mb", "64", "--no-book"], cwd=WORK,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = []
    threading.Thread(target=lambda: [log.append(l) for l in server.stderr], daemon=True).start()
    # A stream's log line (a JSON object, docs/serve.md "Log") is written when it ends: 200
    # after its last event, 499 when its client went away first.
    def stream_ended(line):
        try:
            entry = json.loads(line)
        except ValueError:
            return False
        return entry.get("target", "").startswith("/api/v1/analysis") and entry.get("status") in (200, 499)
    ended = lambda: sum(stream_ended(l) for l in log)
    try:
        base = server.stdout.readline().split("listening on ")[1].strip().rstrip("/")
        status = lambda: driver.find_element(By.ID, "status").text
        # Every text the status line shows, in order (a page hook of the test's own).
        watch = """window.__status = []; const st = document.getElementById('status');
            new MutationObserver(() => window.__status.push(st.textContent))
                .observe(st, {childList: true, subtree: true, characterData: true});"""
        driver.get(base + "/?" + urllib.parse.urlencode({"start": "4,4,4,4,4/4,4,4,4,4/0,0/A"}))
        driver.execute_script(watch)
        wait(driver, lambda: page_state(driver) == ("4,4,4,4,4/4,4,4,4,4/0,0/A", "ready"),
             "Kalah(5,4)'s value", timeout=180)
        seen = driver.execute_script("return window.__status")
        bounds = [t for t in seen if ">= " in t or "<= " in t]
        final = status()
        check("value +10" in final, "Kalah(5,4)'s exact value, +10: %r" % final)
        check(bool(bounds) and seen.index(bounds[0]) < len(seen) - 1 and "proving" in bounds[0],
              "a proven bound shown before the value: %r" % bounds[:3])
        # Kalah(6,4) takes far longer than this test: its stream is running when the user
        # moves on (a move, then a new page), and each one ends at once.
        driver.get(base + "/")
        wait(driver, lambda: "proving" in status() or "asking" in status(), "the start's stream", timeout=10)
        before = ended()
        keys(driver, "1")
        check(wait(driver, lambda: ended() > before, "the start's stream ended", timeout=10),
              "moving on ends the start's stream (%d ended)" % ended())
        driver.get(base + "/?" + urllib.parse.urlencode({"start": START}))
        wait_ready(driver, START)
        check(wait(driver, lambda: ended() >= before + 3, "A1's stream ended", timeout=10),
              "a new page ends A1's stream (%d ended)" % ended())
        t0 = cpu_ticks(server.pid)
        time.sleep(1.0)
        spent = cpu_ticks(server.pid) - t0
        check(spent < 30, "no search runs after the streams ended (%d ticks in 1 s)" % spent)
    finally:
        server.terminate()
        server.wait(timeout=20)


def screenshots(driver, base):
    os.makedirs(SHOTS, exist_ok=True)
    record = "A5 B4+ B5 A1x4 B1x6 A4 B3+ B1 A5 B2"  # A1x4?? turns a win into a loss
    url = base + "/?" + urllib.parse.urlencode({"start": "3,3,3,3,3,3/3,3,3,3,3,3/0,0/A", "moves": record})
    for name, w, h, mobile in (("serve-desktop.png", 1280, 860, False), ("serve-phone.png", 375, 812, True)):
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": w, "height": h, "deviceScaleFactor": 2 if mobile else 1, "mobile": mobile})
        driver.get(url)
        wait_ready(driver)
        # The game's other values, for the graph and the marks (some may be unknown within
        # the budget: the page asks for each once).
        wait(driver, lambda: driver.find_element(By.TAG_NAME, "body").get_attribute("data-busy") == "no",
             "the game's values", timeout=180)
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": mobile})
        import base64
        with open(os.path.join(SHOTS, name), "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        print("wrote", os.path.join(SHOTS, name))


if __name__ == "__main__":
    sys.exit(main())
