// kalah serve's page: the board of a game, every legal move's perfect-play value from the
// server's JSON API (/api/v1/query, the object of `kalah query --json`), the game in the
// URL. The sowing below only moves seeds for display; moves are checked and written in
// notation by the server (/api/v1/show), and every value comes from the server.
'use strict';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const DEFAULT_START = '4,4,4,4,4,4/4,4,4,4,4,4/0,0/A';

const state = {
    start: null,  // board at ply 0
    rule: 'standard',
    moves: [],   // [{pit, side, text}], moves[i] played from boards[i]
    boards: [],  // boards[0] = start, boards[i + 1] after moves[i]
    ply: 0,
    flipped: false,
    editing: null,  // the board being edited, or null
    hint: false,
    generation: 0,  // bumps when the game changes, so stale background work stops
    enginePending: false,
};
const values = new Map();  // "position|rule" -> the query object, {unknown: ...} or {error: ...}

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

async function api(name, params) {
    const q = new URLSearchParams(params);
    const res = await fetch(`/api/v1/${name}?${q}`);
    let body = null;
    try {
        body = await res.json();
    } catch (e) {
        body = {error: `HTTP ${res.status}`};
    }
    return {status: res.status, body};
}

function valueKey(bd) { return formatPosition(bd) + '|' + state.rule; }

async function fetchValue(bd) {
    const key = valueKey(bd);
    if (values.has(key) && !values.get(key).error) return values.get(key);
    let r;
    try {
        r = await api('query', {position: formatPosition(bd), rule: state.rule});
    } catch (e) {
        r = {status: 0, body: {error: 'the server cannot be reached'}};
    }
    const v = r.status === 200 ? r.body : {error: `${r.status}: ${r.body.error || 'error'}`};
    values.set(key, v);
    return v;
}

// Values of the current position first, then of every position of the game (marks, graph).
async function requestValues() {
    const gen = state.generation;
    const cur = state.boards[state.ply];
    await fetchValue(cur);
    if (gen !== state.generation) return;
    render();
    maybeEngine();
    for (let i = 0; i < state.boards.length; i++) {
        if (gen !== state.generation) return;
        const key = valueKey(state.boards[i]);
        if (values.has(key) && !values.get(key).error) continue;
        await fetchValue(state.boards[i]);
        if (gen !== state.generation) return;
        renderGame();
    }
}

// ---- Game and URL --------------------------------------------------------------------

function urlFor() {
    const p = new URLSearchParams();
    p.set('start', formatPosition(state.start));
    if (state.rule !== 'standard') p.set('rule', state.rule);
    if (state.moves.length) p.set('moves', state.moves.map((x) => x.text).join(' '));
    if (state.ply !== state.moves.length) p.set('ply', String(state.ply));
    return '?' + p.toString();
}

function pushUrl(replace) {
    const u = urlFor();
    if (u === location.search) return;
    history[replace ? 'replaceState' : 'pushState'](null, '', u);
}

function setGame(start, rule, moveTexts, ply) {
    state.start = start;
    state.rule = rule;
    state.moves = [];
    state.boards = [start];
    for (const t of moveTexts) {
        const r = sow(state.boards[state.boards.length - 1], Number(t[1]) - 1, rule);
        state.moves.push(r.move);
        state.boards.push(r.board);
    }
    state.ply = Math.max(0, Math.min(ply, state.moves.length));
    state.generation++;
    state.hint = false;
    $('rule').value = rule;
    $('pits').value = String(start.m);
    if (start.a.concat(start.b).every((x) => x === start.a[0]) && start.a[0] >= 1 &&
        start.a[0] <= 10)
        $('seeds').value = String(start.a[0]);
}

// Checks a start and a record with the server (its error names the ply), then shows them.
async function loadGame(startText, rule, record, ply, replace) {
    const r = await api('show', {position: startText, rule, moves: record});
    if (r.status !== 200) return `${r.status}: ${r.body.error}`;
    const start = parsePosition(startText);
    setGame(start, rule, r.body.moves, ply === null ? r.body.moves.length : ply);
    const end = state.boards[state.boards.length - 1];
    if (formatPosition(end) !== r.body.position)
        return 'the page and the server disagree on this game';
    pushUrl(replace);
    render();
    requestValues();
    return '';
}

