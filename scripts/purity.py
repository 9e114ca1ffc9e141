#!/usr/bin/env python3
"""Checks that the pure cores stay pure: the protocol rules that other implementers read
(`server/src/core/`, `host/src/state/`, `host/src/link/core/`) reach no runtime, no
transport and no I/O. The actors beside them do that; a core gets time as an argument and
returns what to do.

A line of Rust code (comments are skipped) in a core file fails the check when it names
an async runtime or actor framework (tokio, actix, futures), the project's transport or
an HTTP/WebSocket crate, the file system, the network, processes, threads, or a lock.

Usage: scripts/purity.py            list what is found
       scripts/purity.py --check    exit 1 if anything is found
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORES = ["server/src/core", "host/src/state", "host/src/link/core"]
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


def main():
    found = findings()
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
        print("the cores reach no runtime, transport or I/O: " + ", ".join(CORES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
