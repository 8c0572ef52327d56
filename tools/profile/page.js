// Draws the profile embedded in #profile-data: the timeline as SVG (one
// row per track, one under it for the track's sampled VM stack), then the
// tables. Spans narrower than a pixel that touch are drawn as one bar, so
// a view costs at most a few bars per pixel column and row.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("profile-data").textContent);
  var NS = "http://www.w3.org/2000/svg";
  var LABEL_W = 230, BAR_H = 14, ROW_GAP = 6, AXIS_H = 20;
  var svg = document.getElementById("timeline");
  var view = document.getElementById("view");
  var end = Math.max(data.elapsed_us, 1);
  data.spans.forEach(function (s) { end = Math.max(end, s[4] + s[5]); });
  data.sampled.forEach(function (s) { end = Math.max(end, s[3] + s[4]); });
  var t0 = 0, t1 = end;

  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) {
    return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" }[c]; }); }
  function fmtUs(us) {
    if (us >= 1e6) return (us / 1e6).toFixed(3) + " s";
    if (us >= 1e3) return (us / 1e3).toFixed(3) + " ms";
    return us.toFixed(1) + " us";
  }

  // Rows: each track, then its sampled stack when it has one.
  var rows = [];
  data.track_order.forEach(function (k) {
    var label = data.tracks[k];
    var spans = data.spans.filter(function (s) { return s[0] === k; });
    var depth = 0;
    spans.forEach(function (s) { depth = Math.max(depth, s[1] + 1); });
    if (spans.length) rows.push({ label: label, spans: spans, depth: depth, sampled: false });
    var sampled = data.sampled.filter(function (s) { return s[0] === k; });
    var sdepth = 0;
    sampled.forEach(function (s) { sdepth = Math.max(sdepth, s[1] + 1); });
    if (sampled.length) rows.push({ label: label + ": VM (sampled)", spans: sampled, depth: Math.min(sdepth, 24), sampled: true });
  });
  rows.forEach(function (r) {
    r.spans.sort(function (a, b) { return r.sampled ? a[3] - b[3] : a[4] - b[4]; });
  });

  function spanInfo(r, s) {
    if (r.sampled) {
      var f = data.frames[s[2]] || ["?", null];
      return { cat: "vm", start: s[3], dur: s[4], depth: s[1],
               title: f[0] + (f[1] ? " @ " + f[1] : "") + " (" + fmtUs(s[4]) + ")" };
    }
    var name = data.names[s[3]] || "?";
    var title = name + " [" + s[2] + "] " + fmtUs(s[5]);
    if (s[6] >= 0) {
      var site = data.sites[s[6]];
      if (site) title += "\n" + site[0] + "::" + site[1] + " workgroups " + site[2] + (site[3] ? "\n" + site[3] : "");
    }
    return { cat: s[2], start: s[4], dur: s[5], depth: s[1], title: title };
  }

  function draw() {
    var width = Math.max(view.clientWidth, 600);
    var plot = width - LABEL_W;
    var scale = plot / Math.max(t1 - t0, 1e-3);
    var y = AXIS_H;
    var parts = [];
    // Axis: ten ticks.
    for (var i = 0; i <= 10; i++) {
      var t = t0 + (t1 - t0) * i / 10;
      var x = LABEL_W + plot * i / 10;
      parts.push('<line x1="' + x + '" x2="' + x + '" y1="0" y2="' + AXIS_H + '" stroke="#aaa"/>');
      parts.push('<text x="' + (x + 2) + '" y="12">' + esc(fmtUs(t)) + '</text>');
    }
    var bars = 0;
    rows.forEach(function (r, k) {
      var h = r.depth * BAR_H;
      parts.push('<g class="track" data-label="' + esc(r.label) + '">');
      parts.push('<rect class="row' + (k % 2 ? " odd" : "") + '" x="0" y="' + y + '" width="' + width + '" height="' + h + '"/>');
      parts.push('<text class="label" x="4" y="' + (y + 11) + '">' + esc(r.label) + '</text>');
      // Per depth: the last bar drawn, extended while spans touch it.
      var last = {};
      function flush(d) {
        var b = last[d];
        if (!b) return;
        parts.push('<rect class="span cat-' + b.cat + '" x="' + b.x0.toFixed(1) + '" y="' + (y + d * BAR_H + 1) +
          '" width="' + Math.max(b.x1 - b.x0, 0.5).toFixed(1) + '" height="' + (BAR_H - 2) + '"><title>' +
          esc(b.n > 1 ? b.n + " spans; the first: " + b.title : b.title) + '</title></rect>');
        if (b.x1 - b.x0 > 40) {
          parts.push('<text x="' + (b.x0 + 2).toFixed(1) + '" y="' + (y + d * BAR_H + 11) + '" clip-path="none">' +
            esc(b.label.slice(0, Math.floor((b.x1 - b.x0) / 6.5))) + '</text>');
        }
        bars++;
        delete last[d];
      }
      r.spans.forEach(function (s) {
        var info = spanInfo(r, s);
        if (info.depth >= r.depth) return;
        if (info.start + info.dur < t0 || info.start > t1) return;
        var x0 = LABEL_W + Math.max(info.start - t0, 0) * scale;
        var x1 = LABEL_W + Math.min(info.start + info.dur - t0, t1 - t0) * scale;
        var b = last[info.depth];
        if (b && x1 - x0 < 1 && b.x1 - b.x0 < 1 && x0 - b.x1 < 1 && b.cat === info.cat) {
          b.x1 = Math.max(b.x1, x1); b.n++; return;
        }
        flush(info.depth);
        var label = info.title.split(" [")[0].split(" (")[0].split(" @ ")[0];
        last[info.depth] = { x0: x0, x1: x1, cat: info.cat, title: info.title, label: label, n: 1 };
      });
      Object.keys(last).forEach(function (d) { flush(+d); });
      parts.push('</g>');
      y += h + ROW_GAP;
    });
    svg.setAttribute("width", width);
    svg.setAttribute("height", y);
    svg.setAttribute("data-bars", bars);
    svg.innerHTML = parts.join("");
    document.getElementById("range").textContent = " showing " + fmtUs(t0) + " to " + fmtUs(t1);
  }

  function zoom(factor, at) {
    var mid = at === undefined ? (t0 + t1) / 2 : at;
    var nt0 = mid - (mid - t0) * factor, nt1 = mid + (t1 - mid) * factor;
    t0 = Math.max(0, nt0); t1 = Math.min(end, Math.max(nt1, t0 + 0.01));
    draw();
  }
  document.getElementById("zoom-in").onclick = function () { zoom(0.5); };
  document.getElementById("zoom-out").onclick = function () { zoom(2); };
  document.getElementById("reset").onclick = function () { t0 = 0; t1 = end; draw(); };
  view.addEventListener("wheel", function (e) {
    e.preventDefault();
    var rect = view.getBoundingClientRect();
    var x = e.clientX - rect.left - LABEL_W;
    var at = t0 + (t1 - t0) * Math.max(0, x) / Math.max(rect.width - LABEL_W, 1);
    zoom(e.deltaY < 0 ? 0.8 : 1.25, at);
  }, { passive: false });
  var dragging = null;
  view.addEventListener("mousedown", function (e) { dragging = { x: e.clientX, t0: t0, t1: t1 }; });
  window.addEventListener("mouseup", function () { dragging = null; });
  window.addEventListener("mousemove", function (e) {
    if (!dragging) return;
    var per = (dragging.t1 - dragging.t0) / Math.max(view.clientWidth - LABEL_W, 1);
    var shift = (dragging.x - e.clientX) * per;
    shift = Math.max(-dragging.t0, Math.min(end - dragging.t1, shift));
    t0 = dragging.t0 + shift; t1 = dragging.t1 + shift;
    draw();
  });
  window.addEventListener("resize", draw);

  var summary = esc(data.tool) + " " + esc(data.modules) + (data.called ? " (" + esc(data.called) + ")" : "") +
    ", " + esc(data.device) + ": " + fmtUs(data.elapsed_us) + " recorded, " + data.spans.length + " spans";
  if (data.dropped) {
    summary += "; the timeline kept the first events recorded and left out " + data.dropped + " later ones";
  }
  if (data.page_dropped) {
    summary += "; this page draws the longest spans and leaves out " + data.page_dropped + " shorter ones";
  }
  document.getElementById("summary").innerHTML = summary;
  var cats = ["invocation", "host", "wait", "dispatch", "workgroups", "barrier", "transfer", "compile", "vm"];
  document.getElementById("legend").innerHTML = cats.map(function (c) {
    return '<span><i class="cat-' + c + '" style="background:currentColor"></i>' + c + '</span>';
  }).join("");
  // The legend's swatches take their colour from the SVG classes' fill.
  Array.prototype.forEach.call(document.querySelectorAll("#legend i"), function (i) {
    i.style.background = getComputedStyle(i).fill;
  });

  var all = 0;
  data.ranked.forEach(function (r) { all += r[3]; });
  var body = document.querySelector("#dispatches tbody");
  body.innerHTML = data.ranked.map(function (r, k) {
    return "<tr><td class=num>" + (k + 1) + "</td><td class=num>" + (r[3] / 1e3).toFixed(3) +
      "</td><td class=num>" + (100 * r[3] / Math.max(all, 1e-9)).toFixed(1) + "%</td><td class=num>" + r[2] +
      "</td><td class=num>" + (r[3] / Math.max(r[2], 1)).toFixed(2) + "</td><td>" + esc(r[0]) + "</td><td>" + esc(r[1]) + "</td></tr>";
  }).join("") || "<tr><td colspan=7>no dispatches</td></tr>";
  var fbody = document.querySelector("#functions tbody");
  fbody.innerHTML = data.functions.map(function (f) {
    var total = Math.max(data.vm_total_us, 1e-9);
    return "<tr><td class=num>" + (f[1] / 1e3).toFixed(3) + "</td><td class=num>" + (100 * f[1] / total).toFixed(1) +
      "%</td><td class=num>" + (f[2] / 1e3).toFixed(3) + "</td><td class=num>" + (100 * f[2] / total).toFixed(1) +
      "%</td><td>" + esc(f[0]) + "</td></tr>";
  }).join("") || "<tr><td colspan=5>no samples</td></tr>";
  draw();
})();
