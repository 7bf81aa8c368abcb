// Catalog UI: plain ES module, no dependencies, no build step. Every value from the API is
// written with textContent (never innerHTML), so tool content cannot inject markup.

const TOKEN_KEY = 'tool-registry.token';
const PAGE_SIZE = 24;
const FETCH_SIZE = 200;
const FORMATS = ['openai', 'openai-responses', 'anthropic', 'gemini', 'mcp', 'raw'];

const $ = (id) => document.getElementById(id);
// `all`: every card the token may see (loaded page by page); `limit`: how many matches are shown.
const state = { token: sessionStorage.getItem(TOKEN_KEY) ?? '', all: [], limit: PAGE_SIZE, claims: null, cards: new Map(), loading: 0 };

/** Creates an element: `el('p', { className: 'x' }, 'text', child)`. */
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'className' || key === 'textContent' || key === 'hidden' || key === 'open' || key === 'value') node[key] = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const number = new Intl.NumberFormat('en');

/** Decodes (never verifies) the token's claims, to show who the UI is acting as. */
function decodeClaims(token) {
  try {
    const payload = token.split('.')[1];
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(payload.length / 4) * 4, '='));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0))));
  } catch {
    return null;
  }
}

function scopesOf(claims) {
  const raw = claims?.scope ?? claims?.scp ?? [];
  return Array.isArray(raw) ? raw.map(String) : String(raw).split(/\s+/).filter(Boolean);
}

function showError(message) {
  const box = $('error');
  box.textContent = message;
  box.hidden = !message;
}

