"use strict";
// Shared drawing and networking for the sparsekernel demos.
const Demo = (() => {
  const COLORS = { red: "#d62728", blue: "#1f77b4", green: "#2ca02c", ink: "#222", grey: "#9e9e9e" };

  function niceTicks(lo, hi, count) {
    const span = hi - lo;
    if (!(span > 0)) return [lo];
    const raw = span / count, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => span / s <= count) || raw;
    const ticks = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9 * span; v += step) ticks.push(+v.toFixed(10));
    return ticks;
  }

  class Plot {
    constructor(canvas) {
      this.canvas = canvas;
      this.ctx = canvas.getContext("2d");
      this.pad = { l: 48, r: 14, t: 14, b: 42 };
      this.bounds = { xmin: -1, xmax: 1, ymin: -1, ymax: 1 };
    }
    get w() { return this.canvas.width - this.pad.l - this.pad.r; }
    get h() { return this.canvas.height - this.pad.t - this.pad.b; }
    px(x) { return this.pad.l + ((x - this.bounds.xmin) / (this.bounds.xmax - this.bounds.xmin)) * this.w; }
    py(y) { return this.pad.t + (1 - (y - this.bounds.ymin) / (this.bounds.ymax - this.bounds.ymin)) * this.h; }
    fromPixel(px, py) {
      const b = this.bounds;
      return [b.xmin + ((px - this.pad.l) / this.w) * (b.xmax - b.xmin),
              b.ymin + (1 - (py - this.pad.t) / this.h) * (b.ymax - b.ymin)];
    }
    fit(xs, ys, margin) {
      const m = margin === undefined ? 0.15 : margin;
      const lo = (a) => Math.min(...a), hi = (a) => Math.max(...a);
      let [x0, x1, y0, y1] = [lo(xs), hi(xs), lo(ys), hi(ys)];
      const dx = (x1 - x0) || 1, dy = (y1 - y0) || 1;
      this.bounds = { xmin: x0 - m * dx, xmax: x1 + m * dx, ymin: y0 - m * dy, ymax: y1 + m * dy };
    }
    clear() {
      const c = this.ctx;
      c.clearRect(0, 0, this.canvas.width, this.canvas.height);
      c.fillStyle = "#fff";
      c.fillRect(0, 0, this.canvas.width, this.canvas.height);
    }
    clip(draw) {
      const c = this.ctx;
      c.save();
      c.beginPath();
      c.rect(this.pad.l, this.pad.t, this.w, this.h);
      c.clip();
      draw(c);
      c.restore();
    }
    axes(xlabel, ylabel) {
      const c = this.ctx, b = this.bounds;
      c.strokeStyle = "#444"; c.lineWidth = 1; c.fillStyle = "#333"; c.font = "12px system-ui, sans-serif";
      c.strokeRect(this.pad.l, this.pad.t, this.w, this.h);
      c.textAlign = "center"; c.textBaseline = "top";
      for (const x of niceTicks(b.xmin, b.xmax, 7)) {
        const X = this.px(x);
        c.beginPath(); c.moveTo(X, this.pad.t + this.h); c.lineTo(X, this.pad.t + this.h + 4); c.stroke();
        c.fillText(String(x), X, this.pad.t + this.h + 6);
      }
      c.textAlign = "right"; c.textBaseline = "middle";
      for (const y of niceTicks(b.ymin, b.ymax, 6)) {
        const Y = this.py(y);
        c.beginPath(); c.moveTo(this.pad.l - 4, Y); c.lineTo(this.pad.l, Y); c.stroke();
        c.fillText(String(y), this.pad.l - 6, Y);
      }
      c.font = "13px system-ui, sans-serif"; c.textAlign = "center"; c.textBaseline = "alphabetic";
      c.fillText(xlabel, this.pad.l + this.w / 2, this.canvas.height - 6);
      c.save(); c.translate(13, this.pad.t + this.h / 2); c.rotate(-Math.PI / 2); c.fillText(ylabel, 0, 0); c.restore();
    }
    field(grid, color) {
      // grid: {x: [nx], y: [ny], values: [ny][nx]}; the nodes become the pixels of an image that is
      // stretched (and smoothed) over the cells around them
      const nx = grid.x.length, ny = grid.y.length;
      const off = document.createElement("canvas");
      off.width = nx; off.height = ny;
      const octx = off.getContext("2d"), image = octx.createImageData(nx, ny);
      for (let r = 0; r < ny; r++) {
        for (let k = 0; k < nx; k++) {
          const v = grid.values[r][k], at = 4 * ((ny - 1 - r) * nx + k);
          const [R, G, B, A] = v === null ? [0, 0, 0, 0] : color(v);
          image.data[at] = R; image.data[at + 1] = G; image.data[at + 2] = B; image.data[at + 3] = A;
        }
      }
      octx.putImageData(image, 0, 0);
      const dx = (grid.x[nx - 1] - grid.x[0]) / Math.max(nx - 1, 1), dy = (grid.y[ny - 1] - grid.y[0]) / Math.max(ny - 1, 1);
      const X0 = this.px(grid.x[0] - dx / 2), X1 = this.px(grid.x[nx - 1] + dx / 2);
      const Y0 = this.py(grid.y[ny - 1] + dy / 2), Y1 = this.py(grid.y[0] - dy / 2);
      this.clip((c) => { c.imageSmoothingEnabled = true; c.drawImage(off, X0, Y0, X1 - X0, Y1 - Y0); });
    }
    contour(grid, level, style) {
      const segs = marchingSquares(grid, level);
      this.clip((c) => {
        c.strokeStyle = style.color || "#000"; c.lineWidth = style.width || 1.5;
        c.setLineDash(style.dash || []);
        c.beginPath();
        for (const [x1, y1, x2, y2] of segs) { c.moveTo(this.px(x1), this.py(y1)); c.lineTo(this.px(x2), this.py(y2)); }
        c.stroke();
        c.setLineDash([]);
      });
      return segs.length;
    }
    curve(xs, ys, style) {
      this.clip((c) => {
        c.strokeStyle = style.color; c.lineWidth = style.width || 2; c.setLineDash(style.dash || []);
        c.beginPath();
        xs.forEach((x, k) => (k ? c.lineTo(this.px(x), this.py(ys[k])) : c.moveTo(this.px(x), this.py(ys[k]))));
        c.stroke(); c.setLineDash([]);
      });
    }
    band(xs, lo, hi, fill) {
      this.clip((c) => {
        c.fillStyle = fill;
        c.beginPath();
        xs.forEach((x, k) => (k ? c.lineTo(this.px(x), this.py(hi[k])) : c.moveTo(this.px(x), this.py(hi[k]))));
        for (let k = xs.length - 1; k >= 0; k--) c.lineTo(this.px(xs[k]), this.py(lo[k]));
        c.closePath(); c.fill();
      });
    }
    marker(x, y, shape, fill, stroke, size) {
      const c = this.ctx, X = this.px(x), Y = this.py(y), s = size || 6;
      c.fillStyle = fill; c.strokeStyle = stroke; c.lineWidth = 2;
      c.beginPath();
      if (shape === "square") c.rect(X - s, Y - s, 2 * s, 2 * s); else c.arc(X, Y, s, 0, 2 * Math.PI);
      c.fill(); c.stroke();
    }
    ring(x, y, radius, color, dash) {
      const c = this.ctx;
      c.strokeStyle = color || "#000"; c.lineWidth = 2; c.setLineDash(dash || []);
      c.beginPath(); c.arc(this.px(x), this.py(y), radius || 11, 0, 2 * Math.PI); c.stroke();
      c.setLineDash([]);
    }
  }

  function marchingSquares(grid, level) {
    // Line segments of {value = level} on a grid (cells split by linear interpolation on edges).
    const segs = [], xs = grid.x, ys = grid.y, V = grid.values;
    const interp = (a, b, va, vb) => a + ((level - va) / (vb - va)) * (b - a);
    for (let r = 0; r + 1 < ys.length; r++) {
      for (let k = 0; k + 1 < xs.length; k++) {
        const v = [V[r][k], V[r][k + 1], V[r + 1][k + 1], V[r + 1][k]];
        if (v.some((u) => u === null)) continue;
        const p = [[xs[k], ys[r]], [xs[k + 1], ys[r]], [xs[k + 1], ys[r + 1]], [xs[k], ys[r + 1]]];
        const cuts = [];
        for (let e = 0; e < 4; e++) {
          const a = e, b = (e + 1) % 4;
          if ((v[a] - level) * (v[b] - level) < 0 || (v[a] === level && v[b] !== level)) {
            cuts.push([interp(p[a][0], p[b][0], v[a], v[b]), interp(p[a][1], p[b][1], v[a], v[b])]);
          }
        }
        if (cuts.length === 2) segs.push([cuts[0][0], cuts[0][1], cuts[1][0], cuts[1][1]]);
        else if (cuts.length === 4) {
          segs.push([cuts[0][0], cuts[0][1], cuts[1][0], cuts[1][1]]);
          segs.push([cuts[2][0], cuts[2][1], cuts[3][0], cuts[3][1]]);
        }
      }
    }
    return segs;
  }

  // Colour of a field value as [R, G, B, alpha 0-255]: red positive, blue negative.
  function diverging(v, scale) {
    const s = Math.tanh(v / (scale || 1.5));
    const alpha = Math.round(255 * (0.08 + 0.34 * Math.abs(s)));
    return s >= 0 ? [214, 39, 40, alpha] : [31, 119, 180, alpha];
  }

  async function post(url, body) {
    const response = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" },
                                        body: JSON.stringify(body) });
    let data = null;
    try { data = await response.json(); } catch (e) { data = { error: `the server answered ${response.status} without JSON` }; }
    return { ok: response.ok, status: response.status, data };
  }

  async function getJSON(url) {
    const response = await fetch(url);
    return { ok: response.ok, status: response.status, data: await response.json() };
  }

  // Run the latest request only: while one is in flight, newer ones replace each other.
  function latestOnly(run) {
    let running = false, queued = null;
    return async function request(arg) {
      if (running) { queued = arg; return; }
      running = true;
      document.body.classList.add("busy");
      try { await run(arg); } finally {
        running = false;
        if (queued !== null) { const next = queued; queued = null; request(next); }
        else document.body.classList.remove("busy");
      }
    };
  }

  const fmt = (v, d) => (v === null || v === undefined || Number.isNaN(v) ? "–" :
    (Math.abs(v) !== 0 && (Math.abs(v) < 1e-3 || Math.abs(v) >= 1e5) ? v.toExponential(d === undefined ? 2 : d)
                                                                         : v.toFixed(d === undefined ? 4 : d)));

  function message(text, kind) {
    const el = document.getElementById("message");
    el.textContent = text || "";
    el.className = kind || "";
  }

  function kktTable(el, kkt) {
    const rows = kkt.rows.map((r) => `<tr><td>${r.tag}</td><td>${r.kind}</td><td>${r.condition}</td>` +
      `<td class="num">${r.ok === null ? "n/a" : r.violation.toExponential(1)}</td>` +
      `<td class="${r.ok === null ? "" : r.ok ? "PASS" : "FAIL"}">${r.ok === null ? "n/a" : r.ok ? "PASS" : "FAIL"}</td></tr>`);
    el.innerHTML = `<tr><th>tag</th><th>kind</th><th>condition</th><th>violation</th><th>ok</th></tr>${rows.join("")}`;
  }

  return { Plot, marchingSquares, diverging, post, getJSON, latestOnly, fmt, message, kktTable, COLORS, niceTicks };
})();
