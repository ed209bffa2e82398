// kalah serve's page: the board of a game, every legal move's perfect-play value from the
// server's JSON API (/api/v1/query, the object of `kalah query --json`), the game and its
// variations in the URL. The sowing below only moves seeds for display and checks a
// variation's moves; the line in the URL is checked and written in notation by the server
// (/api/v1/show), and every value comes from the server.
//
// Point of view: every value on the page (badges, move list, graph, evaluation bar) is
// South's margin with perfect play, signed and coloured the same way: + and green South
// ahead, - and red North ahead, 0 and blue a draw (the legend under the board says so).
//
// Requests: at most one at a time (`inflight`), the current position first, then the
// other positions of the line shown (for the marks and the graph); a request for a
// position the user has left is aborted (AbortController). The current position's value
// comes from the analysis stream (/api/v1/analysis, an EventSource): its proven bounds are
// shown as they arrive, and it is closed when the user moves on.
'use strict';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const DEFAULT_START = '4,4,4,4,4,4/4,4,4,4,4,4/0,0/A';

// The game is a tree: node = {id, board, move ({pit, side, text}, null at the root),
// parent, children}; children[0] continues the line, the others are variations.
let nextId = 0;
function newNode(board, move, parent) {
    const n = {id: nextId++, board, move, parent, children: []};
    if (parent) parent.children.push(n);
    return n;
}

const state = {
    start: null,  // board at ply 0
    rule: 'standard',
    root: null,
    cur: null,      // the node shown
    flipped: false,
    editing: null,  // the board being edited, or null
    hint: false,
    note: '',       // why the last command did nothing, shown under the status
    engine: null,   // {node, waiting} while the engine's move is asked for or about to be
                    // played; {node, stuck: text} when the server could not give one
};
const values = new Map();  // "position|rule" -> the query object, {unknown: ...} or {error: ...}
let inflight = null;       // {kind: 'query' | 'move', node, key, ctl}
const progress = new Map();  // "position|rule" -> the stream's last bound event, while it runs
const noStream = new Set();  // keys whose stream failed: asked with /api/v1/query instead

// ---- Positions and sowing (rules.md) -------------------------------------------------

function parsePosition(text) {
    const parts = text.trim().split('/');
    if (parts.length !== 4)
        throw new Error(`position '${text}' must be A1,..,Am/B1,..,Bm/storeA,storeB/side`);
    const nums = (s) => s.split(',').map((x) => {
        if (!/^\d{1,3}$/.test(x))
            throw new Error(`'${x}' in position '${text}' is not a seed count`);
        return Number(x);
    });
    const a = nums(parts[0]), b = nums(parts[1]), st = nums(parts[2]);
    if (a.length !== b.length || a.length < 1 || a.length > 6 || st.length !== 2 ||
        !/^[AB]$/.test(parts[3]))
        throw new Error(`position '${text}' is malformed`);
    return {m: a.length, a, b, sa: st[0], sb: st[1], side: parts[3]};
}

function formatPosition(bd) {
    return `${bd.a.join(',')}/${bd.b.join(',')}/${bd.sa},${bd.sb}/${bd.side}`;
}

function over(bd) { return bd.a.every((x) => x === 0) || bd.b.every((x) => x === 0); }

function finalScore(bd) {
    const sum = (r) => r.reduce((x, y) => x + y, 0);
    return [bd.sa + sum(bd.a), bd.sb + sum(bd.b)];
}

// Plays the mover's pit i (0-based); returns the next board and the move in notation.
function sow(bd, i, rule) {
    const m = bd.m, south = bd.side === 'A';
    const own = (south ? bd.a : bd.b).slice(), opp = (south ? bd.b : bd.a).slice();
    let ownStore = south ? bd.sa : bd.sb, oppStore = south ? bd.sb : bd.sa;
    let seeds = own[i], pos = i;
    own[i] = 0;
    // Circuit: own pits 0..m-1, own store m, opponent's pits m+1..2m (the other store skipped).
    while (seeds > 0) {
        pos = (pos + 1) % (2 * m + 1);
        if (pos < m)
            own[pos]++;
        else if (pos === m)
            ownStore++;
        else
            opp[pos - m - 1]++;
        seeds--;
    }
    let extra = pos === m, captured = 0;
    if (pos < m && own[pos] === 1) {
        const o = m - 1 - pos;  // A_i faces B_(m+1-i)
        if (opp[o] > 0 || rule === 'empty-capture') {
            captured = opp[o] + 1;
            ownStore += captured;
            own[pos] = 0;
            opp[o] = 0;
        }
    }
    const ended = own.every((x) => x === 0) || opp.every((x) => x === 0);
    if (ended) {
        ownStore += own.reduce((x, y) => x + y, 0);
        oppStore += opp.reduce((x, y) => x + y, 0);
        own.fill(0);
        opp.fill(0);
        extra = false;
    }
    const next = {
        m,
        a: south ? own : opp,
        b: south ? opp : own,
        sa: south ? ownStore : oppStore,
        sb: south ? oppStore : ownStore,
        side: ended || extra ? bd.side : (south ? 'B' : 'A'),
    };
    const text = bd.side + (i + 1) + (extra ? '+' : '') + (captured ? 'x' + captured : '') +
        (ended ? '#' : '');
    return {board: next, move: {pit: i, side: bd.side, text}};
}

// ---- The server ----------------------------------------------------------------------