async function loadFromUrl() {
    const p = new URLSearchParams(location.search);
    const start = p.get('start') || p.get('position') || DEFAULT_START;
    const rule = p.get('rule') || 'standard';
    const ply = p.has('ply') ? Number(p.get('ply')) : null;
    const err =
        await loadGame(start, rule, p.get('moves') || '', Number.isInteger(ply) ? ply : null, true);
    $('paste-error').textContent = err;
    if (err && !state.start) await loadGame(DEFAULT_START, 'standard', '', 0, true);
}

function setPly(k) {
    k = Math.max(0, Math.min(k, state.moves.length));
    if (k === state.ply) return;
    state.ply = k;
    state.hint = false;
    pushUrl(false);
    render();
    requestValues();
}

function playPit(i) {
    if (state.editing) return;
    const bd = state.boards[state.ply];
    if (over(bd) || i < 0 || i >= bd.m || (bd.side === 'A' ? bd.a : bd.b)[i] === 0) return;
    const r = sow(bd, i, state.rule);
    const next = state.moves[state.ply];
    if (!(next && next.text === r.move.text)) {
        state.moves = state.moves.slice(0, state.ply).concat([r.move]);
        state.boards = state.boards.slice(0, state.ply + 1).concat([r.board]);
        state.generation++;
    }
    setPly(state.ply + 1);
}

function currentValue() { return values.get(valueKey(state.boards[state.ply])); }

function playBest() {
    const v = currentValue();
    if (!v || !v.best || !v.best.length) return;
    playPit(Number(v.best[0][1]) - 1);
}

// ---- Engine (play against the perfect engine or a weaker level) ------------------------

function enginesTurn() {
    const side = $('engine').value;
    const bd = state.boards[state.ply];
    return side && !over(bd) && bd.side === side && state.ply === state.moves.length &&
        !state.editing;
}

async function maybeEngine() {
    if (!enginesTurn() || state.enginePending) return;
    state.enginePending = true;
    const gen = state.generation, ply = state.ply;
    const bd = state.boards[state.ply];
    const r = await api(
        'move', {position: formatPosition(bd), rule: state.rule, level: $('level').value});
    state.enginePending = false;
    if (gen !== state.generation || ply !== state.ply) return;
    if (r.status !== 200 || !r.body.move) {
        $('status').textContent = `engine: ${r.body.error || r.body.reason || 'no move'}`;
        return;
    }
    setTimeout(() => {
        if (gen === state.generation && ply === state.ply) playPit(Number(r.body.move[1]) - 1);
    }, 250);
}

