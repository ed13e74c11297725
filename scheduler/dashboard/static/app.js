// kuota's dashboard: one page, hash routes, plain DOM. Every text from the cluster is set
// with textContent (never parsed as HTML). The token pasted at login stays in this tab's
// sessionStorage and goes with every request; a 401 brings the login form back.
"use strict";

const TOKEN = "kuota-token";
const state = { route: "", refresh: null, preempted: new Set(), first: true };

// --- DOM helpers -----------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function table(headers, rows) {
  return el("table", {},
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows));
}

function link(href, text) { return el("a", { href }, text); }
function qty(value) { return value ? value.text : "-"; }
function limit(value) { return value ? value.text : "none"; }

function bar(used, total) {
  const share = total > 0 ? used / total : used > 0 ? 1 : 0;
  const span = el("span", { class: share > 1 ? "over" : "" });
  span.style.width = `${Math.min(100, share * 100).toFixed(1)}%`;
  return el("span", { class: "bar", title: `${(share * 100).toFixed(0)}%` }, span);
}

function toast(text) {
  const box = el("div", { class: "toast" }, text);
  document.getElementById("toasts").append(box);
  setTimeout(() => box.remove(), 8000);
}

// --- talking to the dashboard ----------------------------------------------------------

class Unauthorized extends Error {}

async function api(path) {
  const token = sessionStorage.getItem(TOKEN);
  if (!token) throw new Unauthorized("no token");
  const reply = await fetch(path, { headers: { Authorization: `Bearer ${token}` } });
  if (reply.status === 401) throw new Unauthorized((await reply.json()).error);
  if (!reply.ok) {
    let message = `${reply.status}`;
    try { message = (await reply.json()).error || message; } catch (_) { /* not JSON */ }
    throw new Error(message);
  }
  return reply.json();
}

// Server-sent events read from fetch (EventSource cannot send the Authorization header).
async function listen() {
  const status = document.getElementById("status");
  for (;;) {
    const token = sessionStorage.getItem(TOKEN);
    if (!token) return;
    try {
      const reply = await fetch("/api/stream", { headers: { Authorization: `Bearer ${token}` } });
      if (reply.status === 401) { signOut("the token is not valid any more"); return; }
      const reader = reply.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      status.textContent = "live";
      status.className = "status live";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const message = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          if (message.startsWith("event: changed")) render();
        }
      }
    } catch (_) { /* reconnect below */ }
    status.textContent = "reconnecting";
    status.className = "status stale";
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

// --- views -----------------------------------------------------------------------------

function clusterQueueRows(queues) {
  return queues.map((cq) => el("tr", { "data-key": cq.name },
    el("td", {}, link(`#/clusterqueue/${encodeURIComponent(cq.name)}`, cq.name)),
    el("td", {}, cq.cohort ? link(`#/cohorts`, cq.cohort) : "-"),
    el("td", {}, cq.active ? "Active" : cq.message),
    el("td", { class: "num", "data-field": "pending" }, cq.pending),
    el("td", { class: "num" }, cq.reserving),
    el("td", { class: "num" }, cq.admitted),
    el("td", {}, cq.quota.map((row) => el("div", {},
      bar(row.reserved.value, row.nominal.value),
      ` ${row.flavor}/${row.resource}: ${qty(row.reserved)} of ${qty(row.nominal)}`,
      row.borrowed && row.borrowed.value > 0 ? ` (borrowing ${row.borrowed.text})` : ""))),
    el("td", { class: "num" }, cq.weightedShare === null ? "inf" : cq.weightedShare.toFixed(0))));
}

const CQ_HEADERS = ["ClusterQueue", "Cohort", "Status", "Pending", "Reserving", "Admitted",
  "Quota in use", "Weighted share"];

