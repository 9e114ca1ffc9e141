//! Issue #43 item 4, `mcpl-host` as a person runs it: a server URL without a scheme is
//! refused at start naming it and what is expected (it was retried as "bad server URL"
//! forever); a `stdio:` program that is not on the PATH is named, with the PATH; and no
//! colour codes reach a stderr that is not a terminal.

use std::process::{Command, Output, Stdio};

const HOST: &str = env!("CARGO_BIN_EXE_mcpl-host");

/// Runs `mcpl-host console` with these servers and its input closed at once, its stderr
/// piped (not a terminal), at its own default log level.
fn console(servers: &[&str], path: Option<&str>) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Command::new(HOST);
    c.arg("console");
    for s in servers {
        c.args(["--server", s]);
    }
    c.arg("--state-dir").arg(dir.path());
    if let Some(path) = path {
        c.env("PATH", path);
    }
    c.env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("mcpl-host runs")
}

#[test]
fn issue43_04_a_a_url_without_a_scheme_is_refused_at_start_naming_it() {
    let out = console(&["arcade=127.0.0.1:8765"], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--server arcade")
            && stderr.contains("bad server URL \"127.0.0.1:8765\"")
            && stderr.contains("expected stdio:COMMAND, ws://HOST:PORT/PATH, wss://…")
            && stderr.contains("ws://127.0.0.1:8765"),
        "{stderr}"
    );
    // An error to fix, not a crash: no backtrace even with RUST_BACKTRACE set.
    assert!(!stderr.contains("Stack backtrace"), "{stderr}");
}

#[test]
fn issue43_04_c_a_command_not_on_the_path_is_named_with_the_path() {
    let out = console(
        &["local=stdio:mcpl-no-such-program-43 serve"],
        Some("/nowhere-43:/usr/bin"),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot start the stdio server \"mcpl-no-such-program-43\"")
            && stderr.contains("no such program on the PATH (PATH=/nowhere-43:/usr/bin)"),
        "{stderr}"
    );
}

#[test]
fn issue43_04_d_no_colour_codes_reach_a_stderr_that_is_not_a_terminal() {
    let out = console(&["local=stdio:mcpl-no-such-program-43"], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A warning was logged (the failed attempt), without colour.
    assert!(stderr.contains("WARN"), "{stderr}");
    assert!(!stderr.contains('\x1b'), "colour codes in {stderr:?}");
}
