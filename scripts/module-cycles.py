#!/usr/bin/env python3
"""Checks that the modules of the server and host crates depend on each other one way: no
import cycle among them (issue #14: the server's actors, session and registry once formed
an 11-file cycle through a shared-lock registry).

Each `.rs` file is a module; a `crate::a::b`, `super::a` or `self::a` path in its code
(comments skipped), or a child module named without a prefix, is an edge to the longest
module that path names. A `super::Thing` that the parent re-exports from a child
(`pub use child::Thing;`) is an edge to that child: a facade is no dependency. Test files (`tests.rs`, `tests/`, `proptests.rs`)
are left out: tests may reach anything. A strongly connected set of two or more modules is
a cycle, and fails the check: none is exempted (issue #38 broke the last ones — the host's
`link/`, the server's cores, and the session with the tool handlers it runs, which now
reach their session through `server/src/session_port.rs`).

Usage: scripts/module-cycles.py            list every cycle
       scripts/module-cycles.py --check    exit 1 on any cycle
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CRATES = ["server/src", "server-core/src", "host/src", "host-core/src", "surface/src"]
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

    # What each module re-exports from its children (`pub use child::{A, B};`): a
    # `super::A` in a child is a use of the child that defines A, not of the facade.
    exported = {}
    for m, text in mods.items():
        for child, items in re.findall(
            r"\bpub(?:\([a-z]+\))?\s+use\s+(?:self::)?(\w+)::\{?([^;]*?)\}?;", code(text)
        ):
            target = f"{m}::{child}" if m else child
            if target not in mods:
                continue
            for item in group_items(items):
                exported[f"{m}::{item}" if m else item] = target

    # What a module brings in from another crate of the workspace under a name of its own
    # (`use mcpl_server_core as core;`, `pub(crate) use mcpl_server_core::tool::error;`):
    # a path through that name leaves the crate, so it is no edge (issue #38: the server's
    # cores moved to mcpl-server-core and mcpl-server reaches them at their old paths).
    external = set()
    for m, text in mods.items():
        for krate, rest, alias in re.findall(
            r"\buse\s+(mcpl_\w+)((?:::\w+)*)(?:\s+as\s+(\w+))?\s*;", code(text)
        ):
            name = alias or (rest.split("::")[-1] if rest else krate)
            external.add(f"{m}::{name}" if m else name)

    def resolve(path):
        if path in exported:
            return exported[path]
        parts = path.split("::")
        if any("::".join(parts[:n]) in external for n in range(1, len(parts) + 1)):
            return None
        parts = path.split("::")
        while parts:
            name = "::".join(parts)
            if name in mods:
                return name
            parts = parts[:-1]
        return None

    for m, text in mods.items():
        body = code(text)
        here = m.split("::") if m else []
        # `crate::a::b`, and `use crate::{a, b::c}` groups.
        paths = re.findall(r"\bcrate::([A-Za-z0-9_:]+)", body)
        for group in re.findall(r"use crate::\{([^;]*)\};", body, flags=re.S):
            paths += group_items(group)
        # `super::x`, `super::super::x`, `self::x`, and their `use` groups: relative to
        # this module (a `mod.rs` is its directory's module, as above).
        for ups, rest in re.findall(r"\b((?:super::)+|self::)([A-Za-z0-9_:{]+)", body):
            depth = ups.count("super::")
            if depth > len(here):
                continue
            base = here[: len(here) - depth]
            if rest.startswith("{"):
                group = re.match(r"\{([^;]*?)\}", body[body.find(ups + rest) + len(ups):], re.S)
                items = group_items(group.group(1)) if group else []
            else:
                items = [rest]
            paths += ["::".join(base + [i]) for i in items if i]
        # A child module named without a prefix (`use child::Thing;`, `child::f()`);
        # declaring it (`mod child;`) or re-exporting from it (`pub use child::Thing;`,
        # a facade) is no use of it.
        own = re.sub(r"\bmod\s+\w+\s*;", "", body)
        own = re.sub(r"\bpub(\([a-z]+\))?\s+use\s+[^;]*;", "", own)
        for child in children(mods, m):
            name = child.split("::")[-1]
            if re.search(r"(?<![A-Za-z0-9_:])" + re.escape(name) + r"::", own):
                paths.append(child)
        for p in paths:
            target = resolve(p.rstrip(":"))
            if target and target != m:
                graph[m].add(target)
    return graph


def group_items(group):
    """The paths a `use a::{b, c::d, e::{f}}` group names, first segment and nested."""
    out = []
    for item in re.split(r",(?![^{]*\})", group):
        item = item.strip()
        if not item:
            continue
        out.append(item.split("::{")[0].split(" ")[0])
    return out


def children(mods, m):
    """The modules directly under `m`."""
    prefix = m + "::" if m else ""
    depth = m.count("::") + 1 if m else 0
    return [c for c in mods if c.startswith(prefix) and c.count("::") == depth and c != m]


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
            bad += 1
            print(f"CYCLE: {crate}: {' <-> '.join(sorted(m or 'lib' for m in comp))}")
    if bad == 0:
        print("no import cycle among the server's and host's modules")
    sys.exit(1 if check and bad else 0)


main()
