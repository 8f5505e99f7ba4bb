/**
 * The two static files of `logbook serve`, shipped inside the package as strings (no CDN, nothing
 * fetched at run time, nothing to locate on disk after bundling): the stylesheet, and a small
 * plain script for search-as-you-type and the live view. The script only ever inserts HTML the
 * server rendered (where every recorded string is escaped); it never builds markup from data.
 */

/** `/assets/app.css`. */
export const APP_CSS = `
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
a{color:#1849a9}
nav.top{background:#1d2330;padding:10px 24px;display:flex;gap:18px;align-items:center}
nav.top a{color:#c7cbd4;text-decoration:none}nav.top a.on,nav.top a:hover{color:#fff}
nav.top .brand{color:#fff;font-weight:700;margin-right:12px}
main{padding:12px 24px 40px;max-width:1400px}
main.narrow{max-width:720px}
h1{font-size:20px;margin:8px 0 12px;word-break:break-all}
h2{font-size:15px;margin:4px 0 8px;color:#475467}
.filters{display:flex;gap:8px;flex-wrap:wrap;margin:0 0 10px}
.filters input[type=search]{min-width:320px;padding:6px 8px;border:1px solid #c4c9d2;border-radius:4px}
.filters select,.filters button{padding:5px 8px}
table.sessions{border-collapse:collapse;width:100%;background:#fff;border:1px solid #dde1e8}
table.sessions td,table.sessions th{text-align:left;padding:5px 8px;border-bottom:1px solid #eef0f3;vertical-align:top}
table.sessions th a{color:#475467;text-decoration:none}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.goal{max-width:460px;overflow-wrap:anywhere}
.time{color:#596170;font-size:12px;white-space:nowrap}
.muted{color:#6b7280}
.pager{color:#475467;display:flex;gap:14px;align-items:center}
.st{font-weight:600}.st-completed{color:#067647}.st-failed{color:#b42318}.st-active{color:#b54708}
.live{background:#fef0c7;color:#93370d;border-radius:3px;padding:0 5px;font-size:12px}
.layout{display:flex;align-items:flex-start}
aside.turns{position:sticky;top:0;max-height:100vh;overflow:auto;width:150px;flex:none;padding:12px 8px 12px 20px}
aside.turns h3{font-size:13px;margin:6px 0}aside.turns ol{list-style:none;padding:0;margin:0;font-size:13px}
main.conversation{flex:1;min-width:0}
section.turn{background:#fff;border:1px solid #dde1e8;border-radius:6px;margin:12px 0;padding:8px 14px}
.ev{margin:6px 0;padding:4px 6px;border-left:3px solid transparent;overflow-wrap:anywhere}
.ev:target,.ev.hl{border-left-color:#f79009;background:#fffaeb}
.msg .who{font-size:12px;color:#596170;margin-bottom:2px}
.msg.user pre.text{background:#eef4ff}
pre{white-space:pre-wrap;word-break:break-all;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;background:#f6f7f9;padding:8px;margin:4px 0;max-height:480px;overflow:auto}
pre.text{font:13px/1.45 system-ui,sans-serif}
code{font:12px ui-monospace,Menlo,Consolas,monospace}
.badge{font-size:12px;border-radius:3px;padding:0 5px;background:#eef0f3}
.badge.ok{background:#dcfae6;color:#067647}.badge.bad{background:#fee4e2;color:#b42318}
.error{color:#b42318}
.end{color:#475467;font-size:13px}
.usage{color:#596170;font-size:12px;margin-left:8px}
.compaction{text-align:center;color:#6b7280;font-style:italic}
pre.diff .add{color:#067647}pre.diff .del{color:#b42318}pre.diff .hunk{color:#6941c6}
.cut{font-size:12px;color:#6b7280}
details>summary{cursor:pointer;color:#475467}
ol.hits{list-style:none;padding:0}
.hit{background:#fff;border:1px solid #dde1e8;border-radius:6px;margin:8px 0;padding:8px 12px}
.hit a{text-decoration:none;display:block}
.hit-session{display:block;font-weight:600}
.hit-snippet{display:block;color:#1d2330;white-space:pre-wrap;overflow-wrap:anywhere}
.score{font-size:12px}
section.chart{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:10px;margin:0 0 14px}
svg.usage-chart text{font:11px system-ui,sans-serif;fill:#1d2330}
`

/** `/assets/app.js`: search as you type, live updates, opening a highlighted event's collapsed parts. */
export const APP_JS = `"use strict";
(function () {
  function onReady(f) { if (document.readyState !== "loading") f(); else document.addEventListener("DOMContentLoaded", f); }
  function fragment(html) { var t = document.createElement("template"); t.innerHTML = html; return t.content; }
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (id.indexOf("ev-") !== 0) return;
    var el = document.getElementById(id);
    if (!el) return;
    el.classList.add("hl");
    var d = el.querySelectorAll("details");
    for (var i = 0; i < d.length; i++) d[i].open = true;
    el.scrollIntoView({ block: "center" });
  }
  function search() {
    var q = document.getElementById("search-q");
    var scope = document.getElementById("search-scope");
    var results = document.getElementById("results");
    if (!q || !scope || !results) return;
    var timer = null, seq = 0;
    function run() {
      var mine = ++seq;
      var params = new URLSearchParams({ q: q.value, scope: scope.value });
      fetch("/search/results?" + params.toString(), { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
        .then(function (html) {
          if (mine !== seq) return;
          results.replaceChildren(fragment(html));
          history.replaceState(null, "", "/search?" + params.toString());
        })
        .catch(function () {});
    }
    q.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(run, 120); });
    scope.addEventListener("change", run);
  }
  function live() {
    var box = document.getElementById("live");
    if (!box || !box.dataset.live || typeof EventSource === "undefined") return;
    var source = new EventSource(box.dataset.live);
    var current = null;
    source.addEventListener("ev", function (m) {
      var data = JSON.parse(m.data);
      if (data.turnStart) {
        current = document.createElement("section");
        current.className = "turn";
        current.id = "turn-" + String(data.turn);
        var title = document.createElement("h2");
        title.textContent = "Turn " + String(data.turn);
        current.appendChild(title);
        box.appendChild(current);
      }
      (current || box).appendChild(fragment(data.html));
    });
  }
  onReady(function () { reveal(); search(); live(); });
  window.addEventListener("hashchange", reveal);
})();
`