function workloadRows(workloads) {
  return workloads.map((wl) => el("tr", { "data-key": `${wl.namespace}/${wl.name}`, "data-state": wl.state },
    el("td", {}, wl.namespace),
    el("td", {}, link(`#/workload/${encodeURIComponent(wl.namespace)}/${encodeURIComponent(wl.name)}`, wl.name)),
    el("td", {}, wl.job || "-"),
    el("td", {}, link(`#/localqueue/${encodeURIComponent(wl.namespace)}/${encodeURIComponent(wl.queue)}`, wl.queue)),
    el("td", {}, wl.clusterQueue ? link(`#/clusterqueue/${encodeURIComponent(wl.clusterQueue)}`, wl.clusterQueue) : "-"),
    el("td", { class: `state-${wl.state}`, "data-field": "state" }, wl.state),
    el("td", { class: "num", "data-field": "position" },
      wl.position ? `${wl.position} of ${wl.pendingIn}` : "-"),
    el("td", { "data-field": "reason" }, wl.reason || "-"),
    el("td", { "data-field": "message" }, wl.message),
    el("td", {}, wl.priorityClass || "-"),
    el("td", {}, wl.flavors),
    el("td", {}, wl.age)));
}

const WL_HEADERS = ["Namespace", "Workload", "Job", "LocalQueue", "ClusterQueue", "State",
  "Position", "Reason", "Why", "Priority class", "Flavors", "Age"];

function plot(title, series, unit) {
  // series: [{name, points: [[t, value]]}] drawn as lines over one time axis.
  const width = 460, height = 170, pad = 30;
  const all = series.flatMap((s) => s.points);
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "plot");
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  const text = (x, y, value) => {
    const node = document.createElementNS(svg.namespaceURI, "text");
    node.setAttribute("x", x); node.setAttribute("y", y); node.textContent = value;
    svg.append(node);
  };
  text(pad, 12, title);
  if (all.length === 0) { text(pad, height / 2, "no samples yet"); return svg; }
  const times = all.map((p) => p[0]);
  const t0 = Math.min(...times), t1 = Math.max(...times, t0 + 1);
  const top = Math.max(...all.map((p) => p[1]), 1);
  text(2, pad, `${top}${unit}`);
  text(2, height - 4, "0");
  const colors = ["#2f5fd0", "#c53030", "#21804a", "#b7791f", "#7b3fb0", "#2a8c8c"];
  series.forEach((s, index) => {
    const line = document.createElementNS(svg.namespaceURI, "polyline");
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", colors[index % colors.length]);
    line.setAttribute("stroke-width", "2");
    line.setAttribute("points", s.points.map(([t, v]) =>
      `${pad + ((t - t0) / (t1 - t0)) * (width - pad - 8)},${height - 16 - (v / top) * (height - pad - 16)}`).join(" "));
    const label = document.createElementNS(svg.namespaceURI, "title");
    label.textContent = s.name;
    line.append(label);
    svg.append(line);
    text(pad + 8 + (index % 3) * 140, height - 2, s.name.slice(0, 22));
  });
  return svg;
}

function historyPlots(samples, only) {
  const pending = {}, usage = {};
  for (const sample of samples) {
    const t = Date.parse(sample.time) / 1000;
    for (const [name, cq] of Object.entries(sample.clusterQueues)) {
      if (only && name !== only) continue;
      (pending[name] = pending[name] || []).push([t, cq.pending]);
      for (const [fr, u] of Object.entries(cq.usage)) {
        const key = `${name} ${fr}`;
        (usage[key] = usage[key] || []).push([t, u.nominal > 0 ? (100 * u.reserved) / u.nominal : 0]);
      }
    }
  }
  const toSeries = (byName) => Object.entries(byName).map(([name, points]) => ({ name, points }));
  return el("div", {},
    plot("Pending workloads", toSeries(pending), ""),
    plot("Quota reserved, % of nominal", toSeries(usage), "%"));
}

async function overview() {
  const [summary, queues, history] = await Promise.all([
    api("/api/overview"), api("/api/clusterqueues").catch(() => null), api("/api/history").catch(() => null)]);
  const cards = [["ClusterQueues", summary.clusterQueues], ["Cohorts", summary.cohorts],
    ["LocalQueues", summary.localQueues], ["Pending", summary.workloads.Pending || 0],
    ["Admitted", summary.workloads.Admitted || 0], ["Finished", summary.workloads.Finished || 0]];
  return [el("h2", {}, "Overview"),
    el("div", { class: "cards" }, cards.map(([label, n]) =>
      el("div", { class: "card" }, el("div", { class: "n" }, n), el("div", { class: "l" }, label)))),
    queues ? table(CQ_HEADERS, clusterQueueRows(queues)) : el("p", { class: "muted" }, "You may not list ClusterQueues."),
    history ? [el("h3", {}, "Usage over time"), historyPlots(history.samples)] : null,
    summary.notes.length ? el("p", { class: "muted" }, `Left out: ${summary.notes.join("; ")}`) : null];
}

