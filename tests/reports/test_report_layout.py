"""Reports in a browser: the page never scrolls sideways at 1000 or 1400 pixels; wide tables
scroll inside their own box. The browser tests render the pages in headless Chromium where
one is installed (``apt-get install chromium``) and skip, saying so, where none is."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from vtatune.reports import html, report_data
from vtatune.reports.data import network_report_data
from vtatune.store import Store

BROWSER = next((b for b in (shutil.which(n) for n in ("chromium", "chromium-browser",
                                                      "google-chrome", "chrome")) if b), None)
needs_browser = pytest.mark.skipif(
    BROWSER is None, reason="no headless browser installed (chromium, chromium-browser or "
    "google-chrome; on Debian: apt-get install -y chromium)")
WIDTHS = (1000, 1400)
#: a stand-in for each figure (the page's layout does not depend on their pixels)
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082")


@pytest.fixture(scope="module")
def pages(studies, network_studies) -> dict[str, str]:
    """index.html of a single-operator report and of a network report, and the network
    report with 24 layers (a table far wider than any window)."""
    store = Store(studies.db)
    op = report_data(store.study(studies.tpe), store.trials(studies.tpe))
    nstore = Store(network_studies.db)
    net = network_report_data(nstore.study(network_studies.study),
                              nstore.network_trials(network_studies.study))
    wide = dataclasses.replace(net, layer_names=tuple(f"layer_with_a_long_name_{i}"
                                                      for i in range(24)))
    figures = dict.fromkeys(("pareto", "convergence", "params", "front", "breakdown"), PNG)
    return {"operator": html.report_page(op, figures),
            "network": html.network_report_page(net, figures),
            "wide network": html.network_report_page(wide, figures)}


class _Tables(HTMLParser):
    """Each <table>'s enclosing element (tag, class)."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, str]] = []
        self.parents: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs) -> None:
        if tag == "table":
            self.parents.append(self.stack[-1] if self.stack else ("", ""))
        if tag not in ("br", "img", "meta", "input", "hr"):
            self.stack.append((tag, dict(attrs).get("class") or ""))

    def handle_endtag(self, tag) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break


def test_every_table_is_in_a_scroll_box(pages) -> None:
    assert "overflow-x:auto" in html._STYLE.replace(" ", "")
    assert re.search(r"\.scroll\{[^}]*overflow-x:auto", html._STYLE)
    for name, page in pages.items():
        p = _Tables()
        p.feed(page)
        assert p.parents, name
        assert p.parents == [("div", "scroll")] * len(p.parents), name


_PROBE = ("<script>window.addEventListener('load',function(){var d=document.documentElement,"
          "boxes=Array.from(document.querySelectorAll('div.scroll'));"
          "document.body.setAttribute('data-probe',[d.scrollWidth,window.innerWidth,"
          "boxes.filter(function(b){return b.scrollWidth>b.clientWidth;}).length].join(' '));"
          "});</script></body>")


def _measure(page: str, width: int, folder: Path) -> tuple[int, int, int]:
    """(page scroll width, window width, tables wider than their box) in ``BROWSER``."""
    path = folder / f"page_{width}.html"
    path.write_text(page.replace("</body>", _PROBE), encoding="utf-8")
    out = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--window-size={width},900", "--virtual-time-budget=3000", "--dump-dom",
         path.as_uri()], capture_output=True, text=True, timeout=120, check=False)
    m = re.search(r'data-probe="(\d+) (\d+) (\d+)"', out.stdout)
    assert m, out.stderr[-2000:]
    return int(m[1]), int(m[2]), int(m[3])


@needs_browser
@pytest.mark.parametrize("width", WIDTHS)
def test_no_page_scrolls_sideways_in_a_browser(pages, width, tmp_path) -> None:
    for name, page in pages.items():
        scroll, inner, boxes = _measure(page, width, tmp_path)
        assert inner == width, name
        assert scroll <= inner, f"{name} at {width} px: the page is {scroll} px wide"
        if name == "wide network":  # the table is wider than the window: its box scrolls
            assert boxes >= 1


@needs_browser
def test_a_table_without_its_box_would_overflow(pages, tmp_path) -> None:
    # the measurement can fail: the same wide page with the boxes' overflow rule removed
    bare = pages["wide network"].replace(".scroll{overflow-x:auto;", ".scroll{")
    scroll, inner, _ = _measure(bare, 1400, tmp_path)
    assert scroll > inner


def _stock_text(hw: dict, board: str) -> str:
    from vtatune.hardware import boards
    from vtatune.hardware.config import HwConfig
    from vtatune.hardware.stock import stock_problems

    problems = stock_problems(HwConfig.from_params(hw),
                              boards.load(board))
    return "yes" if not problems else "no: " + "; ".join(p.split(":")[0] for p in problems)


def test_both_reports_mark_which_front_designs_stock_vta_builds(studies, network_studies
                                                               ) -> None:
    import html as std_html

    store = Store(studies.db)
    op = report_data(store.study(studies.tpe), store.trials(studies.tpe))
    nstore = Store(network_studies.db)
    net = network_report_data(nstore.study(network_studies.study),
                              nstore.network_trials(network_studies.study))
    figures = dict.fromkeys(("pareto", "convergence", "params", "front", "breakdown"), PNG)
    for data, page in ((op, html.report_page(op, figures)),
                       (net, html.network_report_page(net, figures))):
        assert ">stock VTA</th>" in page and data.front
        text = std_html.unescape(page)
        for p in data.front:
            assert f'data-v="{_stock_text(p.hw, data.board)}"' in text, p.trial
        knee = _stock_text(data.knee.hw, data.board)
        assert f"stock VTA: {knee.replace(': ', ' (', 1)}" in text  # the knee's pick line
