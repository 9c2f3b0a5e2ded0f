"""All terminal output of the CLI goes through here (rich on stderr/stdout).

Two audiences. A person at a terminal gets a live progress display and boxed tables that fit
the window (long text folds between words, numbers never split). A log (a file, a pipe, CI,
nohup) gets plain lines: progress at a steady pace from the first second, no cursor movement,
and tables as aligned text that is never wrapped. ``NO_COLOR`` turns colour off (rich reads
it); nothing here relies on colour. Numbers are formatted by ``vtatune.formats``.

Everything printed passes ``escaping.terminal``: a study name, path or config value holding
escape sequences or bidi overrides is shown, never interpreted by the terminal; rich reads
no markup in it.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console

from vtatune import formats

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

#: A log gets a progress line at most this often (seconds) while trials finish ...
LOG_EVERY_S = 5.0
#: ... and a "still working" line after this long without one.
HEARTBEAT_S = 10.0

#: Longest error line (characters); values echoed in it are cut to ``escaping.SHOWN_CHARS``
#: where they are built, this is the last guard.
ERROR_CHARS = 1000


def error(message: str) -> None:
    """One line on stderr, prefixed ``vtatune: error:``."""
    err.print(f"vtatune: error: {error_text(message)}", markup=False, soft_wrap=True)


def error_text(message: str) -> str:
    """``message`` as an error line says it: controls made visible, cut to ``ERROR_CHARS``."""
    from vtatune.escaping import terminal, truncate

    return truncate(terminal(message), ERROR_CHARS)


def markup_text(text: str) -> str:
    """User text for a place rich reads markup from (progress descriptions)."""
    from vtatune.escaping import terminal

    return _escape(terminal(text))


def note(message: str) -> None:
    """One line on stderr (progress and status, so stdout keeps only results)."""
    from vtatune.escaping import terminal

    err.print(terminal(message, keep_lines=True), markup=False)


#: JSON objects printed by this process (``--json`` prints one, an error's included).
_json_printed = [0]


def print_json(obj: Any) -> None:
    """One JSON object on stdout (no rich formatting, so it pipes into jq)."""
    sys.stdout.write(json.dumps(obj, indent=2, default=_json_default) + "\n")
    sys.stdout.flush()
    _json_printed[0] += 1


def printed_json() -> bool:
    """Whether a JSON object went to stdout since the command began (``reset_json``)."""
    return _json_printed[0] > 0


def reset_json() -> None:
    _json_printed[0] = 0


def _json_default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


# ---- tables ----------------------------------------------------------------------------------

def table(title: str | None, columns: list[str], rows: Sequence[Sequence[Any]],
          right: Sequence[bool] | None = None, wrap: Sequence[bool] | None = None) -> None:
    """A table on stdout. Cells may be raw values (formatted here) or ready strings; columns
    are right-aligned when ``right`` says so (default: every cell a number or missing).

    At a terminal: a rich table that fits the window: numbers never wrap, text columns
    marked in ``wrap`` (default: the last text column) fold between words, the others stay
    whole; a window too narrow for that shows the leading columns as a table and the rest of
    each row on indented lines below it. Otherwise: plain aligned text, never wrapped, so logs
    keep one line per row.
    """
    cells = [[_fmt(v) for v in r] for r in rows]
    if right is None:
        right = [bool(rows) and all(is_numeric(r[k]) for r in rows) for k in range(len(columns))]
    if not out.is_terminal:
        if title:
            out.print(title, markup=False)
        for text in aligned(columns, cells, right):
            out.print(text, markup=False)
        return
    from rich import box
    from rich.table import Table
    from rich.text import Text

    if wrap is None:
        text_cols = [k for k, r in enumerate(right) if not r]
        wrap = [bool(text_cols) and k == text_cols[-1] for k in range(len(columns))]
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    if _min_width(columns, cells, wrap) + _chrome(t, len(columns)) > out.width:
        _stacked(title, columns, cells, right)
        return
    for col, r, w in zip(columns, right, wrap, strict=True):
        if w:
            t.add_column(col, justify="right" if r else "left", overflow="fold")
        else:
            t.add_column(col, justify="right" if r else "left", no_wrap=True)
    for r in cells:
        t.add_row(*[Text(c) for c in r])  # Text: rich reads no markup in a name
    out.print(t)


def _min_width(columns: Sequence[str], cells: Sequence[Sequence[str]],
               wrap: Sequence[bool]) -> int:
    """The narrowest the cells of a table can be without cutting a number or a word: whole
    cells, folding columns at their longest word (the table's rules and padding not
    counted: ``_chrome``)."""
    widths = []
    for k, col in enumerate(columns):
        texts = [col] + [r[k] for r in cells]
        widths.append(max(len(w) for t in texts for w in (t.split() or [""])) if wrap[k]
                      else max(len(t) for t in texts))
    return sum(widths)


def _chrome(t: Any, n: int) -> int:
    """Characters a rich table ``t`` of ``n`` columns adds to its cells: each cell's padding
    (none on the outer sides when ``pad_edge`` is off), one rule between columns and, with
    ``show_edge``, one at either end (``box.SIMPLE_HEAD`` draws them as spaces, but they take
    room all the same)."""
    _, right, _, left = t.padding
    pad = (left + right) * n - (0 if t.pad_edge else left + right)
    rules = ((n - 1) + (2 if t.show_edge else 0)) if t.box is not None else 0
    return pad + rules


def _stacked(title: str | None, columns: Sequence[str], cells: Sequence[Sequence[str]],
             right: Sequence[bool]) -> None:
    """A table too wide for the terminal: the leading columns that fit as a table, the rest
    of each row under it, indented, as ``name: value`` folded between words."""
    import textwrap

    width = out.width
    k = len(columns)
    while k > 1 and max(len(x) for x in aligned(columns[:k], [r[:k] for r in cells],
                                                   right[:k])) > width:
        k -= 1
    head = aligned(columns[:k], [r[:k] for r in cells], right[:k])
    if title:
        out.print(title, markup=False)
    out.print(head[0], markup=False, soft_wrap=True)
    for line_, row in zip(head[1:], cells, strict=True):
        out.print(line_, markup=False, soft_wrap=True)
        rest = "  ".join(f"{columns[j]}: {row[j]}" for j in range(k, len(columns)))
        for part in textwrap.wrap(rest, width=max(width, 20), initial_indent="    ",
                                  subsequent_indent="      ", break_long_words=False,
                                  break_on_hyphens=False):
            out.print(part, markup=False, soft_wrap=True)


def aligned(columns: Sequence[str], cells: Sequence[Sequence[str]], right: Sequence[bool]
            ) -> list[str]:
    """Plain text columns, two spaces apart, right-aligned where ``right``; never cut."""
    widths = [max([len(c)] + [len(r[k]) for r in cells]) for k, c in enumerate(columns)]
    lines = []
    for line in [list(columns), *cells]:
        parts = [v.rjust(w) if r else v.ljust(w)
                 for v, w, r in zip(line, widths, right, strict=True)]
        lines.append("  ".join(parts).rstrip())
    return lines


def is_numeric(v: Any) -> bool:
    """A number, a missing value, or text that reads as a number (``1,024``, ``84.1%``)."""
    if v is None or v == formats.MISSING:
        return True
    if isinstance(v, str):
        return _looks_numeric(v)
    return isinstance(v, int | float) and not isinstance(v, bool)


def _looks_numeric(s: str) -> bool:
    t = s.replace(",", "").rstrip("%").strip()
    try:
        float(t)
    except ValueError:
        return False
    return True


def _fmt(v: Any) -> str:
    if v is None:
        return formats.MISSING
    if isinstance(v, str):
        return _terminal(v)
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return _terminal(v)


def _terminal(v: Any) -> str:
    from vtatune.escaping import terminal

    return terminal(v)


#: What the designs table's columns mean (printed under it).
DESIGNS_LEGEND = ("ms: time per call end to end = accel ms (the accelerator) + host ms (the "
                  "host CPU's runtime work); eff.: the physical lower bound (compute and "
                  "compulsory memory traffic) / the accelerator's cycles")
#: What the energy columns mean (shown when the rows have energy).
ENERGY_LEGEND = ("accel J: the accelerator's energy per call (what the design changes; the "
                 "energy objectives' figure), board J: with the processor and board's baseline "
                 "power over the call; estimates from the shipped constants unless calibrated "
                 "(docs/methods/energy.md)")
#: What a network table's ``of bound`` means.
BOUND_LEGEND = ("of bound: the network's physical lower bound (compute and compulsory memory "
                "traffic of every layer run) / the accelerator's cycles")


def designs(title: str, rows: Sequence[dict[str, Any]], workload: Any = None) -> None:
    """Designs of a study (``search.summary`` rows) as ``search`` and ``show`` print them:
    trial, cycles, ms per call (end to end) = accelerator ms + host ms, mm², efficiency,
    hardware, knobs — in ``formats``' units — then what the columns, the knobs of
    ``workload`` (a ``Workload``, if given) and generated hardware names mean."""
    def ms(seconds: float | None) -> str:
        return formats.ms(None if seconds is None else 1e3 * seconds)

    stock = any(r.get("stock_vta") is not None for r in rows)  # known: a column
    energy = any(r.get("accelerator_energy_j") is not None for r in rows)  # known: columns
    columns = ["trial", "cycles", "ms", "accel ms", "host ms", "mm²", "eff.",
               *(["accel J", "board J"] if energy else []),
               *(["stock"] if stock else []), "hardware", "knobs"]
    cells = [[formats.count(r["trial"]), formats.cycles(r["cycles"]), ms(r["seconds"]),
              ms(r.get("accelerator_seconds")), ms(r.get("host_seconds")),
              formats.area(r["area_mm2"]), formats.percent(r["efficiency"]),
              *([formats.energy(r.get("accelerator_energy_j")),
                 formats.energy(r.get("board_energy_j"))] if energy else []),
              *([stock_mark(r)] if stock else []), str(r["hw_name"]),
              formats.knobs(r["knobs"])] for r in rows]
    n_right = 9 if energy else 7
    table(title, columns, cells, right=[True] * n_right + [False] * (len(columns) - n_right))
    ties = [(r, tie) for r in rows for tie in r.get("ties", ())]
    if ties:
        line("equal to a listed design (same hardware area and latency, other knobs): "
             + "; ".join(f"trial {tie['trial']} = trial {r['trial']} "
                         f"({formats.knobs(_differ(tie['knobs'], r['knobs']))})"
                         for r, tie in ties))
    line(DESIGNS_LEGEND)
    if energy:
        line(ENERGY_LEGEND)
    if workload is not None and workload.KNOBS:
        line("knobs: " + "; ".join(f"{k.name} = {k.doc}" for k in workload.KNOBS))
    if any(_generated_name(r["hw_name"]) for r in rows):
        line(formats.HW_NAME_LEGEND)
    if stock_note(rows):
        line(stock_note(rows))
    if domain_note(rows):
        line(domain_note(rows))


def domain_note(rows: Sequence[dict[str, Any]]) -> str:
    """How many of ``rows`` are timed outside their timing profile's domain, with the first
    one's line (``timing_profiles.domain_line``); "" when none is."""
    from vtatune.hardware.timing_profiles import domain_line

    out = [r["timing_domain"] for r in rows if domain_line(r.get("timing_domain"))]
    if not out:
        return ""
    text = domain_line(out[0])
    return (text if len(rows) == 1 else
            f"{text} — {len(out)} of these {len(rows)} designs"
            + ("" if len(out) == 1 else " (the first shown)"))


