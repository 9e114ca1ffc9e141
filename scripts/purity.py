#!/usr/bin/env python3
"""Checks that the pure cores stay pure: the protocol rules that other implementers read
(the `mcpl-server-core` crate: `server-core/src/`, and the `mcpl-host-core` crate:
`host-core/src/state/`, `host-core/src/link/`) reach no runtime, no transport and no I/O.
The actors beside them do that; a core gets time as an argument and returns what to do.

Two checks (issue #38):
- By the build: a core crate's dependencies (`cargo tree -p CRATE -e normal,dev`: what it
  is built with and what its own tests are built with) hold no async runtime, actor
  framework, futures crate, the project's transport, or an HTTP/WebSocket/TLS/socket crate.
  What a crate cannot depend on, it cannot call; and a core whose tests need a runtime is
  not sans-IO. (Build edges, `-e build`, are left out: a build script runs at compile time
  and puts nothing in the crate.)
- By line: a line of Rust code (comments are skipped) in a core file fails the check when
  it names such a crate, the file system, the network, processes, threads, or a lock
  (std offers these to every crate; only reading finds them).

Usage: scripts/purity.py            list what is found
       scripts/purity.py --check    exit 1 if anything is found
"""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORES = ["server-core/src", "host-core/src"]
# The crates that hold only pure cores, and the packages none of them may depend on.
CORE_CRATES = ["mcpl-server-core", "mcpl-host-core"]
# The edges read: what the crate links, and what its tests link.
EDGES = "normal,dev"
FORBIDDEN_PACKAGES = re.compile(
    r"^(tokio(-.*)?|actix(-.*)?|futures(-.*)?|mio|socket2|mcpl-transport|mcpl-server|mcpl-host"
    r"|tungstenite|tokio-tungstenite|reqwest|hyper(-.*)?|h2|http|http-body(-.*)?|axum(-.*)?"
    r"|tower(-.*)?|rustls(-.*)?|tokio-rustls|async-.*|redb|postgres(-.*)?|nix|rustix)$"
)
FORBIDDEN = re.compile(
    r"\b(tokio|actix|futures|futures_util|mcpl_transport|tokio_tungstenite|tungstenite"
    r"|reqwest|hyper|axum)::"
    r"|\bstd::(fs|net|process|thread)\b"
    r"|\b(Mutex|RwLock|Condvar)\b"
)


def code(line):
    """The line without its `//` comment (string literals holding `//` are rare enough in
    these files that a false hit would be seen and fixed)."""
    return line.split("//", 1)[0]


def findings():
    found = []
    for core in CORES:
        for path in sorted((ROOT / core).rglob("*.rs")):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                m = FORBIDDEN.search(code(line))
                if m:
                    found.append(f"{path.relative_to(ROOT)}:{n}: {m.group(0)}: {line.strip()}")
    return found


def crate_findings():
    """Each core crate's forbidden dependencies, normal and dev, by `cargo tree` (which
    fetches what a clean clone has not yet downloaded). A dev-dependency's own dependencies
    are its normal ones, so `-e normal,dev` is every crate the core's tests link."""
    found = []
    for crate in CORE_CRATES:
        tree = subprocess.run(
            ["cargo", "tree", "--locked", "-p", crate, "-e", EDGES, "--prefix", "none",
             "--format", "{p}"],
            cwd=ROOT, capture_output=True, text=True,
        )
        if tree.returncode != 0:
            found.append(f"{crate}: cargo tree failed: {tree.stderr.strip()}")
            continue
        names = {line.split()[0] for line in tree.stdout.splitlines() if line.strip()}
        for name in sorted(names):
            if FORBIDDEN_PACKAGES.match(name):
                found.append(f"{crate}: depends on {name} (cargo tree -p {crate} -e {EDGES} -i {name})")
    return found


def main():
    found = crate_findings() + findings()
    for f in found:
        print(f)
    if "--check" in sys.argv[1:] and found:
        print(
            f"{len(found)} line(s) in the pure cores reach a runtime, a transport or I/O; "
            "move that code beside the actors",
            file=sys.stderr,
        )
        return 1
    if not found:
        print(
            "the cores reach no runtime, transport or I/O: "
            + ", ".join(CORES)
            + "; the core crates depend on none, dev-dependencies included: "
            + ", ".join(CORE_CRATES)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