async function api(name, params, signal) {
    const q = new URLSearchParams(params);
    const res = await fetch(`/api/v1/${name}?${q}`, {signal});
    let body = null;
    try {
        body = await res.json();
    } catch (e) {
        body = {error: `HTTP ${res.status}`};
    }
    return {status: res.status, body};
}

function valueKey(bd) { return formatPosition(bd) + '|' + state.rule; }
function valueOf(node) { return values.get(valueKey(node.board)); }
function known(v) { return v && !v.error && !v.unknown; }

// Whether values may be shown: not while playing the engine, unless a hint is asked for or
// the game is over.
function valuesShown() {
    return !$('engine').value || state.hint || over(state.cur.board);
}

// The next request to make, or null: the engine's move on its turn, else the current
// position's value, else (values shown) the first position of the line without one.
function nextRequest() {
    if (state.editing) return null;
    if (enginesTurn()) {
        if (state.engine && state.engine.node === state.cur) return null;
        return {kind: 'move', node: state.cur};
    }
    const cur = state.cur;
    if (!values.has(valueKey(cur.board))) return {kind: 'query', node: cur};
    if (!valuesShown()) return null;
    for (const n of lineNodes())
        if (!values.has(valueKey(n.board))) return {kind: 'query', node: n};
    return null;
}

// Aborts the request in flight when the user has moved on: it is kept only while it is the
// engine's move of the current position, the current position's value, or (once that is
// known and values are shown) a value of the line shown.
function cancelStale() {
    const f = inflight;
    if (!f) return;
    let keep;
    if (state.editing)
        keep = false;
    else if (f.kind === 'move')
        keep = enginesTurn() && f.node === state.cur;
    else if (enginesTurn())
        keep = false;
    else if (f.key === valueKey(state.cur.board))
        keep = true;
    else
        keep = valuesShown() && values.has(valueKey(state.cur.board)) && lineNodes().includes(f.node);
    if (!keep) {
        f.ctl.abort();
        inflight = null;
    }
}

function pump() {
    cancelStale();
    if (inflight) return;
    const req = nextRequest();
    // Whether the page still waits for the server (the screenshots wait for "no").
    document.body.dataset.busy = req ? 'yes' : 'no';
    if (!req) return;
    const key = valueKey(req.node.board);
    if (req.kind === 'query' && req.node === state.cur && !noStream.has(key) &&
        typeof EventSource !== 'undefined') {
        openStream(req, key);
        return;
    }
    const ctl = new AbortController();
    const mine = {kind: req.kind, node: req.node, key, ctl};
    inflight = mine;
    if (req.kind === 'move') state.engine = {node: req.node, waiting: true};
    render();
    const params = {position: formatPosition(req.node.board), rule: state.rule};
    if (req.kind === 'move') params.level = $('level').value;
    api(req.kind, params, ctl.signal)
        .then((r) => ({status: r.status, body: r.body}))
        .catch((e) => (e.name === 'AbortError' ? null :
                                                 {status: 0, body: {error: 'the server cannot be reached'}}))
        .then((r) => {
            if (inflight === mine) inflight = null;
            if (r === null || ctl.signal.aborted) {
                if (state.engine && state.engine.node === req.node && state.engine.waiting)
                    state.engine = null;
                pump();
                return;
            }
            if (req.kind === 'query') {
                values.set(key, r.status === 200 ? r.body :
                                                   {error: `${r.status}: ${r.body.error || 'error'}`});
            } else {
                engineAnswered(req.node, r);
            }
            render();
            pump();
        });
}

// The current position's value as the server proves it: each bound event is shown at
// once, the last event ("value", or "unknown" at the stream's budget) is the query's
// object. A stream refused or cut before its last event gives way to /api/v1/query, which
// says why (400, 429, 503...).
function openStream(req, key) {
    const q = new URLSearchParams({position: formatPosition(req.node.board), rule: state.rule});
    const es = new EventSource(`/api/v1/analysis?${q}`);
    const mine = {kind: 'query', node: req.node, key, ctl: {abort: () => es.close()}};
    inflight = mine;
    render();
    const end = (v) => {
        es.close();
        progress.delete(key);
        if (inflight === mine) inflight = null;
        if (v) values.set(key, v);
        render();
        pump();
    };
    es.onmessage = (e) => {
        if (inflight !== mine) {
            es.close();
            return;
        }
        let ev;
        try {
            ev = JSON.parse(e.data);
        } catch (x) {
            return;
        }
        if (ev.event === 'value' || ev.event === 'unknown') {
            delete ev.event;
            end(ev);
        } else if (ev.event === 'bound') {
            progress.set(key, ev);
            renderStatus();
        }
    };
    es.onerror = () => {
        if (inflight !== mine) return;
        noStream.add(key);
        end(null);
    };
}

// ---- The game tree and the URL ---------------------------------------------------------

function pathTo(node) {
    const p = [];
    for (let n = node; n; n = n.parent) p.unshift(n);
    return p;
}

// The line shown: the root to the current node, then the current node's continuation.
function lineNodes() {
    const p = pathTo(state.cur);
    for (let n = state.cur; n.children.length;) {
        n = n.children[0];
        p.push(n);
    }
    return p;
}

function depth(node) { return pathTo(node).length - 1; }

