#!/usr/bin/env python3
"""Checks the module layout tables in the docs against the files: every Rust module doc
with a table whose first column is `file` or `module` must name each of its directory's
modules (a `foo.rs` or a `foo/` with a `mod.rs`), and every name it gives must exist.
Test-only modules (`tests`, `props`, `proptests`, `fixtures`, `*_tests`) need no row.

Usage: scripts/layout-table.py            list what is wrong
       scripts/layout-table.py --check    exit 1 if anything is
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CRATES = ["protocol", "transport", "server", "server-core", "host", "host-core", "surface", "games", "sim", "perf", "testkit", "testkit-msg", "tests", "cluster"]
TEST_ONLY = re.compile(r"^(tests|props|proptests|fixtures|.*_tests)$")
NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)(\.rs|/)?`")


def table(lines):
    """The first-column cells of the doc's layout table, or None without one."""
    cells, inside = [], False
    for line in lines:
        if not line.startswith("//!"):
            if inside:
                break
            continue
        text = line[3:].strip()
        if not text.startswith("|"):
            if inside:
                break
            continue
        first = text.strip("|").split("|")[0].strip()
        if not inside:
            if first.lower() in ("file", "module"):
                inside = True
            continue
        if set(first) <= set("-: "):
            continue
        cells.append(first)
    return cells if inside else None


def modules(directory):
    """The modules a directory holds, by name."""
    found = set()
    for p in directory.iterdir():
        if p.is_file() and p.suffix == ".rs" and p.stem not in ("mod", "lib", "main"):
            found.add(p.stem)
        elif p.is_dir() and (p / "mod.rs").exists():
            found.add(p.name)
    return found


def problems():
    out = []
    for crate in CRATES:
        for path in sorted((ROOT / crate / "src").rglob("*.rs")):
            cells = table(path.read_text(encoding="utf-8").splitlines())
            if cells is None:
                continue
            if path.name in ("mod.rs", "lib.rs", "main.rs"):
                directory = path.parent
            else:
                directory = path.with_suffix("")
            if not directory.is_dir():
                continue
            rel = path.relative_to(ROOT)
            named = set()
            for cell in cells:
                for m in NAME.finditer(cell):
                    named.add(m.group(1))
            present = modules(directory)
            for name in sorted(named - present - {"mod", "lib"}):
                out.append(f"{rel}: names `{name}`, which is not a module of {directory.relative_to(ROOT)}")
            for name in sorted(present - named):
                if not TEST_ONLY.match(name):
                    out.append(f"{rel}: module `{name}` has no row")
    return out


def main():
    found = problems()
    for p in found:
        print(p)
    if "--check" in sys.argv[1:] and found:
        print(f"{len(found)} layout table problem(s)", file=sys.stderr)
        return 1
    if not found:
        print("every layout table matches its directory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