/** Calls the API with the pasted token; throws an Error with the contract's message on failure. */
async function api(path, options = {}) {
  const response = await fetch(path, {
    ...options,
    headers: { accept: 'application/json', authorization: `Bearer ${state.token}`, ...(options.body ? { 'content-type': 'application/json' } : {}) },
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const error = body?.error;
    const detail = error?.details?.map((d) => `${d.pointer}: ${d.message}`).join('; ');
    const retry = response.headers.get('retry-after');
    throw new Error(
      `${response.status} ${error?.code ?? 'error'}: ${error?.message ?? response.statusText}${detail ? ` (${detail})` : ''}${retry ? ` Retry in ${retry} s.` : ''}`,
    );
  }
  return body;
}

// ---- token --------------------------------------------------------------------------------

function renderIdentity() {
  const help = $('token-help');
  const claims = state.claims;
  if (!state.token) {
    help.textContent = 'The token stays in this tab only (session storage) and is sent to this service, nowhere else.';
    return;
  }
  if (!claims) {
    help.textContent = 'Token set (its claims could not be decoded; the service decides whether it is valid).';
    return;
  }
  const scopes = scopesOf(claims);
  const expires = typeof claims.exp === 'number' ? Math.round((claims.exp * 1000 - Date.now()) / 60000) : null;
  help.replaceChildren(
    'Acting as ',
    el('strong', {}, String(claims.sub ?? 'anonymous')),
    ' in tenant ',
    el('strong', {}, String(claims.tenant_id ?? claims.tenant ?? '?')),
    ' with ',
    scopes.length ? el('span', {}, scopes.map((s, i) => [i ? ' ' : '', el('code', { className: 'chip scope' }, s)])) : 'no scopes',
    expires === null ? '' : expires > 0 ? ` · expires in ${expires} min` : ' · expired',
    el('span', { className: 'muted' }, ' (decoded here, verified by the service)'),
  );
}

function setToken(token) {
  state.token = token.trim().replace(/^Bearer\s+/i, '');
  state.claims = state.token ? decodeClaims(state.token) : null;
  if (state.token) sessionStorage.setItem(TOKEN_KEY, state.token);
  else sessionStorage.removeItem(TOKEN_KEY);
  $('token').value = state.token;
  $('refresh').disabled = !state.token;
  renderIdentity();
  showError('');
  $('results').replaceChildren();
  $('discover-summary').hidden = true;
  void loadCatalog();
}

// ---- catalog ------------------------------------------------------------------------------

function chips(values, className) {
  return values.map((v) => el('li', { className: `chip ${className}` }, v));
}

function tokenCosts(tokens, highlight) {
  return el(
    'dl',
    { className: 'costs', 'aria-label': 'Prompt tokens per format' },
    FORMATS.map((format) =>
      el('div', { className: format === highlight ? 'cost current' : 'cost' }, el('dt', {}, format), el('dd', {}, number.format(tokens?.[format] ?? 0))),
    ),
  );
}

function badges(card) {
  return el(
    'ul',
    { className: 'badges', 'aria-label': 'Properties' },
    el('li', { className: 'badge version' }, `v${card.version}`),
    card.status === 'retired' ? el('li', { className: 'badge retired' }, 'retired') : null,
    el('li', { className: `badge sensitivity-${card.sensitivity}` }, `${card.sensitivity} sensitivity`),
    card.side_effects ? el('li', { className: 'badge effects' }, 'side effects') : el('li', { className: 'badge readonly' }, 'read-only'),
  );
}

function cardBody(card) {
  return [
    el('p', { className: 'summary-text' }, card.summary),
    card.not_for ? el('p', { className: 'not-for' }, el('span', { className: 'label' }, 'Not for: '), card.not_for) : null,
    el(
      'div',
      { className: 'meta' },
      card.category ? el('span', { className: 'category' }, card.category) : null,
      card.tags.length ? el('ul', { className: 'chips', 'aria-label': 'Tags' }, chips(card.tags, 'tag')) : null,
      card.required_scopes.length
        ? el('ul', { className: 'chips', 'aria-label': 'Required scopes' }, chips(card.required_scopes, 'scope'))
        : el('span', { className: 'muted small' }, 'no scopes required'),
    ),
  ];
}

function pre(value, label) {
  return el('pre', { className: 'schema', tabindex: '0', 'aria-label': label }, el('code', {}, JSON.stringify(value, null, 2)));
}

/** Lazily loads a tool's full document (and, for publishers, its history) when details open. */
function detailsFor(card) {
  const body = el('div', { className: 'details-body' }, el('p', { className: 'muted' }, 'Loading…'));
  const details = el('details', { className: 'more' }, el('summary', {}, 'Full schema'), body);
  let loaded = false;
  details.addEventListener('toggle', async () => {
    if (!details.open || loaded) return;
    loaded = true;
    try {
      const name = encodeURIComponent(card.name);
      const tool = await api(`/v1/tools/${name}`);
      const parts = [el('p', { className: 'description' }, tool.description), el('h4', {}, 'Parameters'), pre(tool.parameters, `Parameters of ${card.name}`)];
      if (tool.returns) parts.push(el('h4', {}, 'Returns'), pre(tool.returns, `Return value of ${card.name}`));
      if (scopesOf(state.claims).includes('registry:publish')) {
        const { versions } = await api(`/v1/tools/${name}/versions`);
        parts.push(
          el('h4', {}, 'Versions'),
          el(
            'ul',
            { className: 'versions', 'aria-label': 'Versions, newest first' },
            [...versions]
              .sort((x, y) => y.revision - x.revision)
              .map((v, i) =>
                el('li', { className: i === 0 ? 'current-version' : undefined }, el('strong', {}, v.version), ` · revision ${v.revision} · ${new Date(v.created_at).toLocaleString()}`, v.created_by ? ` · ${v.created_by}` : ''),
              ),
          ),
        );
      }
      body.replaceChildren(...parts);
    } catch (error) {
      loaded = false;
      body.replaceChildren(el('p', { className: 'inline-error' }, error.message));
    }
  });
  return details;
}

function catalogCard(card) {
  return el(
    'li',
    { className: 'card', 'data-tool': card.name },
    el('article', { 'aria-labelledby': `tool-${card.name}` }, el('header', { className: 'card-head' }, el('h3', { id: `tool-${card.name}`, className: 'tool-name' }, card.name), badges(card)), cardBody(card), tokenCosts(card.tokens), detailsFor(card)),
  );
}

/** The words a card is searched by: its name split into words, texts, aliases, tags and category. */
function haystack(card) {
  const nameWords = card.name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_.-]+/g, ' ');
  return [card.name, nameWords, card.summary, card.not_for ?? '', ...card.aliases, ...card.examples, ...card.tags, card.category ?? '', ...card.required_scopes].join(' \n ').toLowerCase();
}