def designs_title(objective: str, latency: str = "end-to-end", per: str = "call",
                  noun: str = "trials") -> str:
    """The title of a study's designs table: its front (``Pareto front (area vs ms per call)``,
    ``(area vs ms per call vs accel J)``) or its best (``fastest trials (by ms per call)``,
    ``least energy x delay trials``)."""
    from vtatune.search import objectives

    lat = "cycles" if latency == "accelerator" else f"ms per {per}"
    names = {"area": "area", "latency": lat, "energy": "accel J"}
    terms = objectives.terms(objective)
    if objectives.is_front(objective):
        return f"Pareto front ({' vs '.join(names[t] for t in terms)})"
    if terms == ("edp",):
        return f"least energy x delay {noun} (accel J x {lat})"
    return f"fastest {noun} (by {lat})"


def stock_text(p: Any) -> str:
    """``, stock VTA: yes`` (or no), for a design's line ("" when unknown)."""
    return "" if p.stock_vta is None else f", stock VTA: {'yes' if p.stock_vta else 'no'}"


def stock_mark(row: dict[str, Any]) -> str:
    """A design row's stock-VTA cell: yes, no, or - (unknown)."""
    v = row.get("stock_vta")
    return "-" if v is None else ("yes" if v else "no")


def stock_note(rows: Sequence[dict[str, Any]]) -> str:
    """How many of ``rows`` stock VTA builds as they are, and how to keep to those ("" when
    no row says)."""
    known = [r for r in rows if r.get("stock_vta") is not None]
    n = sum(bool(r["stock_vta"]) for r in known)
    if not known:
        return ""
    if n == len(known):
        return ("stock: stock VTA (apache/tvm-vta) builds "
                + (f"all {n} designs as they are" if n > 1 else "this design as it is"))
    what = f"{n} of these {len(known)} designs" if len(known) > 1 else "not this design"
    return (f"stock: stock VTA (apache/tvm-vta) builds {what} as "
            f"{'they are' if len(known) > 1 else 'it is'} (export says why not; search "
            "--stock-vta keeps to designs it builds)")