async function clusterQueues() {
  return [el("h2", {}, "ClusterQueues"), table(CQ_HEADERS, clusterQueueRows(await api("/api/clusterqueues")))];
}

function keyValues(pairs) {
  return table(["", ""], pairs.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v))));
}

async function clusterQueue(name) {
  const [queues, workloads, history] = await Promise.all([api("/api/clusterqueues"),
    api("/api/workloads"), api("/api/history").catch(() => ({ samples: [] }))]);
  const cq = queues.find((q) => q.name === name);
  if (!cq) return el("p", { class: "error" }, `ClusterQueue ${name} not found`);
  const p = cq.preemption || {};
  return [el("h2", {}, `ClusterQueue ${cq.name}`),
    keyValues([["Status", cq.active ? "Active" : cq.message], ["Cohort", cq.cohort || "-"],
      ["Queueing strategy", cq.queueingStrategy], ["Stop policy", cq.stopPolicy],
      ["Pending / reserving / admitted", `${cq.pending} / ${cq.reserving} / ${cq.admitted}`],
      ["Weighted share", cq.weightedShare === null ? "inf" : cq.weightedShare.toFixed(0)],
      ["Preemption", `within ClusterQueue: ${p.withinClusterQueue || "Never"}; reclaim within cohort: ${p.reclaimWithinCohort || "Never"}; borrow within cohort: ${(p.borrowWithinCohort || {}).policy || "Never"}`],
      ["Flavor fungibility", `when can borrow: ${cq.flavorFungibility.whenCanBorrow || "MayStopSearch"}; when can preempt: ${cq.flavorFungibility.whenCanPreempt || "TryNextFlavor"}`],
      ["Admission checks", cq.admissionChecks.join(", ") || "-"],
      ["LocalQueues", cq.localQueues.join(", ") || "-"]]),
    el("h3", {}, "Quota"),
    table(["Flavor", "Resource", "Nominal", "Borrowing limit", "Lending limit", "Reserved", "Borrowed", ""],
      cq.quota.map((row) => el("tr", {}, el("td", {}, row.flavor), el("td", {}, row.resource),
        el("td", {}, qty(row.nominal)), el("td", {}, limit(row.borrowingLimit)),
        el("td", {}, limit(row.lendingLimit)), el("td", {}, qty(row.reserved)),
        el("td", {}, qty(row.borrowed)), el("td", {}, bar(row.reserved.value, row.nominal.value))))),
    el("h3", {}, "Usage over time"), historyPlots(history.samples, cq.name),
    el("h3", {}, "Workloads"),
    table(WL_HEADERS, workloadRows(workloads.filter((w) => w.clusterQueue === cq.name))),
    el("h3", {}, "Conditions"), conditions(cq.conditions)];
}

function conditions(items) {
  return table(["Type", "Status", "Reason", "Message", "Since"], items.map((c) => el("tr", {},
    el("td", {}, c.type), el("td", {}, c.status), el("td", {}, c.reason || "-"),
    el("td", {}, c.message || ""), el("td", {}, c.lastTransitionTime || ""))));
}

function treeNode(node) {
  const rows = node.resources.map((r) => el("tr", {}, el("td", {}, `${r.flavor}/${r.resource}`),
    el("td", {}, qty(r.nominal)), el("td", {}, qty(r.subtreeQuota)), el("td", {}, qty(r.usage)),
    el("td", { "data-field": "lends" }, qty(r.lends)), el("td", { "data-field": "borrows" }, qty(r.borrows))));
  const title = node.kind === "ClusterQueue"
    ? link(`#/clusterqueue/${encodeURIComponent(node.name)}`, node.name) : node.name;
  return el("li", { "data-key": node.name },
    el("div", { class: "node" }, el("span", { class: "kind" }, node.kind), title,
      el("span", { class: "muted" }, `  weighted share ${node.weightedShare === null ? "inf" : node.weightedShare.toFixed(0)}`),
      rows.length ? table(["Flavor/resource", "Nominal", "Subtree quota", "In use", "Lends", "Borrows"], rows) : null),
    node.children.length ? el("ul", { class: "tree" }, node.children.map(treeNode)) : null);
}

