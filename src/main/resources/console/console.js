// The operator console of idem: plain JavaScript, served by idem, calling only idem's admin API.
// With an identity provider the page is reached through its sign-in and calls the API with the
// session cookie, each change carrying the page's CSRF token; a viewer's buttons are disabled (the
// API refuses anyway). Without one, the admin token lives in this tab's sessionStorage and goes as
// X-Admin-Token with every call; without a token the API accepts, only the sign-in form shows.
'use strict';

const TOKEN_KEY = 'idem.admin-token';
const REFRESH_MS = 5000;
const DEAD_LETTERS_SHOWN = 20;

const CHECKS = {
  paidOrdersWithoutCoupon: 'Paid orders without their coupon',
  couponsWithoutPaidOrder: 'Coupons whose order is not paid',
  ordersWithSeveralCoupons: 'Orders with more than one coupon',
  hangingDedupRecords: 'Hanging two-phase records',
  failedDedupRecords: 'FAILED two-phase records',
  doneMarksWithoutRecord: 'Answered DONE, record lost (a failover?)',
  unresolvedAnomalies: 'Unresolved payment anomalies',
  staleOutboxEvents: 'Outbox events not published in time',
};

const SERIES = {
  deliveries: { keys: ['PROCESSED', 'DUPLICATE', 'IN_FLIGHT', 'KEY_REUSED', 'ANOMALY', 'REJECTED'] },
  duplicates: { keys: ['redis', 'db', 'state'] },
  redisDegraded: { keys: ['skipped'] },
  outboxLagSeconds: { keys: ['lag'], level: true },
};

const $ = (id) => document.getElementById(id);
const number = (n) => Number(n).toLocaleString('en-US');
const plural = (n, word) => number(n) + ' ' + word + (n === 1 ? '' : 's');
const time = (iso) => (iso ? new Date(iso).toLocaleTimeString('en-GB', { hour12: false }) : '');

class Unauthorized extends Error {}

/** How this tab is signed in: 'provider' (session cookie) or 'token' (X-Admin-Token); who, as /admin/me says. */
const session = { by: null, who: null };
const mayChange = () => session.who && session.who.role === 'operator';

// ---------------------------------------------------------------- the admin API

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** The page's double-submit token, which a change sends back as a header. */
function csrf() {
  const found = document.cookie.match(/(?:^|; )idem-csrf=([^;]*)/);
  return found ? decodeURIComponent(found[1]) : '';
}

async function api(method, path) {
  let response;
  try {
    const headers = { Accept: 'application/json' };
    if (session.by !== 'provider') headers['X-Admin-Token'] = token() || '';
    if (method !== 'GET') headers['X-CSRF-Token'] = csrf();
    response = await fetch(path, { method, headers, cache: 'no-store', credentials: 'same-origin' });
  } catch (unreachable) {
    throw new Error('idem did not answer (' + unreachable.message + ')');
  }
  if (response.status === 401) {
    signOut(session.by === 'provider' ? 'Your sign-in has ended: reload the page to sign in again.'
      : 'The admin token was refused: nothing is shown without a valid one.');
    throw new Unauthorized();
  }
  const text = await response.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch (notJson) {
    body = null;
  }
  return { status: response.status, body };
}

/** The problem an answer carries, in words. */
function problem(answer) {
  const body = answer.body || {};
  return (body.code ? body.code + ': ' : '') + (body.detail || body.title || 'answered ' + answer.status);
}

// ---------------------------------------------------------------- DOM helpers

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === 'class') node.className = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value);
  }
  for (const child of children) {
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A button that changes something: disabled for a viewer. */
function changeButton(label, onclick) {
  const button = el('button', { type: 'button', class: 'change', onclick }, label);
  button.disabled = !mayChange();
  return button;
}

function svg(tag, attrs = {}) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  return node;
}

function rows(tbody, list, empty, columns) {
  tbody.replaceChildren();
  if (list.length === 0) {
    tbody.append(el('tr', { class: 'empty' }, el('td', { colspan: String(columns) }, empty)));
  }
  for (const row of list) tbody.append(row);
}

function say(id, text, failed = false) {
  const node = $(id);
  node.textContent = text;
  node.classList.toggle('error', failed);
}

