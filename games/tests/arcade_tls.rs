//! The arcade over TLS, end to end: the real `mcpl-arcade serve --tls-cert … --tls-key …`
//! with a certificate from a CA made for the test, and the project's host (`Host`) trusting
//! that CA (`ClientTls::with_ca_file`, as `mcpl-host --ca-file` does) playing tic-tac-toe
//! against the bot over `wss://` and over `https://`. A certificate for another name, or a
//! host that does not trust the CA, leaves the server unreachable: the host refuses it.

use crate::support;

use mcpl_host::host::{HostConfig, ServerConfig};
use mcpl_host::link::Connector;
use mcpl_testkit::tls::{CertFiles, TestCa};
use mcpl_transport::tls::rustls::{CertificateError, Error as RustlsError};
use mcpl_transport::{ClientOptions, ClientTls, TransportError};
use serde_json::json;
use std::path::{Path, PathBuf};
use support::host::{Agent, SERVER};
use support::serve;

/// A CA, its file, and a server certificate it signed for `names`.
fn pki(dir: &Path, names: &[&str]) -> (PathBuf, CertFiles) {
    let ca = TestCa::new("arcade test CA");
    let files = ca.server_cert(names).write(dir, "arcade");
    (ca.write(dir), files)
}

/// `mcpl-arcade serve` on both listeners with TLS; its `wss://` and `https://` URLs.
async fn serve_tls(files: &CertFiles) -> (tokio::process::Child, Vec<String>) {
    let (cert, key) = (files.cert.to_str().unwrap(), files.key.to_str().unwrap());
    #[rustfmt::skip]
    let args = [
        "--ws", "127.0.0.1:0", "--http", "127.0.0.1:0", "--token", "alice=alice",
        "--tls-cert", cert, "--tls-key", key, "--bot-playouts", "64", "--seed", "1",
    ];
    serve(&args, 2).await
}

fn options(ca_file: Option<&Path>) -> ClientOptions {
    ClientOptions {
        token: Some("alice".to_owned()),
        tls: ca_file
            .map(|f| ClientTls::with_ca_file(f).unwrap())
            .unwrap_or_default(),
        ..ClientOptions::default()
    }
}

fn host_config(url: &str, ca_file: Option<&Path>) -> HostConfig {
    HostConfig::new(vec![ServerConfig::url_with(SERVER, url, options(ca_file))])
}

/// Opens tic-tac-toe against the bot and plays the first legal cell until the game ends.
async fn play_tictactoe(alice: &Agent) -> String {
    let opened = alice
        .open(json!({"toolset": "tictactoe", "instance": "t", "options": {}}))
        .await;
    assert!(opened.contains("Tic-tac-toe against the bot"), "{opened}");
    for _ in 0..5 {
        let cells = alice.moves("tictactoe_play", "t").await;
        let text = alice
            .act("tictactoe_play", Some("t"), json!({"move": cells[0]}))
            .await;
        if text.contains("Game over:") {
            return text;
        }
    }
    panic!("the game did not end within five moves of ours");
}

#[actix::test]
async fn the_host_plays_the_arcade_over_wss_and_https() {
    let dir = tempfile::tempdir().unwrap();
    let (ca_file, files) = pki(dir.path(), &["localhost", "127.0.0.1"]);
    let (_arcade, urls) = serve_tls(&files).await;
    assert!(urls[0].starts_with("wss://127.0.0.1:"), "{urls:?}");
    assert!(
        urls[1].starts_with("https://127.0.0.1:") && urls[1].ends_with("/mcp"),
        "{urls:?}"
    );
    for url in &urls {
        let alice = Agent::with(host_config(url, Some(&ca_file)), "alice").await;
        let status = alice.host.status();
        assert!(status.server(SERVER).unwrap().ready, "{url}: {status:?}");
        let last = play_tictactoe(&alice).await;
        assert!(
            last.contains("O (bot) wins") || last.contains("Draw"),
            "{url}: {last}"
        );
        alice.stop().await;
    }
}

#[actix::test]
async fn the_host_refuses_a_certificate_for_another_name_or_from_an_unknown_ca() {
    let dir = tempfile::tempdir().unwrap();
    let (ca_file, files) = pki(dir.path(), &["arcade.example"]);
    let (_arcade, urls) = serve_tls(&files).await;
    for url in &urls {
        // What the host's link sees when it connects.
        let refused = Connector::url(url.clone(), options(Some(&ca_file)))
            .connect()
            .await;
        match refused {
            Err(TransportError::Tls { host, error }) => {
                assert_eq!(host, "127.0.0.1");
                assert!(
                    matches!(
                        error,
                        RustlsError::InvalidCertificate(
                            CertificateError::NotValidForName
                                | CertificateError::NotValidForNameContext { .. }
                        )
                    ),
                    "{url}: {error:?}"
                );
            }
            other => panic!("{url}: expected a TLS refusal, got {other:?}"),
        }
        let unknown = Connector::url(url.clone(), options(None)).connect().await;
        assert!(
            matches!(
                unknown,
                Err(TransportError::Tls {
                    error: RustlsError::InvalidCertificate(CertificateError::UnknownIssuer),
                    ..
                })
            ),
            "{url}: {unknown:?}"
        );
        // The host itself: the server stays unreachable, never ready.
        let alice = Agent::with(host_config(url, Some(&ca_file)), "alice").await;
        let status = alice.host.status();
        let arcade = status.server(SERVER).unwrap();
        assert!(arcade.unreachable && !arcade.ready, "{url}: {status:?}");
        alice.stop().await;
    }
}

#[actix::test]
async fn unusable_tls_files_stop_the_arcade_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (_, files) = pki(dir.path(), &["localhost"]);
    let missing = dir.path().join("missing.pem");
    let (key, missing_s) = (files.key.to_str().unwrap(), missing.to_str().unwrap());
    let cert = files.cert.to_str().unwrap();
    // A missing file; a key where the certificate goes; --tls-cert alone; no listener.
    for (args, says) in [
        (vec!["--tls-cert", missing_s, "--tls-key", key], missing_s),
        (vec!["--tls-cert", key, "--tls-key", key], key),
        (vec!["--tls-cert", cert], "--tls-key"),
    ] {
        let out = tokio::process::Command::new(support::BIN)
            .args([
                "serve",
                "--in-memory",
                "--ws",
                "127.0.0.1:0",
                "--token",
                "a=b",
            ])
            .args(&args)
            .output()
            .await
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let out = tokio::process::Command::new(support::BIN)
        .args([
            "serve",
            "--in-memory",
            "--stdio",
            "--tls-cert",
            cert,
            "--tls-key",
            key,
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--tls-cert"));
}
