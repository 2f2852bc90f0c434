/* gputrace --html: draws the page from its data blocks (linked into gputrace-report by
 * html_assets.S). #gt-data holds the JSON report (docs/REPORT_JSON.md; several traces:
 * {processes, cross}), #gt-events one timeline view per process (docs/HTML.md). The script only
 * lays out and draws: every figure comes from the report model. Errors are written into the page
 * (#gt-errors) so that a headless browser's DOM shows them. */
"use strict";
(function () {
    const errBox = document.getElementById("gt-errors");
    function showError(msg) {
        errBox.hidden = false;
        const p = document.createElement("p");
        p.className = "js-error";
        p.textContent = "JavaScript error: " + msg;
        errBox.appendChild(p);
    }
    window.addEventListener("error", (e) => showError(e.message + " at line " + e.lineno));

    const SVGNS = "http://www.w3.org/2000/svg";
    const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
        "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#8cd17d"];
    const CAUSE_COLORS = {
        host_busy: "#e15759", synchronize: "#f28e2b", allocation: "#b07aa1",
        dependency: "#76b7b2", launch_latency: "#bab0ac", unknown: "#9c9c9c"
    };
    const KIND_COLORS = ["#4e79a7", "#f28e2b", "#b07aa1"]; /* kernel, memcpy, memset */

    /* ---- small helpers --------------------------------------------------------------------- */
    function el(tag, attrs, ...kids) {
        const e = document.createElement(tag);
        for (const [k, v] of Object.entries(attrs || {})) {
            if (k === "text") e.textContent = v;
            else if (k === "onclick") e.addEventListener("click", v);
            else e.setAttribute(k, v);
        }
        for (const k of kids) if (k !== null && k !== undefined) e.append(k);
        return e;
    }
    function sv(tag, attrs, parent) {
        const e = document.createElementNS(SVGNS, tag);
        for (const [k, v] of Object.entries(attrs || {})) {
            if (k === "text") e.textContent = v;
            else e.setAttribute(k, v);
        }
        if (parent) parent.appendChild(e);
        return e;
    }
    function title(node, text) {
        sv("title", { text: text }, node);
        return node;
    }
    function bytes(n) {
        if (n === null || n === undefined) return "-";
        const u = ["B", "KiB", "MiB", "GiB", "TiB"];
        let i = 0, v = n;
        while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
        return (i ? v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0) : String(v)) + " " + u[i];
    }
    function dur(ns) {
        if (ns === null || ns === undefined) return "-";
        const a = Math.abs(ns);
        if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
        if (a >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
        if (a >= 1e3) return (ns / 1e3).toFixed(1) + " us";
        return ns + " ns";
    }
    function pct(x) { return x === null || x === undefined ? "-" : (100 * x).toFixed(1) + " %"; }
    function hash(s) {
        let h = 2166136261;
        for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
        return h >>> 0;
    }
    /* one color per name across the page, in order of first use (then by hash past the palette) */
    const colorIndex = new Map();
    function colorOf(s) {
        const k = String(s);
        if (!colorIndex.has(k))
            colorIndex.set(k, colorIndex.size < PALETTE.length ? colorIndex.size : hash(k) % PALETTE.length);
        return PALETTE[colorIndex.get(k)];
    }
    function stackText(site) {
        if (!site || !site.stack) return "";
        return site.stack.map((f) => "  " + (f.function || "?") +
            (f.file ? " (" + f.file + ":" + f.line + ")" : "")).join("\n");
    }
    function card(parent, heading, cls) {
        const s = el("section", { class: "card " + (cls || "") }, el("h2", { text: heading }));
        parent.append(s);
        return s;
    }
    function table(rows, cols, cls) {
        const t = el("table", { class: cls || "" });
        t.append(el("tr", {}, ...cols.map((c) => el("th", { class: c[2] || "", text: c[0] }))));
        for (const r of rows) {
            const tr = el("tr", {}, ...cols.map((c) => el("td", { class: c[2] || "", text: c[1](r) })));
            if (r && r._class) tr.className = r._class;
            t.append(tr);
        }
        return t;
    }
    function stat(parent, value, label, bad) {
        parent.append(el("div", { class: "stat" + (bad ? " bad" : "") }, el("b", { text: value }),
            el("span", { text: label })));
    }
    function legend(items) {
        return el("div", { class: "legend" }, ...items.map(([c, t]) =>
            el("span", {}, el("i", { style: "background:" + c }), t)));
    }

    /* ---- PyTorch's memory by category (memory.allocators[]: peak_breakdown.by_category,
     * category_series, optimizers; docs/ANALYSES.md "Memory by category") ---------------------- */
    const TIER_COLORS = {
        weights: "#4e79a7", gradients: "#f28e2b", optimizer_state: "#e15759", activations: "#59a14f",
        temporary: "#edc948", workspace: "#b07aa1", cache: "#bab0ac", other: "#9c755f",
        other_allocated: "#59a14f"
    };
    function tierChart(parent, rep) {
        for (const a of (rep.memory || {}).allocators || []) {
            const cats = (a.peak_breakdown || {}).by_category;
            if (!cats && !(a.category_series || []).length) continue;
            const sec = card(parent, `PyTorch memory by category, device ${a.device}`);
            const W = 1180, L = 70, R = 10;
            if (cats) { /* the fullest snapshot as one bar, categories to scale */
                const total = cats.reduce((n, c) => n + c.bytes, 0) || 1;
                const svg = sv("svg", { viewBox: `0 0 ${W} 46`, class: "tierbar", width: W, height: 46 });
                let x0 = L;
                for (const c of cats) {
                    if (!c.bytes) continue;
                    const w = (W - L - R) * c.bytes / total;
                    const sites = (c.top_sites || []).filter((t) => t.site).map((t) => `\n  ${bytes(t.bytes)}  ${t.site}`).join("");
                    title(sv("rect", { x: x0, y: 4, width: Math.max(w, 0.5), height: 28, fill: TIER_COLORS[c.category], class: "tier", "data-category": c.category, "data-bytes": c.bytes }, svg),
                        `${c.category.replace("_", " ")}: ${bytes(c.bytes)} in ${c.count} blocks (${c.basis})${sites}`);
                    if (w > 70) sv("text", { x: x0 + 4, y: 22, class: "label tierlabel", text: `${c.category.replace("_", " ")} ${bytes(c.bytes)}` }, svg);
                    x0 += w;
                }
                const replayed = a.peak_breakdown.categories_source === "replay";
                sv("text", { x: L - 6, y: 22, "text-anchor": "end", class: "label", text: replayed ? "peak" : "fullest" }, svg);
                sec.append(legend(cats.filter((c) => c.bytes).map((c) => [TIER_COLORS[c.category], `${c.category.replace("_", " ")} (${c.basis})`])));
                sec.append(svg, el("p", { class: "note", text: (replayed ?
                    `At PyTorch's peak, ${dur(a.peak_breakdown.categories_time_ns)}, found by replaying its block events between snapshots: ${bytes(a.peak_breakdown.categories_allocated_bytes)} allocated (PyTorch's peak ${bytes(a.peak_allocated_bytes)})` :
                    `The fullest snapshot at ${dur(a.peak_breakdown.categories_time_ns)}: ${bytes(a.peak_breakdown.snapshot_allocated_bytes)} allocated (PyTorch's peak ${bytes(a.peak_allocated_bytes)})`) +
                    `; blocks of optimizer tensors are exact, "remainder" is what no optimizer holds.` }));
            }
            const ser = a.category_series || [];
            if (ser.length) { /* per optimizer step, stacked: weights, gradients, state, the rest, cache */
                const keys = ["weights", "gradients", "optimizer_state", "other_allocated", "cache"];
                const H = 200, T = 10, B = 28, t0 = ser[0].time_ns, t1 = Math.max(ser[ser.length - 1].time_ns, t0 + 1);
                const ymax = Math.max(1, ...ser.map((p) => keys.reduce((n, k) => n + (p[k] || 0), 0)));
                const x = (t) => L + (W - L - R) * (ser.length > 1 ? (t - t0) / (t1 - t0) : 0.5);
                const y = (v) => T + (H - T - B) * (1 - v / ymax);
                const svg = sv("svg", { viewBox: `0 0 ${W} ${H}`, class: "memchart tierchart", width: W, height: H });
                for (let i = 0; i <= 4; i++) {
                    sv("line", { x1: L, x2: W - R, y1: y(ymax * i / 4), y2: y(ymax * i / 4), class: "axis" }, svg);
                    sv("text", { x: L - 6, y: y(ymax * i / 4) + 4, "text-anchor": "end", class: "label", text: bytes(Math.round(ymax * i / 4)) }, svg);
                }
                const base = ser.map(() => 0), items = [];
                for (const k of keys) {
                    const top = ser.map((p, i) => base[i] + (p[k] || 0));
                    let d = ser.map((p, i) => `${i ? "L" : "M"} ${x(p.time_ns)} ${y(top[i])}`).join(" ");
                    for (let i = ser.length - 1; i >= 0; i--) d += ` L ${x(ser[i].time_ns)} ${y(base[i])}`;
                    title(sv("path", { d: d + " Z", fill: TIER_COLORS[k], "fill-opacity": 0.7, stroke: TIER_COLORS[k], class: "tier-series", "data-category": k, "data-max": Math.max(...ser.map((p) => p[k] || 0)) }, svg),
                        `${k.replace("_", " ")} at each optimizer step (max ${bytes(Math.max(...ser.map((p) => p[k] || 0)))})`);
                    top.forEach((v, i) => { base[i] = v; });
                    items.push([TIER_COLORS[k], k === "other_allocated" ? "allocated, no optimizer's" : k.replace("_", " ")]);
                }
                sv("text", { x: L, y: H - 8, class: "label", text: `step ${ser[0].step}` }, svg);
                sv("text", { x: W - R, y: H - 8, "text-anchor": "end", class: "label", text: `step ${ser[ser.length - 1].step}` }, svg);
                sec.append(legend(items), svg);
            }
            const snaps = a.category_snapshots || [];
            if (snaps.length) { /* every snapshot as a column, stacked by category, to scale */
                const order = ["weights", "gradients", "optimizer_state", "activations", "other", "temporary", "workspace", "cache"];
                const H = 160, T = 10, B = 24, ymax = Math.max(1, ...snaps.map((q) => q.reserved));
                const y = (v) => T + (H - T - B) * (1 - v / ymax);
                const cw = Math.max(4, Math.min(60, (W - L - R) / snaps.length - 4));
                const svg = sv("svg", { viewBox: `0 0 ${W} ${H}`, class: "memchart tiersnaps", width: W, height: H });
                for (let i = 0; i <= 2; i++)
                    sv("text", { x: L - 6, y: y(ymax * i / 2) + 4, "text-anchor": "end", class: "label", text: bytes(Math.round(ymax * i / 2)) }, svg);
                snaps.forEach((q, i) => {
                    const x0 = L + i * (W - L - R) / snaps.length;
                    const g = sv("g", { class: "tiersnap", "data-why": q.why, "data-reserved": q.reserved }, svg);
                    let acc = 0;
                    for (const k of order) {
                        if (!q[k]) continue;
                        title(sv("rect", { x: x0, y: y(acc + q[k]), width: cw, height: y(acc) - y(acc + q[k]), fill: TIER_COLORS[k], "data-category": k, "data-bytes": q[k] }, g),
                            `${q.why} snapshot at ${dur(q.time_ns)}: ${k.replace("_", " ")} ${bytes(q[k])}` + (q.roles_known ? "" : " (no optimizer had stepped yet)"));
                        acc += q[k];
                    }
                    if (cw >= 30) sv("text", { x: x0, y: H - 8, class: "label", text: q.why }, svg);
                });
                sec.append(el("p", { class: "note", text: "Each snapshot (at new highs, OOMs, exit), stacked by category:" }), svg);
            }
            const lines = (a.optimizers || []).map((o) => `${o.class}: state ${bytes(o.optimizer_state_bytes)} = ${(o.state_to_weights || 0).toFixed(1)}x weights (${o.meaning})`)
                .concat(((a.peak_breakdown || {}).advice || []).map((t) => "advice: " + t));
            if (lines.length) sec.append(el("pre", { class: "note tieradvice", text: lines.join("\n") }));
        }
    }

    /* ---- memory over time ---------------------------------------------------------------------- */
    function memoryChart(parent, rep) {
        const m = rep.memory, ls = m.live_series;
        const sec = card(parent, "Memory over time");
        if (!ls || !ls.series || !ls.series.length || !ls.buckets) {
            sec.append(el("p", { class: "note", text: "No device memory was allocated." }));
            return;
        }
        const W = 1180, H = 220, L = 70, R = 10, T = 10, B = 28;
        const span = ls.bucket_ns * ls.buckets;
        let ymax = 1;
        for (const s of ls.series) for (const v of s.max_bytes) ymax = Math.max(ymax, v);
        for (const o of m.ooms || []) ymax = Math.max(ymax, o.held_bytes || 0);
        const allocators = (m.allocators || []).filter((a) => a.fragmentation && (a.fragmentation.series || []).length);
        for (const a of allocators) for (const p of a.fragmentation.series) ymax = Math.max(ymax, p.reserved_bytes, p.allocated_bytes);
        const x = (t) => L + (W - L - R) * Math.max(0, Math.min(1, t / span));
        const y = (v) => T + (H - T - B) * (1 - v / ymax);
        const svg = sv("svg", { viewBox: `0 0 ${W} ${H}`, class: "memchart", width: W, height: H });
        for (let i = 0; i <= 4; i++) {
            const v = ymax * i / 4;
            sv("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "axis" }, svg);
            sv("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "label", text: bytes(Math.round(v)) }, svg);
        }
        for (let i = 0; i <= 5; i++)
            sv("text", { x: x(span * i / 5), y: H - 8, "text-anchor": i === 5 ? "end" : i ? "middle" : "start", class: "label", text: dur(Math.round(span * i / 5)) }, svg);
        const items = [];
        svg.setAttribute("data-y0", y(0));
        svg.setAttribute("data-ymax-px", y(ymax));
        svg.setAttribute("data-ymax", ymax);
        const stacked = catStack(svg, m, ls, x, y, items);
        /* per column (bucket, about a pixel wide): the band from its minimum to its maximum, so a
         * spike and a dip shorter than a column both show; under the band a light area to the
         * minimum (left out over the categories' stack). The band runs left to right along the
         * maxima and back along the minima. */
        for (const s of ls.series) {
            const c = colorOf("dev" + s.device + s.kind);
            const lo = s.min_bytes || s.max_bytes, n = s.max_bytes.length;
            let top = "", bottom = "", floor = `M ${x(0)} ${y(0)}`;
            for (let i = 0; i < n; i++) {
                const xa = x(i * ls.bucket_ns), xb = x((i + 1) * ls.bucket_ns);
                top += `${i ? " L" : "M"} ${xa} ${y(s.max_bytes[i])} L ${xb} ${y(s.max_bytes[i])}`;
                floor += ` L ${xa} ${y(lo[i])} L ${xb} ${y(lo[i])}`;
            }
            for (let i = n - 1; i >= 0; i--)
                bottom += ` L ${x((i + 1) * ls.bucket_ns)} ${y(lo[i])} L ${x(i * ls.bucket_ns)} ${y(lo[i])}`;
            floor += ` L ${x(n * ls.bucket_ns)} ${y(0)} Z`;
            if (!stacked) sv("path", { d: floor, fill: c, "fill-opacity": 0.15, stroke: "none", class: "series-floor" }, svg);
            title(sv("path", { d: top + bottom + " Z", fill: c, "fill-opacity": stacked ? 0.25 : 0.6, stroke: c, "stroke-width": 1, "stroke-linejoin": "round", class: "series", "data-device": s.device, "data-kind": s.kind }, svg),
                `device ${s.device} ${s.kind}: live bytes, minimum to maximum per ${dur(ls.bucket_ns)}`);
            items.push([c, `device ${s.device} ${s.kind} live bytes (band: min to max)`]);
        }
        /* PyTorch's caching allocator: reserved (its segments) and allocated (its tensors), as its
         * stats samples and snapshots saw them (memory.allocators[].fragmentation.series) */
        for (const a of allocators) {
            for (const [key, dash, what] of [["reserved_bytes", "6 3", "reserved"], ["allocated_bytes", "", "allocated"]]) {
                const c = colorOf("torch" + a.device + what);
                let d = "";
                a.fragmentation.series.forEach((p, i) => {
                    d += i ? ` L ${x(p.time_ns)} ${y(a.fragmentation.series[i - 1][key])} L ${x(p.time_ns)} ${y(p[key])}` : `M ${x(p.time_ns)} ${y(p[key])}`;
                });
                const last = a.fragmentation.series[a.fragmentation.series.length - 1];
                d += ` L ${x(span)} ${y(last[key])}`;
                title(sv("path", { class: "torch-series", "data-points": a.fragmentation.series.length, "data-max": Math.max(...a.fragmentation.series.map((p) => p[key])), d: d, fill: "none", stroke: c, "stroke-width": 2, "stroke-dasharray": dash }, svg),
                    `device ${a.device}: PyTorch ${what} (its stats samples and snapshots; peak ${what} ${bytes(a["peak_" + what + "_bytes"])})`);
                items.push([c, `device ${a.device} PyTorch ${what}`]);
            }
        }
        const detail = el("div", { class: "detail", hidden: "" });
        if (m.peak_bytes) {
            const px = x(m.peak_time_ns);
            sv("line", { x1: px, x2: px, y1: T, y2: H - B, class: "peak" }, svg);
            title(sv("circle", { cx: px, cy: y(m.peak_bytes), r: 5, fill: "#2f6fdb", class: "peak-marker", style: "cursor:pointer" }, svg),
                `peak ${bytes(m.peak_bytes)} at ${dur(m.peak_time_ns)}`).addEventListener("click", () => {
                detail.hidden = false;
                detail.className = "detail";
                const pb = m.peak_breakdown || {};
                detail.textContent = `Peak: ${bytes(m.peak_bytes)} at ${dur(m.peak_time_ns)}\n` +
                    (pb.by_site || []).slice(0, 5).map((s) => `  ${bytes(s.bytes)}  ${s.site}`).join("\n");
            });
            sv("text", { x: px + 8, y: y(m.peak_bytes) + 14, text: "peak " + bytes(m.peak_bytes) }, svg);
            items.push(["#2f6fdb", "peak"]);
        }
        (m.ooms || []).forEach((o, i) => {
            const ox = x(o.time_ns), oy = T + 2;
            const tri = sv("path", { d: `M ${ox - 6} ${oy} L ${ox + 6} ${oy} L ${ox} ${oy + 10} Z`, class: "oom" }, svg);
            title(tri, `out of memory${o.level === "allocator" ? " (PyTorch's allocator)" : ""}: ${bytes(o.requested_bytes)} requested, verdict ${o.verdict}` +
                (o.level === "allocator" ? `; PyTorch: ${bytes(o.allocated_bytes)} allocated, ${bytes(o.reserved_bytes)} reserved` : ""));
            tri.addEventListener("click", () => {
                detail.hidden = false;
                detail.className = "detail bad";
                detail.textContent = oomText(o, i);
            });
            sv("line", { x1: ox, x2: ox, y1: oy + 10, y2: H - B, stroke: "#c83a3a", "stroke-width": 1, "stroke-dasharray": "2 3" }, svg);
        });
        if ((m.ooms || []).length) items.push(["#c83a3a", "failed allocation (click: evidence)"]);
        sec.append(legend(items), svg, detail);
        sec.append(el("p", { class: "note", text: `Each column (${dur(ls.bucket_ns)}) is drawn from the minimum to the maximum of live bytes within it, so short spikes and dips both show; the peak is exact (${bytes(m.peak_bytes)}).` +
            (stacked ? " Under it, the memory stacked by category: exact at the marked points (PyTorch's snapshots, the peak; hover a point for its figures), joined by straight lines between them and cut at the columns' maxima." : "") }));
    }
    /* The process's device memory by category (memory.category_series: at PyTorch's snapshots
     * and at the peak, each point adding up to the live bytes then), stacked, under the band.
     * Between points the layers are joined by straight lines; with one series they are clipped
     * to its maxima, so the stack never shows more than was live. Returns whether it drew. */
    let clipIds = 0;
    function catStack(svg, m, ls, x, y, items) {
        const ps = m.category_series || [];
        if (!ps.length) return false;
        const keys = ["weights", "gradients", "optimizer_state", "activations", "temporary", "workspace", "other", "pytorch_reserved", "cache"];
        const color = (k) => TIER_COLORS[k] || "#d4a6c8";
        const label = (k) => k === "pytorch_reserved" ? "PyTorch reserved (not split)" : k.replace("_", " ");
        const g = sv("g", { class: "cat-stack" }, svg);
        if (ls.series.length === 1) { /* the area under the one series' maxima */
            const s = ls.series[0], id = "memclip" + clipIds++;
            let d = `M ${x(0)} ${y(0)}`;
            s.max_bytes.forEach((v, i) => { d += ` L ${x(i * ls.bucket_ns)} ${y(v)} L ${x((i + 1) * ls.bucket_ns)} ${y(v)}`; });
            sv("path", { d: d + ` L ${x(s.max_bytes.length * ls.bucket_ns)} ${y(0)} Z` }, sv("clipPath", { id: id }, svg));
            g.setAttribute("clip-path", `url(#${id})`);
        }
        const peak = ps.findIndex((p) => p.at === "peak"), base = ps.map(() => 0);
        for (const k of keys) {
            if (!ps.some((p) => p[k])) continue;
            const top = ps.map((p, i) => base[i] + (p[k] || 0));
            let d = ps.map((p, i) => `${i ? "L" : "M"} ${x(p.time_ns)} ${y(top[i])}`).join(" ");
            for (let i = ps.length - 1; i >= 0; i--) d += ` L ${x(ps[i].time_ns)} ${y(base[i])}`;
            const most = Math.max(...ps.map((p) => p[k] || 0));
            title(sv("path", { d: d + " Z", fill: color(k), "fill-opacity": 0.75, stroke: "none", class: "cat-layer", "data-category": k,
                "data-peak": peak >= 0 ? ps[peak][k] : "", "data-peak-top": peak >= 0 ? top[peak] : "" }, g),
                `${label(k)}: at most ${bytes(most)}` + (peak >= 0 ? `, ${bytes(ps[peak][k])} at the peak` : ""));
            top.forEach((v, i) => { base[i] = v; });
            items.push([color(k), label(k)]);
        }
        for (const p of ps) { /* a hover target per point: its figures */
            const px = x(p.time_ns), lines = keys.filter((k) => p[k]).map((k) => `  ${label(k)}: ${bytes(p[k])}`);
            title(sv("rect", { x: px - 3, y: y(p.total_bytes), width: 6, height: Math.max(1, y(0) - y(p.total_bytes)), fill: "transparent", stroke: "#444", "stroke-opacity": 0.4, class: "cat-point", "data-at": p.at, "data-time": p.time_ns, "data-total": p.total_bytes }, svg),
                `${p.at === "peak" ? "peak" : "PyTorch snapshot"} at ${dur(p.time_ns)}: ${bytes(p.total_bytes)} live\n` + lines.join("\n"));
        }
        return true;
    }
    function oomText(o, i) {
        let t = `OOM #${i + 1} at ${dur(o.time_ns)}: ${o.api} asked for ${bytes(o.requested_bytes)} on device ${o.device}\n` +
            `verdict: ${o.verdict}\ndevice free ${bytes(o.free_bytes)} of ${bytes(o.total_bytes)}; ` +
            `this process held ${bytes(o.held_bytes)}; others/driver ${bytes(o.others_bytes)}\n`;
        if (o.level === "allocator") {
            t += `PyTorch's allocator: ${bytes(o.allocated_bytes)} allocated, ${bytes(o.reserved_bytes)} reserved, ` +
                `${bytes(o.free_in_segments_bytes)} free inside its segments, largest free block ${bytes(o.largest_free_block_bytes)}` +
                (o.memory_fraction_set ? `; memory fraction allows ${bytes(o.limit_bytes)}` : "") + "\n";
            if (o.python_site) t += "raised at " + o.python_site + "\n";
            if (o.partly_used_segments !== undefined)
                t += `${o.partly_used_segments} partly used segments (${bytes(o.partly_used_segment_bytes)}) pinned by ${o.pinning_blocks} live blocks (${bytes(o.pinning_bytes)})\n`;
            for (const p of o.pinned_by || []) t += `  pinned by ${bytes(p.bytes)} in ${p.count} blocks: ${p.site}\n`;
        }
        if (o.pools) t += `pools: reserved unused ${bytes(o.pools.reserved_unused_bytes)}, largest free ${bytes(o.pools.largest_free_bytes)}\n`;
        if (o.advice) t += "advice: " + o.advice + "\n";
        if (o.site) t += "site: " + o.site.site + "\n";
        for (const h of o.top_holders || []) t += `  holds ${bytes(h.bytes)}: ${h.site || (h.function || "?")}\n`;
        return t;
    }

    /* ---- address maps ------------------------------------------------------------------------ */
    /* Segments as rows (PyTorch memory_viz style): each row an address range, blocks by state. */
    function drawRows(parent, rows, scale, caption, request, svgCls) {
        const compact = rows.length > 24; /* many segments: thinner rows, the page stays short */
        const W = 1180, L = 150, rowH = compact ? 10 : 18, gap = compact ? 2 : 4, ty = compact ? 9 : 13;
        const H = rows.length * (rowH + gap) + (request ? 22 : 0) + 24;
        const svg = sv("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "addrmap" + (svgCls ? " " + svgCls : "") });
        const px = (b) => (W - L - 10) * b / scale;
        rows.forEach((row, i) => {
            const y = 4 + i * (rowH + gap);
            sv("text", { x: L - 8, y: y + ty, "text-anchor": "end", class: "label", text: row.label, style: compact ? "font-size:9px" : "" }, svg);
            sv("rect", { x: L, y: y, width: Math.max(1, px(row.size)), height: rowH, class: "free segment" + (row.cls ? " " + row.cls : "") }, svg);
            for (const b of row.blocks) {
                const r = sv("rect", {
                    x: L + px(b.offset), y: y, width: Math.max(1, px(b.size)), height: rowH,
                    fill: b.color, class: b.free ? "free block" + (b.fcls ? " " + b.fcls : "") : "blk block " + (b.cls || ""),
                    "data-bytes": b.size
                }, svg);
                title(r, b.tip);
            }
            if (row.hole) {
                sv("rect", { x: L + px(row.hole.offset), y: y - 1, width: Math.max(1, px(row.hole.size)), height: rowH + 2, class: "hole", "data-bytes": row.hole.size }, svg);
            }
        });
        if (request) {
            const y = 4 + rows.length * (rowH + gap);
            sv("text", { x: L - 8, y: y + 13, "text-anchor": "end", class: "label", text: "request" }, svg);
            title(sv("rect", { x: L, y: y, width: Math.max(1, px(request)), height: 18, class: "request", "data-bytes": request }, svg),
                `the failed request, to scale: ${bytes(request)}`);
            const inside = px(request) > W - L - 200; /* no room right of the bar: the label inside */
            sv("text", { x: L + px(request) + (inside ? -6 : 6), y: y + 13, "text-anchor": inside ? "end" : "start", text: bytes(request) + " requested" }, svg);
        }
        sv("text", { x: L, y: H - 4, class: "label", text: caption }, svg);
        parent.append(svg);
    }
    function addressMaps(parent, rep) {
        const m = rep.memory, pb = m.peak_breakdown || {};
        const sec = card(parent, "Address map");
        const allocs = (pb.largest_allocations || []).slice().sort((a, b) => a.address - b.address);
        sec.append(el("h3", { text: `At the peak (${bytes(m.peak_bytes)} at ${dur(m.peak_time_ns)}): the largest allocations live, one segment per row, colored by call site` }));
        if (allocs.length) {
            const scale = Math.max(...allocs.map((a) => a.bytes));
            const rows = allocs.map((a) => {
                const site = a.site ? a.site.site : "(no stack)";
                return {
                    label: "0x" + a.address.toString(16), size: a.bytes, cls: "at-peak",
                    blocks: [{
                        offset: 0, size: a.bytes, color: colorOf(site), cls: "allocated",
                        tip: `${bytes(a.bytes)} ${a.api} device ${a.device}\nallocated at ${dur(a.time_ns)}` +
                            (a.freed_time_ns !== null && a.freed_time_ns !== undefined ? `, freed at ${dur(a.freed_time_ns)}` : ", never freed") +
                            `\n${site}\n${stackText(a.site)}`
                    }]
                };
            });
            const sites = [...new Set(allocs.map((a) => a.site ? a.site.site : "(no stack)"))];
            sec.append(legend(sites.slice(0, 12).map((s) => [colorOf(s), s])));
            drawRows(sec, rows, scale, `widths to scale: the widest row is ${bytes(scale)}`);
        } else {
            sec.append(el("p", { class: "note", text: "Nothing was live at the peak." }));
        }
        /* driver-level OOMs: the device's memory at that moment, to scale, and the request */
        (m.ooms || []).forEach((o, i) => {
            if (!o.total_bytes) return;
            sec.append(el("h3", { text: `Device ${o.device} at failed allocation #${i + 1} (${dur(o.time_ns)}): verdict ${o.verdict}` }));
            const held = Math.min(o.held_bytes || 0, o.total_bytes);
            const free = Math.min(o.free_bytes || 0, o.total_bytes - held);
            const other = Math.max(0, o.total_bytes - held - free);
            const blocks = [
                { offset: 0, size: held, color: "#4e79a7", cls: "held", tip: `held by this process: ${bytes(held)}` },
                { offset: held, size: other, color: "#9c9c9c", cls: "others", tip: `other processes and the driver: ${bytes(other)}` },
                { offset: held + other, size: free, free: true, cls: "devfree", tip: `free on the device: ${bytes(free)}` }];
            sec.append(legend([["#4e79a7", "held by this process"], ["#9c9c9c", "other processes, driver"], ["#eef1f5", "free"], ["#c83a3a", "request"]]));
            drawRows(sec, [{ label: "device " + o.device, size: o.total_bytes, blocks: blocks.filter((b) => b.size > 0) }],
                Math.max(o.total_bytes, o.requested_bytes),
                `device memory ${bytes(o.total_bytes)}: free ${bytes(o.free_bytes)}, request ${bytes(o.requested_bytes)}`, o.requested_bytes);
        });
        const fr = m.fragmentation || {};
        (fr.pool_ooms || []).forEach((o, i) => {
            if (!o.map || !o.map.extents || !o.map.extents.length) return;
            sec.append(el("h3", { text: `Pool "${o.pool_name}" at its failed allocation #${i + 1} (${dur(o.time_ns)}): verdict ${o.verdict}` }));
            const ex = o.map.extents;
            /* rows: contiguous runs of extents (segments) */
            const rows = [];
            let cur = null, biggest = null;
            for (const e of ex) {
                if (!cur || e.addr !== cur.end) {
                    cur = { label: "0x" + e.addr.toString(16), start: e.addr, end: e.addr, size: 0, blocks: [] };
                    rows.push(cur);
                }
                const b = {
                    offset: e.addr - cur.start, size: e.size, free: e.state !== "used",
                    color: e.state === "used" ? "#4e79a7" : "", cls: e.state,
                    tip: `${e.state} ${bytes(e.size)} at 0x${e.addr.toString(16)}`
                };
                cur.blocks.push(b);
                cur.end = e.addr + e.size;
                cur.size = cur.end - cur.start;
                if (b.free && (!biggest || e.size > biggest.b.size)) biggest = { row: cur, b: b };
            }
            if (biggest) biggest.row.hole = { offset: biggest.b.offset, size: biggest.b.size };
            const scale = Math.max(o.requested_bytes, ...rows.map((r) => r.size));
            sec.append(legend([["#4e79a7", "allocated"], ["#eef1f5", "free"], ["#7a8599", "largest free hole"], ["#c83a3a", "request"]]));
            drawRows(sec, rows, scale, `free ${bytes(o.free_bytes)} in ${o.free_extents} holes, the largest ${bytes(o.largest_free_bytes)}; ` +
                `request ${bytes(o.requested_bytes)}; fragmentation ${(o.fragmentation || 0).toFixed(2)}`, o.requested_bytes);
        });
    }

    /* PyTorch's allocator at each of its OOMs and at its fullest snapshot (the timeline view's
     * torch_maps, model/view_torchmap.c): each segment a row by address, its blocks by state and
     * Python site, as PyTorch's memory_viz draws a snapshot; the request to scale beneath. */
    const TORCH_STATES = ["free", "allocated", "pending free"];
    function torchMaps(parent, rep, ev) {
        const maps = (ev && ev.torch_maps) || [], sites = (ev && ev.torch_sites) || [];
        if (!maps.length) return;
        const ooms = rep.memory.ooms || [];
        const sec = card(parent, "PyTorch allocator: address map", "torch-maps");
        if (!document.getElementById("torch-map")) sec.id = "torch-map"; /* report.html#torch-map */
        for (const mp of maps) {
            if (mp.oom === null && maps.some((o) => o.oom !== null && o.device === mp.device && o.time_ns === mp.time_ns))
                continue; /* the fullest snapshot is an OOM's: drawn there */
            const o = mp.oom !== null ? ooms[mp.oom] : null;
            sec.append(el("h3", {
                class: o ? "torch-map oom-map" : "torch-map peak-map", text: o ?
                    `Device ${mp.device} at PyTorch's OOM #${mp.oom + 1} (${dur(mp.time_ns)}): ${bytes(mp.requested)} requested, verdict ${o.verdict}` :
                    `Device ${mp.device} at PyTorch's fullest snapshot (${dur(mp.time_ns)}): ${bytes(mp.drawn_allocated)} allocated in the segments drawn`
            }));
            let hole = null;
            const used = new Set();
            /* the large pool first (where a fragmentation OOM's requests go), each by address */
            const rows = mp.segs.slice().sort((a, b) => a[2] - b[2]).map(([addr, size, small, expandable, blocks]) => {
                const row = {
                    label: "0x" + addr.toString(16) + (small ? " s" : ""), size: size, cls: "tseg",
                    blocks: blocks.map(([off, bsz, req, state, si]) => {
                        const st = sites[si] || ["?", []];
                        if (state !== 0) used.add(st[0]);
                        return {
                            offset: off, size: bsz, free: state === 0,
                            color: state === 1 ? colorOf(st[0]) : state === 2 ? "#3d3d3d" : "",
                            cls: ["tfree", "talloc", "tpending"][state] || "tother", fcls: "tfree",
                            tip: `${TORCH_STATES[state] || "state " + state} ${bytes(bsz)} at 0x${(addr + off).toString(16)}` +
                                (state !== 0 && req ? `, requested ${bytes(req)}` : "") +
                                `\n${small ? "small" : "large"}-pool segment of ${bytes(size)}${expandable ? " (expandable)" : ""}` +
                                (state !== 0 ? `\n${st[0]}` + (st[1].length ? "\n" + st[1].map((f) => "  " + f).join("\n") : "") : "")
                        };
                    })
                };
                if (mp.requested && !hole) {
                    const b = row.blocks.find((b) => b.free && b.size === mp.largest_free && !!small === (mp.requested <= 2097152));
                    if (b) { hole = b; row.hole = { offset: b.offset, size: b.size }; }
                }
                return row;
            });
            const scale = Math.max(mp.requested, ...rows.map((r) => r.size));
            sec.append(legend([...[...used].slice(0, 10).map((s) => [colorOf(s), s]), ["#3d3d3d", "pending free (another stream)"],
                ["#eef1f5", "free"], ...(mp.requested ? [["#7a8599", "largest free block of the request's pool"], ["#c83a3a", "request"]] : [])]));
            drawRows(sec, rows, scale, `${mp.segments} segments, ${bytes(mp.bytes)} reserved` +
                (mp.requested ? `; largest free block ${bytes(mp.largest_free)}, request ${bytes(mp.requested)}` : "") +
                `; widths to scale (the widest row ${bytes(scale)})`, mp.requested || 0, o ? "torch-oom" : "torch-snap");
            const ot = mp.other;
            if (ot.segments)
                sec.append(el("p", {
                    class: "note tother", "data-segments": ot.segments, text: `Drawn: the ${mp.segs.length} largest of ${mp.segments} segments. ` +
                        `Aggregated, not drawn: ${ot.segments} smaller segments (${bytes(ot.bytes)}: ${bytes(ot.live_bytes)} live, ` +
                        `${bytes(ot.free_bytes)} free, in ${ot.blocks} blocks).`
                }));
        }
        if (ev.torch_ooms_not_drawn)
            sec.append(el("p", { class: "note", text: `${ev.torch_ooms_not_drawn} later allocator OOMs are not drawn (the page draws the first ${maps.filter((m) => m.oom !== null).length}).` }));
    }

    /* ---- peak breakdown: icicle and tables ---------------------------------------------------- */
    /* stacks: [[bytes, [frame, ...outermost first]], ...] (the timeline view's peak_stacks) */
    function icicle(parent, stacks) {
        const root = { name: "all", value: 0, kids: new Map() };
        for (const [b, frames] of stacks || []) {
            let node = root;
            root.value += b;
            for (const name of frames) {
                if (!node.kids.has(name)) node.kids.set(name, { name: name, value: 0, kids: new Map() });
                node = node.kids.get(name);
                node.value += b;
            }
        }
        if (!root.value) return;
        let depth = 0;
        (function d(n, k) { depth = Math.max(depth, k); for (const c of n.kids.values()) d(c, k + 1); })(root, 0);
        const W = 1180, rowH = 18, H = (depth + 1) * rowH + 4;
        const svg = sv("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "icicle" });
        (function draw(n, x0, w, k) {
            const g = sv("g", {}, svg);
            title(sv("rect", { x: x0, y: k * rowH, width: Math.max(0.5, w - 0.5), height: rowH - 1, fill: k ? colorOf(n.name) : "#8795ab", class: "frame" }, g),
                `${n.name}\n${bytes(n.value)} live at the peak (${(100 * n.value / root.value).toFixed(1)} %)`);
            if (w > 60) {
                const chars = Math.floor((w - 6) / 6.2);
                const label = n.name.length > chars ? n.name.slice(0, Math.max(0, chars - 1)) + "…" : n.name;
                sv("text", { x: x0 + 3, y: k * rowH + 13, text: label, style: "pointer-events:none" }, g);
            }
            let x = x0;
            for (const c of [...n.kids.values()].sort((a, b) => b.value - a.value)) {
                const cw = w * c.value / n.value;
                draw(c, x, cw, k + 1);
                x += cw;
            }
        })(root, 0, W, 0);
        parent.append(el("h3", { text: "By stack (icicle: outermost frame on top, width = bytes live at the peak)" }), svg);
    }
    function peakSection(parent, rep, ev) {
        const pb = rep.memory.peak_breakdown;
        const sec = card(parent, "What was live at the peak");
        if (!pb || !rep.memory.peak_bytes) {
            sec.append(el("p", { class: "note", text: "No device memory was live." }));
            return;
        }
        icicle(sec, ev ? ev.peak_stacks : []);
        const grid = el("div", { class: "grid2" });
        const share = (b) => pct(b / rep.memory.peak_bytes);
        grid.append(el("div", {}, el("h3", { text: "By call site" }), table(pb.by_site || [], [
            ["site", (s) => s.site, "name"], ["bytes", (s) => bytes(s.bytes), "num"], ["share", (s) => share(s.bytes), "num"], ["count", (s) => s.count, "num"]])));
        grid.append(el("div", {}, el("h3", { text: "By library" }), table(pb.by_library || [], [
            ["library", (s) => s.name, "name"], ["bytes", (s) => bytes(s.bytes), "num"], ["share", (s) => share(s.bytes), "num"]]),
        el("h3", { text: "By API" }), table(pb.by_api || [], [
            ["api", (s) => s.api, "name"], ["bytes", (s) => bytes(s.bytes), "num"], ["count", (s) => s.count, "num"]]),
        el("h3", { text: "By size class" }), table(pb.by_size_class || [], [
            ["class", (s) => s.class], ["bytes", (s) => bytes(s.bytes), "num"], ["count", (s) => s.count, "num"]])));
        sec.append(grid);
    }

    /* ---- GPU timeline ------------------------------------------------------------------------- */
    /* The timeline view's packed fields (docs/HTML.md): base64 of unsigned LEB128 varints. */
    function varints(b64) {
        const bin = atob(b64 || "");
        const out = [];
        let x = 0, mul = 1;
        for (let i = 0; i < bin.length; i++) {
            const b = bin.charCodeAt(i);
            x += (b & 127) * mul;
            if (b & 128) mul *= 128;
            else { out.push(x); x = 0; mul = 1; }
        }
        return out;
    }
    /* first index in the sorted array a with a[i] >= v */
    function lowerBound(a, v) {
        let lo = 0, hi = a.length;
        while (lo < hi) { const m = (lo + hi) >> 1; if (a[m] < v) lo = m + 1; else hi = m; }
        return lo;
    }
    /* The view decoded: per lane its busy ns per column as prefix sums; the exact activities of
     * the windows (sorted by start) and the time the windows cover exactly, as merged intervals. */
    function decodeTimeline(ev) {
        const cw = ev.col_ns, cols = ev.cols;
        const lanes = (ev.lanes || []).map(([device, stream, b]) => {
            const busy = varints(b), pre = new Float64Array(cols + 1);
            for (let i = 0; i < cols; i++) pre[i + 1] = pre[i] + (busy[i] || 0);
            return { device, stream, pre };
        });
        const v = varints(ev.detail), slotNs = cw * ev.slot_cols, slots = ev.slots || [];
        const n = v.length / 4;
        const act = { lane: new Uint16Array(n), kind: new Uint8Array(n), name: new Uint32Array(n), start: new Float64Array(n), dur: new Float64Array(n) };
        const cov = []; /* [start, end] merged */
        let k = 0, maxDur = 0;
        for (let j = 0; j < slots.length / 2; j++) {
            const cnt = slots[2 * j], cut = slots[2 * j + 1];
            let prev = j * slotNs;
            for (let i = 0; i < cnt; i++, k++) {
                act.lane[k] = v[4 * k]; act.name[k] = Math.floor(v[4 * k + 1] / 3); act.kind[k] = v[4 * k + 1] % 3;
                prev += v[4 * k + 2]; act.start[k] = prev; act.dur[k] = v[4 * k + 3];
                maxDur = Math.max(maxDur, act.dur[k]);
            }
            const s = j * slotNs, e = cut < 0 ? s + slotNs : s + cut;
            if (e <= s) continue;
            if (cov.length && cov[cov.length - 1][1] >= s) cov[cov.length - 1][1] = e;
            else cov.push([s, e]);
        }
        const covStarts = cov.map((c) => c[0]);
        let covered = 0;
        for (const [s, e] of cov) covered += e - s;
        /* the busy ns of lane l in [a, b), a column's busy spread evenly over it */
        function busyIn(l, a, b) {
            const at = (t) => {
                const x = Math.max(0, Math.min(cols, t / cw)), i = Math.floor(x);
                return i >= cols ? l.pre[cols] : l.pre[i] + (l.pre[i + 1] - l.pre[i]) * (x - i);
            };
            return at(b) - at(a);
        }
        /* [a, b) inside the exactly covered time */
        function isCovered(a, b) {
            const i = lowerBound(covStarts, a + 1) - 1;
            return i >= 0 && cov[i][0] <= a && cov[i][1] >= b;
        }
        return { cw, cols, lanes, act, n, maxDur, cov, covered, busyIn, isCovered };
    }
    const DRAW_MAX = 5000; /* exact activities drawn at once at most; past it, busy per pixel */
    function timeline(parent, rep, ev) {
        const tl = rep.timeline || {};
        const sec = card(parent, "GPU timeline");
        const devs = tl.devices || [];
        if (!devs.length || !ev) {
            sec.append(el("p", { class: "note", text: "No GPU activity was recorded (GPU timeline: " + ((rep.trace || {}).gpu_timeline || "unknown") + ")." }));
            return;
        }
        const D = decodeTimeline(ev);
        const host = ev.host || [], gaps = ev.gaps || [], longest = ev.longest || [];
        let t0 = Infinity, t1 = -Infinity;
        for (const d of devs) { t0 = Math.min(t0, d.first_ns); t1 = Math.max(t1, d.last_ns); }
        if (!(t1 > t0)) t1 = t0 + 1;
        /* lanes: per device its streams, an idle-gap lane; then a lane per host thread */
        const lanes = [];
        const laneIdx = new Map();
        for (const d of devs) {
            for (const s of d.streams || []) { laneIdx.set(d.device + ":" + s.stream, lanes.length); lanes.push({ label: `GPU ${d.device} stream ${s.stream}` }); }
            laneIdx.set(d.device + ":gaps", lanes.length); lanes.push({ label: `GPU ${d.device} idle gaps` });
        }
        const viewLane = D.lanes.map((l) => laneIdx.get(l.device + ":" + l.stream));
        /* the report's listed gaps name the host site that explains them */
        const gapSite = new Map();
        for (const d of devs) for (const gp of d.gaps || []) if (gp.site) gapSite.set(d.device + ":" + gp.start_ns, gp.site);
        for (const h of host) if (!laneIdx.has("t" + h[0])) { laneIdx.set("t" + h[0], lanes.length); lanes.push({ label: `host thread ${h[0]}` }); }
        const W = 1180, L = 150, R = 10, rowH = 20, T = 4, heatH = 14, covH = 6;
        const PW = W - L - R;
        const covY = T + lanes.length * rowH;
        const H = covY + covH + 4 + heatH * devs.length + 36;
        const svg = sv("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "timeline" });
        const clipId = "clip" + Math.floor(Math.random() * 1e9);
        const cp = sv("clipPath", { id: clipId }, sv("defs", {}, svg));
        sv("rect", { x: L, y: 0, width: PW, height: H }, cp);
        lanes.forEach((ln, i) => {
            sv("rect", { x: L, y: T + i * rowH, width: PW, height: rowH - 2, class: "lane" }, svg);
            sv("text", { x: L - 6, y: T + i * rowH + 13, "text-anchor": "end", class: "label", text: ln.label }, svg);
        });
        sv("text", { x: L - 6, y: covY + covH, "text-anchor": "end", class: "label", text: "exact detail", style: "font-size:9px" }, svg);
        const g = sv("g", { "clip-path": `url(#${clipId})`, class: "zoomable" }, svg);
        /* utilization strip: the whole run, busy share per window, white to dark */
        const ybase = covY + covH + 4;
        (tl.windows || []).forEach((wd, j) => {
            const y = ybase + j * heatH;
            sv("text", { x: L - 6, y: y + 11, "text-anchor": "end", class: "label", text: `GPU ${wd.device} busy (whole run)` }, svg);
            const d = devs.find((x) => x.device === wd.device) || devs[0];
            const sp = Math.max(1, d.last_ns - d.first_ns);
            for (const w of wd.windows) {
                const u = w.utilization === null ? 0 : w.utilization;
                const c = Math.round(255 - 200 * u);
                title(sv("rect", {
                    x: L + PW * (w.start_ns - d.first_ns) / sp, y: y, width: Math.max(PW * w.duration_ns / sp, 0.5), height: heatH - 2,
                    fill: `rgb(${c},${c + Math.round(20 * u)},255)`, class: "heat"
                }, svg), `${dur(w.start_ns)} +${dur(w.duration_ns)}: busy ${pct(u)}`);
            }
        });
        const axisY = H - 14;
        const ticks = sv("g", {}, svg);
        const note = el("p", { class: "note" });
        /* Draws [v0, v1]: exact activities where the windows cover the time and at most DRAW_MAX
         * of them are in view; elsewhere each lane's busy fraction per pixel column (from its
         * columns) as bars of 8 shades; the longest activities, the idle gaps and the host calls
         * kept, wherever they are. */
        function draw(v0, v1) {
            g.replaceChildren();
            ticks.replaceChildren();
            const k = PW / (v1 - v0), X = (t) => L + (t - v0) * k;
            const lo = lowerBound(D.act.start, v0 - D.maxDur), hi = lowerBound(D.act.start, v1 + 1);
            const inView = [];
            for (let i = lo; i < hi; i++) if (D.act.start[i] + D.act.dur[i] >= v0) inView.push(i);
            const exact = inView.length <= DRAW_MAX;
            for (const i of exact ? inView : []) {
                const r = viewLane[D.act.lane[i]];
                if (r === undefined) continue;
                const kd = D.act.kind[i], nm = ev.names[D.act.name[i]];
                title(sv("rect", {
                    x: X(D.act.start[i]), y: T + r * rowH + 2, width: Math.max(D.act.dur[i] * k, 0.3), height: rowH - 6,
                    fill: kd === 0 ? colorOf(nm) : KIND_COLORS[kd] || "#999", class: ["kernel", "memcpy", "memset"][kd] || "act", "data-t": D.act.start[i], "data-l": D.act.lane[i]
                }, g), `${nm}\nstart ${dur(D.act.start[i])}, ${dur(D.act.dur[i])}`);
            }
            /* busy per pixel column where the exact activities are not drawn */
            const dt = (v1 - v0) / PW;
            let aggregated = 0;
            D.lanes.forEach((l, li) => {
                const r = viewLane[li];
                if (r === undefined) return;
                let runStart = 0, runLevel = 0;
                const flush = (p) => {
                    if (runLevel > 0) {
                        aggregated++;
                        title(sv("rect", { x: L + runStart, y: T + r * rowH + 2, width: p - runStart, height: rowH - 6, fill: "#4e79a7", "fill-opacity": (0.1 + 0.9 * runLevel / 8).toFixed(3), class: "busy" }, g),
                            `stream ${l.stream}: busy about ${Math.round(100 * runLevel / 8)} % of ${dur(Math.round((p - runStart) * dt))} (aggregated)`);
                    }
                };
                for (let p = 0; p < PW; p++) {
                    const a = v0 + p * dt, b = a + dt;
                    let level = 0;
                    if (!(exact && D.isCovered(a, b))) {
                        const f = Math.min(1, D.busyIn(l, a, b) / dt);
                        level = f > 0 ? Math.max(1, Math.round(8 * f)) : 0;
                    }
                    if (level !== runLevel) { flush(p); runStart = p; runLevel = level; }
                }
                flush(PW);
            });
            /* the longest activities, where the exact ones are not drawn */
            for (const a of longest) {
                if (a[2] > v1 || a[2] + a[3] < v0 || (exact && D.isCovered(a[2], a[2] + 1))) continue;
                const r = viewLane[a[0]];
                if (r === undefined) continue;
                title(sv("rect", {
                    x: X(a[2]), y: T + r * rowH + 2, width: Math.max(a[3] * k, 0.5), height: rowH - 6,
                    fill: a[1] === 0 ? colorOf(ev.names[a[4]]) : KIND_COLORS[a[1]] || "#999", class: "longest"
                }, g), `${ev.names[a[4]]}\nstart ${dur(a[2])}, ${dur(a[3])} (one of the ${longest.length} longest)`);
            }
            for (const gp of gaps) {
                if (gp[1] > v1 || gp[1] + gp[2] < v0) continue;
                const i = laneIdx.get(gp[0] + ":gaps");
                if (i === undefined) continue;
                title(sv("rect", {
                    x: X(gp[1]), y: T + i * rowH + 2, width: Math.max(gp[2] * k, 0.5), height: rowH - 6,
                    fill: CAUSE_COLORS[gp[3]] || "#999", class: "gap"
                }, g), `idle ${dur(gp[2])}: ${gp[3]}` + (gapSite.has(gp[0] + ":" + gp[1]) ? "\n" + gapSite.get(gp[0] + ":" + gp[1]) : ""));
            }
            for (const h of host) {
                if (h[1] > v1 || h[1] + h[2] < v0) continue;
                const i = laneIdx.get("t" + h[0]);
                title(sv("rect", {
                    x: X(h[1]), y: T + i * rowH + 2, width: Math.max(h[2] * k, 0.5), height: rowH - 6,
                    fill: /Sync|Wait|Memcpy/.test(h[3]) ? "#f28e2b" : "#b07aa1", class: "hostcall"
                }, g), `${h[3]}: ${dur(h[2])} from ${dur(h[1])}`);
            }
            /* where the windows hold every activity */
            const ci = Math.max(0, lowerBound(D.cov.map((c) => c[1]), v0));
            for (let i = ci; i < D.cov.length && D.cov[i][0] <= v1; i++)
                sv("rect", { x: X(D.cov[i][0]), y: covY, width: Math.max((D.cov[i][1] - D.cov[i][0]) * k, 0.5), height: covH - 2, class: "exact-window" }, g);
            for (let i = 0; i <= 6; i++) {
                const t = v0 + (v1 - v0) * i / 6;
                sv("text", { x: L + PW * i / 6, y: axisY, "text-anchor": i === 0 ? "start" : i === 6 ? "end" : "middle", class: "label", text: dur(Math.round(t)) }, ticks);
            }
            svg.setAttribute("data-view", `${v0},${v1}`);
            svg.setAttribute("data-exact-drawn", exact ? inView.length : 0);
            svg.setAttribute("data-busy-bars", aggregated);
            note.textContent = `View ${dur(Math.round(v0))} to ${dur(Math.round(v1))}: ` +
                (exact ? `${inView.length} exact activities drawn` : `${inView.length} exact activities in view, more than ${DRAW_MAX}: busy fraction per pixel`) +
                (aggregated ? `; ${aggregated} busy bars where the exact detail was not kept (shade: busy share of the pixel, from the streams' ${D.cols} columns of ${dur(D.cw)})` : "") + ".";
        }
        /* zoom (wheel) and pan (drag) redraw [v0, v1]; the page's address can name a view:
         * #t=START_NS,END_NS */
        let v0 = t0, v1 = t1;
        const m = /#t=([0-9.]+),([0-9.]+)/.exec(location.hash || "");
        if (m && +m[2] > +m[1]) { v0 = Math.max(t0, +m[1]); v1 = Math.min(t1, +m[2]); if (!(v1 > v0)) { v0 = t0; v1 = t1; } }
        let pending = false;
        function apply() {
            if (pending) return;
            pending = true;
            requestAnimationFrame(() => { pending = false; draw(v0, v1); });
        }
        svg.addEventListener("wheel", (e) => {
            e.preventDefault();
            const box = svg.getBoundingClientRect();
            const fx = Math.max(0, Math.min(1, ((e.clientX - box.left) * W / box.width - L) / PW));
            const at = v0 + fx * (v1 - v0);
            const f = e.deltaY > 0 ? 1.25 : 0.8;
            const w = Math.min(t1 - t0, Math.max(100, (v1 - v0) * f));
            v0 = Math.max(t0, at - fx * w);
            v1 = Math.min(t1, v0 + w);
            v0 = v1 - w;
            apply();
        }, { passive: false });
        let drag = null;
        svg.addEventListener("mousedown", (e) => { drag = { x: e.clientX, v0: v0, v1: v1 }; });
        window.addEventListener("mouseup", () => { drag = null; });
        svg.addEventListener("mousemove", (e) => {
            if (!drag) return;
            const box = svg.getBoundingClientRect();
            const dt = (e.clientX - drag.x) * W / box.width / PW * (drag.v1 - drag.v0);
            const w = drag.v1 - drag.v0;
            v0 = Math.max(t0, Math.min(t1 - w, drag.v0 - dt));
            v1 = v0 + w;
            apply();
        });
        svg.addEventListener("dblclick", () => { v0 = t0; v1 = t1; apply(); });
        draw(v0, v1);
        const items = [["#4e79a7", "kernels (color by name)"], [KIND_COLORS[1], "copies"], [KIND_COLORS[2], "memsets"],
            ["#f28e2b", "host: synchronize / blocking copy"], ["#b07aa1", "host: allocation / free"]];
        for (const [c, col] of Object.entries(CAUSE_COLORS)) items.push([col, "idle: " + c.replace("_", " ")]);
        sec.append(legend(items), svg, note);
        const span = Math.max(1, t1 - t0);
        sec.append(el("p", {
            class: "note", text: `${ev.acts_total} GPU activities over the whole run: each stream's busy time in ${D.cols} columns of ${dur(D.cw)}; ` +
                `exact activities (${D.n}) in ${ev.slots.length / 2} windows spread over the run, covering ${pct(Math.min(1, D.covered / span))} of it (the strip "exact detail"; at most ${ev.slot_acts} activities per window kept); ` +
                `the ${longest.length} longest activities; ${gaps.length === ev.gaps_total ? `all ${gaps.length} idle gaps` : `the ${gaps.length} longest of ${ev.gaps_total} idle gaps (all of at least ${dur(Math.min(...gaps.map((x) => x[2])))})`}; ` +
                `the ${host.length} longest of ${ev.host_total} host blocking/allocation calls` +
                (ev.acts_no_lane ? `; ${ev.acts_no_lane} activities on streams past the first ${D.lanes.length} not charted` : "") +
                (ev.acts_outside ? `; ${ev.acts_outside} activities at impossible times left out` : "") +
                ". Wheel: zoom, drag: pan, double click: whole view. The busy strip covers the whole run."
        }));
    }

    /* ---- tables -------------------------------------------------------------------------------- */
    function gpuTables(parent, rep) {
        const tl = rep.timeline || {};
        const sec = card(parent, "GPU work and waiting");
        const devs = tl.devices || [];
        if (devs.length) {
            sec.append(el("h3", { text: "Devices" }), table(devs, [
                ["device", (d) => d.device], ["span", (d) => dur(d.span_ns), "num"], ["busy", (d) => dur(d.busy_ns), "num"],
                ["idle", (d) => dur(d.idle_ns), "num"], ["idle share", (d) => pct(d.idle_share), "num"],
                ["kernels", (d) => d.kernel_count, "num"], ["gaps", (d) => d.gap_count, "num"]]));
            const gaps = [];
            for (const d of devs) for (const gp of d.gaps || []) gaps.push(Object.assign({ device: d.device }, gp));
            gaps.sort((a, b) => b.duration_ns - a.duration_ns);
            sec.append(el("h3", { text: "Longest idle gaps, with what the host was doing" }), table(gaps.slice(0, 20), [
                ["device", (x) => x.device], ["at", (x) => dur(x.start_ns), "num"], ["idle", (x) => dur(x.duration_ns), "num"],
                ["cause", (x) => x.cause], ["host", (x) => x.host_call ? `${x.host_call.api} (${dur(x.host_call.overlap_ns)})` : x.launch ? `launch ${x.launch.api}` : "-"],
                ["site", (x) => x.site || "-", "name"], ["after", (x) => x.after ? x.after.name : "-", "name"]]));
        }
        sec.append(el("h3", { text: "Top kernels by GPU time" }), table((tl.top_kernels || []).slice(0, 20), [
            ["kernel", (x) => x.demangled || x.name, "name"], ["count", (x) => x.count, "num"], ["total", (x) => dur(x.total_ns), "num"],
            ["mean", (x) => dur(x.mean_ns), "num"], ["max", (x) => dur(x.max_ns), "num"]]));
        if ((tl.copies || []).length)
            sec.append(el("h3", { text: "Copies" }), table(tl.copies, [
                ["direction", (x) => x.kind || x.direction], ["count", (x) => x.count, "num"], ["bytes", (x) => bytes(x.bytes), "num"],
                ["time", (x) => dur(x.total_ns), "num"]]));
        sec.append(el("h3", { text: "Blocking calls by site" }), table((tl.sync_sites || []).slice(0, 20), [
            ["site", (x) => x.site, "name"], ["calls", (x) => x.count, "num"], ["time", (x) => dur(x.time_ns), "num"]]));
    }
    /* ---- the device state from NVML (device_state; docs/ANALYSES.md "Device state"): per
     * device the SM clock over time, the time below its maximum shaded with the clock-event
     * reasons NVML gave; the same time axis as the memory chart (margins and span), so the two
     * line up. Nothing for a trace without NVML records. ---------------------------------------- */
    function deviceState(parent, rep) {
        const st = rep.device_state;
        if (!st || st.nvml === "none") return;
        const sec = card(parent, "GPU clocks (NVML)", "devstate");
        if (st.nvml !== "available") {
            sec.append(el("p", { class: "note", text: `NVML ${st.nvml}: ${st.reason || "no reason given"}` }));
            return;
        }
        const ls = (rep.memory || {}).live_series;
        let span = ls && ls.buckets ? ls.bucket_ns * ls.buckets : (rep.process || {}).duration_ns || 0;
        for (const d of st.devices || []) for (const p of (d.series || {}).points || []) span = Math.max(span, p.time_ns);
        span = Math.max(span, 1);
        const W = 1180, H = 120, L = 70, R = 10, T = 8, B = 22;
        const x = (t) => L + (W - L - R) * Math.max(0, Math.min(1, t / span));
        const sampled = (st.devices || []).filter((d) => d.matched && d.samples);
        /* busy time below the maximum: only where the clock can be judged (a maximum, time between
         * samples); busy time that could not wait for the first sample may lie in that time */
        const busyText = (d) => !d.max_sm_mhz || !d.covered_ns ? "-" : !st.busy_known ? "unknown (no GPU timeline)"
            : d.busy_ns ? pct(d.slow_busy_ns / d.busy_ns) : d.busy_unsampled_ns ? "unknown (busy time left out)" : "no GPU work";
        const slowText = (d) => d.max_sm_mhz && d.covered_ns ? pct(d.slow_ns / d.covered_ns) : "-";
        for (const d of sampled) {
            const all = (d.series || {}).points || [], per = (d.series || {}).samples_per_point || 1;
            const has = (p) => p.sm_mhz !== null && p.sm_mhz !== undefined;
            const pts = all.filter(has);
            const ymax = Math.max(1, d.max_sm_mhz || 0, ...pts.map((p) => p.sm_mhz));
            const y = (v) => T + (H - T - B) * (1 - v / ymax);
            const svg = sv("svg", { viewBox: `0 0 ${W} ${H}`, class: "clockchart", width: W, height: H, "data-device": d.device,
                "data-x0": x(0), "data-x1": x(span), "data-span": span, "data-y0": y(0), "data-ymax": ymax, "data-ymax-px": y(ymax) });
            for (const v of [0, ymax / 2, ymax]) {
                sv("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "axis" }, svg);
                sv("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "label", text: Math.round(v) + " MHz" }, svg);
            }
            for (let i = 0; i <= 5; i++)
                sv("text", { x: x(span * i / 5), y: H - 6, "text-anchor": i === 5 ? "end" : i ? "middle" : "start", class: "label", text: dur(Math.round(span * i / 5)) }, svg);
            /* an interval takes the state of the sample that begins it, to the next sample (one
             * without an SM clock is never slow); a merged point (samples_per_point > 1) has its
             * samples' lowest clock: at least one of them was below the maximum */
            all.forEach((p, i) => {
                if (i + 1 >= all.length || !d.max_sm_mhz || !has(p) || p.sm_mhz >= d.max_sm_mhz) return;
                const q = all[i + 1];
                if (q.time_ns <= p.time_ns) return; /* (samples at one time: no interval) */
                title(sv("rect", { x: x(p.time_ns), y: T, width: Math.max(0.5, x(q.time_ns) - x(p.time_ns)), height: H - T - B, class: "slow",
                    "data-time": p.time_ns, "data-end": q.time_ns, "data-mhz": p.sm_mhz }, svg),
                    (per > 1 ? `SM clock down to ${p.sm_mhz} MHz in some of ${per} samples` : `SM clock ${p.sm_mhz} MHz`) +
                    ` (maximum ${d.max_sm_mhz}) from ${dur(p.time_ns)} to ${dur(q.time_ns)}` +
                    (p.reasons && p.reasons.length ? "\nNVML's reasons: " + p.reasons.join(", ") : ""));
            });
            if (d.max_sm_mhz)
                sv("line", { x1: L, x2: W - R, y1: y(d.max_sm_mhz), y2: y(d.max_sm_mhz), class: "max-clock" }, svg);
            /* the step line: a sample's clock holds to the next sample; the line breaks after a
             * sample without an SM clock (its interval's clock is unknown). A sample with a clock
             * and no next sample, after one without (or alone), is a dot */
            let path = "";
            const dots = [];
            all.forEach((p, i) => {
                if (!has(p)) return;
                const joined = i > 0 && has(all[i - 1]), next = all[i + 1];
                path += joined ? ` L ${x(p.time_ns)} ${y(all[i - 1].sm_mhz)} L ${x(p.time_ns)} ${y(p.sm_mhz)}` : ` M ${x(p.time_ns)} ${y(p.sm_mhz)}`;
                if (next && !has(next)) path += ` H ${x(next.time_ns)}`;
                else if (!next && !joined) dots.push(p);
            });
            path = path.trim();
            const what = `device ${d.device}: SM clock at each NVML sample` + (per > 1 ? ` (the lowest of ${per} samples per point)` : "");
            if (path)
                title(sv("path", { d: path, class: "sm-clock", "data-points": pts.length }, svg), what);
            for (const p of dots)
                title(sv("circle", { cx: x(p.time_ns), cy: y(p.sm_mhz), r: 2.5, class: "sm-point", "data-time": p.time_ns, "data-mhz": p.sm_mhz }, svg),
                    `${what}: ${p.sm_mhz} MHz at ${dur(p.time_ns)}, the last sample`);
            const left = [];
            if (d.busy_not_laid_ns) left.push(`${dur(d.busy_not_laid_ns)} of busy time after the samples stopped`);
            if (d.busy_unsampled_ns) left.push(`up to ${dur(d.busy_unsampled_ns)} of busy time that could not wait for the first sample`);
            sec.append(el("h3", { text: !d.covered_ns ? `Device ${d.device}: ${d.samples} NVML sample${d.samples > 1 ? "s" : ""} at one time: no time between samples to judge the clock by`
                : d.max_sm_mhz ? `Device ${d.device}: SM clock below its maximum (${d.max_sm_mhz} MHz) for ${slowText(d)} of ${dur(d.covered_ns)}; busy time below it: ${busyText(d)}`
                : `Device ${d.device}: maximum SM clock unknown, ${dur(d.covered_ns)} sampled` }),
                ...(left.length ? [el("p", { class: "note left-out", text: "Not counted above: " + left.join("; ") + "." })] : []),
                legend([["#c83a3a55", per > 1 ? `below the maximum SM clock in some of the ${per} samples a point stands for (hover: NVML's reasons)` : "below the maximum SM clock (hover: NVML's reasons)"],
                    ["#2f6fdb", per > 1 ? `SM clock (the lowest of ${per} samples)` : "SM clock"]]), svg);
        }
        sec.append(table(st.devices || [], [
            ["device", (d) => d.device], ["NVML", (d) => d.matched ? `${d.nvml_index} ${d.uuid}` : "no NVML device has its UUID", "name"],
            ["samples", (d) => d.samples, "num"], ["covered", (d) => dur(d.covered_ns), "num"],
            ["below max clock", slowText, "num"],
            ["busy below max", busyText, "num"],
            ["lowest SM", (d) => d.min_sm_mhz ? d.min_sm_mhz + " MHz" : "-", "num"],
            ["hottest", (d) => d.max_temp_c ? d.max_temp_c + " C" : "-", "num"],
            ["power (limit)", (d) => d.max_power_mw ? `${(d.max_power_mw / 1000).toFixed(1)} W` + (d.power_limit_mw ? ` (${(d.power_limit_mw / 1000).toFixed(1)} W)` : "") : "-", "num"]], "devstate-table"));
        const reasons = [];
        for (const d of sampled) for (const r of d.reasons || []) reasons.push(Object.assign({ device: d.device, busy_ns: d.busy_ns, left_ns: d.busy_unsampled_ns }, r));
        if (reasons.length)
            sec.append(el("h3", { text: "Time below the maximum clock by NVML's reason (a slow interval may have several)" }), table(reasons, [
                ["device", (r) => r.device], ["reason", (r) => r.reason.replace(/_/g, " ")], ["slow time", (r) => dur(r.slow_ns), "num"],
                ["busy while slow", (r) => !st.busy_known || (!r.busy_ns && r.left_ns) ? "unknown" : r.busy_ns ? dur(r.slow_busy_ns) : "no GPU work", "num"]]));
        const kern = [];
        for (const d of sampled) for (const k of d.slow_kernels || []) kern.push(Object.assign({ device: d.device }, k));
        kern.sort((a, b) => b.extra_ns - a.extra_ns); /* the most time lost first, over the devices */
        if (kern.length)
            sec.append(el("h3", { text: "Kernels slower below the maximum clock" }), table(kern.slice(0, 20), [
                ["device", (k) => k.device], ["kernel", (k) => k.name, "name"], ["below: runs", (k) => k.slow_count, "num"], ["mean", (k) => dur(k.slow_mean_ns), "num"],
                ["at max: runs", (k) => k.full_count, "num"], ["mean", (k) => dur(k.full_mean_ns), "num"], ["time lost", (k) => dur(k.extra_ns), "num"]]));
    }
    function oomTable(parent, rep) {
        const ooms = rep.memory.ooms || [];
        if (!ooms.length) return;
        const sec = card(parent, "Out-of-memory failures", "ooms");
        sec.append(table(ooms, [
            ["at", (o) => dur(o.time_ns), "num"], ["request", (o) => bytes(o.requested_bytes), "num"], ["verdict", (o) => o.verdict],
            ["device free", (o) => bytes(o.free_bytes), "num"], ["held", (o) => bytes(o.held_bytes), "num"],
            ["others", (o) => bytes(o.others_bytes), "num"], ["site", (o) => o.site ? o.site.site : "-", "name"], ["advice", (o) => o.advice || "", "name"]]));
    }
    function ranksTable(parent, cross) {
        const sec = card(parent, "Ranks");
        const st = cross.straggler ? cross.straggler.rank : -1;
        const rows = cross.ranks.map((r, i) => Object.assign({ _class: i === st ? "straggler" : "" }, r, { i: i }));
        sec.append(table(rows, [
            ["rank", (r) => r.i], ["trace", (r) => r.path, "name"], ["start", (r) => dur(r.start_time_ns), "num"], ["duration", (r) => dur(r.duration_ns), "num"],
            ["GPU idle share", (r) => r.gpu ? pct(r.gpu.idle_share) : "-", "num"], ["waiting", (r) => dur(r.wait_ns), "num"],
            ["peak", (r) => bytes(r.peak_bytes), "num"], ["top idle cause", (r) => r.top_idle_cause ? r.top_idle_cause.cause : "-"]]));
        if (st >= 0) sec.append(el("p", { class: "note", text: `Rank ${st} is the straggler: the others wait for it (${dur(cross.straggler.margin_ns)} margin).` }));
    }

    /* ---- one process ---------------------------------------------------------------------------- */
    function processView(parent, rep, ev, label) {
        const p = rep.process || {}, m = rep.memory || {}, tl = rep.timeline || {};
        parent.append(el("h1", { text: label }),
            el("p", { class: "sub", text: (p.cmdline || []).join(" ") + (p.host ? "  on " + p.host : "") + "  -  " + (rep.trace || {}).path }));
        const cards = el("div", { class: "cards" });
        stat(cards, dur(p.duration_ns), "traced");
        stat(cards, bytes(m.peak_bytes), "peak device memory at " + dur(m.peak_time_ns));
        stat(cards, bytes(m.leaked_bytes), "still allocated at exit", m.leaked_bytes > 0);
        stat(cards, String((m.ooms || []).length), "failed allocations", (m.ooms || []).length > 0);
        for (const d of tl.devices || []) stat(cards, pct(d.idle_share), `GPU ${d.device} idle`, d.idle_share > 0.5);
        stat(cards, String(tl.kernel_count || 0), "kernels");
        parent.append(cards);
        if ((rep.trace || {}).truncated) parent.append(el("p", { class: "note", text: "The trace was cut short: " + rep.trace.truncation }));
        memoryChart(parent, rep);
        tierChart(parent, rep);
        addressMaps(parent, rep);
        torchMaps(parent, rep, ev);
        peakSection(parent, rep, ev);
        timeline(parent, rep, ev);
        gpuTables(parent, rep);
        deviceState(parent, rep);
        oomTable(parent, rep);
    }

    function main() {
        const data = JSON.parse(document.getElementById("gt-data").textContent);
        const events = JSON.parse(document.getElementById("gt-events").textContent);
        const page = document.getElementById("gt-page");
        page.replaceChildren();
        if (data.processes) {
            page.append(el("h1", { text: `gputrace: ${data.processes.length} processes` }));
            ranksTable(page, data.cross);
            data.processes.forEach((rep, i) => {
                const d = el("details", i === 0 ? { open: "" } : {}, el("summary", { text: `rank ${i}: ${rep.trace.path}` }));
                page.append(d);
                processView(d, rep, events[i], `Rank ${i}`);
            });
        } else {
            processView(page, data, events[0], "gputrace report");
        }
        page.setAttribute("data-drawn", "1");
        /* from navigation start to drawn: what opening the page costs (the tests read it) */
        page.setAttribute("data-draw-ms", String(Math.round(performance.now())));
    }
    try {
        main();
    } catch (e) {
        showError((e && e.stack) || String(e));
    }
})();
