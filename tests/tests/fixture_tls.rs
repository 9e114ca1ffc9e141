//! `mcpl-fixture-server --tls-cert … --tls-key …`: the fixture serves `wss://` and
//! `https://`, announces those URLs, and answers `initialize` to a client trusting the CA
//! made for the test; `mcpl-conformance --ca-file` runs every vector over either.

use crate::conformance_support;

use conformance_support::{Fixture, VectorId, assert_all_pass, conformance};
use mcpl_protocol::{Id, Message, Request};
use mcpl_testkit::tls::TestCa;
use mcpl_transport::{ClientOptions, ClientTls, Inbound, connect};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn the_fixture_serves_tls_on_either_listener() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("fixture test CA");
    let files = ca.server_cert(&["127.0.0.1"]).write(dir.path(), "fixture");
    let ca_file = ca.write(dir.path());
    let (cert, key) = (files.cert.to_str().unwrap(), files.key.to_str().unwrap());
    for (transport, scheme) in [("--ws", "wss://"), ("--http", "https://")] {
        let fixture = Fixture::spawn(transport, &["--tls-cert", cert, "--tls-key", key]);
        assert!(fixture.url.starts_with(scheme), "{}", fixture.url);
        let opts = ClientOptions {
            tls: ClientTls::with_ca_file(&ca_file).unwrap(),
            ..ClientOptions::default()
        };
        let mut conn = connect(&fixture.url, &opts).await.unwrap();
        let initialize = Request {
            id: Id::Number(1),
            method: "initialize".into(),
            params: Some(mcpl_protocol::jsonrpc::to_raw(&json!({
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}))),
        };
        conn.outbound.send(initialize.into()).await.unwrap();
        let read = tokio::time::timeout(Duration::from_secs(20), conn.inbound.recv()).await;
        match read.expect("an answer in time") {
            Some(Inbound::Message {
                message: Message::Response(r),
                ..
            }) => {
                let result = r.result_value().expect("initialize succeeds");
                assert!(result.get("serverInfo").is_some(), "{transport}: {result}");
            }
            other => panic!("{transport}: expected the initialize result, got {other:?}"),
        }
    }
}

#[test]
fn every_vector_passes_over_wss_and_https() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("conformance test CA");
    let files = ca.server_cert(&["127.0.0.1"]).write(dir.path(), "fixture");
    let ca_file = ca.write(dir.path());
    let (cert, key) = (files.cert.to_str().unwrap(), files.key.to_str().unwrap());
    for transport in ["--ws", "--http"] {
        let server = Fixture::spawn(transport, &["--tls-cert", cert, "--tls-key", key]);
        let run = conformance(&["--url", &server.url, "--ca-file", ca_file.to_str().unwrap()]);
        // S20, a listen stream's bound, is checked on Streamable HTTP alone.
        let skipped = if transport == "--ws" {
            vec![VectorId::Stateless(20)]
        } else {
            Vec::new()
        };
        assert_all_pass(&run, &skipped);
        // Without the CA, the runner cannot get in.
        let refused = conformance(&["--url", &server.url, "--only", "1"]);
        assert!(!refused.status.success(), "{}", refused.dump());
    }
}
