/* benchledger report: the grid and the long tables, drawn from the page's JSON data block.
   Plain DOM, text set with textContent only; nothing is fetched. */
(function () {
  "use strict";
  var block = document.getElementById("report-data");
  if (!block) { return; }
  performance.mark("report-script-start");
  var R = JSON.parse(block.textContent);
  performance.mark("report-data-parsed");
  var S = R.strings;
  var PAGE = R.chunk_cases;
  var SHORT = { pass: "pass", partial: "partial", official_zero: "0", uncountable_official_score: "uncountable",
    verifier_no_reward: "no reward", setup_runner_infra: "infra", missing: "—" };

  function str(i) { return i === null || i === undefined ? "" : S[i]; }
  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) { Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); }); }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function option(select, value, label) { select.appendChild(el("option", { value: String(value) }, label)); }
  function fmt(x) { return x === null || x === undefined ? "" : (Math.round(x * 1000) / 1000).toString(); }

  /* ---------------------------------------------------------------- pager */
  function pager(box, total, page, go) {
    box.textContent = "";
    var pages = Math.max(1, Math.ceil(total / PAGE));
    var prev = el("button", { type: "button" }, "‹ previous");
    var next = el("button", { type: "button" }, "next ›");
    prev.disabled = page <= 0; next.disabled = page >= pages - 1;
    prev.addEventListener("click", function () { go(page - 1); });
    next.addEventListener("click", function () { go(page + 1); });
    box.appendChild(prev);
    box.appendChild(el("span", null, "page " + (page + 1) + " of " + pages));
    box.appendChild(next);
  }

  /* ---------------------------------------------------------------- grid */
  var G = { g: 0, search: "", arm: -1, bucket: -1, sort: "case", page: 0, view: "value" };
  var col = {};
  R.run_columns.forEach(function (name, i) { col[name] = i; });
  var bench = document.getElementById("grid-benchmark");
  var armSel = document.getElementById("grid-arm");
  var bucketSel = document.getElementById("grid-bucket");

  R.grids.forEach(function (grid, i) { option(bench, i, str(grid.benchmark)); });
  R.buckets.forEach(function (b, i) { option(bucketSel, i, b.label); });

  function grid() { return R.grids[G.g]; }
  /* The overview's view: compare's value of the case under its per-case policy; the best-of
     view: the score of the run run-ledger-aggregate selected. */
  function valued(gr, j) { return G.view === "value" && gr.valued_arms && gr.valued_arms[j]; }
  function cellScore(gr, cell) {
    return valued(gr, cell % gr.arms.length) ? gr.value[cell] : gr.score[cell];
  }
  function valueKey(x) { return x === null ? "missing" : x >= 1 ? "pass" : x <= 0 ? "official_zero" : "partial"; }
  function policyText(gr) { return G.view === "value" ? "case value: " + str(gr.policy) + " of the case's attempts (as the overview)" : "best-of run (as run-ledger-aggregate)"; }

  /* Run facts live in assets/runs-<grid>-<chunk>.js, loaded on first use (script elements:
     a page opened from disk may not fetch()). */
  var chunks = {}, waiting = {};
  window.BENCHLEDGER_RUNS = function (slug, k, strings, facts) {
    var key = slug + "/" + k;
    chunks[key] = { strings: strings, facts: facts };
    (waiting[key] || []).forEach(function (done) { done(); });
    delete waiting[key];
  };
  function withFacts(gr, i, j, show) {
    var k = Math.floor(i / R.chunk_cases), key = gr.slug + "/" + k;
    var pick = function () {
      var chunk = chunks[key];
      show(chunk.facts[(i - k * R.chunk_cases) * gr.arms.length + j], chunk.strings);
    };
    if (chunks[key]) { pick(); return; }
    if (waiting[key]) { waiting[key].push(pick); return; }
    waiting[key] = [pick];
    var script = el("script", { src: "assets/runs-" + gr.slug + "-" + k + ".js" });
    script.addEventListener("error", function () { delete waiting[key]; show(undefined); });
    document.body.appendChild(script);
  }

  function legend() {
    var box = document.getElementById("grid-legend");
    var gr = grid();
    var counts = R.buckets.map(function () { return 0; });
    gr.bucket.forEach(function (b) { counts[b] += 1; });
    box.textContent = "";
    R.buckets.forEach(function (b, i) {
      var item = el("span", { "data-bucket": b.key });
      item.appendChild(el("i", { "class": "swatch b-" + b.key }));
      item.appendChild(document.createTextNode(b.label + " (" + counts[i] + ")"));
      box.appendChild(item);
    });
  }

  function resetArms() {
    var gr = grid();
    armSel.textContent = "";
    option(armSel, -1, "any arm");
    gr.arms.forEach(function (a, j) { option(armSel, j, str(a)); });
    G.arm = -1;
  }

  function matches(gr, i) {
    var A = gr.arms.length;
    if (G.search && str(gr.cases[i]).toLowerCase().indexOf(G.search) < 0) { return false; }
    if (G.bucket < 0) { return true; }
    if (G.arm >= 0) { return gr.bucket[i * A + G.arm] === G.bucket; }
    for (var j = 0; j < A; j++) { if (gr.bucket[i * A + j] === G.bucket) { return true; } }
    return false;
  }

  function sortKey(gr, i) {
    var A = gr.arms.length, total = 0, n = 0, bad = 0;
    for (var j = 0; j < A; j++) {
      var s = cellScore(gr, i * A + j);
      if (s !== null) { total += s; n += 1; }
      if (gr.bucket[i * A + j] > 2) { bad += 1; }
    }
    if (G.sort === "score") { return n ? -total / n : 1; }
    return -bad;
  }

  function drawGrid() {
    var gr = grid(), A = gr.arms.length;
    var rows = [];
    for (var i = 0; i < gr.cases.length; i++) { if (matches(gr, i)) { rows.push(i); } }
    if (G.sort !== "case") {
      var keys = {};
      rows.forEach(function (i) { keys[i] = sortKey(gr, i); });
      rows.sort(function (a, b) { return keys[a] - keys[b] || a - b; });
    }
    var pages = Math.max(1, Math.ceil(rows.length / PAGE));
    G.page = Math.min(G.page, pages - 1);
    document.getElementById("grid-count").textContent =
      rows.length + " of " + gr.cases.length + " cases · " + A + " arms · " + policyText(gr);
    document.getElementById("grid-policy").textContent = str(gr.policy);
    var table = document.getElementById("grid-table");
    table.textContent = "";
    var head = el("thead"), hr = el("tr");
    hr.appendChild(el("th", { "class": "case" }, "case"));
    gr.arms.forEach(function (a) { hr.appendChild(el("th", { "class": "arm", title: str(a) }, str(a))); });
    head.appendChild(hr);
    table.appendChild(head);
    var body = el("tbody");
    rows.slice(G.page * PAGE, (G.page + 1) * PAGE).forEach(function (i) {
      var tr = el("tr", { "data-case": str(gr.cases[i]) });
      tr.appendChild(el("th", { "class": "case", scope: "row", title: str(gr.cases[i]) }, str(gr.cases[i])));
      for (var j = 0; j < A; j++) {
        var cell = i * A + j, key = R.buckets[gr.bucket[cell]].key, score = cellScore(gr, cell);
        var label, title = R.buckets[gr.bucket[cell]].label, colour = key;
        if (valued(gr, j)) {
          label = score === null ? "—" : fmt(score);
          title = score === null ? "not counted by compare (" + title + ")" : str(gr.policy) + " " + fmt(score);
          if (score !== null) { colour = valueKey(score); }
        } else {
          label = score !== null && (key === "pass" || key === "partial" || key === "official_zero")
            ? fmt(score) : SHORT[key];
        }
        var td = el("td", { "class": "cell b-" + colour, "data-arm": str(gr.arms[j]), "data-bucket": key,
          "data-value": score === null ? "" : String(score) });
        var button = el("button", { type: "button", title: title }, label);
        button.addEventListener("click", openRun.bind(null, G.g, i, j));
        td.appendChild(button);
        tr.appendChild(td);
      }
      body.appendChild(tr);
    });
    table.appendChild(body);
    pager(document.getElementById("grid-pager"), rows.length, G.page, function (p) { G.page = p; drawGrid(); });
  }

  function openRun(g, i, j) {
    var gr = R.grids[g], cell = i * gr.arms.length + j;
    var bucket = R.buckets[gr.bucket[cell]];
    var box = document.getElementById("run-facts");
    box.textContent = "";
    box.appendChild(el("h3", null, str(gr.cases[i]) + " × " + str(gr.arms[j])));
    box.appendChild(el("p", { "class": "note", "data-fact": "bucket" }, "bucket: " + bucket.label));
    var body = el("div", null, "loading…");
    box.appendChild(body);
    var dialog = document.getElementById("run-dialog");
    if (dialog.open) { dialog.close(); }
    dialog.showModal();
    withFacts(gr, i, j, function (run, strings) { showFacts(body, run, strings); });
  }

  function showFacts(body, run, strings) {
    var t = function (i) { return i === null ? null : strings[i]; };
    body.textContent = "";
    if (run === undefined) { body.textContent = "The run facts file of this report is missing."; return; }
    if (run === null) { body.appendChild(el("p", null, "No active run of this arm on this case.")); return; }
    var dl = el("dl"), rewards = run[col.attempt_rewards];
    var facts = [
      ["run_id", t(run[col.run_id])],
      ["recorded_at", t(run[col.recorded_at])],
      ["score status", t(run[col.status])],
      ["official score", run[col.score] === null ? "missing" : String(run[col.score])],
      ["passed", run[col.passed] === null ? "" : String(run[col.passed])],
      ["attempts", run[col.attempts] === null ? "" : run[col.attempts] + " (" + (run[col.scored_attempts] || 0) + " scored)"],
      ["attempt rewards", rewards ? rewards.map(function (x) { return x === null ? "unscored" : String(x); }).join(", ") : ""],
      ["failure class", t(run[col.failure_class])],
      ["repair", [t(run[col.repair_priority]), t(run[col.repair_class])].filter(Boolean).join(" · ")],
      ["next action", t(run[col.next_action])],
      ["job", t(run[col.job_name])],
      ["runs in this cell", run[col.active_runs] + " active, " + run[col.archived_runs] + " archived"]
    ];
    run[col.artifact_refs].forEach(function (pair) { facts.push([t(pair[0]), t(pair[1])]); });
    facts.forEach(function (f) {
      if (f[1] === "" || f[1] === null || f[1] === undefined) { return; }
      dl.appendChild(el("dt", null, f[0]));
      dl.appendChild(el("dd", { "data-fact": f[0] }, f[1]));
    });
    body.appendChild(dl);
    var links = run[col.artifact_links];
    if (links) { body.appendChild(artifactList(links)); }
  }

  /* report --link-artifacts: per attempt, links to its files on the disk that rendered the
     report, or why there are none. Only file:/// URLs become links (set as attributes). */
  function artifactList(groups) {
    var box = el("div", { "class": "artifacts", "data-fact": "artifacts" });
    box.appendChild(el("h4", null, "Files on this disk"));
    groups.forEach(function (group) {
      var item = el("div", { "class": "attempt" });
      item.appendChild(el("p", { "class": "attempt-label" }, group[0]));
      if (group[1]) { item.appendChild(el("p", { "class": "note", "data-artifact-note": "" }, group[1])); }
      var list = el("ul");
      group[2].forEach(function (link) {
        if (String(link[1]).indexOf("file:///") !== 0) { return; }
        var li = el("li");
        li.appendChild(el("a", { href: link[1], target: "_blank", rel: "noopener", "data-artifact": link[0] }, link[0]));
        list.appendChild(li);
      });
      if (list.childNodes.length) { item.appendChild(list); }
      box.appendChild(item);
    });
    return box;
  }

  bench.addEventListener("change", function () { G.g = +bench.value; G.page = 0; resetArms(); legend(); drawGrid(); });
  armSel.addEventListener("change", function () { G.arm = +armSel.value; G.page = 0; drawGrid(); });
  bucketSel.addEventListener("change", function () { G.bucket = bucketSel.value === "" ? -1 : +bucketSel.value; G.page = 0; drawGrid(); });
  document.getElementById("grid-view").addEventListener("change", function (e) { G.view = e.target.value; drawGrid(); });
  document.getElementById("grid-sort").addEventListener("change", function (e) { G.sort = e.target.value; G.page = 0; drawGrid(); });
  document.getElementById("grid-search").addEventListener("input", function (e) { G.search = e.target.value.trim().toLowerCase(); G.page = 0; drawGrid(); });

  /* ---------------------------------------------------------------- lists */
  /* The case decisions and repair backlog (assets/lists.js, their own string table) load
     after the first screen is drawn: a large ledger's lists never delay it. */
  function list(name, columns, lines, strings) {
    var state = { search: "", page: 0 };
    var table = document.getElementById(name + "-table");
    var text = function (i) { return i === null ? "" : strings[i]; };
    function draw() {
      var rows = lines.filter(function (line) {
        if (!state.search) { return true; }
        return line.some(function (i) { return text(i).toLowerCase().indexOf(state.search) >= 0; });
      });
      var pages = Math.max(1, Math.ceil(rows.length / PAGE));
      state.page = Math.min(state.page, pages - 1);
      document.getElementById(name + "-count").textContent = rows.length + " of " + lines.length;
      table.textContent = "";
      var head = el("thead"), hr = el("tr");
      columns.forEach(function (c) { hr.appendChild(el("th", null, c)); });
      head.appendChild(hr);
      table.appendChild(head);
      var body = el("tbody");
      rows.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (line) {
        var tr = el("tr");
        line.forEach(function (i) { tr.appendChild(el("td", null, text(i) || "–")); });
        body.appendChild(tr);
      });
      table.appendChild(body);
      table.hidden = rows.length === 0;
      pager(document.getElementById(name + "-pager"), rows.length, state.page, function (p) { state.page = p; draw(); });
    }
    document.getElementById(name + "-search").addEventListener("input", function (e) {
      state.search = e.target.value.trim().toLowerCase(); state.page = 0; draw();
    });
    draw();
  }

  window.BENCHLEDGER_LISTS = function (lists) {
    list("decisions", R.decision_columns, lists.decisions, lists.strings);
    list("backlog", R.backlog_columns, lists.backlog, lists.strings);
    document.body.setAttribute("data-lists", "ready");
  };

  if (R.grids.length) { resetArms(); legend(); drawGrid(); }
  performance.mark("report-ready");
  window.setTimeout(function () { document.body.appendChild(el("script", { src: "assets/lists.js" })); }, 0);
}());
