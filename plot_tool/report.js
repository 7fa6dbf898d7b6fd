// netsim report page (plot_tool/report.py writes the data; docs/report.md describes the page).
// Inflates the inlined plotly.js and the data (gzip + base64), then draws a run or a sweep.
// window.netsimReport is the page's small API (used by the tests and handy in the console).
(function () {
  "use strict";
  const status = document.getElementById("status");
  // plotly reads <b>, <br>, <a href> and &...; in the text it is given as markup: an id holding
  // such characters is shown as it is (its own strings: docs/report.md)
  const plain = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  // an id in a chart's legend, shortened by an ellipsis in its middle past LEGEND_ID_CHARS (as
  // the PNG figures' legends: plot_tool/layout.py), so that long ids leave the charts their width
  const LEGEND_ID_CHARS = 28;
  const short = (s) => {
    const text = String(s);
    if (text.length <= LEGEND_ID_CHARS) return plain(text);
    const head = Math.ceil((LEGEND_ID_CHARS - 1) / 2), tail = Math.floor((LEGEND_ID_CHARS - 1) / 2);
    return plain(text.slice(0, head) + "\u2026" + text.slice(text.length - tail));
  };
  const shortDir = (dir) => String(dir).split("->").map(short).join("-&gt;");

  async function inflate(id) {
    const text = document.getElementById(id).textContent.trim();
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return await new Response(stream).text();
  }

  function decode(a, n) {        // see report.encode: {"z": n} zeros, {"s": scale, "q": ints}
    if (!a) return new Array(n || 0).fill(0);
    if (a.z !== undefined) return new Array(a.z).fill(0);
    return a.q.map((v) => (v === null ? null : v * a.s));
  }

  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
    "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173",
    "#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363"];
  // utilization colour scale: green (idle) - yellow - red (saturated); same stops for the
  // markers' plotly colorscale and for the link lines computed here.
  const STOPS = [[0, [26, 152, 80]], [0.5, [254, 224, 139]], [1, [215, 48, 39]]];
  const COLORSCALE = STOPS.map(([v, c]) => [v, `rgb(${c.join(",")})`]);
  // The toolbar of every chart: only "download as PNG" (zoom with the mouse, double-click to
  // reset), no logo; the charts leave room above their legends for it (docs/report.md).
  const CONFIG = { displaylogo: false, responsive: true, modeBarButtons: [["toImage"]] };
  const TOOLBAR_PX = 32;

  function utilColor(u) {
    u = Math.max(0, Math.min(1, u || 0));
    for (let i = 1; i < STOPS.length; i++) {
      if (u <= STOPS[i][0]) {
        const [v0, c0] = STOPS[i - 1], [v1, c1] = STOPS[i];
        const f = (u - v0) / (v1 - v0);
        return `rgb(${c0.map((c, k) => Math.round(c + f * (c1[k] - c))).join(",")})`;
      }
    }
    return `rgb(${STOPS[STOPS.length - 1][1].join(",")})`;
  }

  function fmt(v, digits) {
    if (v === null || v === undefined || Number.isNaN(v)) return "-";
    if (Math.abs(v) >= 10 ** (digits || 4)) return String(Math.round(v));   // 40000, not 4.000e+4
    return Number(v).toPrecision(digits || 4).replace(/\.?0+$/, (m) => (m.includes(".") ? "" : m));
  }

  // -------------------------------------------------------------------------------------------
  // A run

  function drawRun(data) {
    const topo = document.getElementById("topology");
    const seriesDiv = document.getElementById("series");
    const slider = document.getElementById("slider");
    const playButton = document.getElementById("play");
    const timeLabel = document.getElementById("time");
    const unitsSuffix = data.units ? ", " + data.units : "";
    const F = data.frame_t.length;
    const pos = {};
    data.nodes.forEach((n) => (pos[n.id] = [n.x, n.y]));
    const span = 1.0;
    // A big network (more than BIG_LINKS links or BIG_NODES nodes, or tiered):
    // thinner lines and bars, link labels and node names on hover only (see docs/report.md).
    const BIG_LINKS = 40, BIG_NODES = 60;
    // A tiered drawing (a fabric) counts as big: its link labels would overlap on each tier.
    const bigLinks = data.links.length > BIG_LINKS || !!data.tiers;
    const bigNodes = data.nodes.length > BIG_NODES;
    const off = (bigLinks ? 0.006 : 0.018) * span;   // queue bars: distance from the link line
    const QLEN = 0.3;                      // full buffer = 30 % of the link's length
    const LINK_WIDTH = bigLinks ? 2 : 6, BAR_WIDTH = bigLinks ? 3 : 7;

    // decode the frames and the series once
    const links = data.links.map((l) => ({
      ...l,
      dirs: l.dirs.map((d) => ({
        dir: d.dir,
        rate: decode(d.frame_rate, F),
        buffer: decode(d.frame_buffer, F),
        series: Object.fromEntries(Object.entries(d.series).map(([k, v]) => [k, decode(v)])),
      })),
      down: l.frame_down ? decode(l.frame_down, F) : null,
    }));
    const linkIndex = Object.fromEntries(links.map((l, i) => [l.id, i]));
    const flows = data.flows.map((f, i) => ({
      ...f, color: PALETTE[i % PALETTE.length],
      series: Object.fromEntries(Object.entries(f.series).map(([k, v]) => [k, decode(v)])),
    }));

    function geometry(l) {
      const a = pos[l.ends[0]], b = pos[l.ends[1]];
      const dx = b[0] - a[0], dy = b[1] - a[1];
      const len = Math.hypot(dx, dy) || 1;
      return { a, b, dx, dy, len, nx: -dy / len, ny: dx / len };
    }

    function linkState(l, k) {
      const dirs = l.dirs.map((d, j) => {
        const rate = d.rate[k] || 0, buffer = d.buffer[k] || 0;
        return { dir: d.dir, rate_mbps: rate, buffer_kb: buffer,
          utilization: l.rate_mbps ? rate / l.rate_mbps : 0,
          fraction: l.buffer_kb ? Math.min(1, buffer / l.buffer_kb) : 0 };
      });
      const utils = dirs.map((d) => d.utilization);
      const util = l.duplex === "half" ? utils.reduce((s, u) => s + u, 0) : Math.max(...utils);
      return { id: l.id, utilization: util, color: utilColor(util), dirs,
        down: !!(l.down && l.down[k] > 0) };
    }

    // --- topology figure: one trace per link (its colour), the buffer frames, the queues,
    // the labels (clickable, coloured by utilization), the down marks, the nodes, the routes
    const traces = [];
    links.forEach((l) => {
      const g = geometry(l);
      traces.push({ type: "scatter", mode: "lines", x: [g.a[0], g.b[0]], y: [g.a[1], g.b[1]],
        line: { width: LINK_WIDTH, color: utilColor(0) }, hoverinfo: "skip", showlegend: false,
        meta: "link:" + l.id, name: plain(l.id) });
    });
    const linkTrace = (i) => i;
    function queueSegments(states) {
      const qx = [], qy = [], fx = [], fy = [];
      links.forEach((l, i) => {
        const g = geometry(l);
        l.dirs.forEach((d, j) => {
          // direction "A->B": its bar starts near its sender A, on its own side of the line
          const fromA = d.dir.split("->")[0] === l.ends[0];
          const s = fromA ? g.a : g.b, ux = (fromA ? 1 : -1) * g.dx / g.len, uy = (fromA ? 1 : -1) * g.dy / g.len;
          const side = fromA ? 1 : -1;
          const x0 = s[0] + 0.12 * g.dx * (fromA ? 1 : -1) + side * off * g.nx;
          const y0 = s[1] + 0.12 * g.dy * (fromA ? 1 : -1) + side * off * g.ny;
          const full = QLEN * g.len;
          fx.push(x0, x0 + full * ux, null); fy.push(y0, y0 + full * uy, null);
          const f = states ? states[i].dirs[j].fraction : 0;
          qx.push(x0, x0 + f * full * ux, null); qy.push(y0, y0 + f * full * uy, null);
        });
      });
      return { qx, qy, fx, fy };
    }
    const seg = queueSegments(null);
    const frameTrace = traces.length;
    traces.push({ type: "scatter", mode: "lines", x: seg.fx, y: seg.fy, hoverinfo: "skip",
      line: { width: BAR_WIDTH, color: "rgba(0,0,0,0.08)" }, showlegend: false, name: "buffers" });
    const queueTrace = traces.length;
    traces.push({ type: "scatter", mode: "lines", x: seg.qx, y: seg.qy, hoverinfo: "skip",
      line: { width: BAR_WIDTH, color: "rgba(60,60,60,0.9)" }, showlegend: true, name: "buffer occupancy" });
    const routeTrace0 = traces.length;
    flows.forEach((f, i) => {
      traces.push({ type: "scatter", mode: "lines", x: [], y: [], name: `${plain(f.id)} route`,
        line: { width: bigLinks ? 2 : 3, dash: "dot", color: f.color }, hoverinfo: "text", text: "",
        legendgroup: f.id, meta: "flow:" + f.id, customdata: [],
        // many flows: the routes of the flows selected at first are drawn, the others are
        // one click away in the legend
        visible: flows.length <= 12 || data.selected.flows.includes(f.id) ? true : "legendonly" });
    });
    const labelTrace = traces.length;
    traces.push({ type: "scatter", mode: bigLinks ? "markers" : "markers+text", name: "links",
      x: links.map((l) => (pos[l.ends[0]][0] + pos[l.ends[1]][0]) / 2),
      y: links.map((l) => (pos[l.ends[0]][1] + pos[l.ends[1]][1]) / 2),
      text: links.map((l) => `${plain(l.id)}<br>${fmt(l.rate_mbps)} Mbps · ${fmt(l.delay_ms)} ms · ${fmt(l.buffer_kb)} KB` +
        (data.units ? ` (${data.units})` : "")),
      textposition: "bottom center", textfont: { size: 10, color: "#333" },
      customdata: links.map((l) => l.id), hoverinfo: "text", hovertext: links.map(() => ""),
      marker: { size: bigLinks ? 7 : 14, color: links.map(() => 0), cmin: 0, cmax: 1, colorscale: COLORSCALE,
        line: { width: 1, color: "#333" },
        colorbar: { title: { text: "utilization" }, thickness: 12, len: 0.6 } },
      showlegend: false });
    const downTrace = traces.length;
    traces.push({ type: "scatter", mode: "markers", x: [], y: [], name: "link down",
      marker: { symbol: "x-thin", size: 26, line: { width: 4, color: "#c00" } },
      hoverinfo: "name", showlegend: true });
    const nodeTrace = traces.length;
    ["host", "router"].forEach((kind) => {
      const nodes = data.nodes.filter((n) => n.kind === kind);
      traces.push({ type: "scatter", mode: bigNodes ? "markers" : "markers+text", name: kind + "s",
        x: nodes.map((n) => n.x), y: nodes.map((n) => n.y), text: nodes.map((n) => plain(n.id)),
        textposition: "top center", hoverinfo: "text", showlegend: false,
        textfont: { size: data.tiers ? 9 : 12 },
        marker: { size: (kind === "host" ? 16 : 20) * (bigNodes ? 0.5 : data.tiers ? 0.7 : 1),
          symbol: kind === "host" ? "square" : "circle",
          color: kind === "host" ? "#6baed6" : "#fdae6b", line: { width: 1, color: "#333" } } });
    });
    const topoLayout = {
      margin: { l: 10, r: 10, t: TOOLBAR_PX, b: 10 }, hovermode: "closest", clickmode: "event",
      xaxis: { visible: false, zeroline: false }, dragmode: "pan",
      yaxis: { visible: false, zeroline: false, scaleanchor: "x" },
      legend: { orientation: "h", y: 0, yanchor: "top" }, uirevision: "topology", datarevision: 0,
    };
    if (data.tiers) {       // a tiered drawing: each tier named at its left, with its size
      const count = data.tiers.map((_, d) => data.nodes.filter((n) => n.tier === d));
      topoLayout.xaxis.range = [-0.11, 1.01];
      topoLayout.annotations = data.tiers.map((name, d) => ({
        x: -0.105, y: count[d].length ? count[d][0].y : 0, xref: "x", yref: "y", xanchor: "left",
        showarrow: false, font: { size: 12, color: "#555" },
        text: `${plain(name)}${d === 0 ? "s" : ""} (${count[d].length})` }));
    }

    let routeIndex = -1;
    function routePaths(k) {
      const t = data.frame_t[k];
      let r = 0;
      for (let i = 0; i < data.routes.length; i++) if (data.routes[i].t <= t + 1e-9) r = i;
      return r;
    }
    function applyRoutes(r) {
      if (r === routeIndex || !data.routes.length) return;
      routeIndex = r;
      const change = data.routes[r];
      flows.forEach((f, i) => {
        const path = change.paths[f.id] || [];
        const x = [], y = [];
        const o = (i - (flows.length - 1) / 2) *
          (data.tiers ? Math.min(0.003, 0.015 / Math.max(1, flows.length))
            : Math.min(0.012, 0.06 / Math.max(1, flows.length)));
        const several = (change.ecmp || []).includes(f.id);
        if (several) {       // ECMP: every link of the equal-cost paths, one segment each
          path.forEach((lid) => {
            const l = links[linkIndex[lid]];
            x.push(pos[l.ends[0]][0] + o, pos[l.ends[1]][0] + o, null);
            y.push(pos[l.ends[0]][1] + o, pos[l.ends[1]][1] + o, null);
          });
        } else {             // one path: a line through its nodes, from the source
          let node = f.src;
          const pts = [node];
          path.forEach((lid) => {
            const l = links[linkIndex[lid]];
            node = l.ends[0] === node ? l.ends[1] : l.ends[0];
            pts.push(node);
          });
          pts.forEach((n) => { x.push(pos[n][0] + o); y.push(pos[n][1] + o); });
        }
        const broken = (change.broken || []).includes(f.id);
        const tr = traces[routeTrace0 + i];
        tr.x = x; tr.y = y;
        tr.text = `${plain(f.id)} (${f.algorithm}): ${plain(f.src)} → ${plain(f.dst)} ` +
          (several ? `over the equal-cost paths (ECMP: its hash picks one at each switch; ` +
            `which one is not in the results): ${plain(path.join(", "))}`
            : `via ${plain(path.join(", ") || "-")}`) +
          (broken ? " (no route beyond)" : "");
        tr.customdata = x.map(() => f.id);
      });
    }

    // Label placement: each node name and link label goes on the side of its marker (above,
    // below, right, left, then the corners, in that order of preference) where its estimated
    // box overlaps (beyond a touch) no node
    // marker, no link line and no label placed before it (node names first), else where it
    // overlaps least; a link label that overlaps anywhere keeps only the link id (its rate,
    // delay and buffer stay in its hover text and the summary).
    let labelsPlaced = false;
    // (the corners last: beside a diagonal link, the one side its line leaves free)
    const SIDES = ["top center", "bottom center", "middle right", "middle left",
      "top right", "bottom left", "top left", "bottom right"];
    const TOUCH_PX2 = 4;                        // an overlap this small is a touch, not a clash
    function placeLabels() {
      labelsPlaced = true;
      const fl = topo._fullLayout;
      if (!fl || !fl.xaxis || !fl.xaxis.l2p) return;
      const px = (x) => fl.xaxis.l2p(x), py = (y) => fl.yaxis.l2p(y);
      const boxes = [];                         // [x0, y0, x1, y1] in pixels
      const overlap = (a, b) => Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0])) *
        Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
      function box(x, y, text, size, gap, side) {
        const lines = String(text).split("<br>");
        // (an escaped &, < or > is drawn as one character)
        const w = Math.max(...lines.map((t) => t.replace(/&(amp|lt|gt);/g, "_").length)) * size * 0.62 + 4;
        const h = lines.length * size * 1.3 + 2;
        const cx = px(x), cy = py(y);
        if (side === "top center") return [cx - w / 2, cy - gap - h, cx + w / 2, cy - gap];
        if (side === "bottom center") return [cx - w / 2, cy + gap, cx + w / 2, cy + gap + h];
        if (side === "middle right") return [cx + gap, cy - h / 2, cx + gap + w, cy + h / 2];
        if (side === "middle left") return [cx - gap - w, cy - h / 2, cx - gap, cy + h / 2];
        const d = gap * 0.7;                    // a corner: diagonally off the marker
        const x0 = side.endsWith("right") ? cx + d : cx - d - w;
        const y0 = side.startsWith("top") ? cy - d - h : cy + d;
        return [x0, y0, x0 + w, y0 + h];
      }
      function place(x, y, text, size, gap, prefer) {
        let best = null;
        for (const side of [prefer, ...SIDES.filter((s) => s !== prefer)]) {
          const b = box(x, y, text, size, gap, side);
          let cost = boxes.reduce((sum, o) => sum + overlap(b, o), 0);
          if (cost <= TOUCH_PX2) cost = 0;
          if (!best || cost < best.cost) best = { side, b, cost };
          if (cost === 0) break;
        }
        return best;
      }
      const nodeTraces = [traces[nodeTrace], traces[nodeTrace + 1]];
      nodeTraces.forEach((t) => t.x.forEach((x, i) => {
        const r = t.marker.size / 2 + 1;
        boxes.push([px(x) - r, py(t.y[i]) - r, px(x) + r, py(t.y[i]) + r]);
      }));
      links.forEach((l) => {                   // the link lines: small boxes along them
        const a = [px(pos[l.ends[0]][0]), py(pos[l.ends[0]][1])];
        const b = [px(pos[l.ends[1]][0]), py(pos[l.ends[1]][1])];
        const steps = Math.ceil(Math.hypot(b[0] - a[0], b[1] - a[1]) / 6);
        for (let k = 1; k < steps; k++) {
          const x = a[0] + (b[0] - a[0]) * k / steps, y = a[1] + (b[1] - a[1]) * k / steps;
          boxes.push([x - 2, y - 2, x + 2, y + 2]);
        }
      });
      const lt = traces[labelTrace];
      lt.x.forEach((x, i) => {
        const r = lt.marker.size / 2;
        boxes.push([px(x) - r, py(lt.y[i]) - r, px(x) + r, py(lt.y[i]) + r]);
      });
      if (!bigNodes) {
        nodeTraces.forEach((t) => {
          t.textposition = t.x.map((x, i) => {
            const p = place(x, t.y[i], t.text[i], t.textfont.size, t.marker.size / 2 + 2, "top center");
            boxes.push(p.b);
            return p.side;
          });
        });
      }
      if (!bigLinks) {
        lt.textposition = lt.x.map((x, i) => {
          let p = place(x, lt.y[i], lt.text[i], lt.textfont.size, lt.marker.size / 2 + 2, "bottom center");
          if (p.cost > 0) {                     // no room for the details: the id alone
            lt.text[i] = plain(links[i].id);
            p = place(x, lt.y[i], lt.text[i], lt.textfont.size, lt.marker.size / 2 + 2, "bottom center");
          }
          boxes.push(p.b);
          return p.side;
        });
      }
      topoLayout.datarevision += 1;
      Plotly.react(topo, traces, topoLayout, CONFIG);
    }

    let frame = 0;
    let states = [];
    function setFrame(k) {
      k = Math.max(0, Math.min(F - 1, k | 0));
      frame = k;
      states = links.map((l) => linkState(l, k));
      states.forEach((s, i) => (traces[linkTrace(i)].line = { width: LINK_WIDTH, color: s.color, dash: s.down ? "dot" : "solid" }));
      const q = queueSegments(states);
      traces[queueTrace].x = q.qx; traces[queueTrace].y = q.qy;
      const lt = traces[labelTrace];
      lt.marker = { ...lt.marker, color: states.map((s) => s.utilization) };
      lt.hovertext = states.map((s, i) => {
        const l = links[i];
        return `<b>${plain(l.id)}</b> ${plain(l.ends[0])}–${plain(l.ends[1])}, ${fmt(l.rate_mbps)} Mbps${unitsSuffix}, ` +
          `${fmt(l.delay_ms)} ms, buffer ${fmt(l.buffer_kb)} KB (${l.duplex} duplex)` +
          `<br>utilization ${fmt(s.utilization, 3)}${s.down ? " — DOWN (failure losses)" : ""}` +
          s.dirs.map((d) => `<br>${plain(d.dir)}: ${fmt(d.rate_mbps)} Mbps, queue ${fmt(d.buffer_kb)} KB`).join("");
      });
      const down = states.map((s, i) => [s, i]).filter(([s]) => s.down).map(([, i]) => i);
      traces[downTrace].x = down.map((i) => lt.x[i]);
      traces[downTrace].y = down.map((i) => lt.y[i]);
      applyRoutes(routePaths(k));
      topoLayout.datarevision += 1;
      Plotly.react(topo, traces, topoLayout, CONFIG);
      if (!labelsPlaced) placeLabels();
      slider.value = String(k);
      const t = data.frame_t[k];
      timeLabel.textContent = `t = ${t.toFixed(2)} s of ${Number(data.end_time_s).toFixed(2)} s`;
      if (seriesReady) Plotly.relayout(seriesDiv, { "shapes[0].x0": t, "shapes[0].x1": t });
    }

    // --- time series: rows of one figure sharing the x axis (zoom one, zoom all)
    const ROWS = [
      ["link rate (Mbps" + unitsSuffix + ")"], ["link queue (KB" + unitsSuffix + ")"],
      ["link losses and CE marks (packets / interval)"], ["flow rate (Mbps" + unitsSuffix + ")"],
      ["flow window (packets)"], ["flow RTT (ms)"],
    ];
    const selected = { links: new Set(data.selected.links), flows: new Set(data.selected.flows) };
    const T = data.series_t;
    const LOSS = { drops: ["overflow", "solid"], impairment_drops: ["random loss", "dot"],
      failure_drops: ["link down", "dash"] };

    // a sample is the value of the interval it ends (links.csv, flows.csv): drawn as a step over
    // (previous sample, its time], the first from 0, a missing value as a gap, as the PNGs do,
    // so that a sample alone between gaps (an RTT) is a segment, not an invisible point; a
    // decimated series (min and max of each bucket) keeps its points joined
    function trace(y) {
      if (data.decimated) return { x: T, y };
      const x = [], v = [];
      for (let i = 0; i < T.length; i++) {
        const value = y[i];
        if (value === null || value === undefined || Number.isNaN(value)) {
          x.push(T[i]); v.push(null);
        } else {
          x.push(i ? T[i - 1] : 0, T[i]); v.push(value, value);
        }
      }
      return { x, y: v };
    }
    function stepLine(intervals, which) {   // predictions.csv: piecewise constant
      const x = [], y = [];
      intervals.forEach(([s, e, lo, hi]) => { x.push(s, e, null); const v = which === "low" ? lo : hi; y.push(v, v, null); });
      return { x, y };
    }
    function predictionTraces(key, quantity, row, color, name) {
      const p = (data.predictions[key] || {})[quantity];
      if (!p) return [];
      const same = p.every(([, , lo, hi]) => lo === hi);
      return (same ? ["low"] : ["low", "high"]).map((w) => ({
        type: "scatter", mode: "lines", ...stepLine(p, w), xaxis: "x", yaxis: "y" + (row + 1),
        line: { color, dash: "dash", width: 1.5 }, name: `${name} predicted${same ? "" : " " + w}`,
        legendgroup: name, connectgaps: false,
      }));
    }

    function seriesTraces() {
      const out = [];
      let c = 0;
      links.forEach((l) => {
        if (!selected.links.has(l.id)) return;
        const linkColor = PALETTE[c % PALETTE.length];     // (its first direction's)
        l.dirs.forEach((d) => {
          const color = PALETTE[c++ % PALETTE.length];
          const name = `${short(l.id)} ${shortDir(d.dir)}`;
          const base = { type: "scatter", mode: "lines", xaxis: "x", legendgroup: name,
            line: { color, width: 1.5 } };
          out.push({ ...base, ...trace(d.series.rate_mbps), yaxis: "y", name: `${name} rate` });
          out.push({ ...base, ...trace(d.series.buffer_kb), yaxis: "y2", name: `${name} queue`, showlegend: false });
          Object.entries(LOSS).forEach(([col, [label, dash]]) => {
            if (d.series[col]) out.push({ ...base, ...trace(d.series[col]), yaxis: "y3", name: `${name} ${label}`,
              line: { color, width: 1.5, dash } });
          });
          Object.keys(d.series).filter((k) => k.toLowerCase().includes("mark")).forEach((col) =>
            out.push({ ...base, ...trace(d.series[col]), yaxis: "y3", name: `${name} ${col}`,
              line: { color, width: 1, dash: "dashdot" } }));
          if (d.series.backlog_kb) out.push({ ...base, ...trace(d.series.backlog_kb), yaxis: "y2",
            name: `${name} backlog`, line: { color, width: 1, dash: "dot" } });
          out.push(...predictionTraces(`link:${l.id}:${d.dir}`, "backlog_kb", 1, color, `${name} backlog`));
          out.push(...predictionTraces(`link:${l.id}:${d.dir}`, "rate_mbps", 0, color, `${name} rate`));
        });
        // a half-duplex link's prediction is for its two directions summed ("A->B+B->A")
        Object.keys(data.predictions).filter((k) => k.startsWith(`link:${l.id}:`)
          && k.slice(`link:${l.id}:`.length).includes("+")).forEach((k) =>
          out.push(...predictionTraces(k, "backlog_kb", 1, linkColor,
            `${short(l.id)} backlog, both directions summed,`)));
      });
      flows.forEach((f) => {
        if (!selected.flows.has(f.id)) return;
        const base = { type: "scatter", mode: "lines", xaxis: "x", legendgroup: f.id,
          line: { color: f.color, width: 1.5 } };
        out.push({ ...base, ...trace(f.series.arrival_rate_mbps), yaxis: "y4", name: `${short(f.id)} arrival rate` });
        if (f.series.send_rate_mbps) out.push({ ...base, ...trace(f.series.send_rate_mbps), yaxis: "y4",
          name: `${short(f.id)} send rate`, line: { color: f.color, width: 1, dash: "dot" }, visible: "legendonly" });
        out.push({ ...base, ...trace(f.series.window_pkts), yaxis: "y5", name: `${short(f.id)} window`, showlegend: false });
        out.push({ ...base, ...trace(f.series.rtt_ms), yaxis: "y6", name: `${short(f.id)} RTT`, showlegend: false });
        out.push(...predictionTraces(`flow:${f.id}`, "rate_mbps", 3, f.color, `${short(f.id)} rate`));
        out.push(...predictionTraces(`flow:${f.id}`, "window_pkts", 4, f.color, `${short(f.id)} window`));
        out.push(...predictionTraces(`flow:${f.id}`, "rtt_ms", 5, f.color, `${short(f.id)} RTT`));
      });
      return out;
    }

    // a run without flows of its own (workloads only) has the link rows only, the time axis
    // under the last of them, and a figure as much shorter
    const rowCount = flows.length ? ROWS.length : 3;
    if (rowCount < ROWS.length) seriesDiv.style.height = `${Math.round(900 * (rowCount + 1) / (ROWS.length + 1))}px`;
    const gap = 0.03, h = (1 - gap * (rowCount - 1)) / rowCount;
    const seriesLayout = {
      margin: { l: 70, r: 10, t: TOOLBAR_PX, b: 40 }, hovermode: "x unified", uirevision: "series",
      legend: { orientation: "v", x: 1.01, y: 1 },
      xaxis: { title: { text: "time (s)" }, anchor: "y" + rowCount, range: [0, data.end_time_s] },
      shapes: [{ type: "line", xref: "x", yref: "paper", x0: 0, x1: 0, y0: 0, y1: 1,
        line: { color: "rgba(0,0,0,0.4)", width: 1 } }],
      datarevision: 0,
    };
    ROWS.slice(0, rowCount).forEach(([title], i) => {
      const top = 1 - i * (h + gap);
      seriesLayout["yaxis" + (i === 0 ? "" : i + 1)] = { domain: [top - h, top], anchor: "x",
        title: { text: title.replace(" (", "<br>("), font: { size: 11 } }, rangemode: "tozero" };
    });

    let seriesReady = false;
    function drawSeries() {
      seriesLayout.datarevision += 1;
      const traces = seriesTraces();
      const lossless = !traces.some((t) => t.yaxis === "y3");
      const lossRow = seriesLayout.yaxis3.domain;
      seriesLayout.annotations = lossless && selected.links.size ? [{ xref: "paper", yref: "paper",
        x: 0.5, y: (lossRow[0] + lossRow[1]) / 2, showarrow: false, text: "no packet lost on the selected links",
        font: { color: "#777" } }] : [];
      Plotly.react(seriesDiv, traces, seriesLayout, CONFIG);
      seriesReady = true;
      const names = (set) => [...set].join(", ") || "none";
      document.getElementById("selection").textContent =
        `links: ${names(selected.links)}; flows: ${names(selected.flows)} — click a link or a ` +
        `flow route in the network to add or remove it` +
        (data.decimated ? `; traces decimated (min and max of each of ${data.series_t.length / 2} ` +
          `buckets of the ${data.samples} samples)` : "");
    }

    function toggle(kind, id) {
      const set = selected[kind];
      if (set.has(id)) set.delete(id); else set.add(id);
      drawSeries();
    }

    setFrame(0);
    drawSeries();
    slider.max = String(F - 1);
    slider.addEventListener("input", () => setFrame(Number(slider.value)));
    topo.on("plotly_click", (ev) => {
      const p = ev.points && ev.points[0];
      if (!p) return;
      const meta = p.data.meta || "";
      if (p.curveNumber === labelTrace) toggle("links", p.customdata);
      else if (meta.startsWith("link:")) toggle("links", meta.slice(5));
      else if (meta.startsWith("flow:")) toggle("flows", meta.slice(5));
    });
    let timer = null;
    playButton.addEventListener("click", () => {
      if (timer) { clearInterval(timer); timer = null; playButton.textContent = "▶ Play"; return; }
      if (frame >= F - 1) setFrame(0);
      playButton.textContent = "❚❚ Pause";
      const step = Math.max(1, Math.round(F / 300));        // about 30 s for a whole run
      timer = setInterval(() => {
        if (frame >= F - 1) { clearInterval(timer); timer = null; playButton.textContent = "▶ Play"; return; }
        setFrame(frame + step);
      }, 100);
    });

    return {
      kind: "run", data, setFrame, frame: () => frame, frameTime: () => data.frame_t[frame],
      linkState: (id) => states[linkIndex[id]],
      linkTraceIndex: (id) => linkTrace(linkIndex[id]),
      traces: { queue: queueTrace, frames: frameTrace, labels: labelTrace, down: downTrace,
        routes: routeTrace0, nodes: nodeTrace },
      queueBar: (id, dir) => {        // the drawn bar: [length, full length] in plot units
        let n = 0;
        for (let i = 0; i < links.length; i++) for (const d of links[i].dirs) {
          if (links[i].id === id && d.dir === dir) {
            const q = topo.data[queueTrace], fr = topo.data[frameTrace];
            const len = (tr) => Math.hypot(tr.x[3 * n + 1] - tr.x[3 * n], tr.y[3 * n + 1] - tr.y[3 * n]);
            return [len(q), len(fr)];
          }
          n++;
        }
        return null;
      },
      route: (fid) => data.routes.length ? data.routes[routeIndex].paths[fid] : null,
      selected: () => ({ links: [...selected.links], flows: [...selected.flows] }),
      seriesNames: () => (seriesDiv.data || []).map((t) => t.name),
      toggleLink: (id) => toggle("links", id), toggleFlow: (id) => toggle("flows", id),
    };
  }

  // -------------------------------------------------------------------------------------------
  // A sweep

  function drawSweep(data) {
    const box = document.getElementById("charts");
    data.charts.forEach((chart, i) => {
      const h = document.createElement("h2");
      h.textContent = chart.title + (chart.file ? ` (${chart.file})` : "");
      box.appendChild(h);
      if (chart.error) {
        const p = document.createElement("p"); p.textContent = "cannot draw: " + chart.error;
        box.appendChild(p); return;
      }
      const div = document.createElement("div");
      div.id = "chart-" + i; div.style.height = "460px";
      box.appendChild(div);
      Plotly.newPlot(div, chart.traces, chart.layout, CONFIG);
      if (chart.note) {
        const p = document.createElement("div"); p.className = "muted"; p.textContent = chart.note;
        box.appendChild(p);
      }
    });
    return { kind: "sweep", data, charts: data.charts.length };
  }

  (async function main() {
    try {
      if (!window.DecompressionStream) throw new Error("this browser lacks DecompressionStream");
      if (!window.Plotly) (0, eval)(await inflate("plotly-packed"));
      const data = JSON.parse(await inflate("netsim-data"));
      window.netsimReport = data.kind === "sweep" ? drawSweep(data) : drawRun(data);
      status.textContent = "";
      document.body.dataset.ready = "1";
    } catch (err) {
      status.textContent = "the report could not be drawn: " + err;
      document.body.dataset.ready = "error";
      console.error(err);
    }
  })();
})();