function takeback() {
    const engine = $('engine').value;
    let k = state.ply - 1;
    // Against the engine: back to the last position where the person was to move.
    if (engine)
        while (k > 0 && state.boards[k].side === engine) k--;
    if (k < 0) return;
    state.moves = state.moves.slice(0, k);
    state.boards = state.boards.slice(0, k + 1);
    state.generation++;
    state.ply = k + 1;  // so that setPly sees a change
    setPly(k);
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

function render() {
    renderBoard();
    renderStatus();
    renderGame();
    $('position-text').textContent = formatPosition(state.editing || state.boards[state.ply]);
}

function renderBoard() {
    const svg = $('board');
    const bd = state.editing || state.boards[state.ply];
    const m = bd.m, W = 200 + m * 80, H = 300;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.replaceChildren();
    svg.classList.toggle('editing', !!state.editing);
    const v = state.editing ? null : currentValue();
    const known = v && !v.error && !v.unknown;
    svg.dataset.position = formatPosition(bd);
    svg.dataset.state = state.editing ? 'editing' :
        !v                            ? 'loading' :
        v.error                       ? 'error' :
        v.unknown                     ? 'unknown' :
                                        'ready';
    el('rect', {x: 10, y: 55, width: W - 20, height: 200, rx: 30, class: 'board-bg'}, svg);
    const showValues = known && (!$('engine').value || state.hint || over(bd));
    const byPit = new Map();
    if (known)
        for (const mv of v.moves) byPit.set(mv.move.slice(0, 2), mv);
    let bestMover = null;
    if (known && v.moves.length)
        bestMover = Math.max(...v.moves.map((x) => moverMargin(x.value, bd.side)));
    // Rows: South (A1..Am) at the bottom from the left, North (Bm..B1) on top; flipped, the
    // board turns round.
    const bottom = state.flipped ? 'B' : 'A';
    for (const side of ['A', 'B']) {
        const isBottom = side === bottom;
        const y = isBottom ? 205 : 105;
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
            el('circle', {cx: x, cy: y, r: 32}, g);
            el('text', {x, y, class: 'seeds'}, g, String(seeds));
            el('text', {x, y: isBottom ? y + 27 : y - 20, class: 'label'}, g, name);
            const mv = byPit.get(name);
            if (mv) {
                g.dataset.value = mv.value;
                g.dataset.move = mv.move;
                if (mv.best) g.dataset.best = 'true';
                const suffix = mv.move.slice(2);
                if (suffix) {
                    const mk = el('g', {class: 'mark'}, g);
                    el('rect', {x: x + 14, y: y - 34, width: 26, height: 16, rx: 8}, mk);
                    el('text', {x: x + 27, y: y - 26}, mk, suffix);
                }
                if (showValues) {
                    const mine = moverMargin(mv.value, bd.side);
                    const loss = bestMover - mine;
                    if (mv.best) g.classList.add('best');
                    const cls = mine > 0 ? 'win' : mine < 0 ? 'loss' : 'draw';
                    const by = isBottom ? y + 50 : y - 50;
                    const b =
                        el('g', {
                            class: 'badge ' + cls,
                            opacity: mv.best ? 1 : Math.max(0.35, 1 - loss / 16)
                        },
                           g);
                    el('title', {}, b,
                       `${mv.move}: ${signed(mv.value)} for South with perfect play` +
                           (loss ? `; gives away ${loss}` : '; best'));
                    el('rect', {x: x - 24, y: by - 11, width: 48, height: 22, rx: 11}, b);
                    el('text', {x, y: by}, b, signed(mv.value));
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
        el('rect', {x, y: 75, width: 60, height: 160, rx: 28}, g);
        el('text', {x: x + 30, y: 155, class: 'seeds'}, g, String(side === 'A' ? bd.sa : bd.sb));
        const toMove = !over(bd) && bd.side === side;
        el('text',
           {x: x + 30, y: isTop(side) ? 40 : 285, class: 'side-label' + (toMove ? ' to-move' : '')},
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
    if (state.editing) {
        st.textContent =
            'edit: click a pit or store to add a seed, shift-click or right-click to take one; ' +
            's switches the side to move; e (or the edit button) ends editing.';
        return;
    }
    const bd = state.boards[state.ply];
    const v = currentValue();
    const span = (cls, text) => {
        const s = document.createElement('span');
        s.className = cls;
        s.textContent = text;
        st.appendChild(s);
    };
    if (over(bd)) {
        const [a, b] = finalScore(bd);
        span(
            'value',
            `game over: A ${a} - B ${b}` +
                (a === b ? ' (draw)' : ` (${a > b ? 'A' : 'B'} wins by ${Math.abs(a - b)})`));
        return;
    }
    span('', `${bd.side === 'A' ? 'A (South)' : 'B (North)'} to move. `);
    if (!v) {
        span('source', 'asking the server\u2026');
        return;
    }
    if (v.error) {
        span('source', 'no value: ' + v.error);
        return;
    }
    if (v.unknown) {
        span('value', 'value not known within the server\u2019s budget');
        span('source', ` (${v.reason})`);
        return;
    }
    if ($('engine').value && !state.hint) {
        span('source', 'playing the engine: h or the hint button shows the values');
        return;
    }
    const who = v.value > 0 ? `South wins by ${v.value}` :
        v.value < 0 ? `North wins by ${- v.value}` :
                      'a draw';
    span('value', `value ${signed(v.value)}: ${who} with perfect play`);
    span(
        'source',
        v.nodes === 0 ? ' \u2014 from the endgame database' :
                        ` \u2014 searched: ${v.nodes} nodes, ${Number(v.seconds).toFixed(3)} s`);
}

// Marks as `kalah annotate` gives them: ? loses seeds against the best move, ?? changes
// the result for the mover.
function markOf(i) {
    const v = values.get(valueKey(state.boards[i]));
    if (!v || v.error || v.unknown) return '';
    const side = state.boards[i].side;
    const mv = v.moves.find((x) => x.move.slice(0, 2) === state.moves[i].text.slice(0, 2));
    if (!mv) return '';
    const best = moverMargin(v.value, side), played = moverMargin(mv.value, side);
    if (played >= best) return '';
    return Math.sign(best) !== Math.sign(played) ? '??' : '?';
}

function renderGame() {
    const ol = $('moves');
    ol.replaceChildren();
    state.moves.forEach((mv, i) => {
        const li = document.createElement('li');
        li.dataset.ply = i + 1;
        if (i + 1 === state.ply) li.className = 'current';
        const n = document.createElement('span');
        n.className = 'n';
        n.textContent = `${i + 1}.`;
        const mark = document.createElement('span');
        mark.className = 'mark';
        mark.textContent = markOf(i);
        li.append(n, mv.text, mark);
        li.addEventListener('click', () => setPly(i + 1));
        ol.appendChild(li);
    });
    const cur = ol.querySelector('.current');
    if (cur) cur.scrollIntoView({block: 'nearest'});
    renderGraph();
}

function renderGraph() {
    const svg = $('graph');
    const W = 300, H = 120, n = state.boards.length;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.replaceChildren();
    const pts = state.boards.map((bd, i) => {
        const v = values.get(valueKey(bd));
        return v && !v.error && !v.unknown ? v.value : null;
    });
    const maxAbs = Math.max(2, ...pts.filter((x) => x !== null).map(Math.abs));
    const X = (i) => 10 + (n > 1 ? (i * (W - 20)) / (n - 1) : (W - 20) / 2);
    const Y = (v) => H / 2 - (v / maxAbs) * (H / 2 - 10);
    el('line', {x1: 0, y1: H / 2, x2: W, y2: H / 2, class: 'graph-zero'}, svg);
    let path = '';
    pts.forEach((v, i) => {
        if (v !== null) path += `${path ? 'L' : 'M'}${X(i)},${Y(v)} `;
    });
    if (path) el('path', {d: path, class: 'graph-line'}, svg);
    pts.forEach((v, i) => {
        if (v === null) return;
        const c =
            el('circle', {
                cx: X(i),
                cy: Y(v),
                r: 3.5,
                class: 'graph-point' + (i === state.ply ? ' current' : ''),
                'data-ply': i
            },
               svg);
        el('title', {}, c, `ply ${i}: ${signed(v)}`);
        c.addEventListener('click', () => setPly(i));
    });
}

// ---- Editing -------------------------------------------------------------------------

function clickPit(side, i, e) {
    if (!state.editing) {
        if (side === state.boards[state.ply].side) playPit(i);
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
        const bd = state.boards[state.ply];
        state.editing = {...bd, a: bd.a.slice(), b: bd.b.slice()};
        $('edit').classList.add('on');
        render();
        return;
    }
    const text = formatPosition(state.editing);
    state.editing = null;
    $('edit').classList.remove('on');
    const err = await loadGame(text, state.rule, '', 0, false);
    $('paste-error').textContent = err;
    if (err) render();
}

// ---- Controls ------------------------------------------------------------------------

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
            await loadGame(`${row}/${row}/0,0/A`, $('rule').value, '', 0, false);
    });
    $('rule').addEventListener('change', async () => {
        $('paste-error').textContent = await loadGame(
            formatPosition(state.start), $('rule').value,
            state.moves.map((x) => x.text.slice(0, 2)).join(' '), state.ply, false);
    });
    $('paste-form').addEventListener('submit', async (e) => {
        e.preventDefault();
        const words = $('paste').value.trim().split(/\s+/).filter((w) => w && !/^\d+\.$/.test(w));
        let start = formatPosition(state.start);
        if (words.length && words[0].includes('/')) start = words.shift();
        $('paste-error').textContent =
            await loadGame(start, state.rule, words.join(' '), null, false);
    });
    $('first').onclick = () => setPly(0);
    $('prev').onclick = () => setPly(state.ply - 1);
    $('next').onclick = () => setPly(state.ply + 1);
    $('last').onclick = () => setPly(state.moves.length);
    $('best').onclick = playBest;
    $('flip').onclick = () => {
        state.flipped = !state.flipped;
        render();
    };
    $('edit').onclick = toggleEdit;
    $('hint').onclick = () => {
        state.hint = !state.hint;
        render();
    };
    $('takeback').onclick = takeback;
    $('engine').onchange = () => {
        render();
        maybeEngine();
    };
    document.addEventListener('keydown', (e) => {
        if (e.target.closest('textarea, input, select') || e.ctrlKey || e.metaKey || e.altKey)
            return;
        const bd = state.boards[state.ply];
        const k = e.key;
        if (k === 'ArrowLeft')
            setPly(state.ply - 1);
        else if (k === 'ArrowRight')
            setPly(state.ply + 1);
        else if (k === 'Home')
            setPly(0);
        else if (k === 'End')
            setPly(state.moves.length);
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
    loadFromUrl();
}

setup();
