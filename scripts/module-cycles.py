#!/usr/bin/env python3
"""Checks that the modules of the server and host crates depend on each other one way: no
import cycle among them (issue #14: the server's actors, session and registry once formed
an 11-file cycle through a shared-lock registry).

Each `.rs` file is a module; a `crate::a::b` path in its code (comments skipped) is an edge
to the longest module that path names. Test files (`tests.rs`, `tests/`, `proptests.rs`)
are left out: tests may reach anything. A strongly connected set of two or more modules is
a cycle, and fails the check unless it is allowed below, with its reason.

Usage: scripts/module-cycles.py            list every cycle
       scripts/module-cycles.py --check    exit 1 on a cycle not allowed
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CRATES = ["server/src", "host/src", "surface/src"]
ALLOWED = {
    # A tool handler's context reaches its session (push, progress, asks); the session
    # runs the handlers. The two are one unit seen from two sides.
    ("server/src", frozenset({"session", "tool"})),
}
TEST_FILE = re.compile(r"(^|/)(tests|proptests)(\.rs$|/)")


def modules(root):
    found = {}
    for path in sorted(root.rglob("*.rs")):
        rel = path.relative_to(root).as_posix()
        if TEST_FILE.search(rel) or rel.startswith("bin/"):
            continue
        parts = rel[: -len(".rs")].split("/")
        if parts[-1] == "mod":
            parts = parts[:-1]
        if parts in (["lib"], ["main"]):
            parts = []
        found["::".join(parts)] = path.read_text()
    return found


def code(text):
    """The text without comments or `#[cfg(test)]` modules written inline."""
    text = re.sub(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{.*", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def edges(mods):
    graph = {m: set() for m in mods}

    def resolve(path):
        parts = path.split("::")
        while parts:
            name = "::".join(parts)
            if name in mods:
                return name
            parts = parts[:-1]
        return None

    for m, text in mods.items():
        body = code(text)
        paths = re.findall(r"crate::([A-Za-z0-9_:]+)", body)
        for group in re.findall(r"use crate::\{([^;]*)\};", body, flags=re.S):
            paths += [item.strip().split("::{")[0].split(" ")[0] for item in group.split(",")]
        for p in paths:
            target = resolve(p.rstrip(":"))
            if target and target != m:
                graph[m].add(target)
    return graph


def cycles(graph):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    check = "--check" in sys.argv[1:]
    bad = 0
    for crate in CRATES:
        for comp in cycles(edges(modules(ROOT / crate))):
            allowed = (crate, comp) in ALLOWED
            bad += not allowed
            mark = "allowed" if allowed else "CYCLE"
            print(f"{mark}: {crate}: {' <-> '.join(sorted(m or 'lib' for m in comp))}")
    if bad == 0:
        print("no import cycle among the server's and host's modules but those allowed")
    sys.exit(1 if check and bad else 0)


main()
