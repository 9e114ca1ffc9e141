//! `jsonrpc_decode`: any bytes given to [`Message::decode`].
//!
//! - it never panics;
//! - what decodes re-encodes to text that decodes to an equal message, and encoding that
//!   again gives the same text (the encoding is canonical);
//! - what does not decode yields an error whose response has code -32700 (not JSON, with a
//!   `null` id) or -32600 (JSON of the wrong shape, keeping the id where it was readable),
//!   and that response is itself a message that round-trips.

use mcpl_protocol::jsonrpc::{DecodeError, ErrorCode, Message};

/// Checks the properties above for one input.
pub fn check(data: &[u8]) {
    match Message::decode(data) {
        Ok(message) => assert_round_trip(&message),
        Err(e) => {
            let response = e.to_response();
            let code = match &response.outcome {
                Ok(v) => panic!("a decode error's response is a success: {v}"),
                Err(err) => err.code,
            };
            match &e {
                DecodeError::Parse(_) => {
                    assert_eq!(code, ErrorCode::PARSE_ERROR, "parse error code");
                    assert_eq!(response.id, None, "a parse error cannot name an id");
                }
                DecodeError::Invalid { id, .. } => {
                    assert_eq!(code, ErrorCode::INVALID_REQUEST, "invalid request code");
                    assert_eq!(&response.id, id, "the readable id is kept");
                }
                other => panic!("a decode error of an unknown kind: {other:?}"),
            }
            assert_round_trip(&Message::Response(response));
        }
    }
}

fn assert_round_trip(message: &Message) {
    let text = message.encode();
    let again = Message::decode(text.as_bytes())
        .unwrap_or_else(|e| panic!("re-encoded message does not decode ({e:?}): {text}"));
    assert_eq!(&again, message, "round trip changed the message: {text}");
    assert_eq!(again.encode(), text, "encoding is not canonical");
}