async function cohorts() {
  const roots = await api("/api/cohorts");
  return [el("h2", {}, "Cohorts"),
    el("p", { class: "muted" }, "Lends: the quota a node offers its parent (beyond its lending limit's guarantee). Borrows: what it uses above its own quota."),
    roots.length ? el("ul", { class: "tree" }, roots.map(treeNode)) : el("p", {}, "No cohorts.")];
}

async function localQueues() {
  const queues = await api("/api/localqueues");
  return [el("h2", {}, "LocalQueues"), table(["Namespace", "LocalQueue", "ClusterQueue", "Active", "Pending", "Reserving", "Admitted", "Finished"],
    queues.map((lq) => el("tr", { "data-key": `${lq.namespace}/${lq.name}` }, el("td", {}, lq.namespace),
      el("td", {}, link(`#/localqueue/${encodeURIComponent(lq.namespace)}/${encodeURIComponent(lq.name)}`, lq.name)),
      el("td", {}, link(`#/clusterqueue/${encodeURIComponent(lq.clusterQueue)}`, lq.clusterQueue)),
      el("td", {}, lq.active ? "yes" : lq.message || "no"), el("td", { class: "num" }, lq.pending),
      el("td", { class: "num" }, lq.reserving), el("td", { class: "num" }, lq.admitted),
      el("td", { class: "num" }, lq.finished))))];
}

async function localQueue(namespace, name) {
  const workloads = await api(`/api/workloads?namespace=${encodeURIComponent(namespace)}`);
  return [el("h2", {}, `LocalQueue ${namespace}/${name}`),
    table(WL_HEADERS, workloadRows(workloads.filter((w) => w.queue === name)))];
}

async function workloads() {
  const namespace = new URLSearchParams(location.hash.split("?")[1] || "").get("namespace") || "";
  const rows = await api(`/api/workloads${namespace ? `?namespace=${encodeURIComponent(namespace)}` : ""}`);
  const filter = el("input", { value: namespace, placeholder: "all namespaces" });
  filter.addEventListener("change", () => { location.hash = `#/workloads${filter.value ? `?namespace=${encodeURIComponent(filter.value)}` : ""}`; });
  return [el("h2", {}, "Workloads", el("label", { class: "filter" }, "namespace ", filter)),
    table(WL_HEADERS, workloadRows(rows))];
}

async function workload(namespace, name) {
  const wl = await api(`/api/workloads/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`);
  return [el("h2", {}, `Workload ${namespace}/${name}`),
    keyValues([["State", wl.state], ["Position", wl.position ? `${wl.position} of ${wl.pendingIn} in ${wl.clusterQueue}` : "-"],
      ["Job", wl.job || "-"], ["LocalQueue", wl.queue], ["ClusterQueue", wl.clusterQueue || "-"],
      ["Priority class", wl.priorityClass || "-"], ["Flavors", wl.flavors], ["Age", wl.age]]),
    el("h3", {}, "Why (kuota explain)"), el("pre", { class: "explain", "data-field": "explanation" }, wl.explanation.join("\n")),
    el("h3", {}, "Conditions"), conditions(wl.conditions),
    wl.admissionChecks.length ? [el("h3", {}, "Admission checks"), table(["Check", "State", "Message"],
      wl.admissionChecks.map((c) => el("tr", {}, el("td", {}, c.name), el("td", {}, c.state), el("td", {}, c.message || ""))))] : null,
    wl.pods.length ? [el("h3", {}, "Pods"), table(["Pod", "Phase", "Node"],
      wl.pods.map((p) => el("tr", {}, el("td", {}, p.name), el("td", {}, p.phase || "-"), el("td", {}, p.node || "-"))))] : null,
    wl.events ? [el("h3", {}, "Events"), table(["Time", "Type", "Reason", "Message", "Count"],
      wl.events.map((e) => el("tr", {}, el("td", {}, e.time || ""), el("td", {}, e.type), el("td", {}, e.reason), el("td", {}, e.message), el("td", {}, e.count || 1))))] : null,
    el("h3", {}, "Object"), el("pre", {}, JSON.stringify(wl.object, null, 2))];
}

