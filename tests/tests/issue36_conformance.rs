//! Issue #36, item 15, from outside: the real `mcpl-conformance` and
//! `mcpl-fixture-server` binaries.

use crate::conformance_support;

use conformance_support::*;

/// A server built on our SDK that is not the fixture: none of the contract's toolsets.
const NOT_THE_FIXTURE: &str = env!("CARGO_BIN_EXE_mcpl-interop-server");

/// Against a server that does not meet the fixture contract, the vectors (which call the
/// contract's names) are skipped, not reported as failures of RFC-014; and the run is no
/// pass.
#[test]
fn issue36_15_against_a_server_without_the_fixture_contract_the_vectors_are_skipped() {
    let cmd = format!("'{NOT_THE_FIXTURE}' stdio");
    let run = conformance(&["--cmd", &cmd, "--only", "0,1,5,6", "--timeout-ms", "3000"]);
    assert_eq!(run.status.code(), Some(1), "{}", run.dump());
    assert!(run.line(0).contains(": fail [fixture]: "), "{}", run.dump());
    for n in [1, 5, 6] {
        let line = run.line(n);
        assert!(
            line.contains(": skip [RFC]: the server does not meet the fixture contract"),
            "{line}\n{}",
            run.dump()
        );
    }
    assert_eq!(
        run.summary(),
        "0 passed, 0 failed (3 skipped) [RFC]; fixture contract: 1 departed",
        "{}",
        run.dump()
    );
}

/// `mcpl-fixture-server --token NAME=SECRET`, in the order every other binary takes: the
/// runner, given the secret, reaches the named principal its shared-principal vector needs.
#[test]
fn issue36_15_the_fixture_server_takes_token_as_name_equals_secret() {
    let server = Fixture::spawn("--ws", &["--token", "alice=s3cret"]);
    let run = conformance(&[
        "--url",
        &server.url,
        "--token",
        "s3cret",
        "--only",
        "0,9",
        "--timeout-ms",
        "3000",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", run.dump());
    assert!(run.line(9).ends_with(": pass [RFC]"), "{}", run.dump());
}