/** The cards matching the search box and filters, in catalog (name) order. */
function matches() {
  const words = $('search').value.toLowerCase().split(/\s+/).filter(Boolean);
  const category = $('filter-category').value;
  const tag = $('filter-tag').value;
  const effects = $('filter-effects').value;
  return state.all.filter(
    (card) =>
      (!category || card.category === category) &&
      (!tag || card.tags.includes(tag)) &&
      (!effects || (effects === 'side-effects') === card.side_effects) &&
      words.every((word) => card.haystack.includes(word)),
  );
}

function fillSelect(select, values) {
  const current = select.value;
  select.replaceChildren(el('option', { value: '' }, 'All'), ...values.map((v) => el('option', { value: v }, v)));
  select.value = values.includes(current) ? current : '';
}

/** Renders the first `state.limit` matches and the count line. */
function renderCatalog() {
  const found = matches();
  const shown = found.slice(0, state.limit);
  $('catalog').replaceChildren(
    ...shown.map((card) => {
      // One element per tool, kept across renders, so an opened schema stays open while filtering.
      if (!state.cards.has(card.name)) state.cards.set(card.name, catalogCard(card));
      return state.cards.get(card.name);
    }),
  );
  const total = state.all.length;
  const filtered = found.length !== total;
  const parts = [total === 0 ? 'This token may see no tools.' : `${number.format(total)} tool${total === 1 ? '' : 's'}`];
  if (total > 0 && filtered) parts.push(`${number.format(found.length)} match${found.length === 1 ? '' : 'es'}`);
  if (shown.length < found.length) parts.push(`showing ${number.format(shown.length)}`);
  if (state.loading) parts.push('loading more…');
  $('catalog-status').textContent = parts.join(' · ');
  $('more').hidden = shown.length >= found.length;
}

/** Loads every card the token may see (pages of FETCH_SIZE), rendering as pages arrive. */
async function loadCatalog() {
  const generation = (state.loading = (state.loading || 0) + 1);
  state.all = [];
  state.cards = new Map();
  state.limit = PAGE_SIZE;
  $('catalog').replaceChildren();
  for (const id of ['search', 'filter-category', 'filter-tag', 'filter-effects']) $(id).disabled = !state.token;
  if (!state.token) {
    state.loading = 0;
    $('more').hidden = true;
    $('catalog-status').textContent = 'Paste a token to see the tools it may use.';
    return;
  }
  $('catalog-status').textContent = 'Loading…';
  try {
    let cursor = null;
    do {
      const query = new URLSearchParams({ limit: String(FETCH_SIZE) });
      if (cursor) query.set('cursor', cursor);
      const page = await api(`/v1/tools?${query}`);
      if (state.loading !== generation) return; // a newer load (token change, refresh) took over
      state.all.push(...page.tools.map((card) => ({ ...card, haystack: haystack(card) })));
      cursor = page.next_cursor;
      if (!cursor) state.loading = 0;
      fillSelect($('filter-category'), [...new Set(state.all.map((c) => c.category).filter(Boolean))].sort());
      fillSelect($('filter-tag'), [...new Set(state.all.flatMap((c) => c.tags))].sort());
      renderCatalog();
    } while (cursor);
  } catch (error) {
    state.loading = 0;
    $('catalog-status').textContent = 'Could not load the catalog.';
    showError(error.message);
  }
}

// ---- discovery playground -------------------------------------------------------------------

function resultCard(tool, rank, format, best) {
  const percent = Math.max(0, Math.min(100, Math.round((tool.score / (best || 1)) * 100)));
  return el(
    'li',
    { className: 'card result', 'data-tool': tool.name },
    el(
      'article',
      { 'aria-labelledby': `result-${tool.name}` },
      el(
        'header',
        { className: 'card-head' },
        el('span', { className: 'rank', 'aria-hidden': 'true' }, String(rank)),
        el('h3', { id: `result-${tool.name}`, className: 'tool-name' }, tool.name),
        badges(tool.card),
        el(
          'div',
          { className: 'score' },
          el('span', { className: 'score-label' }, 'score ', el('strong', {}, tool.score.toFixed(3))),
          el('span', { className: 'bar', role: 'img', 'aria-label': `${percent}% of the best score` }, el('span', { className: 'bar-fill', 'data-width': String(percent) })),
        ),
      ),
      cardBody(tool.card),
      tokenCosts(tool.card.tokens, format),
      el('details', { className: 'more', open: rank === 1 }, el('summary', {}, `Schema (${format})`), pre(tool.schema, `${format} schema of ${tool.name}`)),
    ),
  );
}

