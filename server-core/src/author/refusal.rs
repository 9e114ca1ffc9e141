//! [`Refusal`]: an open or a join an instance's logic will not do, as a value the logic
//! returns and the cores carry to the host.

/// An open or a join the logic will not do; the host is told why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("{message}")]
pub struct Refusal {
    message: String,
}

impl Refusal {
    /// A refusal saying why.
    pub fn new(message: impl Into<String>) -> Self {
        Refusal {
            message: message.into(),
        }
    }

    /// Why.
    pub fn message(&self) -> &str {
        &self.message
    }
}
