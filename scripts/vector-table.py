#!/usr/bin/env python3
"""Prints the README's conformance table: each RFC-014 vector (spec §9) and the tests named
after it (`vector_NN_…`), found by scanning the workspace's Rust sources.

Usage: scripts/vector-table.py            print the table
       scripts/vector-table.py --check    exit 1 if README.md's table differs
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SUBJECTS = {
    1: "tools/list lists every tool, visible or not",
    2: "a call's own changes ride in its result; no push follows",
    3: "a push carries the change it explains; applied once, even if refused",
    4: "revs consecutive across carriers; a stale change is ignored",
    5: "open on an instanced toolset returns an instance name; calls carry it",
    6: "two instances open, none named: the call fails naming them",
    7: "a definition change arrives without tools/list_changed",
    8: "no toolHints: no tools/hints, no hints",
    9: "after a reconnect, a kept instance is adopted, not re-opened",
    10: "an undeclared group: never sent toolsets/open, host-gated",
    11: "invisible tool or closed toolset: a tool error saying why",
    12: "a visibility change never changes the model's tool list",
    13: "an ended record is told once per id, across reconnects and restarts",
    14: "an open on one connection reaches another on its own revs",
    15: "static→dynamic applies at the next list boundary, with a notice",
    16: "mcpl/toolset with presence static is dynamic",
    17: "opening an open instance adopts it; differing options reported",
    18: "a proposed instance name is used as given or refused",
    19: "suggestions are rendered, never executed",
    20: "a definition hint keeps the listed name, class and _meta",
    21: "a gap on an ordered link: one recovery reading both lists",
    22: "after recovery, messages at or below the statement's rev are ignored",
    23: "toolsets/list is a full statement",
    24: "dynamic→static applies at the next list boundary, with a notice",
    25: "a default-open toolset is listed without an open; the host adopts it",
    26: "a host without toolHints plays through compat tools",
    27: "toolsets/* results take the next rev; tools/list names the last",
    28: "hints on a result after its timeout are applied",
    29: "a cancelled call sends its changes as tools/hints",
    30: "hints from a server without toolHints are ignored",
    31: "without pushEvents, another's changes come as tools/hints",
    32: "a close and a visibility change reach the principal's other connections",
    33: "a manifest change removing a toolset closes its instances; told",
    34: "a manifest change withdrawing toolHints makes every tool static; told",
    35: "a duplicate eventId's hints are ignored, with no false gap",
    36: "without toolHints, hinted tools are plain static tools",
    37: "Streamable HTTP: an early rev is held, then applied or recovered",
    38: "toolsets/list with nothing visible clears the host's belief",
}


def scan():
    found = {n: {"server": [], "host": []} for n in SUBJECTS}
    for path in sorted(ROOT.rglob("*.rs")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in ("target", "fuzz"):
            continue
        side = "host" if rel.parts[0] in ("host", "host-core") or "host_" in rel.name else "server"
        for m in re.finditer(r"fn (vector_(\d+)_\w+)", path.read_text(encoding="utf-8")):
            n = int(m.group(2))
            if n in found:
                found[n][side].append(f"`{m.group(1)}` ({rel})")
    return found


def table():
    found = scan()
    rows = ["| # | subject | server side | host side |", "|---|---|---|---|"]
    for n, subject in SUBJECTS.items():
        cell = lambda xs: "<br>".join(xs) if xs else "—"
        rows.append(f"| {n} | {subject} | {cell(found[n]['server'])} | {cell(found[n]['host'])} |")
    return "\n".join(rows)


if __name__ == "__main__":
    t = table()
    if "--check" in sys.argv:
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        if t not in readme:
            print("README.md's vector table is out of date: run scripts/vector-table.py", file=sys.stderr)
            sys.exit(1)
    print(t)