async function flavors() {
  const items = await api("/api/resourceflavors");
  const text = (value) => (Array.isArray(value) ? value.map((v) => JSON.stringify(v)).join("; ") : Object.entries(value).map(([k, v]) => `${k}=${v}`).join(", ")) || "-";
  return [el("h2", {}, "ResourceFlavors"), table(["Flavor", "Node labels", "Taints", "Tolerations", "ClusterQueues", "Nodes"],
    items.map((f) => el("tr", { "data-key": f.name }, el("td", {}, f.name), el("td", {}, text(f.nodeLabels)),
      el("td", {}, text(f.nodeTaints)), el("td", {}, text(f.tolerations)),
      el("td", {}, f.clusterQueues.join(", ") || "-"),
      el("td", {}, f.nodes === null ? "(you may not list nodes)" : f.nodes.join(", ") || "-"))))];
}

const ROUTES = [
  [/^#?\/?$/, overview], [/^#\/clusterqueues$/, clusterQueues], [/^#\/clusterqueue\/([^/]+)$/, clusterQueue],
  [/^#\/cohorts$/, cohorts], [/^#\/localqueues$/, localQueues], [/^#\/localqueue\/([^/]+)\/([^/]+)$/, localQueue],
  [/^#\/workloads(\?.*)?$/, workloads], [/^#\/workload\/([^/]+)\/([^/]+)$/, workload], [/^#\/flavors$/, flavors]];

async function watchPreemptions() {
  // A toast when a Workload this viewer may see becomes preempted (not on the first read).
  try {
    const rows = await api("/api/workloads");
    for (const wl of rows) {
      const key = `${wl.namespace}/${wl.name}`;
      if (wl.preempted && !state.preempted.has(key)) {
        state.preempted.add(key);
        if (!state.first) toast(`Workload ${key} was preempted: ${wl.message}`);
      }
    }
    state.first = false;
  } catch (_) { /* the view says why */ }
}

async function render() {
  const hash = location.hash || "#/";
  const view = document.getElementById("view");
  for (const link of document.querySelectorAll("nav a")) {
    link.classList.toggle("current", hash.startsWith(link.getAttribute("href")) && link.getAttribute("href") !== "#/" || hash === link.getAttribute("href"));
  }
  const [pattern, show] = ROUTES.find(([p]) => p.test(hash)) || ROUTES[0];
  const args = (hash.match(pattern) || []).slice(1).filter((a) => a && !a.startsWith("?")).map(decodeURIComponent);
  try {
    const content = await show(...args);
    view.replaceChildren(...[content].flat(3).filter(Boolean));
    view.dataset.rendered = String(Date.now());
    watchPreemptions();
  } catch (failure) {
    if (failure instanceof Unauthorized) { signOut(failure.message); return; }
    view.replaceChildren(el("p", { class: "error", "data-field": "error" }, String(failure.message)));
  }
}

function signOut(why) {
  sessionStorage.removeItem(TOKEN);
  document.getElementById("nav").hidden = true;
  document.getElementById("logout").hidden = true;
  document.getElementById("who").textContent = "";
  document.getElementById("view").replaceChildren();
  document.getElementById("login").hidden = false;
  document.getElementById("login-error").textContent = why && why !== "no token" ? why : "";
}

async function signIn() {
  try {
    const me = await api("/api/whoami");
    document.getElementById("who").textContent = me.user;
  } catch (failure) {
    signOut(failure.message);
    return;
  }
  document.getElementById("login").hidden = true;
  document.getElementById("nav").hidden = false;
  document.getElementById("logout").hidden = false;
  await render();
  listen();
}

document.getElementById("login").addEventListener("submit", (event) => {
  event.preventDefault();
  sessionStorage.setItem(TOKEN, document.getElementById("token").value.trim());
  signIn();
});
document.getElementById("logout").addEventListener("click", () => signOut(""));
window.addEventListener("hashchange", render);
signIn();
