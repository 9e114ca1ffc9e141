//! The text of a caught panic, for what a handler's, a logic's or a background work's
//! panic is reported as.

/// The text of a panic payload (`panic!` gives a `&str` or a `String`).
pub(crate) fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => payload
            .downcast_ref::<&str>()
            .map_or_else(|| "a non-string panic".to_owned(), |s| (*s).to_owned()),
    }
}
