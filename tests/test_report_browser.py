"""report.html in a real browser: headless Chromium driven by selenium (Debian's ``chromium`` and
``chromium-driver``; .ci/run installs them). Skipped, with the reason, when they are missing.

Also the screenshots of the README and docs/report.md:

    python tests/test_report_browser.py --screenshots     # -> docs/figures/report_tc1.png, _tc2
"""
from __future__ import annotations

import csv
import json
import shutil
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")


def browser(width: int = 1400, height: int = 1900, offline: bool = True):
    """A headless Chromium; `offline`: every host name fails to resolve and the proxy is a dead
    port, so that the page can only work if it needs no network."""
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    if CHROMIUM:
        options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--hide-scrollbars"):
        options.add_argument(arg)
    if offline:
        options.add_argument("--host-resolver-rules=MAP * ~NOTFOUND")
        options.add_argument("--proxy-server=http://127.0.0.1:9")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=DRIVER) if DRIVER else None
    return webdriver.Chrome(options=options, service=service)


def open_report(driver, path: Path, timeout: float = 60.0) -> float:
    """Load the page and wait until it is drawn; return the time it took (s)."""
    from selenium.webdriver.support.ui import WebDriverWait

    start = time.perf_counter()
    driver.get(path.resolve().as_uri())
    WebDriverWait(driver, timeout).until(
        lambda d: d.execute_script("return document.body.dataset.ready || null"))
    elapsed = time.perf_counter() - start
    state = driver.execute_script("return document.body.dataset.ready")
    assert state == "1", driver.find_element("id", "status").text
    return elapsed


def make_run(out: Path, topology: str, *extra: str) -> Path:
    from netsim.cli import main

    assert main([str(ROOT / "topologies" / topology), "--out", str(out), "--no-plots", "--quiet",
                 "--report", *extra]) == 0
    return out


# ---------------------------------------------------------------------------------------------

# a headless browser per module and whole runs drawn in it: every test here is slow (CI runs
# them with -m slow)
pytestmark = pytest.mark.slow

needs_browser = pytest.mark.skipif(
    not (CHROMIUM and DRIVER),
    reason="headless browser tests need chromium and chromedriver (apt-get install chromium "
           "chromium-driver)")


@pytest.fixture(scope="module")
def driver():
    if not (CHROMIUM and DRIVER):
        pytest.skip("headless browser tests need chromium and chromedriver "
                    "(apt-get install chromium chromium-driver)")
    pytest.importorskip("selenium", reason="browser tests need selenium (the test extra)")
    pytest.importorskip("plotly", reason="the report needs plotly (the report extra)")
    d = browser()
    yield d
    d.quit()


@pytest.fixture(scope="module")
def tc2(tmp_path_factory) -> Path:
    pytest.importorskip("plotly", reason="the report needs plotly (the report extra)")
    return make_run(tmp_path_factory.mktemp("browser") / "tc2", "test_case_2.json", "--check")


def severe_console_messages(driver) -> list:
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def links_csv_at(directory: Path, link: str, direction: str, t: float, interval: float) -> dict:
    """The links.csv row of a link direction at time t (zeros when it has none: idle)."""
    with open(directory / "links.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            if (row["link"] == link and row["direction"] == direction
                    and abs(float(row["time_s"]) - t) < interval / 2):
                return {k: float(v) for k, v in row.items() if k not in ("link", "direction")}
    return {"rate_mbps": 0.0, "buffer_kb": 0.0}


