#!/usr/bin/env python3
"""Prints the README's "MCPL base conformance" table: every test named after the section of
the MCPL base whose rule it proves, found by scanning the workspace's Rust sources.

A test's name says where its rule lives and what the rule is:
  spec_17_4_…    SPEC.md (MCPL 0.5) §17.4
  rfc002_12_…    RFC-002 §12
  mcp_…          MCP itself
  jsonrpc_…      JSON-RPC 2.0

Usage: scripts/base-table.py            print the table
       scripts/base-table.py --check    exit 1 if README.md's table differs
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAME = re.compile(r"fn ((spec|rfc00\d)_(\d+)_(\d+_)?(\w+)|(mcp|jsonrpc)_(\w+))\(")


def section(m):
    if m.group(6):
        return {"mcp": "MCP", "jsonrpc": "JSON-RPC 2.0"}[m.group(6)], m.group(7)
    doc = "SPEC" if m.group(2) == "spec" else "RFC-" + m.group(2)[3:]
    sub = "." + m.group(4)[:-1] if m.group(4) else ""
    return f"{doc} §{m.group(3)}{sub}", m.group(5)


def key(row):
    doc, _, num = row[0].partition(" §")
    parts = [int(p) for p in num.split(".")] if num else []
    return (doc, parts, row[1])


def table():
    rows = []
    for path in sorted(ROOT.rglob("*.rs")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in ("target", "fuzz"):
            continue
        for m in NAME.finditer(path.read_text(encoding="utf-8")):
            where, rule = section(m)
            side = "host" if rel.parts[0] in ("host", "host-core") else "server" if rel.parts[0] != "protocol" else "both"
            rows.append((where, rule.replace("_", " "), side, f"`{m.group(1)}` ({rel})"))
    rows.sort(key=key)
    out = ["| section | rule | side | test |", "|---|---|---|---|"]
    out += [f"| {w} | {r} | {s} | {t} |" for w, r, s, t in rows]
    return "\n".join(out)


if __name__ == "__main__":
    t = table()
    if "--check" in sys.argv:
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        if t not in readme:
            print("README.md's MCPL base table is out of date: run scripts/base-table.py", file=sys.stderr)
            sys.exit(1)
    print(t)