// The tree below `node` as a record with variations in brackets, as in PGN:
// "A2+ A4 (A1 B2) B3": A1 B2 is played instead of A4.
function treeText(node) {
    const out = [];
    for (let n = node; n.children.length;) {
        const [main, ...rest] = n.children;
        out.push(main.move.text);
        for (const r of rest) out.push('(' + [r.move.text, treeText(r)].filter(Boolean).join(' ') + ')');
        n = main;
    }
    return out.join(' ');
}

function hasVariations(node) {
    return node.children.length > 1 || node.children.some(hasVariations);
}

// Plays a move from `node` under `rule` (a child of the same move if there is one).
function child(node, pit, rule) {
    const r = sow(node.board, pit, rule);
    const same = node.children.find((c) => c.move.text === r.move.text);
    return same || newNode(r.board, r.move, node);
}

function legalPit(bd, side, pit) {
    return !over(bd) && bd.side === side && pit >= 0 && pit < bd.m &&
        (side === 'A' ? bd.a : bd.b)[pit] > 0;
}

// Adds the moves of a tree text (treeText's format) below `root`. Throws on a bad move.
function parseTree(root, text, rule) {
    const tokens = text.replace(/[()]/g, ' $& ').split(/\s+/).filter(Boolean);
    let k = 0;
    const seq = (from) => {
        let prev = from, last = null;
        while (k < tokens.length) {
            const t = tokens[k];
            if (t === ')') return;
            k++;
            if (t === '(') {
                if (!last) throw new Error('a variation in brackets follows no move');
                seq(last.parent);
                if (tokens[k++] !== ')') throw new Error('a variation is not closed');
                continue;
            }
            const m = /^([AB])([1-6])/.exec(t);
            const pit = m ? Number(m[2]) - 1 : -1;
            if (!m || !legalPit(prev.board, m[1], pit))
                throw new Error(`'${t.slice(0, 12)}' is not a legal move at ply ${depth(prev) + 1}`);
            last = prev = child(prev, pit, rule);
        }
    };
    seq(root);
    if (k < tokens.length) throw new Error('a closing bracket without an opening one');
}

function urlFor() {
    const p = new URLSearchParams();
    p.set('start', formatPosition(state.start));
    if (state.rule !== 'standard') p.set('rule', state.rule);
    const line = lineNodes();
    if (line.length > 1) p.set('moves', line.slice(1).map((n) => n.move.text).join(' '));
    const ply = depth(state.cur);
    if (ply !== line.length - 1) p.set('ply', String(ply));
    const hash = hasVariations(state.root) ? '#tree=' + encodeURIComponent(treeText(state.root)) : '';
    return '?' + p.toString() + hash;
}

function pushUrl(replace) {
    const u = urlFor();
    if (u === location.search + location.hash) return;
    history[replace ? 'replaceState' : 'pushState'](null, '', u);
}

// Checks a start and a line with the server (its error names the ply) and a tree of
// variations with the sowing, then shows them; nothing changes when either fails.
// Returns '' or the error.
async function loadGame(startText, rule, record, ply, replace, tree) {
    let r;
    try {
        r = await api('show', {position: startText, rule, moves: record});
    } catch (e) {
        return 'the server cannot be reached';
    }
    if (r.status !== 200) return `${r.status}: ${r.body.error}`;
    const start = parsePosition(startText);
    const root = newNode(start, null, null);
    try {
        if (tree) parseTree(root, tree, rule);
    } catch (e) {
        return 'the variations: ' + e.message;
    }
    let n = root;
    const line = [n];
    for (const t of r.body.moves) {
        n = child(n, Number(t[1]) - 1, rule);
        line.push(n);
    }
    if (formatPosition(n.board) !== r.body.position)
        return 'the page and the server disagree on this game';
    const k = ply === null ? line.length - 1 : Math.max(0, Math.min(ply, line.length - 1));
    state.start = start;
    state.rule = rule;
    state.root = root;
    state.hint = false;
    state.note = '';
    state.engine = null;
    $('rule').value = rule;
    $('pits').value = String(start.m);
    if (start.a.concat(start.b).every((x) => x === start.a[0]) && start.a[0] >= 1 &&
        start.a[0] <= 10)
        $('seeds').value = String(start.a[0]);
    goTo(line[k], replace);
    return '';
}

async function loadFromUrl() {
    const p = new URLSearchParams(location.search);
    const h = new URLSearchParams(location.hash.slice(1));
    const start = p.get('start') || p.get('position') || DEFAULT_START;
    const rule = p.get('rule') || 'standard';
    const ply = p.has('ply') ? Number(p.get('ply')) : null;
    const err = await loadGame(start, rule, p.get('moves') || '',
                               Number.isInteger(ply) ? ply : null, true, h.get('tree') || '');
    $('paste-error').textContent = err;
    if (err && !state.start) await loadGame(DEFAULT_START, 'standard', '', 0, true, '');
}

// Shows `node`: the URL follows, a request for a position left behind stops.
function goTo(node, replace) {
    state.cur = node;
    state.hint = false;
    state.note = '';
    if (state.engine && state.engine.node !== node) state.engine = null;
    // An error is asked again when its position is shown again; "unknown" waits for retry.
    const v = valueOf(node);
    if (v && v.error) values.delete(valueKey(node.board));
    pushUrl(replace);
    render();
    pump();
}

function setPly(k) {
    const line = lineNodes();
    k = Math.max(0, Math.min(k, line.length - 1));
    if (line[k] !== state.cur) goTo(line[k], false);
}

