//! What the simulator's binaries (`sim`, and `sim-perf` beside it) share around their
//! command lines: logging to standard error, and the exit code an outcome gives.

use std::fmt::Display;
use std::process::ExitCode;

/// Logs to standard error, at the level `RUST_LOG` asks for (by default errors only), in
/// colour only on a terminal (issue #43: no colour codes in a file, such as Claude
/// Desktop's log).
pub fn init_logging() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "error".into()),
        )
        .init();
}

/// The exit code of a run: 0 when it passed, 1 when it found a failure (a violated
/// invariant, a missed target), 2 when it could not run; that last is told on standard
/// error, named after `program` (with the error's chain, `{:#}`).
pub fn exit_code(program: &str, outcome: Result<bool, impl Display>) -> ExitCode {
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("{program}: {e:#}");
            ExitCode::from(2)
        }
    }
}
