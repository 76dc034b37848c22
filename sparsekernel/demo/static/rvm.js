"use strict";
// The RVM page: regression with its predictive band, classification with its probability map,
// the evidence history and the alphas running off to infinity.
(() => {
  const $ = (id) => document.getElementById(id);
  const plot = new Demo.Plot($("plot"));
  const state = { task: "regression", method: "fast", gamma: 10, noise: 0.2, points: [], steps: null,
                  compareSvm: false, nu: 0.5, preset: 1, hint: "" };
  let result = null, dragging = -1;

  const solve = Demo.latestOnly(async () => {
    if (!state.points.length) { result = null; render(); return; }
    const body = { task: state.task, method: state.method, gamma: state.gamma, points: state.points,
                   grid: { ...plot.bounds, n: 60 } };
    if (state.steps !== null) body.steps = state.steps;
    if (state.compareSvm) { body.compare_svm = true; body.nu = state.nu; }
    const answer = await Demo.post("/api/rvm", body);
    if (!answer.ok) { Demo.message(answer.data.error || `error ${answer.status}`, "error"); result = null; }
    else { result = answer.data; Demo.message(state.hint || "", "hint"); }
    render();
    window.demo.solves += 1;
  });

  function render() {
    plot.clear();
    if (result && result.field) {
      // the proportion of red and blue ink is the probability (Figure 7.12)
      plot.field(result.field, (p) => [Math.round(31 + p * 183), Math.round(119 - p * 80), Math.round(180 - p * 140), 110]);
      plot.contour(result.field, 0.5, { color: "#000", width: 2.2 });
    }
    if (result && result.curve) {
      const c = result.curve;
      plot.band(c.x, c.mean.map((m, k) => m - c.std[k]), c.mean.map((m, k) => m + c.std[k]), "rgba(214,39,40,0.16)");
      plot.curve(c.x, c.mean, { color: Demo.COLORS.red, width: 2.2 });
    }
    plot.axes(state.task === "regression" ? "x" : "x₁", state.task === "regression" ? "t" : "x₂");
    const relevant = new Set(result ? result.relevance : []);
    const svs = new Set(result && result.svm_support ? result.svm_support : []);
    const labels = [...new Set(state.points.map((p) => p[2]))].sort((a, b) => a - b);
    state.points.forEach((p, n) => {
      if (state.task === "regression") plot.marker(p[0], p[1], "circle", Demo.COLORS.green, "#1b5e20", 5);
      else {
        const upper = p[2] === labels[labels.length - 1];
        plot.marker(p[0], p[1], upper ? "circle" : "square", upper ? Demo.COLORS.red : Demo.COLORS.blue, "#222", 5);
      }
      if (svs.has(n)) plot.ring(p[0], p[1], 15, "#616161", [3, 3]);
      if (relevant.has(n)) plot.ring(p[0], p[1], 10, "#000");
    });
    $("plot").dataset.relevanceCount = String(relevant.size);
    summary();
    history();
    alphas();
    legend();
  }

  function summary() {
    const rows = [];
    if (result) {
      rows.push(["algorithm", `${result.method}${state.steps !== null ? `, ${state.steps} update(s)` : ""}`]);
      rows.push(["relevance vectors", `<span id="n-relevance">${result.relevance.length}</span> of ${state.points.length}` +
                 (result.bias_used ? " (+ bias)" : "")]);
      if (result.svm_support) rows.push(["nu-SVC support vectors", `<span id="n-support">${result.svm_support.length}</span>`]);
      if (state.task === "regression" && result.beta) rows.push(["noise σ = β<sup>−1/2</sup>", Demo.fmt(1 / Math.sqrt(result.beta), 4)]);
      const ev = result.log_evidence || [];
      if (ev.length) rows.push(["log evidence", Demo.fmt(ev[ev.length - 1], 5)]);
      rows.push(["iterations, time", `${result.iterations}, ${result.solve_ms.toFixed(1)} ms`]);
      if (result.training_error !== undefined && result.training_error !== null) rows.push(["training error", Demo.fmt(result.training_error, 3)]);
    }
    $("summary").innerHTML = rows.map(([k, v]) => `<tr><td>${k}</td><td>${v}</td></tr>`).join("");
  }

  // -- the two small plots: margins wide enough for "-482.176", labels kept apart -------------
  const MINI = { l: 60, r: 10, t: 10, b: 26 };
  const OFF_SCALE = 4;          // a leading value this many times the body's span below the top is off the scale,
  const OFF_SCALE_SHARE = 0.2;  // and at most this share of the iterations (at least one); the rest is the body

  function miniAxes(ctx, canvas, label) {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, canvas.width, canvas.height);
    const box = miniBox(canvas);
    ctx.strokeStyle = "#888"; ctx.lineWidth = 1; ctx.strokeRect(box.x0, box.y0, box.x1 - box.x0, box.y1 - box.y0);
    ctx.fillStyle = "#333"; ctx.font = "11px system-ui, sans-serif";
    ctx.textAlign = "center"; ctx.textBaseline = "alphabetic";
    ctx.fillText(label, (box.x0 + box.x1) / 2, canvas.height - 5);
    canvas.labels = [];
    canvas.dataset.labels = "[]";
  }

  function miniBox(canvas) {
    return { x0: MINI.l, x1: canvas.width - MINI.r, y0: MINI.t, y1: canvas.height - MINI.b };
  }

  // A tick label left of the axis, right-aligned; its place is recorded (data-labels) for the tests.
  function leftLabel(ctx, canvas, text, y) {
    ctx.fillStyle = "#333"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
    ctx.fillText(text, MINI.l - 6, y);
    ctx.fillRect(MINI.l - 3, Math.round(y), 3, 1);
    const width = ctx.measureText(text).width;
    canvas.labels.push({ text, y, left: MINI.l - 6 - width, right: MINI.l - 6 });
    canvas.dataset.labels = JSON.stringify(canvas.labels);
  }

  // How many leading values to leave off the scale (the -482 of a first iteration would flatten
  // the rest of the curve): of the first OFF_SCALE_SHARE of the iterations, those that lie more
  // than OFF_SCALE times the span of the later ones (the body) below the top.
  function offScale(values) {
    const hi = Math.max(...values);
    const most = Math.min(Math.max(1, Math.ceil(OFF_SCALE_SHARE * values.length)), values.length - 2);
    if (most < 1) return 0;
    const body = hi - Math.min(...values.slice(most));
    let skip = 0;
    while (skip < most && body > 0 && hi - values[skip] > OFF_SCALE * body) skip += 1;
    return skip;
  }

  function breakMark(ctx, x, y) {
    // the axis interrupted: two short slanted strokes
    ctx.save(); ctx.strokeStyle = "#555"; ctx.lineWidth = 1.2;
    ctx.clearRect(x - 4, y - 4, 8, 8); ctx.fillStyle = "#fff"; ctx.fillRect(x - 4, y - 4, 8, 8);
    for (const d of [-2.5, 2.5]) { ctx.beginPath(); ctx.moveTo(x - 5, y + d + 2); ctx.lineTo(x + 5, y + d - 2); ctx.stroke(); }
    ctx.restore();
  }

  function history() {
    const canvas = $("history"), ctx = canvas.getContext("2d"), box = miniBox(canvas);
    miniAxes(ctx, canvas, "iteration");
    const ev = result && result.log_evidence ? result.log_evidence.filter((v) => v !== null) : [];
    canvas.dataset.offScale = "0";
    $("history-note").textContent = "";
    if (ev.length < 1) return;
    const skip = offScale(ev), shown = ev.slice(skip);
    const hi = Math.max(...ev), lo = Math.min(...shown), pad = 0.08 * ((hi - lo) || 1);
    const X = (k) => box.x0 + (k / Math.max(ev.length - 1, 1)) * (box.x1 - box.x0);
    const Y = (v) => box.y0 + (1 - (v - (lo - pad)) / (hi - lo + 2 * pad)) * (box.y1 - box.y0);
    ctx.save(); ctx.beginPath(); ctx.rect(box.x0, box.y0, box.x1 - box.x0, box.y1 - box.y0); ctx.clip();
    ctx.strokeStyle = Demo.COLORS.red; ctx.lineWidth = 2; ctx.beginPath();
    ev.forEach((v, k) => (k ? ctx.lineTo(X(k), Y(v)) : ctx.moveTo(X(k), Y(v)))); ctx.stroke();   // off-scale values leave through the bottom
    ctx.restore();
    leftLabel(ctx, canvas, Demo.fmt(hi, 3), Y(hi));
    if (lo < hi) leftLabel(ctx, canvas, Demo.fmt(lo, 3), Y(lo));
    ctx.textBaseline = "top"; ctx.textAlign = "center";
    ctx.fillText("0", box.x0, box.y1 + 2);
    if (ev.length > 1) { ctx.textAlign = "right"; ctx.fillText(String(ev.length - 1), box.x1, box.y1 + 2); }
    if (skip) {
      breakMark(ctx, box.x0, box.y1 - 6);
      const which = skip === 1 ? "iteration 0 is" : `iterations 0-${skip - 1} are`;
      $("history-note").textContent = `The scale is broken at the bottom: ${which} below it ` +
        `(from ${Demo.fmt(ev[0], 3)}), so that the rest of the rise shows.`;
    }
    canvas.dataset.offScale = String(skip);
  }

  function alphas() {
    const canvas = $("alphas"), ctx = canvas.getContext("2d"), box = miniBox(canvas);
    miniAxes(ctx, canvas, "basis function n (one per training point)");
    if (!result || !result.alpha_all) return;
    const values = result.alpha_all, n = values.length, w = (box.x1 - box.x0) / n;
    const logs = values.map((a) => (a === null ? null : Math.log10(a)));
    const finite = logs.filter((v) => v !== null);
    const lo = Math.min(-2, ...finite), hi = Math.max(4, ...finite);
    const band = 14, top = box.y0 + band + 8;      // the pruned functions' row, then a break, then the scale
    const Y = (v) => top + (1 - (v - lo) / (hi - lo)) * (box.y1 - top);
    logs.forEach((v, k) => {
      const x = box.x0 + k * w;
      if (v === null) { ctx.fillStyle = "#bdbdbd"; ctx.fillRect(x, box.y0 + 4, Math.max(w - 1, 1), band - 6); return; }
      ctx.fillStyle = Demo.COLORS.blue; ctx.fillRect(x, Y(v), Math.max(w - 1, 1), box.y1 - Y(v));
    });
    ctx.save(); ctx.strokeStyle = "#ccc"; ctx.setLineDash([3, 3]); ctx.beginPath();
    ctx.moveTo(box.x0, box.y0 + band + 2); ctx.lineTo(box.x1, box.y0 + band + 2); ctx.stroke(); ctx.restore();
    breakMark(ctx, box.x0, box.y0 + band + 2);
    leftLabel(ctx, canvas, "∞", box.y0 + band / 2 + 1);
    const step = Math.max(1, Math.ceil((hi - lo) / 5));          // log10 alpha ticks
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) leftLabel(ctx, canvas, String(v), Y(v));
  }

  function legend() {
    const svm = state.compareSvm ? "; dashed grey rings: the nu-SVC's support vectors on the same data" : "";
    $("legend").innerHTML = (state.task === "regression"
      ? "green: data; red: predictive mean (7.90), shaded: ± one standard deviation (7.91)"
      : "red circles / blue squares: the two classes; colour: p(class | x), the line p = 1/2") +
      `; black rings: relevance vectors${svm}.<br>Click to add a point (shift-click: the other class), drag to move, right-click or alt-click to delete.`;
  }

  // -- interaction -------------------------------------------------------------------------
  function canvasXY(ev) {
    const r = $("plot").getBoundingClientRect();
    return [(ev.clientX - r.left) * ($("plot").width / r.width), (ev.clientY - r.top) * ($("plot").height / r.height)];
  }
  function nearest(px, py) {
    let best = -1, dist = 10;
    state.points.forEach((p, n) => { const d = Math.hypot(plot.px(p[0]) - px, plot.py(p[1]) - py); if (d < dist) { dist = d; best = n; } });
    return best;
  }
  $("plot").addEventListener("contextmenu", (ev) => ev.preventDefault());
  $("plot").addEventListener("mousedown", (ev) => {
    const [px, py] = canvasXY(ev), n = nearest(px, py);
    if (n >= 0 && (ev.button === 2 || ev.altKey)) { state.points.splice(n, 1); solve(); return; }
    if (n >= 0 && ev.button === 0) { dragging = n; return; }
    if (ev.button !== 0) return;
    const [x, y] = plot.fromPixel(px, py);
    if (state.task === "regression") state.points.push([x, y]);
    else {
      const labels = [...new Set(state.points.map((p) => p[2]))].sort((a, b) => a - b);
      state.points.push([x, y, ev.shiftKey ? labels[0] ?? 0 : labels[labels.length - 1] ?? 1]);
    }
    solve();
  });
  window.addEventListener("mousemove", (ev) => {
    if (dragging < 0) return;
    const [x, y] = plot.fromPixel(...canvasXY(ev));
    state.points[dragging][0] = x; state.points[dragging][1] = y;
    solve();
  });
  window.addEventListener("mouseup", () => { dragging = -1; });

  function syncControls() {
    $("task").value = state.task; $("method").value = state.method;
    $("gamma").value = Math.log10(state.gamma); $("gamma-out").textContent = Number(state.gamma).toPrecision(3);
    $("gamma-text").value = state.gamma;
    $("noise").value = state.noise; $("noise-out").textContent = Number(state.noise).toFixed(2);
    $("noise-label").style.display = state.task === "regression" ? "" : "none";
    $("step-info").textContent = state.steps === null ? "" : `after ${state.steps} update(s) of (7.87)-(7.88)`;
  }

  $("gamma").addEventListener("input", () => { state.gamma = Math.pow(10, Number($("gamma").value)); syncControls(); solve(); });
  $("gamma-text").addEventListener("change", () => { state.gamma = Number($("gamma-text").value); syncControls(); solve(); });
  $("method").addEventListener("change", () => { state.method = $("method").value; state.steps = null; syncControls(); solve(); });
  $("task").addEventListener("change", async () => { await loadPreset($("task").value === "regression" ? 1 : 3); solve(); });
  $("noise").addEventListener("input", async () => {
    state.noise = Number($("noise").value);
    const preset = [1, 2, 5].includes(state.preset) ? state.preset : 5;  // the regression presets
    const answer = await Demo.getJSON(`/api/presets/rvm/${preset}?noise=${state.noise}`);
    if (answer.ok) { state.points = answer.data.points; syncControls(); solve(); }
  });
  $("clear").addEventListener("click", () => { state.points = []; solve(); });
  $("step-reset").addEventListener("click", () => { state.method = "mackay"; state.steps = 1; syncControls(); solve(); });
  $("step-next").addEventListener("click", () => {
    if (state.steps === null) { state.method = "mackay"; state.steps = 0; }
    state.steps += 1; syncControls(); solve();
  });
  $("step-run").addEventListener("click", () => { state.steps = null; syncControls(); solve(); });
  $("file").addEventListener("change", async () => {
    const file = $("file").files[0];
    if (!file) return;
    // the server tells the format by the command line's rule (datasets.infer_format)
    const answer = await Demo.post("/api/load", { name: file.name, content: await file.text() });
    if (!answer.ok) { Demo.message(answer.data.error, "error"); return; }
    state.task = answer.data.inputs === 1 ? "regression" : "classification";
    state.points = answer.data.points;
    fitView(); syncControls(); solve();
  });

  function fitView() {
    if (state.points.length) plot.fit(state.points.map((p) => p[0]), state.points.map((p) => p[1]), 0.15);
  }

  async function loadPreset(number) {
    const answer = await Demo.getJSON(`/api/presets/rvm/${number}`);
    if (!answer.ok) { Demo.message(answer.data.error, "error"); return; }
    const p = answer.data;
    Object.assign(state, { task: p.task, method: p.method, gamma: p.gamma, points: p.points, preset: number,
                           steps: p.steps === undefined ? null : p.steps, compareSvm: !!p.compare_svm, nu: p.nu || 0.5,
                           hint: p.hint || p.title, noise: p.noise || state.noise });
    fitView(); syncControls();
  }

  async function start() {
    const links = [1, 2, 3, 4, 5].map((n) => `<a href="/rvm?preset=${n}" id="preset-${n}">${n}</a>`).join("");
    $("presets").innerHTML = `presets: ${links}`;
    const number = Number(new URLSearchParams(location.search).get("preset") || 1);
    const chosen = [1, 2, 3, 4, 5].includes(number) ? number : 1;
    $(`preset-${chosen}`).classList.add("current");
    await loadPreset(chosen);
    await solve();
    window.demo.ready = true;
  }

  window.demo = { state, plot, solve, get result() { return result; }, solves: 0, ready: false };
  start();
})();