/** "scope:key" (or "KIND:order") split at its first colon: keys may hold colons. */
function pair(sample) {
  const at = sample.indexOf(':');
  return at < 0 ? [sample, ''] : [sample.slice(0, at), sample.slice(at + 1)];
}

// ---------------------------------------------------------------- session

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  session.who = null;
  clearTimeout(state.timer);
  $('dashboard').hidden = true;
  $('session').hidden = true;
  for (const id of ['reconciliation-checks', 'bills-rows', 'anomalies-rows', 'records-rows', 'dead-letters-rows', 'audit-rows', 'trail-result']) {
    $(id).replaceChildren();
  }
  for (const chart of document.querySelectorAll('.chart')) {
    chart.querySelector('svg').replaceChildren();
    chart.querySelector('.legend').replaceChildren();
  }
  for (const id of ['reconciliation-summary', 'bills-summary', 'bill-result', 'anomalies-summary', 'records-summary', 'dead-letters-summary',
    'repair-result', 'records-result', 'dead-letters-result', 'refreshed']) {
    say(id, '');
  }
  $('sign-in').hidden = false;
  const error = $('sign-in-error');
  error.hidden = !message;
  error.textContent = message || '';
}

async function signIn(candidate) {
  session.by = 'token';
  sessionStorage.setItem(TOKEN_KEY, candidate);
  let me;
  try {
    me = await api('GET', '/admin/me');
  } catch (refused) {
    if (!(refused instanceof Unauthorized)) signOut(refused.message);
    return;
  }
  await enter(me.body);
}

/** Signed in as {@code who}: the dashboard, with what they may not do disabled. */
async function enter(who) {
  session.who = who;
  say('who', (who.name || who.subject) + ' · ' + who.role);
  for (const change of document.querySelectorAll('button.change, form.change button')) {
    change.disabled = !mayChange();
    change.title = mayChange() ? '' : 'changes need the role idem-operator';
  }
  $('sign-in').hidden = true;
  $('sign-in-error').hidden = true;
  $('dashboard').hidden = false;
  $('session').hidden = false;
  await refresh();
}

// ---------------------------------------------------------------- refresh

const state = { timer: null, busy: false, again: false, history: null };

async function refresh() {
  if (!session.who) return;
  if (state.busy) {
    // a change answered while a refresh was under way: refresh once more after it, to show the change
    state.again = true;
    return;
  }
  state.busy = true;
  state.again = false;
  clearTimeout(state.timer);
  try {
    await Promise.all([loadHistory(), loadReconciliation(), loadBills(), loadDeadLetters(), loadAudit()]);
    $('problem').hidden = true;
    say('refreshed', 'refreshed ' + time(new Date().toISOString()));
  } catch (failure) {
    if (failure instanceof Unauthorized) return;
    $('problem').hidden = false;
    $('problem').textContent = failure.message;
  } finally {
    state.busy = false;
  }
  if (state.again) {
    refresh();
    return;
  }
  if ($('auto-refresh').checked && session.who) state.timer = setTimeout(refresh, REFRESH_MS);
}

// ---------------------------------------------------------------- charts

async function loadHistory() {
  const answer = await api('GET', '/admin/history');
  if (answer.status !== 200) throw new Error('history: ' + problem(answer));
  state.history = answer.body;
  drawCharts();
}

function scopesOf(history) {
  const scopes = new Set();
  for (const sample of history.samples.concat([history.current])) {
    for (const scope of Object.keys(sample.deliveries)) scopes.add(scope);
  }
  return [...scopes].sort();
}

function fillScopes(scopes) {
  const select = $('scope');
  const known = new Set([...select.options].map((o) => o.value));
  for (const scope of scopes) {
    if (!known.has(scope)) select.append(el('option', { value: scope }, scope));
  }
  const list = $('scopes');
  list.replaceChildren(...scopes.map((scope) => el('option', { value: scope })));
}

/** One sample's values of one series, for the chosen scope ('' : all scopes summed). */
function valuesOf(sample, series, scope) {
  if (series === 'outboxLagSeconds') {
    return { lag: sample.outboxLagSeconds == null ? 0 : sample.outboxLagSeconds };
  }
  if (series === 'redisDegraded') {
    const by = sample.redisDegraded;
    const skipped = scope ? by[scope] || 0 : Object.values(by).reduce((a, b) => a + b, 0);
    return { skipped };
  }
  const values = {};
  for (const [name, counts] of Object.entries(sample[series])) {
    if (scope && name !== scope) continue;
    for (const [key, count] of Object.entries(counts)) values[key] = (values[key] || 0) + count;
  }
  return values;
}