function summaryOf(result, format) {
  const saved = result.tokens.catalog > 0 ? Math.round((1 - result.tokens.shortlist / result.tokens.catalog) * 100) : 0;
  const item = (label, value, className = '') => el('div', { className: `stat ${className}` }, el('dt', {}, label), el('dd', {}, value));
  return el(
    'dl',
    { className: 'stats' },
    item('tools', String(result.tools.length)),
    item('search mode', result.search_mode, result.search_mode === 'hybrid' ? '' : 'warn'),
    item('confidence', result.low_confidence ? 'low' : 'ok', result.low_confidence ? 'warn' : 'good'),
    item(`${format} tokens`, `${number.format(result.tokens.shortlist)} of ${number.format(result.tokens.catalog)}`),
    item('saved', `${saved}%`, 'good'),
    item('discovery id', el('code', {}, result.discovery_id), 'id'),
  );
}

async function discover(event) {
  event.preventDefault();
  showError('');
  if (!state.token) {
    showError('Paste a token first.');
    $('token').focus();
    return;
  }
  const query = $('query').value.trim();
  const topK = Number($('top-k').value);
  const format = $('format').value;
  const summary = $('discover-summary');
  const results = $('results');
  const button = $('discover-submit');
  button.disabled = true;
  button.textContent = 'Searching…';
  try {
    const started = performance.now();
    const result = await api('/v1/discover', { method: 'POST', body: JSON.stringify({ query, top_k: topK, format }) });
    const elapsed = Math.round(performance.now() - started);
    const best = result.tools[0]?.score ?? 1;
    summary.replaceChildren(summaryOf(result, format), el('p', { className: 'muted small' }, `${elapsed} ms round trip`));
    summary.hidden = false;
    results.replaceChildren(...result.tools.map((tool, i) => resultCard(tool, i + 1, format, best)));
    for (const fill of results.querySelectorAll('.bar-fill')) fill.style.width = `${fill.dataset.width}%`;
    if (result.tools.length === 0) results.append(el('li', { className: 'empty' }, 'No tool fits this request (or none that this token may use).'));
  } catch (error) {
    showError(error.message);
  } finally {
    button.disabled = false;
    button.textContent = 'Discover';
  }
}

// ---- tabs (WAI-ARIA tabs pattern: arrows move, Home/End jump) --------------------------------

function selectTab(tab, focus) {
  for (const other of document.querySelectorAll('[role="tab"]')) {
    const selected = other === tab;
    other.setAttribute('aria-selected', String(selected));
    other.tabIndex = selected ? 0 : -1;
    $(other.getAttribute('aria-controls')).hidden = !selected;
  }
  if (focus) tab.focus();
}

function wireTabs() {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  for (const tab of tabs) {
    tab.addEventListener('click', () => selectTab(tab, false));
    tab.addEventListener('keydown', (event) => {
      const i = tabs.indexOf(tab);
      const next = { ArrowRight: tabs[(i + 1) % tabs.length], ArrowLeft: tabs[(i - 1 + tabs.length) % tabs.length], Home: tabs[0], End: tabs.at(-1) }[event.key];
      if (next) {
        event.preventDefault();
        selectTab(next, true);
      }
    });
  }
}

// ---- start ----------------------------------------------------------------------------------

$('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  setToken($('token').value);
});
$('forget').addEventListener('click', () => setToken(''));
$('refresh').addEventListener('click', () => loadCatalog());
$('more').addEventListener('click', () => {
  state.limit += PAGE_SIZE;
  renderCatalog();
});
$('filters').addEventListener('submit', (event) => event.preventDefault());
for (const id of ['search', 'filter-category', 'filter-tag', 'filter-effects']) {
  $(id).addEventListener(id === 'search' ? 'input' : 'change', () => {
    state.limit = PAGE_SIZE;
    renderCatalog();
  });
}
$('discover-form').addEventListener('submit', discover);
$('query').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    $('discover-form').requestSubmit();
  }
});
wireTabs();
if (state.token) setToken(state.token);
