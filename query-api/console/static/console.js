// The live console: discovery board and token pages, read through the console session
// (/console/api/v1/… with the session cookie; the page never sees an API key). It polls once a
// second; token names and symbols come from chains, so text goes through textContent only.
const CHAINS = ['solana', 'base', 'bsc', 'robinhood', 'arc'];
const COLUMNS = [
  ['newPairs', 'New pairs'],
  ['graduating', 'Graduating'],
  ['graduated', 'Graduated'],
];
const TIMEFRAMES = ['1s', '15s', '1m', '5m', '15m', '1h', '4h', '1d'];
const POLL_MS = 1000;

const view = document.getElementById('view');
const status = document.getElementById('status');
let generation = 0;

/** Builds an element; attributes starting with "on" are listeners, children are nodes or text. */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

class SessionError extends Error {}

async function api(path, init) {
  const response = await fetch(`/console/api/v1${path}`, {
    credentials: 'same-origin',
    ...init,
    headers: init?.body ? { 'Content-Type': 'application/json' } : undefined,
  });
  if (response.status === 401) throw new SessionError();
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    throw new Error(body?.error?.message ?? `HTTP ${response.status}`);
  }
  return response.json();
}

function setStatus(ok, text) {
  status.className = ok ? 'live' : 'down';
  status.textContent = text;
}

/** Display only: decimal strings become compact numbers (never used for arithmetic). */
function compact(value, prefix = '') {
  const n = Number(value);
  if (!Number.isFinite(n)) return '–';
  const abs = Math.abs(n);
  if (abs >= 1e9) return `${prefix}${(n / 1e9).toFixed(2)}B`;
  if (abs >= 1e6) return `${prefix}${(n / 1e6).toFixed(2)}M`;
  if (abs >= 1e3) return `${prefix}${(n / 1e3).toFixed(1)}K`;
  return `${prefix}${n.toFixed(abs >= 1 ? 2 : 0)}`;
}

function price(value) {
  const n = Number(value);
  if (!Number.isFinite(n)) return '–';
  if (Math.abs(n) < 1e-15) return '$0'; // float noise of the axis, not a price
  if (Math.abs(n) >= 1) return `$${n.toFixed(4)}`;
  return `$${n.toPrecision(4)}`;
}

const pct = (value) => (value === null || value === undefined ? '–' : `${Number(value).toFixed(2)}%`);
const signed = (value) => {
  const n = Number(value);
  return h('span', { class: n > 0 ? 'up' : n < 0 ? 'down' : '' }, `${n > 0 ? '+' : ''}${n.toFixed(2)}%`);
};
const age = (ms) => {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
};

function selectedChains() {
  const saved = (localStorage.getItem('spot.chains') ?? '').split(',').filter((c) => CHAINS.includes(c));
  return saved.length > 0 ? saved : [...CHAINS];
}

function renderChainPicker() {
  const nav = document.getElementById('chains');
  const chosen = new Set(selectedChains());
  nav.replaceChildren(
    ...CHAINS.map((chain) =>
      h(
        'label',
        {},
        h('input', {
          type: 'checkbox',
          checked: chosen.has(chain),
          onchange: (event) => {
            if (event.target.checked) chosen.add(chain);
            else chosen.delete(chain);
            localStorage.setItem('spot.chains', [...chosen].join(','));
            route();
          },
        }),
        chain,
      ),
    ),
  );
}

/** Runs `step` every POLL_MS until the view changes; a failure shows in the status line. */
function poll(step) {
  const mine = generation;
  const run = async () => {
    if (mine !== generation) return;
    try {
      await step();
      setStatus(true, `live · ${new Date().toLocaleTimeString()}`);
    } catch (error) {
      if (error instanceof SessionError) return showNoSession();
      setStatus(false, error.message);
    }
    if (mine === generation) setTimeout(run, POLL_MS);
  };
  return run();
}

function showNoSession() {
  generation++;
  setStatus(false, 'no session');
  view.replaceChildren(
    h(
      'div',
      { class: 'notice', 'data-testid': 'no-session' },
      h('h2', {}, 'Open the console from the terminal'),
      h(
        'p',
        {},
        'The console reads through a session opened by a one-time link. Use the link ',
        h('code', {}, 'spot up'),
        ' printed at start, or run ',
        h('code', {}, 'spot console'),
        ' for a new one.',
      ),
    ),
  );
}