// A move from the current node: the next move of the line, a variation already in the
// tree, or a new variation.
function playPit(i) {
    if (state.editing) return;
    if (!legalPit(state.cur.board, state.cur.board.side, i)) return;
    goTo(child(state.cur, i, state.rule), false);
}

function playBest() {
    const why = bestMoveBlocked();
    if (why) {
        state.note = 'best move: ' + why;
        renderStatus();
        return;
    }
    const v = valueOf(state.cur);
    playPit(Number(v.best[0][1]) - 1);
}

// Why "best move" cannot play now, or ''.
function bestMoveBlocked() {
    if (state.editing) return 'not while editing (e ends editing)';
    if (over(state.cur.board)) return 'the game is over';
    if (enginesTurn()) return 'it is the engine\u2019s turn';
    const v = valueOf(state.cur);
    if (!v) return 'the value of this position is still being asked for';
    if (v.error) return 'no value: ' + v.error;
    if (v.unknown) {
        // The move with the best lower bound proven for the mover, if any beats the rest.
        const side = state.cur.board.side;
        const low = (x) => (side === 'A' ? x.lower : -x.upper);
        const ms = (v.moves || []).filter((x) => Number.isInteger(x.lower));
        const top = ms.length ? ms.reduce((a, b) => (low(b) > low(a) ? b : a)) : null;
        const proven = top && ms.some((x) => low(x) < low(top)) ?
            `; the best bound proven: ${top.move} ${boundText(top)}` : '';
        return 'the value is not known within the server\u2019s budget' + proven +
            ' (retry, or play a move)';
    }
    if (!v.best || !v.best.length) return 'no move to play';
    return '';
}

function retry() {
    values.delete(valueKey(state.cur.board));
    noStream.delete(valueKey(state.cur.board));
    if (state.engine && state.engine.node === state.cur) state.engine = null;
    state.note = '';
    render();
    pump();
}

// ---- Engine (play against the perfect engine or a weaker level) ------------------------

function enginesTurn() {
    const side = $('engine').value;
    const bd = state.cur.board;
    return !!side && !state.editing && !over(bd) && bd.side === side && !state.cur.children.length;
}

// The server's answer to /api/v1/move for `node`: play the move, or say why there is none
// (the engine then waits for a retry; it never waits for ever).
function engineAnswered(node, r) {
    if (r.status === 200 && r.body.move) {
        state.engine = {node, waiting: true};
        setTimeout(() => {
            if (state.cur === node && state.engine && state.engine.node === node) {
                state.engine = null;
                playPit(Number(r.body.move[1]) - 1);
            }
        }, 250);
        return;
    }
    let why;
    if (r.status === 200 && r.body.unknown)
        why = `it cannot choose a move within the server\u2019s budget (${r.body.reason})`;
    else
        why = 'the server gave no move: ' + (r.body.error || r.body.reason || `HTTP ${r.status}`);
    state.engine = {node, stuck: why};
}

function takeback() {
    const engine = $('engine').value;
    let n = state.cur.parent;
    if (!n) return;
    // Against the engine: back to the last position where the person was to move.
    if (engine)
        while (n.parent && n.board.side === engine) n = n.parent;
    // The moves taken back leave the tree.
    const gone = pathTo(state.cur)[depth(n) + 1];
    n.children.splice(n.children.indexOf(gone), 1);
    goTo(n, false);
}

// ---- Drawing -------------------------------------------------------------------------

function el(name, attrs, parent, text) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
}

function moverMargin(v, side) { return side === 'A' ? v : -v; }
function signed(v) { return v > 0 ? '+' + v : String(v); }
// The colour class of a value, South's margin: one point of view everywhere.
function tone(v) { return v > 0 ? 'south' : v < 0 ? 'north' : 'draw'; }

// A bound the server may give with an unknown value (South's margin): ">= +6", "<= -2".
function boundText(v) {
    const lo = Number.isInteger(v.lower) ? v.lower : null;
    const hi = Number.isInteger(v.upper) ? v.upper : null;
    if (lo !== null && hi !== null && lo === hi) return signed(lo);
    const parts = [];
    if (lo !== null) parts.push('>= ' + signed(lo));
    if (hi !== null) parts.push('<= ' + signed(hi));
    return parts.join(', ');
}

function render() {
    renderBoard();
    renderStatus();
    renderEvalBar();
    renderGame();
    $('position-text').textContent = formatPosition(state.editing || state.cur.board);
}

// Text sizes in the board's units, so that on screen they are never below `px` pixels
// (the board scales with the page: on a phone one unit is about half a pixel).
function boardScale(W) {
    const w = $('board').getBoundingClientRect().width;
    return w > 0 ? w / W : 1;
}