@needs_browser
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_tc2_loads_offline_without_console_errors_and_draws_everything(driver, tc2):
    open_report(driver, tc2 / "report.html")
    assert severe_console_messages(driver) == []
    # nothing was requested from anywhere but the file itself
    urls = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)")
    assert all(u.startswith(("file:", "blob:", "data:")) for u in urls), urls
    summary = json.loads((tc2 / "summary.json").read_text())
    drawn = driver.execute_script("""
        const gd = document.getElementById('topology');
        return {metas: gd.data.map(t => t.meta || null),
                labels: gd.data[netsimReport.traces.labels].customdata,
                nodes: [].concat(...gd.data.slice(netsimReport.traces.nodes).map(t => t.text)),
                svgPaths: gd.querySelectorAll('g.trace path.js-line').length};""")
    assert sorted(m[5:] for m in drawn["metas"] if m and m.startswith("link:")) == sorted(summary["links"])
    assert sorted(m[5:] for m in drawn["metas"] if m and m.startswith("flow:")) == sorted(summary["flows"])
    assert sorted(drawn["labels"]) == sorted(summary["links"])
    assert sorted(drawn["nodes"]) == sorted([*summary["hosts"], *summary["routers"]])
    assert drawn["svgPaths"] >= len(summary["links"]) + len(summary["flows"])
    # every flow has a route from its source to its destination
    for fid in summary["flows"]:
        assert driver.execute_script(f"return netsimReport.route('{fid}')")
    # its series are drawn, with the --check predictions dashed
    names = driver.execute_script("return netsimReport.seriesNames()")
    for fid in summary["flows"]:
        assert f"{fid} arrival rate" in names and f"{fid} window" in names
    dashed = driver.execute_script("""return document.getElementById('series').data
        .filter(t => t.name.includes('predicted')).map(t => t.line.dash)""")
    assert dashed and set(dashed) == {"dash"}


@needs_browser
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_slider_sets_link_colours_and_queues_to_links_csv(driver, tc2):
    from selenium.webdriver.common.keys import Keys

    open_report(driver, tc2 / "report.html")
    summary = json.loads((tc2 / "summary.json").read_text())
    interval = summary["interval_s"]
    slider = driver.find_element("id", "slider")
    before = driver.execute_script("return netsimReport.linkState('L1').color")
    # move the slider as a user does: focus it and press keys (each fires an input event)
    driver.execute_script("arguments[0].focus()", slider)
    slider.send_keys(Keys.END)
    for _ in range(15):
        slider.send_keys(Keys.LEFT)
    seen = set()
    for frame in (150, 250, 400):      # t = 15 s (F1 alone), 25 s (three flows), 40 s
        driver.execute_script("arguments[0].value = arguments[1];"
                              "arguments[0].dispatchEvent(new Event('input'))", slider, frame)
        t = driver.execute_script("return netsimReport.frameTime()")
        assert abs(t - (frame + 1) * interval) < 1e-6
        for link in ("L1", "L2", "L3"):
            info = summary["links"][link]
            state = driver.execute_script(f"return netsimReport.linkState('{link}')")
            rates = []
            for d in state["dirs"]:
                row = links_csv_at(tc2, link, d["dir"], t, interval)
                assert d["rate_mbps"] == pytest.approx(row["rate_mbps"], abs=2e-3)
                assert d["buffer_kb"] == pytest.approx(row["buffer_kb"], abs=2e-2)
                rates.append(row["rate_mbps"])
                # the queue drawn: its bar's length is the occupancy over the buffer size
                drawn, full = driver.execute_script(
                    f"return netsimReport.queueBar('{link}', '{d['dir']}')")
                assert drawn / full == pytest.approx(row["buffer_kb"] / info["buffer_kb"], abs=1e-3)
            util = sum(rates) / info["rate_mbps"]          # half-duplex: the shared transmitter
            # the colour drawn on the page: the link trace and the label's colour value
            drawn = driver.execute_script(f"""
                const gd = document.getElementById('topology');
                const i = netsimReport.linkTraceIndex('{link}');
                const labels = gd.data[netsimReport.traces.labels];
                return [gd.data[i].line.color, labels.marker.color[labels.customdata.indexOf('{link}')]];""")
            assert drawn[1] == pytest.approx(util, abs=1e-3)
            assert drawn[0] == state["color"]
            seen.add((link, drawn[0]))
    after = driver.execute_script("return netsimReport.linkState('L1').color")
    assert before != after
    assert len({color for _, color in seen}) > 1          # colours follow the utilization
    assert severe_console_messages(driver) == []