function drawCharts() {
  const history = state.history;
  fillScopes(scopesOf(history));
  $('history-note').textContent = 'Kept in this instance\'s memory: a bar every ' + history.intervalSeconds
    + ' s, the last ' + Math.round(history.historySeconds / 60) + ' min at most, the right-most bar still '
    + 'filling; empty after a restart; another instance of idem keeps its own.';
  const scope = $('scope').value;
  const chosen = $('window').selectedOptions[0];
  $('charts-title').textContent = chosen.textContent.charAt(0).toUpperCase() + chosen.textContent.slice(1);
  const window = Math.min(Number($('window').value), history.historySeconds);
  // one slot per sample interval of the window, and one for the interval still filling
  const slots = Math.max(1, Math.round(window / history.intervalSeconds) + 1);
  const points = history.samples.concat([history.current]).slice(-slots);
  for (const figure of document.querySelectorAll('.chart')) {
    drawChart(figure, figure.dataset.series, points, scope, slots);
  }
}

function drawChart(figure, series, points, scope, slots) {
  const { keys, level } = SERIES[series];
  const width = 360;
  const height = 120;
  const slot = width / slots;
  const values = points.map((point) => valuesOf(point, series, scope));
  const top = Math.max(1, ...values.map((v) => keys.reduce((sum, k) => sum + (v[k] || 0), 0)));
  const canvas = figure.querySelector('svg');
  canvas.replaceChildren();
  canvas.append(svg('line', { x1: 0, y1: height - 0.5, x2: width, y2: height - 0.5, class: 'axis' }));
  // one slot per sample, the one still filling at the right edge
  points.forEach((point, i) => {
    const x = slot * (slots - points.length + i);
    if (x < 0) return;
    let y = height;
    keys.forEach((key, k) => {
      const value = values[i][key] || 0;
      if (value <= 0) return;
      const h = Math.max(1, (value / top) * (height - 4));
      y -= h;
      const bar = svg('rect', { x: x.toFixed(2), y: y.toFixed(2), width: Math.max(1, slot - 0.3).toFixed(2),
        height: h.toFixed(2), class: 'bar c' + k, 'data-key': key, 'data-value': value });
      const title = svg('title');
      title.textContent = time(point.at) + ' · ' + key + ' ' + number(value);
      bar.append(title);
      canvas.append(bar);
    });
  });
  const legend = figure.querySelector('.legend');
  legend.replaceChildren();
  keys.forEach((key, k) => {
    let text;
    let total;
    if (level) {
      total = values[values.length - 1][key] || 0;
      const max = Math.max(0, ...values.map((v) => v[key] || 0));
      text = 'now ' + number(total) + ' s · at most ' + number(max) + ' s';
    } else {
      total = values.reduce((sum, v) => sum + (v[key] || 0), 0);
      text = (keys.length > 1 ? key + ' ' : '') + number(total);
    }
    legend.append(el('li', { 'data-key': key, 'data-total': String(total) },
      el('span', { class: 'swatch c' + k }), text));
  });
}

// ---------------------------------------------------------------- reconciliation

async function loadReconciliation() {
  const since = $('since').value.trim();
  const answer = await api('GET', '/admin/reconciliation' + (since ? '?since=' + encodeURIComponent(since) : ''));
  if (answer.status !== 200) {
    say('reconciliation-summary', problem(answer), true);
    return;
  }
  const report = answer.body;
  const checks = report.checks;
  let findings = 0;
  let failing = 0;
  const list = Object.entries(checks).map(([name, check]) => {
    findings += check.count;
    failing += check.count > 0 ? 1 : 0;
    return el('tr', { 'data-check': name, class: check.count > 0 ? 'finding' : '' },
      el('td', {}, CHECKS[name] || name),
      el('td', { class: 'count', 'data-count': String(check.count) }, number(check.count)),
      el('td', { class: 'samples' }, check.samples.join(', ')));
  });
  rows($('reconciliation-checks'), list, 'no checks', 3);
  say('reconciliation-summary', report.healthy
    ? 'All checks zero' + (since ? ' since ' + since : '') + '.'
    : plural(findings, 'finding') + ' in ' + plural(failing, 'check') + '.', !report.healthy);
  renderAnomalies(checks.unresolvedAnomalies);
  renderRecords(checks.hangingDedupRecords, checks.failedDedupRecords);
}