function renderBoard() {
    const svg = $('board');
    const bd = state.editing || state.cur.board;
    // Layout (units): a badge row, a label row and a pit row for each side, the badges
    // outermost and all inside the board's rectangle; the side names outside it.
    const m = bd.m, W = 200 + m * 80, T = 30, H = T + 362;
    const scale = boardScale(W);
    const size = (px, min) => Math.max(min, px / scale);
    const labelSize = size(12.5, 12), badgeSize = size(12.5, 13), seedSize = size(15, 22);
    const badgeH = badgeSize + 10, badgeW = Math.min(76, Math.max(48, badgeSize * 2.9));
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.replaceChildren();
    svg.classList.toggle('editing', !!state.editing);
    const v = state.editing ? null : valueOf(state.cur);
    const isKnown = known(v);
    svg.dataset.position = formatPosition(bd);
    svg.dataset.state = state.editing ? 'editing' :
        !v                            ? 'loading' :
        v.error                       ? 'error' :
        v.unknown                     ? 'unknown' :
                                        'ready';
    el('rect', {x: 10, y: T, width: W - 20, height: 332, rx: 30, class: 'board-bg'}, svg);
    const showValues = isKnown && valuesShown();
    const byPit = new Map();
    if (isKnown)
        for (const mv of v.moves) byPit.set(mv.move.slice(0, 2), mv);
    let bestMover = null;
    if (isKnown && v.moves.length)
        bestMover = Math.max(...v.moves.map((x) => moverMargin(x.value, bd.side)));
    // Rows: South (A1..Am) at the bottom from the left, North (Bm..B1) on top; flipped, the
    // board turns round.
    const bottom = state.flipped ? 'B' : 'A';
    for (const side of ['A', 'B']) {
        const isBottom = side === bottom;
        const y = isBottom ? T + 227 : T + 105;
        const labelY = isBottom ? T + 275 : T + 57;
        const badgeY = isBottom ? T + 332 - 8 - badgeH / 2 : T + 8 + badgeH / 2;
        for (let i = 0; i < m; i++) {
            const col = isBottom ? i : m - 1 - i;
            const x = 140 + col * 80;
            const name = side + (i + 1);
            const seeds = (side === 'A' ? bd.a : bd.b)[i];
            const legal = !over(bd) && side === bd.side && seeds > 0;
            const g =
                el('g',
                   {class: 'pit' + (legal ? ' legal' : ''), 'data-pit': name, 'data-seeds': seeds},
                   svg);
            el('circle', {cx: x, cy: y, r: 33}, g);
            el('text', {x, y, class: 'seeds', 'font-size': seedSize}, g, String(seeds));
            el('text', {x, y: labelY, class: 'label', 'font-size': labelSize}, g, name);
            const mv = byPit.get(name);
            if (mv) {
                g.dataset.value = mv.value;
                g.dataset.move = mv.move;
                if (mv.best) g.dataset.best = 'true';
                const suffix = mv.move.slice(2);
                if (suffix) {
                    const mk = el('g', {class: 'mark'}, g);
                    el('rect', {x: x + 12, y: y - 36, width: 28, height: 17, rx: 8}, mk);
                    el('text', {x: x + 26, y: y - 27.5}, mk, suffix);
                }
                if (showValues) {
                    const loss = bestMover - moverMargin(mv.value, bd.side);
                    if (mv.best) g.classList.add('best');
                    const b =
                        el('g', {
                            class: 'badge ' + tone(mv.value),
                            opacity: mv.best ? 1 : Math.max(0.45, 1 - loss / 16)
                        },
                           g);
                    el('title', {}, b,
                       `${mv.move}: ${signed(mv.value)} (South's margin) with perfect play` +
                           (loss ? `; gives away ${loss}` : '; best'));
                    el('rect', {
                        x: x - badgeW / 2,
                        y: badgeY - badgeH / 2,
                        width: badgeW,
                        height: badgeH,
                        rx: badgeH / 2
                    },
                       b);
                    el('text', {x, y: badgeY, 'font-size': badgeSize}, b, signed(mv.value));
                }
            }
            g.addEventListener('click', (e) => clickPit(side, i, e));
            g.addEventListener('contextmenu', (e) => {
                e.preventDefault();
                clickPit(side, i, {shiftKey: true});
            });
        }
    }
    const isTop = (side) => (side === 'A') === state.flipped;
    // Stores: South's at South's right (the right end unless flipped).
    for (const side of ['A', 'B']) {
        const right = (side === 'A') !== state.flipped;
        const x = right ? W - 80 : 20;
        const g = el('g', {class: 'store', 'data-store': side}, svg);
        el('rect', {x, y: T + 60, width: 60, height: 212, rx: 28}, g);
        el('text', {x: x + 30, y: T + 166, class: 'seeds', 'font-size': seedSize}, g,
           String(side === 'A' ? bd.sa : bd.sb));
        const toMove = !over(bd) && bd.side === side;
        el('text',
           {
               x: right ? W - 20 : 20,
               y: isTop(side) ? T - 8 : H - 6,
               class: 'side-label' + (toMove ? ' to-move' : '') + (right ? ' end' : ''),
               'font-size': size(12.5, 14)
           },
           svg, (side === 'A' ? 'A South' : 'B North') + (toMove ? ' \u25CF' : ''));
        g.addEventListener('click', (e) => clickStore(side, e));
        g.addEventListener('contextmenu', (e) => {
            e.preventDefault();
            clickStore(side, {shiftKey: true});
        });
    }
}

