"""``python -m vtatune.bench``: see ``vtatune.bench.run``."""

from vtatune.bench.run import main

main()