// ---------------------------------------------------------------- bills

const FINDINGS = ['paidThereNotHere', 'paidHereNotThere', 'amountMismatch', 'refunds'];

async function loadBills() {
  const answer = await api('GET', '/admin/reconciliation/gateways/bills?limit=10');
  if (answer.status !== 200) {
    say('bills-summary', problem(answer), true);
    return;
  }
  const list = answer.body.bills.map((bill) => el('tr', { 'data-gateway': bill.gateway, 'data-date': bill.date },
    el('td', {}, bill.gateway), el('td', {}, bill.date), el('td', { class: 'count' }, number(bill.lines)),
    el('td', { class: 'count' }, number(bill.applied)), el('td', { class: 'count' }, number(bill.duplicates)),
    ...FINDINGS.map((name) => {
      const finding = bill.findings[name];
      const orders = finding.samples.map((sample) => sample.orderId).join(', ');
      return el('td', { class: finding.count > 0 && name !== 'refunds' ? 'finding' : '', 'data-finding': name,
        'data-count': String(finding.count), title: orders }, number(finding.count));
    })));
  rows($('bills-rows'), list, 'no bill imported yet', 9);
  const anomalies = answer.body.bills.reduce((sum, bill) => sum + bill.findings.paidHereNotThere.count
    + bill.findings.amountMismatch.count, 0);
  say('bills-summary', list.length === 0 ? '' : anomalies === 0 ? 'No anomaly in the last imports.'
    : plural(anomalies, 'finding') + ' to raise with the gateways in the last imports: hover a count for its orders.',
    anomalies > 0);
}

async function importBill() {
  const gateway = $('bill-gateway').value;
  const date = $('bill-date').value;
  say('bill-result', 'Importing…');
  const answer = await api('POST', '/admin/reconciliation/gateways/' + gateway + '/bills?date=' + encodeURIComponent(date));
  if (answer.status !== 200) {
    say('bill-result', 'Not imported: ' + problem(answer), true);
    return;
  }
  const r = answer.body;
  say('bill-result', 'Imported ' + plural(r.lines, 'line') + ': ' + number(r.applied) + ' applied, '
    + number(r.duplicates) + ' already here.');
  await loadBills();
}

function renderAnomalies(check) {
  const list = check.samples.map((sample) => {
    const [kind, order] = pair(sample);
    return el('tr', {}, el('td', {}, kind), el('td', {}, order));
  });
  rows($('anomalies-rows'), list, 'no unresolved anomaly', 2);
  say('anomalies-summary', check.count === 0 ? 'None unresolved.'
    : number(check.count) + ' unresolved' + (check.count > list.length ? ', the first ' + list.length + ' shown' : '') + '.');
}

function renderRecords(hanging, failed) {
  const list = [];
  for (const sample of hanging.samples) {
    const [scope, key] = pair(sample);
    list.push(el('tr', { 'data-status': 'hanging' }, el('td', {}, 'hanging'), el('td', {}, scope), el('td', {}, key),
      el('td', {})));
  }
  for (const sample of failed.samples) {
    const [scope, key] = pair(sample);
    list.push(el('tr', { 'data-status': 'FAILED' }, el('td', {}, 'FAILED'), el('td', {}, scope), el('td', {}, key),
      el('td', {}, changeButton('Re-drive', () => redriveFailed(scope, key)))));
  }
  rows($('records-rows'), list, 'nothing hanging, nothing FAILED', 4);
  say('records-summary', number(hanging.count) + ' hanging, ' + number(failed.count) + ' FAILED.');
}