function renderStatus() {
    const st = $('status');
    st.replaceChildren();
    const span = (cls, text) => {
        const s = document.createElement('span');
        s.className = cls;
        s.textContent = text;
        st.appendChild(s);
        return s;
    };
    const retryButton = (label) => {
        const b = document.createElement('button');
        b.id = 'retry';
        b.type = 'button';
        b.textContent = label;
        b.addEventListener('click', retry);
        st.append(' ', b);
    };
    if (state.editing) {
        st.textContent =
            'edit: click a pit or store to add a seed, shift-click or right-click to take one; ' +
            's switches the side to move; e (or the edit button) ends editing.';
        return;
    }
    const bd = state.cur.board;
    const v = valueOf(state.cur);
    const note = () => {
        if (state.note) {
            st.appendChild(document.createElement('br'));
            span('note', state.note).id = 'note';
        }
    };
    if (over(bd)) {
        const [a, b] = finalScore(bd);
        span(
            'value',
            `game over: A ${a} - B ${b}` +
                (a === b ? ' (draw)' : ` (${a > b ? 'A' : 'B'} wins by ${Math.abs(a - b)})`));
        note();
        return;
    }
    span('', `${bd.side === 'A' ? 'A (South)' : 'B (North)'} to move. `);
    const eng = state.engine && state.engine.node === state.cur ? state.engine : null;
    if (enginesTurn()) {
        if (eng && eng.stuck) {
            span('value', 'The engine cannot move: ');
            span('source', eng.stuck + '.');
            retryButton('ask the engine again');
        } else {
            span('spinner', '');
            span('source', 'the engine is choosing its move\u2026');
        }
        note();
        return;
    }
    const p = !v && progress.get(valueKey(bd));
    if (p) {
        span('spinner', '');
        span('value bound', `value ${boundText(p)}`).id = 'bound';
        span('source', ` \u2014 proving: ${p.nodes} nodes, ${Number(p.seconds).toFixed(1)} s`);
    } else if (!v) {
        span('spinner', '');
        span('source', 'asking the server\u2026');
    } else if (v.error) {
        span('source', 'no value: ' + v.error);
        retryButton('retry');
    } else if (v.unknown) {
        const bound = boundText(v);
        if (bound) span('value bound', `value ${bound} (a bound): `);
        span('value', 'value ' + (v.reason || 'not known within the server\u2019s budget'));
        if (v.nodes !== undefined)
            span('source', ` \u2014 searched ${v.nodes} nodes, ${Number(v.seconds).toFixed(1)} s.`);
        retryButton('search again');
    } else if (!valuesShown()) {
        span('source', 'playing the engine: h or the hint button shows the values');
    } else {
        const who = v.value > 0 ? `South wins by ${v.value}` :
            v.value < 0 ? `North wins by ${- v.value}` :
                          'a draw';
        span('value ' + tone(v.value), `value ${signed(v.value)}: ${who} with perfect play`);
        // "source" (docs/json.md): the opening book, the endgame database (or the game
        // is over), or a search.
        span('source', v.source === 'book' ? ' \u2014 from the opening book' :
                 v.source === 'database' ? (v.over ? ' \u2014 the game is over' :
                                                     ' \u2014 from the endgame database') :
                 ` \u2014 searched: ${v.nodes} nodes, ${Number(v.seconds).toFixed(3)} s`);
    }
    note();
}

// South's margin as a bar: South's share from the left; hidden with the values.
function renderEvalBar() {
    const bar = $('evalbar');
    const v = state.editing ? null : valueOf(state.cur);
    const show = known(v) && valuesShown();
    bar.hidden = !show;
    if (!show) {
        delete bar.dataset.value;
        return;
    }
    const bd = state.cur.board;
    const total = finalScore(bd)[0] + finalScore(bd)[1];
    const share = 50 + 50 * Math.max(-1, Math.min(1, v.value / Math.max(1, total / 2)));
    bar.dataset.value = v.value;
    $('evalbar-fill').style.width = share + '%';
    $('evalbar-text').textContent = signed(v.value);
    bar.title = `${signed(v.value)}: South's margin with perfect play`;
}

// Marks as `kalah annotate` gives them: ? loses seeds against the best move, ?? changes
// the result for the mover. From the value of the position the move was played in.
function markOf(node) {
    const v = valueOf(node.parent);
    if (!known(v)) return '';
    const side = node.parent.board.side;
    const mv = v.moves.find((x) => x.move.slice(0, 2) === node.move.text.slice(0, 2));
    if (!mv) return '';
    const best = moverMargin(v.value, side), played = moverMargin(mv.value, side);
    if (played >= best) return '';
    return Math.sign(best) !== Math.sign(played) ? '??' : '?';
}

// The value after a move (South's margin), from the position it was played in; or null.
function valueAfter(node) {
    const v = valueOf(node.parent);
    if (!known(v)) return null;
    const mv = v.moves.find((x) => x.move.slice(0, 2) === node.move.text.slice(0, 2));
    return mv ? mv.value : null;
}

// The move list: the tree as a record, variations in brackets after the move they
// replace; each move with its mark and the value it leads to (values shown only).
function renderGame() {
    const ol = $('moves');
    ol.replaceChildren();
    const shown = valuesShown();
    const line = new Set(lineNodes());
    const item = (node, inVariation) => {
        const li = document.createElement('li');
        li.dataset.ply = depth(node);
        li.dataset.node = node.id;
        li.dataset.move = node.move.text;
        li.className = (inVariation ? 'var' : 'main') + (line.has(node) ? ' line' : '') +
            (node === state.cur ? ' current' : '');
        const n = document.createElement('span');
        n.className = 'n';
        n.textContent = `${depth(node)}.`;
        li.append(n, node.move.text);
        if (shown) {
            const mark = markOf(node);
            if (mark) {
                const s = document.createElement('span');
                s.className = 'mark';
                s.textContent = mark;
                li.append(s);
            }
            const after = valueAfter(node);
            if (after !== null) {
                const s = document.createElement('span');
                s.className = 'val ' + tone(after);
                s.textContent = signed(after);
                li.append(s);
            }
        }
        li.addEventListener('click', () => goTo(node, false));
        ol.appendChild(li);
    };
    const paren = (text) => {
        const li = document.createElement('li');
        li.className = 'paren';
        li.textContent = text;
        ol.appendChild(li);
    };
    const walk = (node, inVariation) => {
        for (let n = node; n.children.length;) {
            const [main, ...rest] = n.children;
            item(main, inVariation);
            for (const r of rest) {
                paren('(');
                item(r, true);
                walk(r, true);
                paren(')');
            }
            n = main;
        }
    };
    walk(state.root, false);
    const cur = ol.querySelector('.current');
    if (cur) cur.scrollIntoView({block: 'nearest'});
    renderGraph();
}

