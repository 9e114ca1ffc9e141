#!/usr/bin/env bash
# Starts what several arcade nodes share, on loopback, for trying it (issue #41):
# a PostgreSQL (made with initdb on first use, run with pg_ctl) and a nats-server
# (`-a 127.0.0.1`, no configuration file, no JetStream). Prints their URLs.
#
#   scripts/cluster-up.sh          start both (a no-op for one already running)
#   scripts/cluster-up.sh stop     stop both, by the process ids they wrote
#   scripts/cluster-up.sh status   say what runs
#
# Not for production: PostgreSQL lets anyone on loopback in without a password (`trust`),
# NATS has no authentication. Everything lives in $MCPL_CLUSTER_DIR (default
# ${TMPDIR:-/tmp}/mcpl-cluster): the database's files, both logs and pid files; remove it
# to start from nothing. Ports: $MCPL_PG_PORT (default 54329), $MCPL_NATS_PORT (default
# 42229). initdb refuses to run as root: run as root, PostgreSQL is made and run as the
# unprivileged user `postgres` (Debian's `postgresql` package creates it), with runuser.
# Needs Debian's `postgresql` and `nats-server` packages (apt-get install postgresql
# nats-server).
set -euo pipefail

DIR=${MCPL_CLUSTER_DIR:-${TMPDIR:-/tmp}/mcpl-cluster}
PG_PORT=${MCPL_PG_PORT:-54329}
NATS_PORT=${MCPL_NATS_PORT:-42229}
DATA=$DIR/pgdata
PG_LOG=$DIR/postgres.log
NATS_LOG=$DIR/nats.log
NATS_PID=$DIR/nats.pid
DB=arcade

die() { echo "cluster-up: $*" >&2; exit 1; }

pg_bindir() {
    local d
    d=$(pg_config --bindir 2>/dev/null || true)
    if [ -n "$d" ] && [ -x "$d/initdb" ]; then echo "$d"; return 0; fi
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
        if [ -x "$d/initdb" ]; then echo "$d"; return 0; fi
    done
    d=$(command -v initdb 2>/dev/null || true)
    if [ -n "$d" ]; then dirname "$d"; return 0; fi
    return 1
}

nats_bin() {
    command -v nats-server 2>/dev/null && return 0
    [ -x /usr/sbin/nats-server ] && echo /usr/sbin/nats-server && return 0
    return 1
}

# Runs a PostgreSQL command as the user owning the cluster: `postgres` when we are root.
as_pg() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# The pid a pid file names, when that process is alive.
live_pid() {
    local file=$1 pid
    [ -f "$file" ] || return 1
    pid=$(head -n 1 "$file")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# Waits (at most 30 s) for a process to be gone.
wait_gone() {
    local pid=$1 i
    for i in $(seq 300); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}

pg_url() { echo "postgres://postgres@127.0.0.1:$PG_PORT/$DB"; }
nats_url() { echo "nats://127.0.0.1:$NATS_PORT"; }

start_pg() {
    local bin
    bin=$(pg_bindir) || die "PostgreSQL's initdb was not found: apt-get install postgresql"
    if live_pid "$DATA/postmaster.pid" >/dev/null; then
        echo "PostgreSQL already runs (pid $(live_pid "$DATA/postmaster.pid"))"
        return 0
    fi
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || die "running as root and there is no user postgres to run PostgreSQL as (apt-get install postgresql creates it)"
        chown postgres: "$DIR"
    fi
    if [ ! -f "$DATA/PG_VERSION" ]; then
        as_pg "$bin/initdb" -D "$DATA" -U postgres --auth=trust --locale=C -E UTF8 >"$DIR/initdb.log" 2>&1 \
            || die "initdb failed: see $DIR/initdb.log"
    fi
    # TCP on loopback only, no Unix socket (nothing to share a directory for).
    as_pg "$bin/pg_ctl" -D "$DATA" -l "$PG_LOG" -w -t 60 \
        -o "-h 127.0.0.1 -p $PG_PORT -c unix_socket_directories=''" start >/dev/null \
        || die "PostgreSQL did not start: see $PG_LOG"
    if ! "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1; then
        "$bin/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres "$DB"
    fi
    echo "PostgreSQL runs (pid $(live_pid "$DATA/postmaster.pid")), log $PG_LOG"
}

start_nats() {
    local bin pid i
    bin=$(nats_bin) || die "nats-server was not found: apt-get install nats-server"
    if pid=$(live_pid "$NATS_PID"); then
        echo "NATS already runs (pid $pid)"
        return 0
    fi
    : >"$NATS_LOG"
    "$bin" -a 127.0.0.1 -p "$NATS_PORT" -P "$NATS_PID" -l "$NATS_LOG" </dev/null >/dev/null 2>&1 &
    pid=$!
    for i in $(seq 300); do
        grep -q "Server is ready" "$NATS_LOG" 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || die "nats-server stopped: see $NATS_LOG"
        sleep 0.1
    done
    grep -q "Server is ready" "$NATS_LOG" || die "nats-server was not ready within 30 s: see $NATS_LOG"
    echo "NATS runs (pid $pid), log $NATS_LOG"
}

stop_all() {
    local pid
    if pid=$(live_pid "$NATS_PID"); then
        kill -TERM "$pid"
        wait_gone "$pid" || die "nats-server (pid $pid) did not stop"
        rm -f "$NATS_PID"
        echo "NATS stopped (pid $pid)"
    else
        echo "NATS was not running"
    fi
    if pid=$(live_pid "$DATA/postmaster.pid"); then
        # SIGINT: PostgreSQL's fast shutdown (sessions ended, data flushed).
        kill -INT "$pid"
        wait_gone "$pid" || die "PostgreSQL (pid $pid) did not stop"
        echo "PostgreSQL stopped (pid $pid)"
    else
        echo "PostgreSQL was not running"
    fi
}

status() {
    local pid
    if pid=$(live_pid "$DATA/postmaster.pid"); then echo "PostgreSQL runs (pid $pid): $(pg_url)"; else echo "PostgreSQL is not running"; fi
    if pid=$(live_pid "$NATS_PID"); then echo "NATS runs (pid $pid): $(nats_url)"; else echo "NATS is not running"; fi
}

case "${1:-start}" in
    start)
        mkdir -p "$DIR"
        start_pg
        start_nats
        echo
        echo "PostgreSQL: $(pg_url)"
        echo "NATS:       $(nats_url)"
        echo "Stop both:  $0 stop"
        ;;
    stop) stop_all ;;
    status) status ;;
    *) die "usage: $0 [start|stop|status]" ;;
esac