def _differ(knobs: dict[str, int], other: dict[str, int]) -> dict[str, int]:
    """The knobs of ``knobs`` whose values ``other`` does not share."""
    return {k: v for k, v in knobs.items() if other.get(k) != v}


def not_feasible(rows: Sequence[dict[str, Any]]) -> None:
    """Why trials were not feasible (``search.summary.not_feasible`` rows): one indented line
    per status with its first trial's reason."""
    for r in rows:
        more = f"; {r['reasons']:,} different reasons" if r["reasons"] > 1 else ""
        line(f"  {r['status']} ({r['count']:,}{more}), e.g. trial {r['trial']} "
             f"({r['hw_name']}): {r['reason'] or 'no reason stored'}")


def next_steps(study: str, url: str, db: str | None, objective: str = "area-latency",
               exportable: bool = True, shows: str = "these results again",
               feasible: bool = True) -> list[str]:
    """What to do with a finished search: the commands that show, report and export it
    (``--db`` only when the search was given one; report and export only when there is a
    feasible trial, export not of a study compiled with user passes, which export cannot
    rebuild)."""
    from vtatune.escaping import shell_command

    def cmd(*words: str) -> str:
        return shell_command(["vtatune", words[0], study, *words[1:]]
                             + ([] if db is None else ["--db", url]))

    out = ["next:", f"  {cmd('show')}  # {shows}"]
    if not feasible:
        return out
    out.append(f"  {cmd('report')}  # plots, tables and one HTML page")
    if exportable and objective == "area-latency":  # the knee of a front of area and latency
        out.append(f"  {cmd('export')}  # a bundle of the knee design (--pick fastest, "
                   "smallest or a trial; --stock-vta: of designs VTA's own flow deploys)")
    elif exportable:
        out.append(f"  {cmd('export', '--pick', 'fastest')}  # a bundle of the fastest design")
    return out