// The values of the line shown, ply by ply, South's margin; hidden with the values.
function renderGraph() {
    const svg = $('graph');
    const W = 320, H = 150, L = 44, R = 8, TOP = 10, B = 30;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.replaceChildren();
    const shown = valuesShown();
    svg.classList.toggle('hidden-values', !shown);
    const line = lineNodes(), n = line.length;
    const pts = line.map((node) => {
        const v = valueOf(node);
        return shown && known(v) ? v.value : null;
    });
    const maxAbs = Math.max(2, ...pts.filter((x) => x !== null).map(Math.abs));
    const X = (i) => L + (n > 1 ? (i * (W - L - R)) / (n - 1) : (W - L - R) / 2);
    const Y = (v) => TOP + (H - TOP - B) / 2 - (v / maxAbs) * ((H - TOP - B) / 2);
    // Axes: the value (South's margin) up, the ply along.
    el('line', {x1: L, y1: TOP, x2: L, y2: H - B, class: 'graph-axis'}, svg);
    el('line', {x1: L, y1: Y(0), x2: W - R, y2: Y(0), class: 'graph-zero'}, svg);
    for (const t of [maxAbs, 0, -maxAbs])
        el('text', {x: L - 4, y: Y(t), class: 'graph-tick y'}, svg, signed(t));
    for (const i of n > 1 ? [0, n - 1] : [0])
        el('text', {x: X(i), y: H - B + 12, class: 'graph-tick x'}, svg, String(i));
    el('text', {x: (L + W - R) / 2, y: H - 3, class: 'axis-label', 'data-axis': 'x'}, svg, 'ply');
    el('text', {
        x: 10,
        y: TOP + (H - TOP - B) / 2,
        class: 'axis-label',
        'data-axis': 'y',
        transform: `rotate(-90 10 ${TOP + (H - TOP - B) / 2})`
    },
       svg, 'South\u2019s margin');
    if (!shown) {
        el('text', {x: (L + W) / 2, y: TOP + 30, class: 'graph-note'}, svg,
           'values hidden while playing the engine');
        return;
    }
    let path = '';
    pts.forEach((v, i) => {
        if (v !== null) path += `${path ? 'L' : 'M'}${X(i)},${Y(v)} `;
    });
    if (path) el('path', {d: path, class: 'graph-line'}, svg);
    pts.forEach((v, i) => {
        if (v === null) return;
        const c = el('circle', {
            cx: X(i),
            cy: Y(v),
            r: 3.5,
            class: 'graph-point ' + tone(v) + (line[i] === state.cur ? ' current' : ''),
            'data-ply': i
        },
                     svg);
        el('title', {}, c, `ply ${i}: ${signed(v)}`);
        c.addEventListener('click', () => goTo(line[i], false));
    });
}

// ---- Copying ---------------------------------------------------------------------------

// The line shown as a record the paste box reads back (the start first unless it is a
// standard start), the position, and the link with the whole tree.
function recordText() {
    const bd = state.start;
    const standard = bd.sa === 0 && bd.sb === 0 && bd.side === 'A' &&
        bd.a.concat(bd.b).every((x) => x === bd.a[0]);
    const moves = lineNodes().slice(1).map((n) => n.move.text);
    return (standard ? [] : [formatPosition(bd)]).concat(moves).join(' ');
}

async function copy(button, text) {
    button.dataset.copied = text;
    let ok = false;
    try {
        await navigator.clipboard.writeText(text);
        ok = true;
    } catch (e) {
        // No clipboard permission (an http page on another host): the old way.
        const t = document.createElement('textarea');
        t.value = text;
        document.body.appendChild(t);
        t.select();
        ok = document.execCommand('copy');
        t.remove();
    }
    $('copy-note').textContent = ok ? 'copied: ' + text.slice(0, 80) + (text.length > 80 ? '\u2026' : '') :
                                      'the browser refused to copy; select the text: ' + text;
}

// ---- Editing -------------------------------------------------------------------------

function clickPit(side, i, e) {
    if (!state.editing) {
        if (side === state.cur.board.side) playPit(i);
        return;
    }
    const row = side === 'A' ? state.editing.a : state.editing.b;
    row[i] = Math.max(0, row[i] + (e.shiftKey ? -1 : 1));
    render();
}

function clickStore(side, e) {
    if (!state.editing) return;
    const k = side === 'A' ? 'sa' : 'sb';
    state.editing[k] = Math.max(0, state.editing[k] + (e.shiftKey ? -1 : 1));
    render();
}

