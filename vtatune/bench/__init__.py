"""vtatune's benchmarks, one module per topic; ``python -m vtatune.bench`` (``make bench``)
runs them all and prints (or writes into README.md) one table.

- ``run``: the table, the command line, compile speed, ``report``/``export`` timings, the
  test suite and ``make setup`` in a fresh clone;
- ``simulator``: timing-model accuracy against board measurements (and a simulator speed
  probe); ``runtime``: C2 built, simulated and executed; ``area``: the area model's speed;
- ``store``: SQLite and PostgreSQL store speed, two processes on one operator study;
- ``search``: search speed (with ``cpu``: a command's CPU time, its own process's and its
  workers') and quality against exhaustive optima (operator studies);
- ``networks``: network search speed and quality against an exhaustive reference, the zoo's
  searches (resnet50, mobilenet_v1) and the two-network search (resnet18 mobilenet_v1);
- ``scaleout``: a network study on two processes sharing one PostgreSQL study, and a process
  killed mid-design;
- ``models``: ONNX import time and peak memory of the zoo's largest models;
- ``code``: lines of ``vtatune/`` and repeated runs of lines, at a base commit and at HEAD.

Nothing here is imported by the rest of the package.
"""
