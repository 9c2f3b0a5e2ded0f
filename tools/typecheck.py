"""`make lint`'s type check: mypy over vtatune (configured in pyproject.toml's [tool.mypy]).

The strict modules (pyproject's override that sets every flag of mypy --strict) must have no
error. The rest
is checked with mypy's defaults against the error counts recorded per file in
``tools/mypy-baseline.json``: a file may not get more errors than recorded (a new file none).
When counts fall, ``--update`` records the lower ones (and after a merge, the merged ones).

    python tools/typecheck.py            # check
    python tools/typecheck.py --update   # record today's counts
"""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "tools" / "mypy-baseline.json"
_ERROR = re.compile(r"^(?P<file>[^:\s]+\.py):\d+(?::\d+)?: error: ")


#: mypy --strict's per-module flags: an override that sets them all is strict.
STRICT_FLAGS = ("disallow_untyped_calls", "disallow_untyped_defs", "disallow_incomplete_defs",
                "disallow_untyped_decorators", "disallow_any_generics",
                "disallow_subclassing_any", "check_untyped_defs", "warn_return_any",
                "warn_unused_ignores", "no_implicit_reexport", "strict_equality", "extra_checks")


def strict_patterns() -> list[str]:
    """Module patterns of pyproject's strict overrides."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    return [m for o in config.get("overrides", [])
            if o.get("strict") or all(o.get(flag) for flag in STRICT_FLAGS)
            for m in ([o["module"]] if isinstance(o["module"], str) else o["module"])]


def module_of(file: str) -> str:
    parts = Path(file).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_strict(file: str, patterns: list[str]) -> bool:
    mod = module_of(file)
    return any(mod == p or (p.endswith(".*") and (mod == p[:-2] or mod.startswith(p[:-1])))
               or fnmatch.fnmatchcase(mod, p) for p in patterns)


def run_mypy() -> list[str]:
    res = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True,
                         text=True)
    if res.returncode not in (0, 1):  # 2: mypy itself failed (bad config, crash)
        sys.exit(f"typecheck: mypy failed:\n{res.stdout}{res.stderr}")
    return res.stdout.splitlines()


def main(argv: list[str]) -> int:
    lines = run_mypy()
    patterns = strict_patterns()
    errors = [m.group("file") for line in lines if (m := _ERROR.match(line))]
    strict = [line for line in lines if (m := _ERROR.match(line))
              and is_strict(m.group("file"), patterns)]
    counts = Counter(f for f in errors if not is_strict(f, patterns))
    if "--update" in argv:
        BASELINE.write_text(json.dumps(dict(sorted(counts.items())), indent=1) + "\n")
        print(f"typecheck: recorded {sum(counts.values())} errors in {len(counts)} files "
              f"(non-strict) in {BASELINE.relative_to(ROOT)}")
    recorded: dict[str, int] = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
    grown = {f: (n, recorded.get(f, 0)) for f, n in sorted(counts.items())
             if n > recorded.get(f, 0)}
    for line in strict:
        print(line)
    for f, (n, was) in grown.items():
        print(f"{f}: {n} mypy errors, {was} recorded")
        for line in lines:
            if line.startswith(f + ":") and " error: " in line:
                print("  " + line)
    total, was = sum(counts.values()), sum(recorded.values())
    print(f"typecheck: strict modules ({', '.join(patterns)}): {len(strict)} errors; "
          f"the rest: {total} errors in {len(counts)} files ({was} recorded)")
    if strict or grown:
        print("typecheck: failed (fix the errors above; the recorded counts may only fall)")
        return 1
    if total < was:
        print("typecheck: fewer errors than recorded: `python tools/typecheck.py --update`")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