async function toggleEdit() {
    if (!state.editing) {
        const bd = state.cur.board;
        state.editing = {...bd, a: bd.a.slice(), b: bd.b.slice()};
        $('edit').classList.add('on');
        render();
        pump();
        return;
    }
    const text = formatPosition(state.editing);
    state.editing = null;
    $('edit').classList.remove('on');
    const err = await loadGame(text, state.rule, '', 0, false, '');
    $('paste-error').textContent = err;
    if (err) {
        render();
        pump();
    }
}

// ---- Controls ------------------------------------------------------------------------

// Switches the rule for the whole tree, or not at all: the variations are replayed with
// the sowing and the line is checked by the server; on failure the select shows the rule
// of the game again.
async function switchRule() {
    const to = $('rule').value, from = state.rule;
    if (to === from) return;
    const line = lineNodes();
    const pits = line.slice(1).map((n) => n.move.text.slice(0, 2)).join(' ');
    const tree = treeText(state.root).replace(/([AB][1-6])[^\s()]*/g, '$1');
    const err = await loadGame(formatPosition(state.start), to, pits, depth(state.cur), false, tree);
    if (err) {
        $('rule').value = from;
        $('paste-error').textContent = `rule ${to}: ${err}; the game stays under ${from}`;
    } else {
        $('paste-error').textContent = '';
    }
}

function setup() {
    for (let m = 1; m <= 6; m++) $('pits').append(new Option(String(m), String(m)));
    for (let n = 1; n <= 10; n++) $('seeds').append(new Option(String(n), String(n)));
    $('pits').value = '6';
    $('seeds').value = '4';
    $('new-game').addEventListener('submit', async (e) => {
        e.preventDefault();
        const m = Number($('pits').value), n = Number($('seeds').value);
        const row = Array(m).fill(n).join(',');
        $('paste-error').textContent =
            await loadGame(`${row}/${row}/0,0/A`, $('rule').value, '', 0, false, '');
    });
    $('rule').addEventListener('change', switchRule);
    $('paste-form').addEventListener('submit', async (e) => {
        e.preventDefault();
        const words = $('paste').value.trim().split(/\s+/).filter((w) => w && !/^\d+\.$/.test(w));
        let start = formatPosition(state.start);
        if (words.length && words[0].includes('/')) start = words.shift();
        $('paste-error').textContent =
            await loadGame(start, state.rule, words.join(' '), null, false, '');
    });
    $('first').onclick = () => setPly(0);
    $('prev').onclick = () => setPly(depth(state.cur) - 1);
    $('next').onclick = () => setPly(depth(state.cur) + 1);
    $('last').onclick = () => setPly(lineNodes().length - 1);
    $('best').onclick = playBest;
    $('flip').onclick = () => {
        state.flipped = !state.flipped;
        render();
    };
    $('edit').onclick = toggleEdit;
    $('hint').onclick = () => {
        state.hint = !state.hint;
        render();
        pump();
    };
    $('takeback').onclick = takeback;
    $('engine').onchange = () => {
        render();
        pump();
    };
    $('copy-record').onclick = (e) => copy(e.currentTarget, recordText());
    $('copy-position').onclick = (e) => copy(e.currentTarget, formatPosition(state.cur.board));
    $('copy-link').onclick = (e) => copy(e.currentTarget, location.href);
    // Keys work after any control: a dropdown gives the focus back once changed, a button
    // once clicked (space would press it again instead of playing the best move).
    for (const s of document.querySelectorAll('select'))
        s.addEventListener('change', () => s.blur());
    document.addEventListener('click', (e) => {
        const b = e.target.closest && e.target.closest('button');
        if (b) b.blur();
    });
    document.addEventListener('keydown', (e) => {
        if (e.target.closest('textarea, input, select') || e.ctrlKey || e.metaKey || e.altKey)
            return;
        const bd = state.cur.board;
        const k = e.key;
        if (k === 'ArrowLeft')
            setPly(depth(state.cur) - 1);
        else if (k === 'ArrowRight')
            setPly(depth(state.cur) + 1);
        else if (k === 'Home')
            setPly(0);
        else if (k === 'End')
            setPly(lineNodes().length - 1);
        else if (k === ' ')
            playBest();
        else if (/^[1-6]$/.test(k) && Number(k) <= bd.m)
            playPit(Number(k) - 1);
        else if (k === 'f') {
            state.flipped = !state.flipped;
            render();
        } else if (k === 'e')
            toggleEdit();
        else if (k === 'h') {
            state.hint = !state.hint;
            render();
            pump();
        } else if (k === 't')
            takeback();
        else if (k === 's' && state.editing) {
            state.editing.side = state.editing.side === 'A' ? 'B' : 'A';
            render();
        } else
            return;
        e.preventDefault();
    });
    window.addEventListener('popstate', loadFromUrl);
    // Leaving the page ends its request at once (a stream would otherwise search on).
    window.addEventListener('pagehide', () => {
        if (inflight) inflight.ctl.abort();
        inflight = null;
    });
    // The board's text sizes follow its width on screen (renderBoard).
    let boardWidth = 0;
    new ResizeObserver(() => {
        const w = Math.round($('board').getBoundingClientRect().width);
        if (w !== boardWidth && state.cur) {
            boardWidth = w;
            renderBoard();
        }
    }).observe($('board'));
    loadFromUrl();
}

setup();
