// sleuth's dashboard: reads /dashboard/data every few seconds and draws it.
// Every value from the server is put into the page as text (textContent) or as a
// number in an SVG attribute, never as markup: a keyword or an error message holding
// "<script>" or "onerror=" stays those characters. The page's CSP allows no other
// script and no inline script at all.
"use strict";

(() => {
  const SVG = "http://www.w3.org/2000/svg";
  const KEY = "sleuth-api-key"; // sessionStorage: gone when the tab closes
  const EVERY_MS = 5000;
  const base = window.location.pathname.replace(/\/+$/, "");

  const byId = (id) => document.getElementById(id);

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function ms(value) {
    if (value === null || value === undefined) return "–";
    return value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(2)} s`;
  }

  function pct(value) {
    return `${(100 * value).toFixed(value > 0 && value < 0.1 ? 1 : 0)}%`;
  }

  function clock(seconds) {
    return new Date(seconds * 1000).toISOString().slice(11, 19);
  }

  function empty(list, text) {
    const item = el("li", "empty", text);
    list.appendChild(item);
  }

  // A horizontal bar for a share (0..1), drawn in SVG so that no style is computed
  // from data.
  function bar(share, bad) {
    const box = svg("svg", { class: "bar", viewBox: "0 0 100 10", preserveAspectRatio: "none" });
    box.appendChild(svg("rect", { class: "track", x: 0, y: 0, width: 100, height: 10 }));
    const width = Math.max(0, Math.min(100, 100 * share));
    box.appendChild(svg("rect", { class: bad ? "fill bad" : "fill", x: 0, y: 0, width, height: 10 }));
    return box;
  }

  function renderFigures(data) {
    byId("searches").textContent = String(data.searches);
    byId("failure-rate").textContent = data.searches ? pct(data.failure_rate) : "–";
    byId("failure-figure").classList.toggle("bad", data.failure_rate > 0.05);
    byId("p95").textContent = ms(data.p95_ms);
    byId("p50").textContent = ms(data.p50_ms);
    byId("cached").textContent = String(data.statuses.cached);
    const tasks = data.tasks || {};
    const queue = "pending" in tasks ? `${tasks.pending} / ${tasks.running}` : "–";
    byId("queue").textContent = queue;
  }

  function renderChart(data) {
    const chart = byId("chart");
    clear(chart);
    const W = 800, H = 220, left = 56, right = 12, top = 12, bottom = 24;
    const now = Date.parse(data.generated_at) / 1000;
    const from = now - data.window_s;
    const points = data.p95_series;
    const highest = Math.max(1, ...points.map((p) => p.p95_ms)) * 1.15;
    const x = (t) => left + ((t + data.bucket_s / 2 - from) / data.window_s) * (W - left - right);
    const y = (v) => H - bottom - (v / highest) * (H - top - bottom);
    chart.appendChild(svg("line", { class: "axis", x1: left, y1: H - bottom, x2: W - right, y2: H - bottom }));
    for (const fraction of [0, 0.5, 1]) {
      const value = highest * fraction;
      chart.appendChild(svg("line", { class: "axis", x1: left, y1: y(value), x2: W - right, y2: y(value) }));
      const label = svg("text", { x: left - 6, y: y(value) + 4, "text-anchor": "end" });
      label.textContent = ms(value);
      chart.appendChild(label);
    }
    const minutes = Math.round(data.window_s / 60);
    const ticks = [
      [from, `-${minutes} min`, "start"],
      [from + data.window_s / 2, `-${Math.round(minutes / 2)} min`, "middle"],
      [now, "now", "end"],
    ];
    for (const [t, text, anchor] of ticks) {
      const label = svg("text", { x: x(t - data.bucket_s / 2), y: H - 6, "text-anchor": anchor });
      label.textContent = text;
      chart.appendChild(label);
    }
    if (!points.length) {
      const note = svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle" });
      note.textContent = "no searches in the window yet";
      chart.appendChild(note);
      return;
    }
    const line = points.map((p) => `${x(p.t).toFixed(1)},${y(p.p95_ms).toFixed(1)}`).join(" ");
    chart.appendChild(svg("polyline", { class: "line", points: line }));
    for (const p of points) {
      const dot = svg("circle", { class: "point", cx: x(p.t).toFixed(1), cy: y(p.p95_ms).toFixed(1), r: 3.5 });
      const tip = svg("title", {});
      tip.textContent = `${clock(p.t)} UTC: p95 ${ms(p.p95_ms)} over ${p.count} searches`;
      dot.appendChild(tip);
      chart.appendChild(dot);
    }
  }

  function renderErrors(data) {
    const list = byId("error-codes");
    clear(list);
    const total = data.error_codes.reduce((sum, e) => sum + e.count, 0);
    for (const error of data.error_codes.slice(0, 3)) {
      const item = el("li");
      item.appendChild(el("span", "name", error.code));
      item.appendChild(bar(error.count / total, true));
      item.appendChild(el("span", "num", `${error.count} (${pct(error.count / total)})`));
      list.appendChild(item);
    }
    if (!data.error_codes.length) empty(list, "no errors in the window");
  }

  function renderProviders(data) {
    const list = byId("providers");
    clear(list);
    for (const provider of data.providers) {
      const item = el("li");
      item.appendChild(el("span", "name", provider.provider));
      item.appendChild(bar(provider.share, false));
      const failed = provider.failed ? `, ${provider.failed} failed` : "";
      item.appendChild(el("span", "num", `${pct(provider.share)} (${provider.calls}${failed})`));
      list.appendChild(item);
    }
    if (!data.providers.length) empty(list, "no provider calls in the window");
  }

  function renderBreakers(data) {
    const list = byId("breakers");
    clear(list);
    for (const breaker of data.breakers || []) {
      const item = el("li");
      item.appendChild(el("span", "name", breaker.provider));
      // The class comes from a fixed set, whatever the server says.
      const state = ["closed", "half_open", "open"].includes(breaker.state) ? breaker.state : "open";
      item.appendChild(el("span", `badge ${state}`, breaker.state.replace("_", "-")));
      if (breaker.reason) item.appendChild(el("span", "reason", breaker.reason));
      list.appendChild(item);
    }
    if (!(data.breakers || []).length) empty(list, "no providers");
  }

  function renderKeywords(data) {
    const list = byId("keywords");
    clear(list);
    for (const keyword of data.hot_keywords) {
      const item = el("li", null, keyword.keyword);
      item.appendChild(el("span", "num", `×${keyword.count}`));
      list.appendChild(item);
    }
    if (!data.hot_keywords.length) empty(list, "no searches yet");
  }

  function renderRecentErrors(data) {
    const body = byId("recent-errors");
    clear(body);
    for (const error of data.recent_errors) {
      const row = el("tr");
      row.appendChild(el("td", null, error.at.slice(11, 19)));
      row.appendChild(el("td", null, error.provider || "–"));
      row.appendChild(el("td", null, error.code));
      row.appendChild(el("td", "msg", error.message));
      body.appendChild(row);
    }
    if (!data.recent_errors.length) {
      const row = el("tr");
      const cell = el("td", "empty", "none");
      cell.colSpan = 4;
      row.appendChild(cell);
      body.appendChild(row);
    }
  }

  function render(data) {
    renderFigures(data);
    renderChart(data);
    renderErrors(data);
    renderProviders(data);
    renderBreakers(data);
    renderKeywords(data);
    renderRecentErrors(data);
    const minutes = Math.round(data.window_s / 60);
    byId("status").textContent = `this process, last ${minutes} min · updated ${clock(Date.parse(data.generated_at) / 1000)} UTC`;
  }

  async function load() {
    const headers = { Accept: "application/json" };
    const key = window.sessionStorage.getItem(KEY);
    if (key) headers.Authorization = `Bearer ${key}`;
    let answer;
    try {
      answer = await fetch(`${base}/data`, { headers, cache: "no-store", credentials: "omit" });
    } catch (error) {
      byId("status").textContent = "sleuth does not answer; retrying";
      return;
    }
    if (answer.status === 401) {
      window.sessionStorage.removeItem(KEY);
      byId("status").textContent = key ? "that key was refused" : "an API key is needed";
      byId("key-form").hidden = false;
      return;
    }
    if (!answer.ok) {
      byId("status").textContent = `the data answered ${answer.status}; retrying`;
      return;
    }
    byId("key-form").hidden = true;
    render(await answer.json());
  }

  byId("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = byId("key");
    if (input.value.trim()) window.sessionStorage.setItem(KEY, input.value.trim());
    input.value = "";
    load();
  });

  load();
  window.setInterval(load, EVERY_MS);
})();
