// nexus view: the page. Plain DOM, no framework. Every text that comes
// from the project's state is put in with textContent (el() below), never
// parsed as HTML. Updates arrive as server-sent events naming the section
// that changed; the page then fetches that section alone, and only when
// the view on screen shows it.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";

  // el builds an element; strings and numbers become text nodes.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    setAttrs(e, attrs);
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      e.append(c instanceof Node ? c : String(c));
    }
    return e;
  }
  function svg(tag, attrs, ...children) {
    const e = document.createElementNS(SVG, tag);
    setAttrs(e, attrs);
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.append(c instanceof Node ? c : String(c));
    }
    return e;
  }
  function setAttrs(e, attrs) {
    if (!attrs) return;
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "on") {
        for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
      } else if (k === "dataset") {
        for (const [dk, dv] of Object.entries(v)) e.dataset[dk] = dv;
      } else {
        e.setAttribute(k, v === true ? "" : String(v));
      }
    }
  }
  function clear(node, ...children) {
    node.replaceChildren(...children.filter((c) => c !== null && c !== undefined));
  }
  function short(s, n) {
    s = s || "";
    return s.length > n ? s.slice(0, n - 1) + "…" : s;
  }
  const statusText = { pending: "pending", in_progress: "in progress", completed: "completed" };
  function statusLabel(s) {
    return statusText[s] || s || "unknown";
  }

  async function getJSON(url, init) {
    const r = await fetch(url, Object.assign({ credentials: "same-origin", cache: "no-store" }, init));
    if (!r.ok) throw new Error((await r.text()).trim() || r.status + " " + r.statusText);
    return r.json();
  }

  // ---- state of the page ----
  const views = ["plan", "tasks", "agents", "decisions", "memory"];
  // The sections each view shows.
  const needs = {
    plan: ["plan", "history"],
    tasks: ["tasks"],
    agents: ["agents"],
    decisions: ["decisions"],
    memory: ["memory"],
  };
  let active = "plan";
  const rendered = {}; // view -> {section: version} it shows
  const ui = {
    tasksMode: "graph",
    tasksOffset: 0,
    decisionsOffset: 0,
    memoryOffset: 0,
    historyQuery: "",
  };
  let summary = null;

  // ---- tabs: arrow keys move between them (roving tabindex) ----
  function select(name, focus) {
    if (!views.includes(name)) name = "plan";
    active = name;
    for (const v of views) {
      const tab = $("tab-" + v);
      const on = v === name;
      tab.setAttribute("aria-selected", on ? "true" : "false");
      tab.tabIndex = on ? 0 : -1;
      $("view-" + v).hidden = !on;
    }
    if (focus) $("tab-" + name).focus();
    if (location.hash !== "#" + name) history.replaceState(null, "", "#" + name);
    load(name);
  }
  $("tabs").addEventListener("click", (e) => {
    const tab = e.target.closest("[role=tab]");
    if (tab) select(tab.id.slice(4), false);
  });
  $("tabs").addEventListener("keydown", (e) => {
    const i = views.indexOf(active);
    let next = null;
    if (e.key === "ArrowRight") next = views[(i + 1) % views.length];
    else if (e.key === "ArrowLeft") next = views[(i + views.length - 1) % views.length];
    else if (e.key === "Home") next = views[0];
    else if (e.key === "End") next = views[views.length - 1];
    if (next) {
      e.preventDefault();
      select(next, true);
    }
  });
  window.addEventListener("hashchange", () => select(location.hash.slice(1), false));

  // ---- loading ----
  const loading = {};
  async function load(name) {
    if (loading[name]) {
      loading[name].again = true;
      return loading[name].p;
    }
    const state = { again: false };
    loading[name] = state;
    state.p = (async () => {
      try {
        do {
          state.again = false;
          await loaders[name]();
        } while (state.again);
      } catch (err) {
        showError($("view-" + name), err);
      } finally {
        delete loading[name];
        document.body.dataset["rendered" + name[0].toUpperCase() + name.slice(1)] = String(Date.now());
        if (name === active && !document.body.dataset.ready) {
          // Interactive: the view on screen is filled in (milliseconds
          // since the navigation began).
          document.body.dataset.readyMs = String(Math.round(performance.now()));
          document.body.dataset.ready = "1";
        }
      }
    })();
    return state.p;
  }
  function showError(where, err) {
    const box = where.querySelector(".load-error") || where.appendChild(el("p", { class: "load-error", role: "alert" }));
    box.textContent = "Could not load this view: " + (err && err.message ? err.message : err);
  }
  function sectionError(node, answer, what) {
    if (answer.error) {
      clear(node, el("p", { class: "error", role: "alert" }, what + ": " + answer.error));
      return true;
    }
    return false;
  }
  function mark(view, section, version) {
    rendered[view] = rendered[view] || {};
    rendered[view][section] = version;
  }

  const loaders = {
    plan: loadPlan,
    tasks: loadTasks,
    agents: loadAgents,
    decisions: loadDecisions,
    memory: loadMemory,
  };

  // ---- summary and live updates ----
  async function loadSummary() {
    summary = await getJSON("/api/summary");
    const s = summary;
    const name = s.project.split("/").filter(Boolean).pop() || s.project;
    $("project").textContent = name;
    $("harness").textContent = "harness " + s.harness;
    document.title = "nexus view — " + name;
    $("count-plan").textContent = s.plan.exists ? `${s.plan.decided}/${s.plan.issues}` : "";
    $("count-tasks").textContent = s.tasks.total ? `${s.tasks.completed}/${s.tasks.total} · ${s.tasks.ready} ready` : "";
    $("count-agents").textContent = s.agents.total ? `${s.agents.running} running` : "";
    $("count-decisions").textContent = s.decisions.enabled ? String(s.decisions.total) : "off";
    $("count-memory").textContent = s.memory.notes ? String(s.memory.notes) : "";
  }

  function connect() {
    const es = new EventSource("/events");
    es.addEventListener("hello", (e) => {
      $("live").textContent = "live: the page follows changes to .nexus/ and the decision store";
      $("live").className = "live on";
      // After a reconnect, fetch what changed meanwhile.
      const versions = JSON.parse(e.data);
      changed(Object.keys(versions).filter((s) => stale(s, versions[s])));
    });
    es.addEventListener("change", (e) => {
      const ev = JSON.parse(e.data);
      changed(ev.section === "*" ? Object.keys(needs).flatMap((v) => needs[v]) : [ev.section]);
    });
    es.onerror = () => {
      $("live").textContent = "disconnected: retrying…";
      $("live").className = "live off";
    };
  }
  function stale(section, version) {
    for (const v of views) if (rendered[v] && section in rendered[v] && rendered[v][section] !== version) return true;
    return false;
  }
  function changed(sections) {
    if (sections.length === 0) return;
    loadSummary().catch(() => {});
    for (const v of views) {
      if (needs[v].some((s) => sections.includes(s))) {
        if (v === active) load(v);
        else delete rendered[v]; // fetched when shown
      }
    }
  }

  // ---- plan ----
  async function loadPlan() {
    const [plan, hist] = await Promise.all([getJSON("/api/plan"), getJSON("/api/history?" + new URLSearchParams({ q: ui.historyQuery }))]);
    mark("plan", "plan", plan.version);
    mark("plan", "history", hist.version);
    renderPlan(plan);
    renderHistory(hist);
    $("plan-body").setAttribute("aria-busy", "false");
  }
  function renderPlan(a) {
    const body = $("plan-body");
    if (sectionError(body, a, "plan.json")) return;
    const p = a.data;
    if (!p.exists) {
      clear(body, el("p", { class: "empty" }, "No plan in progress (.nexus/state/plan.json does not exist)."));
      return;
    }
    const rows = p.issues.map((is) =>
      el("tr", { dataset: { issueId: is.id } },
        el("td", null, "#" + is.id),
        el("td", null, is.title),
        el("td", null, el("span", { class: "chip st-" + (is.status === "decided" ? "completed" : "pending") }, is.status)),
        el("td", { class: "decision" }, is.decision || "—")));
    clear(body,
      el("p", { class: "topic" }, el("strong", null, "Topic: "), p.topic, " ", el("span", { class: "muted" }, `(plan ${p.id}, started ${p.created_at}; ${p.decided} of ${p.issues.length} issues decided)`)),
      table(["Issue", "Title", "Status", "Decision"], rows, "Issues of the current plan"));
  }
  function renderHistory(a) {
    const body = $("history-body");
    if (sectionError(body, a, "history.json")) return;
    const h = a.data;
    const what = ui.historyQuery ? `matching “${ui.historyQuery}”` : "in all";
    const rows = h.cycles.slice().reverse().map((c) =>
      el("tr", null,
        el("td", null, c.completed_at || "—"),
        el("td", null, c.branch || "—"),
        el("td", null, c.topic === undefined ? "(no plan)" : c.topic),
        el("td", null, c.decisions ? c.decisions.map((d) => d.title + (d.decision ? ": " + d.decision : "")).join(" · ") || "—" : "—"),
        el("td", { class: "num" }, c.task_count === undefined ? "—" : c.task_count)));
    clear(body,
      el("p", { class: "info" }, `${h.total} cycle${h.total === 1 ? "" : "s"} ${what}; the latest ${h.showing} shown, newest first.`),
      rows.length ? table(["Completed", "Branch", "Topic", "Decisions", "Tasks"], rows, "Past cycles") : null);
  }
  $("history-form").addEventListener("submit", (e) => {
    e.preventDefault();
    ui.historyQuery = $("history-q").value.trim();
    load("plan");
  });

  // ---- tasks ----
  function setTasksMode(mode) {
    ui.tasksMode = mode;
    $("show-graph").setAttribute("aria-pressed", mode === "graph" ? "true" : "false");
    $("show-table").setAttribute("aria-pressed", mode === "table" ? "true" : "false");
    $("tasks-graph").hidden = mode !== "graph";
    $("tasks-table").hidden = mode !== "table";
    for (const n of document.querySelectorAll(".graph-only")) n.hidden = mode !== "graph";
    for (const n of document.querySelectorAll(".table-only")) n.hidden = mode !== "table";
    if (active === "tasks") load("tasks");
  }
  $("show-graph").addEventListener("click", () => setTasksMode("graph"));
  $("show-table").addEventListener("click", () => setTasksMode("table"));
  let filterTimer = null;
  function debounced(fn) {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(fn, 200);
  }
  $("tasks-q").addEventListener("input", () => debounced(() => { ui.tasksOffset = 0; load("tasks"); }));
  $("graph-all").addEventListener("change", () => load("tasks"));
  $("tasks-status").addEventListener("change", () => { ui.tasksOffset = 0; load("tasks"); });

  async function loadTasks() {
    const q = $("tasks-q").value.trim();
    if (ui.tasksMode === "graph") {
      const a = await getJSON("/api/graph?" + new URLSearchParams({ q, mode: $("graph-all").checked ? "all" : "focus" }));
      mark("tasks", "tasks", a.version);
      renderGraph(a);
    } else {
      const a = await getJSON("/api/tasks?" + new URLSearchParams({ q, status: $("tasks-status").value, offset: ui.tasksOffset, limit: 50 }));
      mark("tasks", "tasks", a.version);
      renderTaskTable(a);
    }
  }

  function renderProblems(g) {
    const box = $("tasks-problems");
    const items = [];
    for (const c of g.cycles) items.push(el("li", null, "Dependency cycle: " + c.map((id) => "#" + id).join(" → ") + " → #" + c[0]));
    for (const m of g.missing.slice(0, 50)) items.push(el("li", null, `Task #${m.task} depends on #${m.dep}, which does not exist.`));
    if (g.missing.length > 50) items.push(el("li", null, `… and ${g.missing.length - 50} more missing dependencies.`));
    for (const d of g.duplicates) items.push(el("li", null, `More than one task has the id #${d}.`));
    if (items.length === 0) {
      clear(box);
      box.className = "";
      return;
    }
    box.className = "problems";
    clear(box, el("p", null, el("strong", null, "The task graph has problems"), " (laid out anyway; the tasks concerned are marked):"), el("ul", null, ...items));
  }

  const NODE_W = 230, NODE_H = 58, GAP_X = 70, GAP_Y = 14, PAD = 10;
  function renderGraph(a) {
    const wrap = $("graph-wrap");
    if (a.error) {
      clear($("tasks-problems"));
      clear(wrap, el("p", { class: "error", role: "alert" }, "tasks.json: " + a.error));
      $("graph-info").textContent = "";
      return;
    }
    const g = a.data;
    renderProblems(g);
    $("tasks-goal").textContent = "";
    if (g.total === 0) {
      clear(wrap, el("p", { class: "empty" }, "No tasks (.nexus/state/tasks.json is missing or empty)."));
      $("graph-info").textContent = "";
      return;
    }
    const what = $("tasks-q").value.trim() ? `${g.matched} matching the filter` : g.mode === "all" ? "every task" : `the ready set (${g.ready}), the tasks in progress and those with a problem`;
    $("graph-info").textContent = `Showing ${g.shown} of ${g.total} tasks: ${what}, with their direct dependencies and dependents` +
      (g.truncated ? ` (cut at ${g.shown}; narrow it with the filter or use the table).` : ".") +
      " Left to right by dependency depth. Tab through the tasks; each one's details show below the graph.";
    const rows = {};
    for (const n of g.nodes) rows[n.col] = Math.max(rows[n.col] || 0, n.row + 1);
    const maxRows = Math.max(1, ...Object.values(rows));
    const width = PAD * 2 + g.columns * (NODE_W + GAP_X) - GAP_X;
    const height = PAD * 2 + maxRows * (NODE_H + GAP_Y) - GAP_Y;
    const pos = {};
    for (const n of g.nodes) pos[n.id] = { x: PAD + n.col * (NODE_W + GAP_X), y: PAD + n.row * (NODE_H + GAP_Y) };
    const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "group", "aria-label": `Task graph, ${g.shown} tasks` });
    const edges = svg("g", { class: "edges", "aria-hidden": "true" });
    for (const [from, to] of g.edges) {
      const a1 = pos[from], b1 = pos[to];
      if (!a1 || !b1) continue;
      const x1 = a1.x + NODE_W, y1 = a1.y + NODE_H / 2, x2 = b1.x, y2 = b1.y + NODE_H / 2;
      let d;
      if (x2 - x1 > GAP_X + 1) {
        // Skips a column: leave through the gap below the row and come
        // back up, instead of running under the tasks in between.
        const yb = Math.max(a1.y, b1.y) + NODE_H + GAP_Y / 2;
        d = `M${x1},${y1} C${x1 + GAP_X / 2},${y1} ${x1 + GAP_X / 2},${yb} ${x1 + GAP_X},${yb} L${x2 - GAP_X},${yb} C${x2 - GAP_X / 2},${yb} ${x2 - GAP_X / 2},${y2} ${x2 - 4},${y2}`;
      } else {
        const mx = (x1 + x2) / 2;
        d = `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2 - 4},${y2}`;
      }
      edges.append(svg("path", { d, "marker-end": "url(#arrow)" }));
    }
    root.append(svg("defs", null, svg("marker", { id: "arrow", viewBox: "0 0 8 8", refX: "7", refY: "4", markerWidth: "7", markerHeight: "7", orient: "auto" }, svg("path", { d: "M0,0 L8,4 L0,8 z" }))));
    root.append(edges);
    for (const n of g.nodes) {
      const p = pos[n.id];
      const cls = ["node", "st-" + n.status];
      if (n.ready) cls.push("ready");
      if (n.problem) cls.push("problem");
      const label = `Task #${n.id}: ${n.title}. Status ${statusLabel(n.status)}${n.ready ? ", ready" : ""}${n.owner ? ", owner " + n.owner : ""}${n.problem ? ". Problem: " + n.problem : ""}`;
      const node = svg("g", { class: cls.join(" "), transform: `translate(${p.x},${p.y})`, tabindex: "0", role: "button", "aria-label": label, dataset: { taskId: n.id } },
        svg("rect", { width: NODE_W, height: NODE_H, rx: 6 }),
        svg("text", { x: 8, y: 17, class: "head" }, `#${n.id} · ${statusLabel(n.status).toUpperCase()}${n.ready ? " · READY" : ""}${n.problem ? " · ⚠" : ""}`),
        svg("text", { x: 8, y: 34, class: "title" }, short(n.title, 30)),
        svg("text", { x: 8, y: 50, class: "owner" }, (n.owner ? "owner " + short(n.owner, 18) : "no owner") + (n.hidden_deps || n.hidden_users ? ` · +${(n.hidden_deps || 0) + (n.hidden_users || 0)} hidden` : "")),
        svg("title", null, label));
      node.addEventListener("focus", () => showTask(n));
      node.addEventListener("click", () => showTask(n));
      node.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          showTask(n);
        }
      });
      root.append(node);
    }
    clear(wrap, root);
  }
  function showTask(n) {
    clear($("graph-detail"),
      el("h3", null, `Task #${n.id}`),
      el("dl", null,
        el("dt", null, "Title"), el("dd", null, n.title),
        el("dt", null, "Status"), el("dd", null, statusLabel(n.status) + (n.ready ? " — ready (every dependency completed)" : "")),
        el("dt", null, "Owner"), el("dd", null, n.owner || "none"),
        el("dt", null, "Depth"), el("dd", null, String(n.depth)),
        n.problem ? el("dt", null, "Problem") : null, n.problem ? el("dd", { class: "error" }, n.problem) : null));
  }

  function renderTaskTable(a) {
    const box = $("tasks-table");
    if (sectionError(box, a, "tasks.json")) return;
    const p = a.data;
    $("tasks-goal").textContent = p.goal ? "Goal: " + p.goal : "";
    if (!p.exists || p.total === 0) {
      clear(box, el("p", { class: "empty" }, "No tasks."));
      return;
    }
    const rows = p.rows.map((t) =>
      el("tr", { class: (t.ready ? "ready " : "") + (t.problem ? "problem" : ""), dataset: { taskId: t.id } },
        el("td", null, "#" + t.id),
        el("td", null, t.title),
        el("td", null, el("span", { class: "chip st-" + t.status }, statusLabel(t.status)), t.ready ? el("span", { class: "chip ready" }, "READY") : null),
        el("td", null, t.owner || "—"),
        el("td", null, t.deps.length ? t.deps.map((d) => "#" + d).join(", ") : "—"),
        el("td", { class: "num" }, t.depth),
        el("td", { class: "error" }, t.problem || "")));
    clear(box, pager(p, "tasks", () => load("tasks")),
      table(["ID", "Title", "Status", "Owner", "Depends on", "Depth", "Problem"], rows, "Tasks"));
  }

  // pager: "rows a–b of n" with previous and next buttons.
  function pager(p, key, reload) {
    const limit = 50, off = p.offset;
    const prev = el("button", { type: "button", disabled: off === 0 }, "← Previous");
    const next = el("button", { type: "button", disabled: off + limit >= p.matched }, "Next →");
    prev.addEventListener("click", () => { ui[key + "Offset"] = Math.max(0, off - limit); reload(); });
    next.addEventListener("click", () => { ui[key + "Offset"] = off + limit; reload(); });
    const shown = p.matched === 0 ? "none" : `${off + 1}–${Math.min(off + limit, p.matched)}`;
    return el("div", { class: "pager" }, prev, el("span", { "aria-live": "polite" }, ` rows ${shown} of ${p.matched}` + (p.matched !== p.total ? ` (of ${p.total} in all)` : "") + " "), next);
  }

  function table(headers, rows, caption) {
    return el("table", null,
      el("caption", { class: "sr-only" }, caption),
      el("thead", null, el("tr", null, ...headers.map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", null, ...rows));
  }

  // ---- agents ----
  async function loadAgents() {
    const a = await getJSON("/api/agents");
    mark("agents", "agents", a.version);
    const body = $("agents-body");
    if (sectionError(body, a, "agent trackers")) return;
    const d = a.data;
    const parts = [];
    for (const h of d.harnesses) {
      parts.push(el("h3", null, `Harness ${h.id}`, el("span", { class: "muted" }, ` — .nexus/state/${h.id}/agent-tracker.json`)));
      if (h.error) parts.push(el("p", { class: "error", role: "alert" }, h.error));
      if (h.agents.length === 0) {
        parts.push(el("p", { class: "empty" }, "No agents recorded."));
        continue;
      }
      if (h.omitted) parts.push(el("p", { class: "info" }, `${h.omitted} older agents are not shown.`));
      parts.push(timeline(h, d.now));
      parts.push(table(["Role", "Agent id", "Status", "Started", "Stopped", "Resumes", "Files touched", "Last message"],
        h.agents.map((g) => el("tr", { dataset: { agentId: g.agent_id || "" } },
          el("td", null, g.role || "—"),
          el("td", null, g.agent_id || "—"),
          el("td", null, el("span", { class: "chip " + (g.stopped_at ? "st-completed" : "st-in_progress") }, g.status || (g.stopped_at ? "completed" : "running"))),
          el("td", null, g.started_at || "—"),
          el("td", null, g.stopped_at || "—"),
          el("td", { class: "num" }, g.resume_count),
          el("td", null, g.files_count === 0 ? "none" :
            el("details", null, el("summary", null, `${g.files_count} file${g.files_count === 1 ? "" : "s"}`),
              el("ul", null, ...g.files_touched.map((f) => el("li", null, f))),
              g.files_count > g.files_touched.length ? el("p", null, `… ${g.files_count - g.files_touched.length} more`) : null)),
          el("td", { class: "message" }, g.last_message || "—"))), `Agents of harness ${h.id}`));
    }
    clear(body, ...parts);
  }
  // timeline: one bar per agent from its start to its stop (or now).
  function timeline(h, nowText) {
    const now = Date.parse(nowText) || Date.now();
    const spans = h.agents.map((g) => {
      const s = Date.parse(g.started_at);
      let e = g.stopped_at ? Date.parse(g.stopped_at) : now;
      if (isNaN(e)) e = now;
      return { g, s, e: Math.max(e, s) };
    }).filter((x) => !isNaN(x.s));
    if (spans.length === 0) return null;
    const t0 = Math.min(...spans.map((x) => x.s)), t1 = Math.max(now, ...spans.map((x) => x.e));
    const W = 900, L = 170, ROW = 22, H = spans.length * ROW + 24;
    const scale = (t) => L + ((t - t0) / Math.max(1, t1 - t0)) * (W - L - 10);
    const root = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "timeline", role: "img", "aria-label": `Timeline of ${spans.length} agents of harness ${h.id}, from ${new Date(t0).toISOString()} to ${new Date(t1).toISOString()}` });
    spans.forEach((x, i) => {
      const y = i * ROW + 4;
      const running = !x.g.stopped_at;
      root.append(svg("text", { x: 4, y: y + 14, class: "label" }, short((x.g.role || "agent") + (running ? " (running)" : ""), 24)));
      root.append(svg("rect", { x: scale(x.s), y, width: Math.max(3, scale(x.e) - scale(x.s)), height: ROW - 6, class: running ? "bar running" : "bar" },
        svg("title", null, `${x.g.role || "agent"} ${x.g.agent_id || ""}: ${x.g.started_at} → ${x.g.stopped_at || "running"}, resumed ${x.g.resume_count} times`)));
    });
    root.append(svg("text", { x: L, y: H - 4, class: "axis" }, new Date(t0).toISOString().replace(".000", "")));
    root.append(svg("text", { x: W - 10, y: H - 4, class: "axis", "text-anchor": "end" }, new Date(t1).toISOString().replace(".000", "")));
    return root;
  }

  // ---- decisions ----
  $("decisions-q").addEventListener("input", () => debounced(() => { ui.decisionsOffset = 0; load("decisions"); }));
  $("decisions-status").addEventListener("change", () => { ui.decisionsOffset = 0; load("decisions"); });
  async function loadDecisions() {
    const a = await getJSON("/api/decisions?" + new URLSearchParams({ q: $("decisions-q").value.trim(), status: $("decisions-status").value, offset: ui.decisionsOffset, limit: 50 }));
    mark("decisions", "decisions", a.version);
    const body = $("decisions-body");
    if (sectionError(body, a, "decision store")) return;
    const d = a.data;
    if (!d.enabled) {
      clear(body, el("p", { class: "empty" }, "The decision store is turned off (decisions.enabled: false)."));
      return;
    }
    const link = (ref) => {
      if (!ref) return "—";
      const b = el("button", { type: "button", class: "link", "aria-label": "Show decision " + ref }, "D" + String(ref).padStart(3, "0"));
      b.addEventListener("click", () => { $("decisions-q").value = String(ref); $("decisions-status").value = ""; ui.decisionsOffset = 0; load("decisions"); });
      return b;
    };
    const rows = d.rows.map((x) =>
      el("tr", { dataset: { decision: x.number } },
        el("td", null, "D" + String(x.number).padStart(3, "0")),
        el("td", null, x.title),
        el("td", null, el("span", { class: "chip " + (x.status === "active" ? "st-completed" : "st-superseded") }, x.status)),
        el("td", null, x.date),
        el("td", null, x.type || "—"),
        el("td", null, x.confidence || "—"),
        el("td", null, link(x.supersedes)),
        el("td", null, link(x.superseded_by))));
    const problems = (d.problems || []).map((p) => el("li", null, `${p.file}: ${p.reason}`));
    clear(body,
      el("p", { class: "info" }, "Store: ", el("code", null, d.store)),
      problems.length ? el("div", { class: "problems", role: "alert" }, el("p", null, "Decision files left out:"), el("ul", null, ...problems)) : null,
      pager(d, "decisions", () => load("decisions")),
      table(["Number", "Title", "Status", "Date", "Type", "Confidence", "Supersedes", "Superseded by"], rows, "Decisions"));
  }
  $("check-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const out = $("check-answer");
    out.textContent = "checking…";
    out.className = "";
    try {
      const a = await getJSON("/api/decisions/check", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ approach: $("check-approach").value, context: $("check-context").value }),
      });
      if (a.error) {
        out.textContent = a.error;
        out.className = "error";
      } else {
        out.textContent = a.answer;
      }
    } catch (err) {
      out.textContent = "The check failed: " + err.message;
      out.className = "error";
    }
    out.dataset.done = String(Date.now());
  });

  // ---- memory ----
  async function loadMemory() {
    const a = await getJSON("/api/memory");
    mark("memory", "memory", a.version);
    const body = $("memory-body");
    if (sectionError(body, a, "memory")) return;
    const d = a.data;
    const pol = d.policy;
    const th = (v, what) => what + (v === null || v === undefined ? "(no threshold set)" : String(v));
    const sig = (met, text) => el("span", { class: "signal " + (met ? "met" : "unmet") }, (met ? "✔ met: " : "✘ not met: ") + text);
    const off = ui.memoryOffset, limit = 50;
    const page = d.notes.slice(off, off + limit);
    const rows = page.map((n) =>
      el("tr", { class: n.eligible ? "eligible" : "", dataset: { note: n.file } },
        el("td", null, n.file),
        el("td", null, n.category || "—"),
        el("td", { class: "num" }, n.size),
        el("td", { class: "num" }, n.reads),
        el("td", null, n.last_access || "never"),
        el("td", null, n.last_agent || "—"),
        el("td", null, sig(n.signals.days_since_access, `${n.days_since_access} days (from ${n.age_from.replace("_", " ")})`)),
        el("td", null, sig(n.signals.cycles_since_access, `${n.cycles_since_access} cycles`)),
        el("td", null, sig(n.signals.access_count, `${n.gc_reads} reads`)),
        el("td", null, `${n.signals_met}/3` + (n.eligible ? " — would be deleted" : ""))));
    clear(body,
      el("p", { class: "info" },
        `${d.notes.length} notes in .nexus/memory/. Reads and last access merge the access logs of harness${d.logs.length === 1 ? "" : "es"} ${d.logs.join(", ") || "(none yet)"}; ` +
        `the gc report is the one [m:gc] gives for harness ${d.harness} (its own log). A signal is met at ${th(pol.min_days_since_access, "days since the last read ≥ ")}, ` +
        `${th(pol.min_cycles_since_access, "cycles since the last read ≥ ")}, ${th(pol.max_access_count, "reads ≤ ")}; automatic gc is ${pol.auto ? "on" : "off"}.`),
      ...d.remarks.map((r) => el("p", { class: "info" }, r)),
      el("p", null, d.eligible.length ? `Eligible for deletion (all three signals met): ${d.eligible.join(", ")}` : "No note meets all three signals."),
      d.notes.length > limit ? pager({ offset: off, matched: d.notes.length, total: d.notes.length }, "memory", () => load("memory")) : null,
      d.notes.length ? table(["Note", "Category", "Bytes", "Reads", "Last access", "Last agent", "Days since access", "Cycles since access", "Read count", "Signals"], rows, "Memory notes and their gc signals") : el("p", { class: "empty" }, "No memory notes."));
  }

  // ---- start ----
  setTasksMode("graph");
  loadSummary().catch((err) => showError($("view-" + active), err));
  connect();
  select(location.hash.slice(1) || "plan", false);
})();
