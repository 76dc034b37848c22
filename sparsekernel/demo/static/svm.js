"use strict";
// The SVM page: points, sliders, the decision field, the KKT table and the SMO's steps.
(() => {
  // each machine's task and hyperparameters, as the server wrote them into the menu
  const MENU = [...document.querySelectorAll("#machine option")];
  const TASK = Object.fromEntries(MENU.map((o) => [o.value, o.dataset.task]));
  const PARAMS = Object.fromEntries(MENU.map((o) => [o.value, o.dataset.params.split(" ")]));
  const has = (name) => (PARAMS[state.machine] || []).includes(name);
  const CASE_COLORS = {
    "not a support vector": "#bdbdbd", "on the margin": "#ffd54f", "inside the margin": "#ff9800",
    "misclassified": "#8e24aa", "inside the tube": "#bdbdbd", "on the tube": "#ffd54f",
    "outside the tube": "#8e24aa", "inside": "#bdbdbd", "on the boundary": "#ffd54f", "outside": "#8e24aa",
  };
  const $ = (id) => document.getElementById(id);
  const plot = new Demo.Plot($("plot"));
  const state = { machine: "soft", kernel: "rbf", gamma: 0.5, C: 1, nu: 0.5, epsilon: 0.1, method: "smo",
                  points: [], preset: null };
  let result = null, trace = null, stepIndex = -1, player = null, dragging = -1;

  const task = () => TASK[state.machine];

  function request() {
    const body = { machine: state.machine, kernel: state.kernel, gamma: state.gamma, C: state.C, nu: state.nu,
                   epsilon: state.epsilon, method: state.method, points: state.points,
                   grid: { ...plot.bounds, n: 60 } };
    return body;
  }

  const solve = Demo.latestOnly(async () => {
    if (!state.points.length) { result = null; render(); return; }
    const answer = await Demo.post("/api/svm", request());
    if (!answer.ok) {
      Demo.message(answer.data.error || `error ${answer.status}`, "error");
      result = null;
    } else {
      result = answer.data;
      Demo.message(state.hint || "", "hint");
    }
    render();
    window.demo.solves += 1;
  });

  function render() {
    plot.clear();
    const t = task();
    if (result && result.field) {
      plot.field(result.field, (v) => (t === "novelty" ? Demo.diverging(v, 0.2) : Demo.diverging(v, 1.5)));
      plot.contour(result.field, 0, { color: "#000", width: 2.2 });
      if (t === "classification") {
        plot.contour(result.field, 1, { color: "#000", width: 1.2, dash: [6, 4] });
        plot.contour(result.field, -1, { color: "#000", width: 1.2, dash: [6, 4] });
      }
    }
    if (result && result.curve) {
      const eps = has("epsilon") ? state.epsilon : result.epsilon || 0;
      const ys = result.curve.y;
      plot.band(result.curve.x, ys.map((y) => y - eps), ys.map((y) => y + eps), "rgba(214,39,40,0.14)");
      plot.curve(result.curve.x, ys, { color: Demo.COLORS.red, width: 2.2 });
    }
    plot.axes(t === "regression" ? "x" : "x₁", t === "regression" ? "t" : "x₂");
    drawPoints();
    summary();
    legend();
  }

  function pointXY(p) { return task() === "regression" ? [p[0], p[1]] : [p[0], p[1]]; }

  function drawPoints() {
    const support = new Set(result ? result.support : []);
    const cases = result ? result.categories : [];
    const pair = trace && stepIndex >= 0 ? [trace.i[stepIndex] % state.points.length, trace.j[stepIndex] % state.points.length] : [];
    state.points.forEach((p, n) => {
      const [x, y] = pointXY(p);
      const cls = task() === "classification" ? p[2] : 0;
      const fill = CASE_COLORS[cases[n]] || "#e0e0e0";
      const stroke = cls > 0 ? Demo.COLORS.red : cls < 0 ? Demo.COLORS.blue : Demo.COLORS.green;
      plot.marker(x, y, cls < 0 ? "square" : "circle", fill, stroke, 6);
      if (support.has(n)) plot.ring(x, y, 11, "#000");
      if (pair.includes(n)) plot.ring(x, y, 16, "#e65100", [4, 3]);
    });
    $("plot").dataset.supportCount = String(support.size);
  }

  // The duality gap as one signed number, and the same relative to the machine's scale with the same
  // sign; below ROUNDING (relative) it is rounding error and shows as 0.
  const ROUNDING = 1e-12;
  function gapText(g) {
    if (g.relative === null || g.absolute === null) return "–";
    if (g.relative < ROUNDING) return `0 (below ${ROUNDING.toExponential(0)} relative: rounding)`;
    return `${Demo.fmt(g.absolute, 2)} (relative ${Demo.fmt(Math.sign(g.absolute) * g.relative, 2)})`;
  }

  function summary() {
    const rows = [];
    if (result) {
      const g = result.gap;
      rows.push(["machine, solver", `${result.machine}, ${result.method} (${result.status})`]);
      rows.push(["support vectors", `<span id="n-support">${result.support.length}</span> of ${state.points.length}`]);
      rows.push(["primal objective", Demo.fmt(result.primal, 6)], ["dual objective", Demo.fmt(result.dual, 6)]);
      rows.push(["gap, primal − dual", `<span id="gap">${gapText(g)}</span>`]);
      rows.push(["b", `<span id="b-value">${Demo.fmt(result.b, 6)}</span>`]);
      if (result.rho !== null) rows.push(["rho", Demo.fmt(result.rho, 5)]);
      if (result.epsilon !== null) rows.push(["epsilon (found)", Demo.fmt(result.epsilon, 4)]);
      rows.push(["KKT report", `<span id="kkt-ok">${result.kkt.ok ? "PASS" : "FAIL"}</span> at tolerance ${Number(result.kkt.tol).toExponential(1)}`]);
      rows.push(["iterations, time", `${result.iterations}, ${result.solve_ms.toFixed(1)} ms`]);
      Demo.kktTable($("kkt"), result.kkt);
      const a = result.a.map((v, n) => [n, v, result.a_hat ? result.a_hat[n] : null, result.categories[n]]);
      $("avector").innerHTML = `<tr><th>n</th><th>a<sub>n</sub></th>${result.a_hat ? "<th>â<sub>n</sub></th>" : ""}<th>case</th></tr>` +
        a.map(([n, v, h, c]) => `<tr><td>${n}</td><td class="num">${Demo.fmt(v, 5)}</td>` +
          `${result.a_hat ? `<td class="num">${Demo.fmt(h, 5)}</td>` : ""}<td>${c}</td></tr>`).join("");
    } else {
      $("kkt").innerHTML = ""; $("avector").innerHTML = "";
    }
    $("summary").innerHTML = rows.map(([k, v]) => `<tr><td>${k}</td><td>${v}</td></tr>`).join("");
  }

  function legend() {
    const names = task() === "classification" ? ["not a support vector", "on the margin", "inside the margin", "misclassified"]
      : task() === "regression" ? ["inside the tube", "on the tube", "outside the tube"] : ["inside", "on the boundary", "outside"];
    const swatches = names.map((n) => `<span class="swatch" style="background:${CASE_COLORS[n]}"></span>${n}`).join("");
    const classes = task() === "classification" ? "red circles t = +1, blue squares t = −1; " : "";
    $("legend").innerHTML = `${classes}black rings: support vectors; solid line y = 0` +
      (task() === "classification" ? ", dashed y = ±1" : "") + `.<br>Fill: the point's case (Result 7.6): ${swatches}` +
      `<br>Click to add a point (shift-click: the other class), drag to move, right-click or alt-click to delete.`;
  }

  // -- interaction -----------------------------------------------------------------------
  function canvasXY(ev) {
    const r = $("plot").getBoundingClientRect();
    return [(ev.clientX - r.left) * ($("plot").width / r.width), (ev.clientY - r.top) * ($("plot").height / r.height)];
  }

  function pointPixel(n) { const [x, y] = pointXY(state.points[n]); return [plot.px(x), plot.py(y)]; }

  function nearest(px, py) {
    let best = -1, dist = 10;
    state.points.forEach((p, n) => { const [X, Y] = pointPixel(n); const d = Math.hypot(X - px, Y - py); if (d < dist) { dist = d; best = n; } });
    return best;
  }

  $("plot").addEventListener("contextmenu", (ev) => ev.preventDefault());
  $("plot").addEventListener("mousedown", (ev) => {
    const [px, py] = canvasXY(ev);
    const n = nearest(px, py);
    stopSteps();
    if (n >= 0 && (ev.button === 2 || ev.altKey)) { state.points.splice(n, 1); solve(); return; }
    if (n >= 0 && ev.button === 0) { dragging = n; return; }
    if (ev.button !== 0) return;
    const [x, y] = plot.fromPixel(px, py);
    if (task() === "classification") state.points.push([x, y, ev.shiftKey ? -1 : 1]);
    else state.points.push([x, y]);
    solve();
  });
  window.addEventListener("mousemove", (ev) => {
    if (dragging < 0) return;
    const [x, y] = plot.fromPixel(...canvasXY(ev));
    state.points[dragging][0] = x;
    state.points[dragging][1] = y;
    solve();
  });
  window.addEventListener("mouseup", () => { dragging = -1; });

  // -- controls ---------------------------------------------------------------------------
  const sliders = {
    C: { to: (v) => Math.pow(10, v), from: (v) => Math.log10(v), digits: 3 },
    gamma: { to: (v) => Math.pow(10, v), from: (v) => Math.log10(v), digits: 3 },
    nu: { to: (v) => v, from: (v) => v, digits: 2 },
    epsilon: { to: (v) => v, from: (v) => v, digits: 2 },
  };

  function syncControls() {
    $("machine").value = state.machine; $("kernel").value = state.kernel; $("method").value = state.method;
    for (const [name, s] of Object.entries(sliders)) {
      $(name).value = s.from(state[name]);
      $(`${name}-out`).textContent = Number(state[name]).toPrecision(s.digits);
    }
    $("gamma-text").value = state.gamma;
    const t = task();
    $("C").parentElement.style.display = has("C") ? "" : "none";
    $("nu").parentElement.style.display = has("nu") ? "" : "none";
    $("epsilon").parentElement.style.display = has("epsilon") ? "" : "none";
    $("gamma").parentElement.style.display = state.kernel === "rbf" ? "" : "none";
    $("gamma-text").parentElement.style.display = state.kernel === "rbf" ? "" : "none";
    document.title = `sparsekernel · ${t === "regression" ? "SVM regression" : "support vector machines"}`;
  }

  for (const [name, s] of Object.entries(sliders)) {
    $(name).addEventListener("input", () => { state[name] = s.to(Number($(name).value)); syncControls(); stopSteps(); solve(); });
  }
  $("gamma-text").addEventListener("change", () => { state.gamma = Number($("gamma-text").value); syncControls(); solve(); });
  $("kernel").addEventListener("change", () => { state.kernel = $("kernel").value; syncControls(); solve(); });
  $("method").addEventListener("change", () => { state.method = $("method").value; solve(); });
  $("machine").addEventListener("change", async () => {
    const before = task();
    state.machine = $("machine").value;
    if (task() !== before) await loadPreset(task() === "regression" ? 5 : 3, true);
    if (task() === "novelty") state.points = state.points.map((p) => [p[0], p[1]]);
    syncControls(); stopSteps(); fitView(); solve();
  });
  $("clear").addEventListener("click", () => { state.points = []; stopSteps(); solve(); });
  $("file").addEventListener("change", async () => {
    const file = $("file").files[0];
    if (!file) return;
    // the server tells the format by the command line's rule (datasets.infer_format)
    const answer = await Demo.post("/api/load", { name: file.name, content: await file.text() });
    if (!answer.ok) { Demo.message(answer.data.error, "error"); return; }
    const pts = answer.data.points;
    if (answer.data.inputs === 1) { state.machine = task() === "regression" ? state.machine : "eps-svr"; state.points = pts; }
    else {
      const labels = [...new Set(pts.map((p) => p[2]))].sort((a, b) => a - b);
      state.points = pts.map((p) => [p[0], p[1], p[2] === labels[labels.length - 1] ? 1 : -1]);
      if (task() !== "classification") state.machine = "soft";
    }
    syncControls(); fitView(); solve();
  });

  // -- the SMO's steps (the notes' Filling the gap 7.3) -------------------------------------------------------------
  function stopSteps() {
    if (player) clearInterval(player);
    player = null; trace = null; stepIndex = -1;
    ["step-prev", "step-next", "step-play"].forEach((id) => ($(id).disabled = true));
    $("step-info").textContent = "";
  }

  // a clip bound; JSON carries the hard margin's infinite C (and so H) as null
  const bound = (v) => (v === null ? "∞" : Demo.fmt(v, 3));

  function showStep() {
    const k = stepIndex;
    $("step-info").textContent = `step ${k + 1} of ${trace.i.length}: pair (${trace.i[k]}, ${trace.j[k]}), ` +
      `delta = ${Demo.fmt(trace.delta[k], 4)}, clip [L, H] = [${bound(trace.L[k])}, ${bound(trace.H[k])}], ` +
      `eta = ${Demo.fmt(trace.eta[k], 3)}, objective = ${Demo.fmt(trace.objective[k], 6)}, ` +
      `max violation = ${Demo.fmt(trace.violation[k], 2)}`;
    render();
  }

  $("step-start").addEventListener("click", async () => {
    const answer = await Demo.post("/api/svm", { ...request(), method: "smo", trace: true });
    if (!answer.ok) { Demo.message(answer.data.error, "error"); return; }
    result = answer.data; trace = result.trace; stepIndex = 0;
    if (!trace || !trace.i || !trace.i.length) { Demo.message("the SMO took no step: the starting point is optimal", "hint"); return; }
    ["step-prev", "step-next", "step-play"].forEach((id) => ($(id).disabled = false));
    showStep();
  });
  $("step-next").addEventListener("click", () => { if (trace) { stepIndex = Math.min(stepIndex + 1, trace.i.length - 1); showStep(); } });
  $("step-prev").addEventListener("click", () => { if (trace) { stepIndex = Math.max(stepIndex - 1, 0); showStep(); } });
  $("step-play").addEventListener("click", () => {
    if (player) { clearInterval(player); player = null; return; }
    player = setInterval(() => {
      if (!trace || stepIndex >= trace.i.length - 1) { clearInterval(player); player = null; return; }
      stepIndex += 1; showStep();
    }, 350);
  });

  // -- presets -------------------------------------------------------------------------------
  function fitView() {
    if (!state.points.length) return;
    plot.fit(state.points.map((p) => p[0]), state.points.map((p) => p[1]), 0.18);
  }

  async function loadPreset(number, dataOnly) {
    const answer = await Demo.getJSON(`/api/presets/svm/${number}`);
    if (!answer.ok) { Demo.message(answer.data.error, "error"); return; }
    const p = answer.data;
    state.points = p.points;
    if (!dataOnly) {
      Object.assign(state, { machine: p.machine, kernel: p.kernel, gamma: p.gamma || state.gamma, C: p.C || state.C,
                             nu: p.nu || state.nu, epsilon: p.epsilon === undefined ? state.epsilon : p.epsilon,
                             preset: number, hint: p.hint || p.title });
    }
    fitView();
  }

  async function start() {
    const links = [1, 2, 3, 4, 5, 6].map((n) => `<a href="/svm?preset=${n}" id="preset-${n}">${n}</a>`).join("");
    $("presets").innerHTML = `presets: ${links}`;
    const number = Number(new URLSearchParams(location.search).get("preset") || 1);
    const chosen = [1, 2, 3, 4, 5, 6].includes(number) ? number : 1;
    $(`preset-${chosen}`).classList.add("current");
    await loadPreset(chosen, false);
    syncControls();
    await solve();
    window.demo.ready = true;
  }

  window.demo = { state, plot, solve, pointPixel, get result() { return result; }, solves: 0, ready: false };
  start();
})();
