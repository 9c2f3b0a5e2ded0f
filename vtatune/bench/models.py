"""Benchmark rows of ``vtatune import``: wall time and peak memory of importing the zoo's
largest models, built at bench time with ``models.examples`` (nothing downloaded).

- ResNet-50 with its 25.6 M float32 weights in the model file (~100 MB);
- VGG-16 with its 138 M weights (~550 MB) in an external data file beside the model (written
  sparse: the importer never reads it, it only checks its size).

Each import is its own process (``python -m vtatune import MODEL --json``), as a user runs it;
its peak resident memory is the child's ``ru_maxrss``. For scale, the same row gives the peak
of a process that only imports vtatune's importer and onnx, and of one that loads the model
with ``onnx.load`` (what a reader that takes the weights in needs).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The models timed: (architecture, where its weights are).
MODELS = (("resnet50", "embedded"), ("vgg16", "external"))


#: Runs a command in a fresh interpreter and reports its own peak resident memory on exit
#: (``VmHWM``: the high-water mark of this process's memory since its ``exec``; a forked
#: child's ``ru_maxrss`` would count the parent's pages from before the ``exec``).
_MEASURED = """
import atexit, sys
def _peak():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                sys.stderr.write('VMHWM_KB ' + line.split()[1] + '\\n')
atexit.register(_peak)
exec(sys.argv[1])
"""


def _run(code: str) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MB) of ``code`` in a fresh interpreter."""
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", _MEASURED, code], capture_output=True,
                         text=True)
    wall = time.perf_counter() - t
    if res.returncode != 0:
        raise RuntimeError(f"{code!r} failed: {res.stderr.strip()[-300:]}")
    kb = [int(ln.split()[1]) for ln in res.stderr.splitlines() if ln.startswith("VMHWM_KB ")]
    return wall, kb[-1] / 1024


def _import_code(path: Path) -> str:
    return ("from vtatune.cli.main import main\n"
            f"rc = main(['import', {str(path)!r}, '--json'])\n"
            "assert rc == 0, rc\n")


def bench_import(quick: bool = False) -> list[tuple[str, str]]:
    """The rows (``quick``: none; this part runs in the full bench or with
    ``--also import``)."""
    if quick:
        return []
    from vtatune.models import examples

    rows = []
    if not Path("/proc/self/status").exists():
        return [("`vtatune import` of resnet50 and vgg16", "not measured (needs Linux /proc)")]
    _, base_mb = _run("import onnx, vtatune.models.importer")
    with tempfile.TemporaryDirectory() as tmp:
        for arch, weights in MODELS:
            path = Path(tmp) / f"{arch}.onnx"
            examples.build(arch, weights=weights, path=path)
            size = path.stat().st_size
            data = path.parent / (path.name + ".data")
            ext = data.stat().st_size if data.exists() else 0
            walls, peaks = [], []
            for _ in range(3):
                w, mb = _run(_import_code(path))
                walls.append(w)
                peaks.append(mb)
            load_wall, load_mb = _run(f"import onnx; onnx.load({str(path)!r})")
            where = (f"{size / 1e6:.0f} MB file" if not ext else
                     f"{size / 1e3:.0f} kB model + {ext / 1e6:.0f} MB external data")
            walls.sort()
            rows.append((f"`vtatune import` {arch} ({where}; built at bench time): wall time, "
                         "peak memory (median of 3 runs, one process each)",
                         f"{walls[1]:.2f} s, {sorted(peaks)[1]:.0f} MB (a process that only "
                         f"imports onnx and the importer: {base_mb:.0f} MB; onnx.load of the "
                         f"model: {load_wall:.2f} s, {load_mb:.0f} MB)"))
    return rows