async function repair() {
  $('repair-confirm').hidden = true;
  say('repair-result', 'Repairing…');
  const answer = await api('POST', '/admin/reconciliation/repair');
  if (answer.status !== 200) {
    say('repair-result', 'Repair failed: ' + problem(answer), true);
    return;
  }
  const redrive = answer.body.redrive;
  say('repair-result', 'Repaired: ' + plural(answer.body.grantsRepublished, 'grant') + ' re-published; hanging records '
    + 'examined ' + redrive.examined + ', taken over ' + redrive.takenOver + ', done ' + redrive.done
    + ', failed ' + redrive.failed + '.');
  await refresh();
}

async function redriveHanging() {
  const answer = await api('POST', '/admin/dedup/redrive');
  if (answer.status !== 200) {
    say('records-result', 'Re-drive failed: ' + problem(answer), true);
    return;
  }
  const r = answer.body;
  say('records-result', 'Hanging records examined ' + r.examined + ', taken over ' + r.takenOver + ', done ' + r.done
    + ', failed ' + r.failed + '.');
  await refresh();
}

async function redriveFailed(scope, key) {
  const answer = await api('POST', '/admin/dedup/' + encodeURIComponent(scope) + '/' + encodeURIComponent(key) + '/redrive');
  say('records-result', answer.status === 200 ? scope + ' ' + key + ': ' + answer.body.result + '.'
    : scope + ' ' + key + ': ' + problem(answer), answer.status !== 200);
  await refresh();
}

// ---------------------------------------------------------------- dead letters

async function loadDeadLetters() {
  const channel = $('channel').value;
  const answer = await api('GET', '/admin/dead-letters/' + encodeURIComponent(channel) + '?limit=' + DEAD_LETTERS_SHOWN);
  if (answer.status !== 200) {
    rows($('dead-letters-rows'), [], 'not available', 7);
    say('dead-letters-summary', problem(answer), true);
    return;
  }
  const page = answer.body;
  const list = page.records.map((letter) => {
    const position = letter.partition + ':' + letter.offset;
    const value = letter.valueEncoding === 'base64' ? '(base64) ' + letter.value : letter.value;
    const redriven = letter.redrivenAt ? 're-driven ' + time(letter.redrivenAt)
      : letter.redrivenFrom ? 'came back from ' + letter.redrivenFrom : '';
    return el('tr', { 'data-position': position },
      el('td', {}, time(letter.timestamp)),
      el('td', {}, position),
      el('td', { class: 'reason' }, letter.reason || ''),
      el('td', {}, letter.key == null ? '' : letter.key),
      el('td', { class: 'value', title: value || '' }, value == null ? '(none)' : value.length > 120 ? value.slice(0, 120) + '…' : value),
      el('td', { class: 'redriven' }, redriven),
      el('td', {}, changeButton('Re-drive', () => redrive(channel, position))));
  });
  rows($('dead-letters-rows'), list, 'no dead letter', 7);
  say('dead-letters-summary', number(page.total) + ' in ' + page.topic
    + (page.total > list.length ? ', the newest ' + list.length + ' shown' : '') + '.');
}

async function redrive(channel, position) {
  const path = '/admin/dead-letters/' + encodeURIComponent(channel) + '/redrive'
    + (position ? '?offset=' + encodeURIComponent(position) : '');
  const answer = await api('POST', path);
  if (answer.status !== 200) {
    say('dead-letters-result', 'Re-drive failed: ' + problem(answer), true);
    return;
  }
  const t = answer.body;
  say('dead-letters-result', (position ? position + ': ' : 'All: ') + 'examined ' + t.examined + ', re-driven '
    + t.redriven + ', skipped ' + t.skipped + ' (re-driven before), ' + t.returned + ' came back from a re-drive.');
  await refresh();
}

// ---------------------------------------------------------------- audit trail

async function loadAudit() {
  const answer = await api('GET', '/admin/audit?limit=' + DEAD_LETTERS_SHOWN);
  if (answer.status !== 200) {
    rows($('audit-rows'), [], 'not available', 6);
    say('audit-summary', problem(answer), true);
    return;
  }
  const list = answer.body.map((entry) => el('tr', {},
    el('td', {}, time(entry.at)),
    el('td', { title: entry.subject }, entry.name || entry.subject),
    el('td', {}, entry.action),
    el('td', {}, entry.target || ''),
    el('td', {}, String(entry.status)),
    el('td', { class: 'value' }, entry.result ? JSON.stringify(entry.result) : '')));
  rows($('audit-rows'), list, 'no change made and none refused', 6);
  say('audit-summary', 'The newest ' + number(list.length) + ' of every change, and of every refusal whose caller could be read.');
}

