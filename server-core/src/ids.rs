//! The ids the server's actors and cores name each other by, in a module of their own so
//! that everything may name them without depending on the actors.

use std::fmt;

/// Tells one instance actor from another (a record closed and re-opened under the same
/// name is another instance).
/// Serialized as its number (issue #41: it names the instance across nodes).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct InstanceId(pub u64);

impl fmt::Display for InstanceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "i{}", self.0)
    }
}

/// A session's id, unique within its `Server`.
/// Serialized as its number: a session of the principal's owner, named in what an
/// instance on another node answers (issue #41).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct SessionId(pub u64);

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "s{}", self.0)
    }
}
