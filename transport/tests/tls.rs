//! TLS on loopback, both transports, with a CA made at test time: a client trusting the CA
//! reaches `wss://` and `https://` listeners; a certificate for another name and one from an
//! unknown CA are refused with `TransportError::Tls`; a client that stalls its handshake
//! holds up no other.

use crate::support;

use mcpl_testkit::tls::{CertFiles, TestCa};
use mcpl_testkit::within_named;
use mcpl_transport::tls::rustls::{CertificateError, Error as RustlsError};
use mcpl_transport::{
    ClientOptions, ClientTls, Connection, Principal, ServerOptions, ServerTls, TransportError,
    TransportKind, connect, http, ws,
};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::*;
use tempfile::TempDir;

/// A CA, a server certificate it signed for `names`, and the files they are in.
struct Pki {
    dir: TempDir,
    ca: TestCa,
    ca_file: std::path::PathBuf,
}

impl Pki {
    /// A CA named `name` (a CA of the same name would be taken for it, and its
    /// signature found bad rather than its issuer unknown).
    fn new(name: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ca = TestCa::new(name);
        let ca_file = ca.write(dir.path());
        Pki { dir, ca, ca_file }
    }

    fn server_cert(&self, names: &[&str], stem: &str) -> CertFiles {
        self.ca.server_cert(names).write(self.dir.path(), stem)
    }

    /// Server options serving TLS with a certificate for `names`.
    fn server(&self, names: &[&str]) -> ServerOptions {
        let files = self.server_cert(names, "server");
        ServerOptions {
            tls: Some(ServerTls::from_pem_files(&files.cert, &files.key).unwrap()),
            ..server_opts()
        }
    }

    /// Client options trusting this CA, presenting alice's token.
    fn client(&self) -> ClientOptions {
        ClientOptions {
            tls: ClientTls::with_ca_file(&self.ca_file).unwrap(),
            ..client_opts(Some("s3cret"))
        }
    }
}

fn wss_url(listener: &ws::WsListener) -> String {
    format!("wss://localhost:{}/", listener.local_addr().port())
}

fn https_url(listener: &http::HttpListener) -> String {
    format!("https://localhost:{}/mcp", listener.local_addr().port())
}

/// A message each way over a linked pair.
async fn round_trip(client: &mut Connection, server: &mut Connection) {
    client
        .outbound
        .send(request(7, "ping", json!({})))
        .await
        .unwrap();
    let (_, req) = next_request(server).await;
    assert_eq!(req.method, "ping");
    server
        .outbound
        .send(ok(7, json!({"pong": true})))
        .await
        .unwrap();
    assert_eq!(
        next_response(client).await.1.result_value(),
        Ok(json!({"pong": true}))
    );
}

#[tokio::test]
async fn a_client_trusting_the_ca_reaches_wss_and_https() {
    let pki = Pki::new("transport test CA");
    let opts = Arc::new(pki.server(&["localhost"]));

    let mut wl = ws::bind(loopback(), opts.clone()).await.unwrap();
    let mut client = connect(&wss_url(&wl), &pki.client()).await.unwrap();
    let mut server = within_named("accept", wl.accept()).await.unwrap();
    assert_eq!(client.info.kind, TransportKind::WebSocket);
    assert_eq!(
        server.info.principal,
        Some(Principal::Named("alice".into()))
    );
    round_trip(&mut client, &mut server).await;

    let mut hl = http::bind(loopback(), "/mcp", opts).await.unwrap();
    let mut client = connect(&https_url(&hl), &pki.client()).await.unwrap();
    assert_eq!(client.info.kind, TransportKind::StreamableHttp);
    client.outbound.send(initialize(0)).await.unwrap();
    let mut server = within_named("accept", hl.accept()).await.unwrap();
    let (_, init) = next_request(&mut server).await;
    assert_eq!(init.method, "initialize");
    server.outbound.send(ok(0, json!({}))).await.unwrap();
    assert_eq!(
        next_response(&mut client).await.1.result_value(),
        Ok(json!({}))
    );
    round_trip(&mut client, &mut server).await;
}

/// The rustls error of a refused connection.
fn tls_error(result: Result<Connection, TransportError>, url: &str) -> RustlsError {
    match result {
        Err(TransportError::Tls { host, error }) => {
            assert_eq!(host, "localhost", "{url}");
            error
        }
        other => panic!("{url}: expected a TLS error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_certificate_for_another_name_is_refused() {
    let pki = Pki::new("transport test CA");
    let opts = Arc::new(pki.server(&["arcade.example"]));
    let wl = ws::bind(loopback(), opts.clone()).await.unwrap();
    let hl = http::bind(loopback(), "/mcp", opts).await.unwrap();
    for url in [wss_url(&wl), https_url(&hl)] {
        let error = tls_error(connect(&url, &pki.client()).await, &url);
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
}

#[tokio::test]
async fn a_certificate_from_an_unknown_ca_is_refused() {
    let pki = Pki::new("transport test CA");
    let opts = Arc::new(pki.server(&["localhost"]));
    let wl = ws::bind(loopback(), opts.clone()).await.unwrap();
    let hl = http::bind(loopback(), "/mcp", opts).await.unwrap();
    // Another private CA, and the webpki roots alone: neither signed the server's.
    let stranger = Pki::new("a stranger's CA");
    for client in [stranger.client(), client_opts(Some("s3cret"))] {
        for url in [wss_url(&wl), https_url(&hl)] {
            let error = tls_error(connect(&url, &client).await, &url);
            assert_eq!(
                error,
                RustlsError::InvalidCertificate(CertificateError::UnknownIssuer),
                "{url}"
            );
        }
    }
}

#[tokio::test]
async fn a_stalled_handshake_holds_up_no_other_client() {
    let pki = Pki::new("transport test CA");
    let opts = Arc::new(ServerOptions {
        // Far past the bound below: a handshake done in the accept loop would show.
        http_read_timeout: Duration::from_secs(120),
        ..pki.server(&["localhost"])
    });
    let mut wl = ws::bind(loopback(), opts.clone()).await.unwrap();
    let mut hl = http::bind(loopback(), "/mcp", opts).await.unwrap();
    // Connected, and never a byte of a ClientHello.
    let _stalled_ws = tokio::net::TcpStream::connect(wl.local_addr())
        .await
        .unwrap();
    let _stalled_http = tokio::net::TcpStream::connect(hl.local_addr())
        .await
        .unwrap();
    let bound = Duration::from_secs(5);
    let linked = tokio::time::timeout(bound, async {
        let client = connect(&wss_url(&wl), &pki.client()).await.unwrap();
        let server = wl.accept().await.unwrap();
        let http_client = connect(&https_url(&hl), &pki.client()).await.unwrap();
        http_client.outbound.send(initialize(0)).await.unwrap();
        let http_server = hl.accept().await.unwrap();
        (client, server, http_client, http_server)
    })
    .await;
    assert!(linked.is_ok(), "a stalled handshake held up the others");
}

#[tokio::test]
async fn a_plain_client_gets_nothing_from_a_tls_listener() {
    let pki = Pki::new("transport test CA");
    let opts = Arc::new(pki.server(&["localhost"]));
    let wl = ws::bind(loopback(), opts.clone()).await.unwrap();
    let url = format!("ws://localhost:{}/", wl.local_addr().port());
    let result = within_named("a refusal", connect(&url, &pki.client())).await;
    assert!(result.is_err(), "plain ws:// reached a TLS listener");
}