// ---------------------------------------------------------------- one key's trail

async function lookUp() {
  const scope = $('trail-scope').value.trim();
  const key = $('trail-key').value;
  const out = $('trail-result');
  const answer = await api('GET', '/admin/dedup/' + encodeURIComponent(scope) + '/' + encodeURIComponent(key));
  if (answer.status === 404) {
    out.replaceChildren(el('p', {}, 'No layer knows ' + scope + ' ' + key + '.'));
    return;
  }
  if (answer.status !== 200) {
    out.replaceChildren(el('p', { class: 'error' }, problem(answer)));
    return;
  }
  const trail = answer.body;
  const record = trail.record;
  const list = el('dl', {},
    el('dt', {}, 'Redis'), el('dd', {}, trail.redis == null ? 'absent' : String(trail.redis)),
    el('dt', {}, 'Record'), el('dd', {}, record == null ? 'none in the hot table'
      : record.status + ', ' + record.attempts + (record.attempts === 1 ? ' attempt' : ' attempts')
        + ', created ' + record.createdAt + ', updated ' + record.updatedAt + ', expires ' + record.expiresAt
        + (record.leaseUntil ? ', lease until ' + record.leaseUntil : '')),
    el('dt', {}, 'Result'), el('dd', { class: 'value' }, record && record.result ? JSON.stringify(record.result) : ''),
    el('dt', {}, 'Applied in trace'), el('dd', { class: 'value' }, !record || !record.traceId ? 'not traced'
      : trail.traceUrl ? el('a', { href: trail.traceUrl, target: '_blank', rel: 'noopener' }, record.traceId) : record.traceId),
    el('dt', {}, 'Archived'), el('dd', {}, trail.archived.length === 0 ? 'never'
      : trail.archived.map((a) => a.status + ' archived ' + a.archivedAt).join('; ')));
  out.replaceChildren(list);
}

// ---------------------------------------------------------------- wiring

function guarded(action) {
  return async (event) => {
    if (event) event.preventDefault();
    try {
      await action();
    } catch (failure) {
      if (failure instanceof Unauthorized) return;
      $('problem').hidden = false;
      $('problem').textContent = failure.message;
    }
  };
}

document.addEventListener('DOMContentLoaded', () => {
  $('sign-in-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const candidate = $('token').value;
    $('token').value = '';
    signIn(candidate);
  });
  $('sign-out').addEventListener('click', () => {
    if (session.by === 'provider') window.location.assign('/admin/console/sign-out');
    else signOut('');
  });
  $('refresh').addEventListener('click', guarded(refresh));
  $('auto-refresh').addEventListener('change', () => {
    clearTimeout(state.timer);
    if ($('auto-refresh').checked) refresh();
  });
  $('scope').addEventListener('change', () => state.history && drawCharts());
  $('window').addEventListener('change', () => state.history && drawCharts());
  $('since-form').addEventListener('submit', guarded(loadReconciliation));
  $('bill-form').addEventListener('submit', guarded(importBill));
  $('repair').addEventListener('click', () => { $('repair-confirm').hidden = false; });
  $('repair-no').addEventListener('click', () => { $('repair-confirm').hidden = true; });
  $('repair-yes').addEventListener('click', guarded(repair));
  $('redrive-hanging').addEventListener('click', guarded(redriveHanging));
  $('channel').addEventListener('change', guarded(loadDeadLetters));
  $('redrive-all').addEventListener('click', guarded(() => redrive($('channel').value, null)));
  $('trail-form').addEventListener('submit', guarded(lookUp));
  startSession();
});

/** Signed in at the provider already (the page is behind its sign-in), or by a token kept in this tab. */
async function startSession() {
  let me = null;
  try {
    me = await fetch('/admin/me', { headers: { Accept: 'application/json' }, cache: 'no-store', credentials: 'same-origin' });
  } catch (unreachable) {
    me = null;
  }
  if (me && me.ok) {
    session.by = 'provider';
    await enter(await me.json());
  } else if (token()) {
    await signIn(token());
  } else {
    $('sign-in').hidden = false;
  }
}