#: The distribution of the Optuna dashboard (the ``dashboard`` extra) and its module.
DASHBOARD, DASHBOARD_MODULE = "optuna-dashboard", "optuna_dashboard"


def dashboard_step(url: str) -> str:
    """The next step that opens every trial in a browser: ``optuna-dashboard URL`` when it is
    installed, else how to install it (it is an extra, not a dependency)."""
    import importlib.util

    from vtatune.escaping import shell_command

    if importlib.util.find_spec(DASHBOARD_MODULE) is not None:
        return f"  {shell_command([DASHBOARD, url])}  # every trial, in a browser"
    return (f"  (every trial in a browser: pip install 'vtatune[dashboard]', then "
            f"{shell_command([DASHBOARD, url])})")


def screened_note(screened: int) -> str:
    """``, 1 design screened`` for a progress line (nothing when none was)."""
    return f", {formats.counted(screened, 'design')} screened" if screened else ""


def nothing_new(study: str, held: int, noun: str) -> str:
    """Why a rerun added nothing: ``--trials`` is the total the study should hold."""
    from vtatune.escaping import shell_word

    return (f"nothing new: the study already holds {formats.counted(held, noun)} and --trials "
            f"is the total it should hold; to search on, raise it (--trials {2 * held}) or "
            f"start another study (--study {shell_word(study + '-2')})")


def workload_of(signature: str) -> Any:
    """The workload a stored signature names (a named layer as that layer), or None when this
    vtatune does not know it."""
    from vtatune.errors import VtatuneError
    from vtatune.workloads import registry

    try:
        return registry.from_signature(signature)
    except VtatuneError:
        return None


def _generated_name(name: Any) -> bool:
    return isinstance(name, str) and "-i" in name and name.split("-", 1)[0].count("x") == 2


def line(text: str = "") -> None:
    """A line on stdout: at a terminal wrapped between words, in a log never wrapped."""
    from vtatune.escaping import terminal

    out.print(terminal(text, keep_lines=True), markup=False, soft_wrap=not out.is_terminal)


# ---- progress --------------------------------------------------------------------------------

