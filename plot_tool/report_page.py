"""The report's HTML page (see `plot_tool.report`): plotly.js and report.js inlined, the data and
the plotly script gzip-compressed and base64-encoded, the summary tables as HTML.
"""
from __future__ import annotations

import base64
import gzip
import html
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

_ASSET = Path(__file__).with_name("report.js")


def _packed(text: str) -> str:
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)).decode()


_PLOTLY_CACHE: dict[str, str] = {}


def _plotly_packed() -> str:
    """plotly.js, gzip-compressed and base64-encoded (computed once per process)."""
    if "js" not in _PLOTLY_CACHE:
        from plotly.offline import get_plotlyjs  # only here: runs without a report never pay

        _PLOTLY_CACHE["js"] = _packed(get_plotlyjs())
    return _PLOTLY_CACHE["js"]


def _tables_html(tables: Iterable[Mapping[str, Any]]) -> str:
    parts = []
    for t in tables:
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in t["columns"])
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
                       for row in t["rows"])
        parts.append(f"<h3>{html.escape(t['title'])}</h3><table class=\"summary\">"
                     f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    return "\n".join(parts)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:16px 24px;color:#222}
h1{font-size:1.4em;margin:0 0 4px} h2{font-size:1.15em;margin:18px 0 6px} h3{font-size:1em}
.muted{color:#666;font-size:.9em}
#controls{display:flex;align-items:center;gap:12px;margin:6px 0}
#slider{flex:1}
#time{font-variant-numeric:tabular-nums;min-width:9em}
table.summary{border-collapse:collapse;font-size:.85em;margin-bottom:8px}
table.summary td,table.summary th{border:1px solid #ddd;padding:2px 8px;text-align:right}
table.summary td:first-child,table.summary th:first-child{text-align:left}
#runs-wrap{max-height:480px;overflow:auto}
#status{color:#a00}
button{font-size:1em;padding:2px 12px}
"""


def render_page(data: Mapping[str, Any]) -> str:
    """The HTML page: inlined plotly.js and report.js, the data packed."""
    title = html.escape(str(data.get("title", "netsim")))
    if data["kind"] == "run":
        body = f"""
<h1>netsim run: {title}</h1>
<div class="muted">{html.escape(data.get("check") or "")}</div>
<div id="status">loading…</div>
<h2>Network</h2>
<div class="muted">Links coloured by utilization, bars beside them: buffer occupancy of each
direction (at the sending end); ✕ a link losing packets because it is down; dotted lines: the
route of each flow: with ECMP flow hashing under static routing the path its hash picked, with
packet spraying or Bellman-Ford every equal-cost path it may take (click a flow in the legend to
hide it). Click a link (its label) or a flow
route to show or hide its time series below.</div>
<div id="topology" style="height:560px"></div>
<div id="controls"><button id="play" type="button">▶ Play</button>
<input id="slider" type="range" min="0" max="0" value="0" step="1"><span id="time"></span></div>
<h2>Time series</h2>
<div class="muted" id="selection"></div>
<div id="series" style="height:900px"></div>
<h2>Summary</h2>
{_tables_html(data.get("tables", []))}
"""
    else:
        runs = data["runs"]
        body = f"""
<h1>netsim sweep: {title}</h1>
<div class="muted">{html.escape(data.get("description", ""))}</div>
<div id="status">loading…</div>
<div id="charts"></div>
<h2>Runs ({len(runs["rows"])}, {data.get("failed", 0)} failed)</h2>
<div id="runs-wrap">{_tables_html([{"title": "", **runs}])}</div>
"""
    script = _ASSET.read_text(encoding="utf-8")
    packed_data = _packed(json.dumps(data, separators=(",", ":"), allow_nan=False))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>netsim report: {title}</title>
<style>{_CSS}</style></head>
<body>
{body}
<script id="netsim-data" type="application/octet-stream">{packed_data}</script>
<script id="plotly-packed" type="application/octet-stream">{_plotly_packed()}</script>
<script>
{script}
</script>
</body></html>
"""