@needs_browser
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_clicking_a_link_shows_its_series(driver, tc2):
    from selenium.webdriver.common.action_chains import ActionChains

    open_report(driver, tc2 / "report.html")
    selected = driver.execute_script("return netsimReport.selected().links")
    target = next(lid for lid in ("L2", "LS1", "LT1", "L1", "L3") if lid not in selected)
    names = driver.execute_script("return netsimReport.seriesNames()")
    assert not any(n.startswith(target + " ") for n in names)
    index = driver.execute_script(
        f"return document.getElementById('topology').data[netsimReport.traces.labels]"
        f".customdata.indexOf('{target}')")
    # the label markers' trace: the marker of `target` in it, clicked with the mouse
    points = driver.execute_script(f"""
        const gd = document.getElementById('topology');
        const traces = gd.querySelectorAll('g.scatterlayer g.trace');
        return traces[netsimReport.traces.labels].querySelectorAll('path.point')[{index}];""")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", points)
    ActionChains(driver).move_to_element(points).pause(0.3).click().perform()

    def shown():                      # (the figure redraws after the click: wait for it)
        names = driver.execute_script("return netsimReport.seriesNames()")
        return any(n.startswith(target + " ") and n.endswith(" rate") for n in names)
    deadline = time.monotonic() + 10  # a guard against a hang on a loaded machine, not a timing
    while not shown() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert shown(), driver.execute_script("return netsimReport.seriesNames()")
    assert target in driver.execute_script("return netsimReport.selected().links")
    assert target in driver.find_element("id", "selection").text
    assert severe_console_messages(driver) == []


@needs_browser
def test_sweep_report_draws_its_charts(driver, tmp_path):
    from netsim.cli import main

    sweep = tmp_path / "s.json"
    sweep.write_text(json.dumps({
        "name": "tiny", "topology": "lossy_link", "duration_s": 2,
        "parameters": {"links.L1.impairments.H1->H2.loss_rate": [0.002, 0.01],
                       "flows.*.algorithm": ["reno", "cubic"], "flows.F1.data_mb": [None]},
        "seeds": 2, "metrics": ["flows.F1.goodput_mbps"],
        "plots": [{"file": "g.png", "x": "links.L1.impairments.H1->H2.loss_rate",
                   "y": "flows.F1.goodput_mbps", "lines": "flows.*.algorithm", "logx": True,
                   "theory": {"model": "mathis"}}]}))
    out = tmp_path / "sweep"
    assert main(["sweep", str(sweep), "--out", str(out), "--jobs", "1", "--quiet", "--no-plots",
                 "--report"]) == 0
    open_report(driver, out / "report.html")
    assert severe_console_messages(driver) == []
    drawn = driver.execute_script("""const gd = document.getElementById('chart-0');
        return gd.data.map(t => [t.name, !!t.error_y, (t.line || {}).dash || null]);""")
    assert [d[0] for d in drawn[:2]] == ["reno", "cubic"] and drawn[0][1]
    assert drawn[2][2] == "dash"
    rows = driver.find_elements("css selector", "#runs-wrap tbody tr")
    assert len(rows) == 8


OVERLAPS = """
const boxes = [...document.querySelectorAll(arguments[0])]
  .filter((e) => e.textContent.trim()).map((e) => [e.textContent, e.getBoundingClientRect()]);
const out = [];
for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
  const [ta, a] = boxes[i], [tb, b] = boxes[j];
  const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
  const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
  if (w > 1 && h > 1) out.push([ta, tb]);
}
return [boxes.length, out];"""


@needs_browser
@pytest.mark.parametrize("topology", ["test_case_1.json", "test_case_2.json", "parking_lot.json"])
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_network_labels_do_not_overlap(driver, tmp_path, topology):
    """Issue 23: node names and link labels of the network view, each placed where it overlaps
    no other (measured in the browser, as drawn)."""
    run = make_run(tmp_path / "r", topology, "--duration", "2")
    open_report(driver, run / "report.html")
    count, overlaps = driver.execute_script(OVERLAPS, "#topology .textpoint text")
    assert count >= 4 and overlaps == []