// ---- board ----------------------------------------------------------------------------------

function boardRow(item) {
  const t = item.data;
  const curve = t.bondingCurvePct ?? null;
  return h(
    'li',
    {},
    h(
      'a',
      {
        class: 'row',
        href: `#/token/${t.chain}/${t.address}`,
        'data-testid': 'board-row',
        'data-symbol': t.symbol,
        'data-address': t.address,
      },
      h('span', {}, h('span', { class: 'symbol' }, t.symbol), h('span', { class: 'chain' }, `${t.chain} · ${t.name}`)),
      h('span', {}, price(t.price?.usd)),
      h(
        'span',
        { class: 'figures' },
        h('span', {}, `MC ${compact(t.marketCap?.usd, '$')}`),
        h('span', {}, `Vol ${compact(t.stats?.['24h']?.volume?.usd, '$')}`),
        h('span', {}, `${t.holders?.count ?? 0} holders`),
        curve !== null ? h('span', {}, `curve ${Number(curve).toFixed(1)}%`) : null,
        h('span', {}, age(t.createdAt)),
      ),
    ),
  );
}

function showBoard() {
  const lists = {};
  const columns = COLUMNS.map(([key, title]) => {
    lists[key] = h('ol', {}, h('li', { class: 'empty' }, 'loading…'));
    return h('section', { class: 'column', 'data-testid': `column-${key}` }, h('h2', {}, title), lists[key]);
  });
  view.replaceChildren(h('div', { class: 'board' }, columns));
  const request = { chains: selectedChains() };
  for (const [key] of COLUMNS) request[key] = { limit: 30 };
  poll(async () => {
    const body = await api('/discovery', { method: 'POST', body: JSON.stringify(request) });
    for (const { column, deltas } of body.columns) {
      const items = deltas.filter((item) => item.data);
      lists[column].replaceChildren(
        ...(items.length > 0 ? items.map(boardRow) : [h('li', { class: 'empty' }, 'no token in this column yet')]),
      );
    }
  });
}

// ---- token page -----------------------------------------------------------------------------

function definitionList(entries) {
  return h(
    'dl',
    {},
    entries.flatMap(([name, value]) => [h('dt', {}, name), h('dd', {}, value)]),
  );
}

