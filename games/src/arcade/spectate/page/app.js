// The spectator page: the arcade's games from its event stream (/events), kept in `games`
// and drawn into the two sections. Everything a player wrote (names) goes in as text.
'use strict';

const games = new Map();
let ended = 0; // orders finished games, latest first

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function who(g, side) {
  const p = g.players[side];
  return `${p.side} (${p.name})`;
}

function stateText(g) {
  switch (g.state.state) {
    case 'waiting':
      return `Waiting for ${g.players[g.state.invited].name} to accept the challenge.`;
    case 'playing':
      return g.state.thinking ? 'The bot is thinking…' : `${who(g, g.state.to_move)} to move.`;
    default:
      return `Game over: ${g.state.result}.`;
  }
}

function swatch(g, p) {
  if (g.game === 'go') return el('span', `side ${p.side.toLowerCase()}`);
  return el('span', `side mark ${p.side.toLowerCase()}`, p.side);
}

function playerList(g) {
  const list = el('ul', 'players');
  g.players.forEach((p, i) => {
    const li = el('li');
    li.append(swatch(g, p), el('span', 'name', p.name));
    if (p.bot) li.append(el('span', 'bot', '(the arcade’s bot)'));
    if (g.state.state === 'playing' && g.state.to_move === i) li.append(el('span', 'turn', 'to move'));
    if (g.state.state === 'over' && g.state.result.startsWith(`${p.side} (`)) {
      li.append(el('span', 'winner', 'winner'));
    }
    list.append(li);
  });
  return list;
}

function facts(g) {
  const parts = [`${g.moves} move${g.moves === 1 ? '' : 's'}`];
  if (g.last_move) parts.push(`last: ${g.last_move}`);
  if (g.captures) {
    parts.push(`captures: ${g.players[0].side} ${g.captures[0]}, ${g.players[1].side} ${g.captures[1]}`);
  }
  return el('p', 'facts', parts.join(' · '));
}

function points(x) {
  return Number.isInteger(x) ? String(x) : x.toFixed(1);
}

function scoreTable(g) {
  const t = el('table', 'score');
  t.append(el('caption', '', 'The count (area scoring)'));
  const head = el('tr');
  for (const h of ['', 'Stones', 'Territory', 'Komi', 'Total']) head.append(el('th', '', h));
  t.append(head);
  g.score.sides.forEach((s, i) => {
    const row = el('tr');
    row.dataset.side = g.players[i].side;
    row.append(
      el('td', '', `${g.players[i].side} (${g.players[i].name})`),
      el('td', '', String(s.stones)),
      el('td', '', String(s.territory)),
      el('td', '', points(s.komi)),
      el('td', 'total', points(s.total)),
    );
    t.append(row);
  });
  if (g.score.neutral > 0) {
    const row = el('tr');
    const cell = el('td', '', `${g.score.neutral} neutral point${g.score.neutral === 1 ? '' : 's'} counted for nobody`);
    cell.colSpan = 5;
    row.append(cell);
    t.append(row);
  }
  return t;
}

function card(g) {
  let c = document.getElementById(`game-${g.id}`);
  if (!c) {
    c = el('article', 'game');
    c.id = `game-${g.id}`;
  }
  c.dataset.game = g.game;
  c.dataset.state = g.state.state;
  c.dataset.moves = String(g.moves);
  c.dataset.players = g.players.map((p) => p.name).join(' ');
  const size = /(\d+)x\d+/.exec(g.title);
  if (size) c.dataset.size = size[1];
  const title = el('h3', '', `${g.title}: ${g.players[0].name} vs ${g.players[1].name} `);
  title.append(el('span', 'id', `#${g.id}`));
  const board = el('div', 'board');
  // The arcade's own SVG renderer drew it; the names in it are escaped there.
  board.innerHTML = g.svg;
  c.replaceChildren(title, playerList(g), el('p', 'state', stateText(g)), facts(g));
  if (g.score) c.append(scoreTable(g));
  c.append(board);
  return c;
}

function draw() {
  const playing = [...games.values()].filter((g) => g.state.state !== 'over').sort((a, b) => a.id - b.id);
  const finished = [...games.values()].filter((g) => g.state.state === 'over').sort((a, b) => b.ended - a.ended);
  for (const [id, list] of [['playing', playing], ['finished', finished]]) {
    const section = document.getElementById(id);
    const box = section.querySelector('.games');
    const keep = new Set(list.map((g) => `game-${g.id}`));
    for (const c of [...box.children]) if (!keep.has(c.id)) c.remove();
    for (const g of list) box.append(document.getElementById(`game-${g.id}`) || card(g));
    section.querySelector('.count').textContent = String(list.length);
    section.querySelector('.empty').hidden = list.length > 0;
  }
}

function put(g) {
  const old = games.get(g.id);
  g.ended = old && old.ended ? old.ended : g.state.state === 'over' ? ++ended : 0;
  games.set(g.id, g);
  card(g);
}

function live(state, text) {
  const line = document.getElementById('live');
  line.dataset.live = state;
  line.textContent = text;
}

function summary() {
  const n = games.size;
  live('live', `Live: ${n} game${n === 1 ? '' : 's'} shown`);
}

const source = new EventSource('events');
source.addEventListener('snapshot', (e) => {
  const list = JSON.parse(e.data).games;
  games.clear();
  for (const c of document.querySelectorAll('.game')) c.remove();
  // Listed latest-finished first: number them so that order holds.
  for (const g of [...list].reverse()) put(g);
  draw();
  summary();
});
source.addEventListener('game', (e) => {
  put(JSON.parse(e.data));
  draw();
  summary();
});
source.addEventListener('gone', (e) => {
  const { id } = JSON.parse(e.data);
  games.delete(id);
  const c = document.getElementById(`game-${id}`);
  if (c) c.remove();
  draw();
  summary();
});
source.onerror = () => live('reconnecting', 'Reconnecting…');