@needs_browser
def test_toolbar_has_only_the_png_download_and_covers_no_legend(driver, tc2):
    """Issue 23: the plotly toolbar of each chart holds "download as PNG" alone, without the
    plotly logo, above the legend rather than over it."""
    open_report(driver, tc2 / "report.html")
    for chart in ("topology", "series"):
        driver.execute_script(f"document.querySelector('#{chart} .modebar').style.opacity = 1")
        buttons = driver.execute_script(
            f"return [...document.querySelectorAll('#{chart} .modebar-btn')]"
            ".map((b) => b.getAttribute('data-title').toLowerCase())")
        assert buttons == ["download plot as a png"]
        bar, legend = driver.execute_script(
            f"const r = (s) => {{ const e = document.querySelector(s); if (!e) return null;"
            f" const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; }};"
            f"return [r('#{chart} .modebar'), r('#{chart} .legend')];")
        assert legend is not None
        assert bar[3] <= legend[1] or bar[2] <= legend[0] or bar[0] >= legend[2]


# ---------------------------------------------------------------------------------------------


def screenshots(directory: Path = ROOT / "docs" / "figures") -> list[Path]:
    """Reports of test cases 1 and 2 (at a moment with traffic) as PNG screenshots."""
    import tempfile

    written = []
    with tempfile.TemporaryDirectory() as tmp:
        d = browser(1300, 1750)
        try:
            for name, topology, frame, extra in (
                    ("report_tc1.png", "test_case_1.json", 120, ()),
                    ("report_tc2.png", "test_case_2.json", 250, ("--check", "-l", "L1", "L3"))):
                out = make_run(Path(tmp) / name, topology, *extra)
                open_report(d, out / "report.html")
                d.execute_script(f"netsimReport.setFrame({frame})")
                time.sleep(0.5)
                path = directory / name
                d.save_screenshot(str(path))
                written.append(path)
        finally:
            d.quit()
    return written


if __name__ == "__main__":
    if "--screenshots" in sys.argv:
        for p in screenshots():
            print(p)


@needs_browser
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_ids_that_look_like_markup_are_shown_as_they_are(driver, tmp_path):
    """plotly reads <a href>, <b> and &...; in its strings: a host id became a live link out of
    the page and a flow id a bold name. Ids may hold these characters (docs/outputs.md, Ids)."""
    from netsim.cli import main
    topology = json.loads((ROOT / "topologies" / "test_case_0.json").read_text())
    text = json.dumps(topology).replace('"H1"', '"<a href=\\"https://example.com/x\\">H1</a>"')
    text = text.replace('"F1"', '"<b>F1</b>&amp;"')
    path = tmp_path / "markup.json"
    path.write_text(text)
    assert main([str(path), "--out", str(tmp_path / "r"), "--no-plots", "--quiet", "--report",
                 "--duration", "2"]) == 0
    open_report(driver, tmp_path / "r" / "report.html")
    links, bold, shown = driver.execute_script(
        "const svg = [...document.querySelectorAll('#topology svg, #series svg')];"
        "return [svg.flatMap((s) => [...s.querySelectorAll('a')]).length,"
        " svg.flatMap((s) => [...s.querySelectorAll('text')])"
        "   .filter((t) => t.textContent === 'F1&amp; route').length,"
        " svg.flatMap((s) => [...s.querySelectorAll('text')]).map((t) => t.textContent)];")
    assert links == 0 and bold == 0
    assert '<b>F1</b>&amp; route' in shown and '<a href="https://example.com/x">H1</a>' in shown


@needs_browser
def test_long_ids_are_shortened_in_the_chart_legends_but_not_in_the_network(driver, tmp_path):
    """Ids of 60 characters made the time series' legend take two thirds of the page's width."""
    from netsim.cli import main
    long_id = "H1_" + "x" * 47 + "_end_of_id"                            # 60 characters
    topology = json.loads((ROOT / "topologies" / "test_case_0.json").read_text())
    path = tmp_path / "long.json"
    path.write_text(json.dumps(topology).replace('"H1"', json.dumps(long_id)))
    assert main([str(path), "--out", str(tmp_path / "r"), "--no-plots", "--quiet", "--report",
                 "--duration", "2"]) == 0
    open_report(driver, tmp_path / "r" / "report.html")
    names = driver.execute_script("return netsimReport.seriesNames()")
    shortened = "H1_" + "x" * 11 + "\u2026" + "x" * 3 + "_end_of_id"     # 14 + ... + 13
    assert any(shortened in name for name in names), names
    assert not any(long_id in name for name in names)
    texts = driver.execute_script(
        "return [...document.querySelectorAll('#topology svg text')].map((t) => t.textContent)")
    assert long_id in texts