function showToken(chain, address) {
  const path = `/tokens/${chain}/${address}`;
  const state = { timeframe: localStorage.getItem('spot.timeframe') ?? '1s', metric: 'price', lastTime: null };
  const title = h('h1', {}, '…');
  const priceEl = h('span', { class: 'price', 'data-testid': 'price' }, '');
  const changeEl = h('span', {});
  const headFacts = h('span', { class: 'muted' }, '');
  const legend = h('div', { class: 'legend', 'data-testid': 'legend' }, '');
  const chartEl = h('div', { id: 'chart', 'data-testid': 'chart' });
  const statsPanel = h('section', { class: 'panel' }, h('h2', {}, 'Stats'));
  const holdersPanel = h('section', { class: 'panel' }, h('h2', {}, 'Holders'));
  const securityPanel = h('section', { class: 'panel' }, h('h2', {}, 'Security'));
  const tapeBody = h('tbody', {});
  const toolbar = h('div', { class: 'toolbar' });

  view.replaceChildren(
    h('div', { class: 'token-head' }, h('a', { href: '#/' }, '← board'), title, priceEl, changeEl, headFacts),
    h(
      'div',
      { class: 'token-grid' },
      h(
        'div',
        {},
        h('section', { class: 'panel' }, toolbar, legend, chartEl),
        h(
          'section',
          { class: 'panel', style: 'margin-top:12px' },
          h('h2', {}, 'Trades'),
          h(
            'table',
            { 'data-testid': 'tape' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Age', 'Side', 'Price', 'Amount', 'Value', 'Trader'].map((name) => h('th', {}, name)),
              ),
            ),
            tapeBody,
          ),
        ),
      ),
      h('div', { class: 'side-panels' }, statsPanel, holdersPanel, securityPanel),
    ),
  );

  const charts = window.LightweightCharts;
  const chart = charts.createChart(chartEl, {
    autoSize: true,
    layout: { background: { color: '#161b22' }, textColor: '#d6dde6' },
    grid: { vertLines: { color: '#1f2630' }, horzLines: { color: '#1f2630' } },
    timeScale: { timeVisible: true, secondsVisible: true },
  });
  const candles = chart.addSeries(charts.CandlestickSeries, {
    upColor: '#26a69a',
    downColor: '#ef5350',
    borderVisible: false,
    wickUpColor: '#26a69a',
    wickDownColor: '#ef5350',
  });
  const volume = chart.addSeries(charts.HistogramSeries, { priceScaleId: '', priceFormat: { type: 'volume' } });
  volume.priceScale().applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });

  const bar = (c) => ({ time: Math.floor(c.time / 1000), open: c.open, high: c.high, low: c.low, close: c.close });
  const volumeBar = (c) => ({
    time: Math.floor(c.time / 1000),
    value: c.volume,
    color: c.close >= c.open ? 'rgba(38,166,154,0.4)' : 'rgba(239,83,80,0.4)',
  });
  const formatter = (n) => (state.metric === 'price' ? price(n) : compact(n, '$'));
  const showLegend = (c) => {
    legend.dataset.lastTime = String(c.time);
    legend.dataset.close = String(c.close);
    legend.textContent = `${new Date(c.time).toLocaleTimeString()}  O ${formatter(c.open)}  H ${formatter(c.high)}  L ${formatter(c.low)}  C ${formatter(c.close)}  V ${compact(c.volume, '$')}`;
  };

  function applyScale(sample) {
    const magnitude = Math.abs(sample) > 0 ? Math.floor(Math.log10(Math.abs(sample))) : 0;
    const minMove = 10 ** Math.min(0, magnitude - 4);
    candles.applyOptions({ priceFormat: { type: 'custom', minMove, formatter } });
  }

  async function loadCandles() {
    const query = `timeframe=${state.timeframe}&metric=${state.metric}&countBack=300`;
    const body = await api(`${path}/ohlcv?${query}`);
    const list = body.candles;
    candles.setData(list.map(bar));
    volume.setData(list.map(volumeBar));
    state.lastTime = list.length > 0 ? list[list.length - 1].time : null;
    chartEl.dataset.candles = String(list.length);
    if (list.length > 0) {
      applyScale(list[list.length - 1].close);
      showLegend(list[list.length - 1]);
    }
    chart.timeScale().scrollToRealTime();
  }

  /** The newest buckets: the open one moves, a new one appears. */
  async function updateCandles() {
    const body = await api(`${path}/ohlcv?timeframe=${state.timeframe}&metric=${state.metric}&countBack=3`);
    for (const c of body.candles) {
      if (state.lastTime !== null && c.time < state.lastTime) continue;
      candles.update(bar(c));
      volume.update(volumeBar(c));
      if (state.lastTime === null || c.time > state.lastTime) {
        chartEl.dataset.candles = String(Number(chartEl.dataset.candles ?? 0) + 1);
        if (state.lastTime === null) applyScale(c.close);
      }
      state.lastTime = c.time;
      showLegend(c);
    }
  }

  function renderToolbar() {
    const button = (label, on, onclick) => h('button', { type: 'button', class: on ? 'on' : '', onclick }, label);
    toolbar.replaceChildren(
      ...TIMEFRAMES.map((tf) =>
        button(tf, tf === state.timeframe, () => {
          state.timeframe = tf;
          localStorage.setItem('spot.timeframe', tf);
          renderToolbar();
          loadCandles().catch(() => {});
        }),
      ),
      h('span', { style: 'flex:1' }),
      ...[
        ['price', 'Price'],
        ['marketCap', 'Market cap'],
      ].map(([metric, label]) =>
        button(label, metric === state.metric, () => {
          state.metric = metric;
          renderToolbar();
          loadCandles().catch(() => {});
        }),
      ),
    );
  }

  function renderToken(t) {
    document.title = `${t.symbol} · spot console`;
    title.replaceChildren(t.symbol, h('span', { class: 'muted' }, ` ${t.name} · ${t.chain}`));
    priceEl.textContent = price(t.price?.usd);
    changeEl.replaceChildren(signed(t.stats?.['24h']?.priceChangePct ?? 0), h('span', { class: 'muted' }, ' 24h'));
    headFacts.textContent = `MC ${compact(t.marketCap?.usd, '$')} · Liq ${compact(t.liquidity?.usd, '$')} · ${t.launchpad ?? t.dexes?.[0] ?? ''}`;
    const windows = ['5m', '1h', '6h', '24h'].filter((w) => t.stats?.[w]);
    statsPanel.replaceChildren(
      h('h2', {}, 'Stats'),
      h(
        'table',
        {},
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['', 'Change', 'Volume', 'Buys', 'Sells'].map((name) => h('th', {}, name)),
          ),
        ),
        h(
          'tbody',
          {},
          windows.map((w) =>
            h(
              'tr',
              {},
              h('td', {}, w),
              h('td', {}, signed(t.stats[w].priceChangePct)),
              h('td', {}, compact(t.stats[w].volume?.usd, '$')),
              h('td', {}, t.stats[w].buyCount),
              h('td', {}, t.stats[w].sellCount),
            ),
          ),
        ),
      ),
    );
    const holders = t.holders ?? {};
    holdersPanel.replaceChildren(
      h('h2', {}, 'Holders'),
      definitionList([
        ['Holders', holders.count ?? 0],
        ['Top 10', pct(holders.top10Pct)],
        ['Dev', pct(holders.devPct)],
        ['Snipers', `${pct(holders.sniperPct)} (${holders.sniperCount ?? 0})`],
        ['Insiders', `${pct(holders.insiderPct)} (${holders.insiderCount ?? 0})`],
        ['Bundlers', `${pct(holders.bundlerPct)} (${holders.bundlerCount ?? 0})`],
        ['Fresh wallets', `${pct(holders.freshWalletPct)} (${holders.freshWalletCount ?? 0})`],
        ['Pro traders', `${pct(holders.proTraderPct)} (${holders.proTraderCount ?? 0})`],
      ]),
    );
    const security = t.security ?? {};
    securityPanel.replaceChildren(
      h('h2', {}, 'Security'),
      definitionList([
        ['Mint disabled', security.mintDisabled ? 'yes' : 'no'],
        ['Transfers blockable', security.transferBlockable ? 'yes' : 'no'],
        ['LP burnt', pct(security.lpBurntPct)],
        ['Transfer fee', `${security.transferFeeBps ?? 0} bps`],
        ['Bonding curve', t.bondingCurvePct === null || t.bondingCurvePct === undefined ? '–' : pct(t.bondingCurvePct)],
        ['Created', new Date(t.createdAt).toLocaleString()],
      ]),
    );
  }

  const seen = new Set();
  function renderTape(trades) {
    const first = seen.size === 0;
    tapeBody.replaceChildren(
      ...trades.map((trade) => {
        const fresh = !first && !seen.has(trade.id);
        seen.add(trade.id);
        return h(
          'tr',
          { class: fresh ? 'fresh' : '', 'data-testid': 'tape-row', 'data-id': trade.id },
          h('td', {}, age(trade.timestamp)),
          h('td', { class: trade.side === 'buy' ? 'up' : 'down' }, trade.side),
          h('td', {}, price(trade.price?.usd)),
          h('td', {}, compact(trade.amount)),
          h('td', {}, compact(trade.volume?.usd, '$')),
          h('td', { class: 'muted' }, `${trade.trader.slice(0, 6)}…${trade.trader.slice(-4)}`),
        );
      }),
    );
    if (seen.size > 500) seen.clear();
  }

  renderToolbar();
  const mine = generation;
  loadCandles()
    .catch((error) => {
      if (error instanceof SessionError) showNoSession();
      else setStatus(false, error.message);
    })
    .then(() => {
      if (mine !== generation) return;
      let first = true;
      poll(async () => {
        const [token, trades] = await Promise.all([api(path), api(`${path}/trades?limit=30`)]);
        renderToken(token);
        renderTape(trades.trades);
        if (!first) await updateCandles();
        first = false;
      });
    });
  return () => chart.remove();
}

// ---- routing --------------------------------------------------------------------------------

let cleanup = null;
function route() {
  generation++;
  cleanup?.();
  cleanup = null;
  const match = /^#\/token\/([a-z]+)\/([^/]+)$/.exec(location.hash);
  if (match) cleanup = showToken(match[1], decodeURIComponent(match[2]));
  else showBoard();
}

renderChainPicker();
window.addEventListener('hashchange', route);
route();