class Progress:
    """Progress of a long job on stderr: ``update(done, stats)`` after each step.

    At a terminal, a live bar with the stats on a line of their own (cut to the window, never
    wrapped). In a log: the ``header`` at once, then a plain line every ``LOG_EVERY_S`` while
    steps finish, a heartbeat after ``HEARTBEAT_S`` of silence (so a log never looks stuck:
    workers starting and the first compiles take a while), and a last line at the end.
    ``quiet`` prints nothing (``--json``).
    """

    def __init__(self, title: str, total: int, header: str = "", quiet: bool = False,
                 waiting: str = "working") -> None:
        self.title, self.total, self.header, self.quiet = title, total, header, quiet
        self.waiting = waiting
        self.done, self.stats = 0, ""
        self.position = 0.0
        self._live = not quiet and err.is_terminal
        self._t0 = time.monotonic()
        self._last = self._t0
        self._printed_done = -1
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar: Any = None
        #: (monotonic time, position) of the first update: this run's pace, for the ETA (a
        #: resumed study starts at its earlier trials' count)
        self._first: tuple[float, float] | None = None

    # context manager: start and stop the display
    def __enter__(self) -> Progress:
        if self.quiet:
            return self
        if self._live:
            self._bar = _live_bar(self.title, self.total)
            self._bar.__enter__()
        else:
            if self.header:
                note(self.header)
            self._thread = threading.Thread(target=self._heartbeat, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._bar is not None:
            self._bar.__exit__(*exc)
        elif not self.quiet and exc[0] is None and self._first is not None and \
                self._printed_done != self.done:  # (nothing to say of a job that did nothing)
            self._log_line()

    def update(self, done: int, stats: str, position: float | None = None) -> None:
        """``done`` steps of ``total`` finished; ``position``: how far the job is, in steps,
        counting the parts of steps under way (a network search's designs being tuned, by
        their layer evaluations), else ``done``."""
        with self._lock:
            self.done, self.stats = done, stats
            self.position = float(done if position is None else position)
            now = time.monotonic()
            if self._first is None:
                self._first = (now, self.position)
            if self._bar is not None:
                self._bar.update(self.position, stats, self.eta(now))
            elif not self.quiet:
                if now - self._last >= LOG_EVERY_S or done >= self.total:
                    self._log_line(now)

    def eta(self, now: float | None = None) -> str:
        """``eta 0:01:23``: the time left at this run's pace so far (since its first step),
        or ``""`` before there is a pace, or when the job is done."""
        now = time.monotonic() if now is None else now
        if self._first is None or self.position >= self.total:
            return ""
        t0, p0 = self._first
        if now - t0 < 1.0 or self.position <= p0:
            return ""
        left = (self.total - self.position) * (now - t0) / (self.position - p0)
        return f"eta {_clock(left)}"

    def _log_line(self, now: float | None = None) -> None:
        now = now or time.monotonic()
        self._last = now
        self._printed_done = self.done
        width = len(str(self.total))
        stats = f"  {self.stats}" if self.stats else ""
        eta = self.eta(now)
        note(f"[{self.done:>{width}}/{self.total}] {_clock(now - self._t0)}"
             f"{' ' + eta if eta else ''}{stats}")

    def _heartbeat(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                now = time.monotonic()
                if now - self._last >= HEARTBEAT_S:
                    self._last = now
                    width = len(str(self.total))
                    note(f"[{self.done:>{width}}/{self.total}] {_clock(now - self._t0)}  "
                         f"{self.waiting if self.done == 0 else 'waiting for results'}")


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _live_bar(title: str, total: int) -> Any:
    """A rich progress bar whose stats sit on their own line (so they never cut the bar)."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress
    from rich.text import Text

    class _Bar(RichProgress):
        stats = ""

        def get_renderables(self) -> Any:
            yield self.make_tasks_table(self.tasks)
            if self.stats:  # on a line of its own, folded between words, never cut
                yield Text(self.stats)

    bar = _Bar(TextColumn("[bold]{task.description}", markup=True), BarColumn(),
               MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[eta]}", markup=False), console=err, transient=False)
    task = bar.add_task(markup_text(title), total=total, eta="")

    class _Handle:
        def __enter__(self) -> _Handle:
            bar.__enter__()
            return self

        def __exit__(self, *exc: Any) -> None:
            bar.__exit__(*exc)

        def update(self, position: float, stats: str, eta: str = "") -> None:
            bar.stats = stats
            bar.update(task, completed=position, eta=eta)

    return _Handle()


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