@needs_browser
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_a_run_without_flows_of_its_own_has_the_link_rows_only(driver, tmp_path):
    """A workload-only run drew its time axis under the first row and 400 px of empty flow
    rows below the link rows."""
    from netsim.cli import main
    topology = json.loads((ROOT / "topologies" / "test_case_0.json").read_text())
    topology["workloads"] = [{"id": "W", "src": ["H1"], "dst": ["H2"], "arrivals_per_s": 50,
                              "sizes": [[1000, 0.0], [20000, 1.0]], "algorithm": "reno"}]
    topology["flows"] = []
    path = tmp_path / "w.json"
    path.write_text(json.dumps(topology))
    assert main([str(path), "--out", str(tmp_path / "r"), "--no-plots", "--quiet", "--report",
                 "--duration", "2"]) == 0
    open_report(driver, tmp_path / "r" / "report.html")
    layout = driver.execute_script(
        "const l = document.getElementById('series').layout;"
        "return {anchor: l.xaxis.anchor, axes: Object.keys(l).filter((k) => /^yaxis\\d*$/.test(k)),"
        " bottom: l.yaxis3.domain[0], height: document.getElementById('series').offsetHeight};")
    assert layout["anchor"] == "y3"
    assert sorted(layout["axes"]) == ["yaxis", "yaxis2", "yaxis3"]
    assert layout["bottom"] == pytest.approx(0.0, abs=1e-9)
    assert layout["height"] < 600
    assert not severe_console_messages(driver)


@needs_browser
def test_a_sample_is_drawn_over_its_interval_as_in_the_figures(driver, tmp_path):
    """The page joined interval values by straight lines between interval ends: the first
    interval was missing, and an RTT sample alone between gaps was an invisible point (a 0.41 s
    fat-tree run's RTT row came out empty: acceptance test Z7). Each sample is now a step over
    (previous sample, its time], the first from 0, as flows.png draws it."""
    from netsim.cli import main
    topology = tmp_path / "ft.json"
    assert main(["generate", "fat-tree", "--k", "4", "-o", str(topology)]) == 0
    out = tmp_path / "r"
    assert main([str(topology), "--out", str(out), "--no-plots", "--quiet", "--report"]) == 0
    open_report(driver, out / "report.html")
    traces = driver.execute_script(
        "return document.getElementById('series').data.filter((t) => t.name.endsWith(' RTT')"
        " && !t.name.includes('predicted')).map((t) => ({name: t.name, x: t.x, y: t.y}));")
    with open(out / "flows.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["rtt_ms"] not in ("", "nan")]
    assert traces and rows
    times = sorted({float(r["time_s"]) for r in csv.DictReader(open(out / "flows.csv"))})
    for t in traces:
        flow = t["name"].split(" ")[0]
        samples = [(float(r["time_s"]), float(r["rtt_ms"])) for r in rows if r["flow"] == flow]
        segments = [(t["x"][j], t["x"][j + 1], t["y"][j]) for j in range(len(t["x"]) - 1)
                    if t["y"][j] is not None and t["y"][j + 1] is not None
                    and t["x"][j] < t["x"][j + 1]]
        assert len(segments) == len(samples) > 0, flow
        for (start, end, value), (time_s, rtt_ms) in zip(segments, samples):
            previous = max([0.0] + [u for u in times if u < time_s - 1e-9])
            assert (start, end) == (pytest.approx(previous), pytest.approx(time_s))
            assert value == pytest.approx(rtt_ms, rel=1e-3)
    assert not severe_console_messages(driver)


@needs_browser
def test_a_half_duplex_links_predicted_backlog_is_drawn(driver, tc2):
    """predictions.csv gives a half-duplex link's backlog for both directions summed
    ("R1->R2+R2->R1"); the page drew full-duplex predictions only, so test case 2's L1 and L3
    had none (acceptance test Z7)."""
    open_report(driver, tc2 / "report.html")
    names = driver.execute_script("return netsimReport.seriesNames()")
    selected = driver.execute_script("return netsimReport.selected().links")
    for lid in ("L1", "L3"):
        assert lid in selected
        assert f"{lid} backlog, both directions summed, predicted" in names
    assert not severe_console_messages(driver)
