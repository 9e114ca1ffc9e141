#!/usr/bin/env python3
"""Lists each crate's integration test binaries and the files in tests/ each one holds, by
following `mod` declarations (and `#[path]`) from each binary's root file.

The crates build one test binary, `it` (`autotests = false`, tests/it.rs declaring each file
as a module), so that `cargo test --workspace` links one binary per crate rather than one
per file. With `autotests = false` a new file in tests/ is in no binary unless a `mod` line
or a `[[test]]` names it, and cargo would skip it without a word: `--check` fails then.

Usage: scripts/test-binaries.py            list the binaries and their files
       scripts/test-binaries.py --check    exit 1 if a file in a crate's tests/ is in no
                                           binary or a binary's root file is missing
"""

import pathlib
import re
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
# `#[path = "…"]` (other attributes may stand between it and the `mod`), then `mod name;`.
MOD = re.compile(r'((?:#\[[^\]]*\]\s*)*)(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;')
PATH = re.compile(r'#\[path\s*=\s*"([^"]+)"\]')
COMMENT = re.compile(r"//[^\n]*")


def crates():
    """The directories of the workspace's members, and of the fuzz crate (a workspace of its
    own), that have a tests/ directory."""
    members = tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))["workspace"]["members"]
    dirs = [ROOT / m for m in members] + [ROOT / "fuzz"]
    return [d for d in dirs if (d / "Cargo.toml").is_file() and (d / "tests").is_dir()]


def roots(crate):
    """The crate's test binaries: name -> root file, as cargo finds them."""
    manifest = tomllib.loads((crate / "Cargo.toml").read_text(encoding="utf-8"))
    found = {}
    if manifest.get("package", {}).get("autotests", True):
        for p in sorted((crate / "tests").glob("*.rs")):
            found[p.stem] = p
        for p in sorted((crate / "tests").glob("*/main.rs")):
            found[p.parent.name] = p
    for t in manifest.get("test", []):
        found[t["name"]] = crate / t.get("path", f"tests/{t['name']}.rs")
    return found


def reached(root):
    """Every file a binary's root file brings in through `mod` declarations."""
    seen, todo = set(), [(root, True)]
    while todo:
        path, owns_dir = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        # A crate root, a mod.rs or a file loaded by #[path] keeps its modules beside it;
        # any other file keeps them in a directory named after it.
        base = path.parent if owns_dir else path.with_suffix("")
        text = COMMENT.sub("", path.read_text(encoding="utf-8"))
        for m in MOD.finditer(text):
            given = PATH.search(m.group(1))
            if given:
                todo.append((path.parent / given.group(1), True))
            else:
                name = m.group(2)
                flat, nested = base / f"{name}.rs", base / name / "mod.rs"
                todo.append((flat, False) if flat.is_file() else (nested, True))
    return seen


def main():
    check = "--check" in sys.argv
    problems, total = [], 0
    for crate in crates():
        held = set()
        for name, root in roots(crate).items():
            rel = root.relative_to(ROOT)
            if not root.is_file():
                problems.append(f"{crate.name}: test binary `{name}` names {rel}, which is not there")
                continue
            files = reached(root)
            held |= files
            total += 1
            if not check:
                print(f"{crate.name}: `{name}` ({rel}): {len(files)} files")
        for p in sorted((crate / "tests").rglob("*.rs")):
            if p.resolve() not in {f.resolve() for f in held}:
                problems.append(
                    f"{p.relative_to(ROOT)} is in no test binary: add `mod {p.stem};` to "
                    f"{crate.name}/tests/it.rs (or a [[test]] in {crate.name}/Cargo.toml)"
                )
    if not check:
        print(f"{total} test binaries")
    for p in problems:
        print(p, file=sys.stderr)
    if check and problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
