//! [`InstanceKey`]: what names an open toolset or instance, in every part of the
//! principal's state.

use std::fmt;

/// An open toolset: `(toolset, instance)`, the instance absent for a toolset without
/// instances.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct InstanceKey {
    /// The toolset.
    pub toolset: String,
    /// The instance's name, for a toolset with instances.
    pub instance: Option<String>,
}

impl InstanceKey {
    /// The key of a toolset without instances.
    pub fn toolset(toolset: impl Into<String>) -> Self {
        InstanceKey {
            toolset: toolset.into(),
            instance: None,
        }
    }

    /// The key of a named instance.
    pub fn instance(toolset: impl Into<String>, instance: impl Into<String>) -> Self {
        InstanceKey {
            toolset: toolset.into(),
            instance: Some(instance.into()),
        }
    }
}

impl fmt::Display for InstanceKey {
    /// `toolset` or `toolset:instance`, as in a host's marker (§6).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.instance {
            Some(i) => write!(f, "{}:{}", self.toolset, i),
            None => f.write_str(&self.toolset),
        }
    }
}
