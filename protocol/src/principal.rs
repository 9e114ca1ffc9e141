//! [`Principal`]: who a server-side connection authenticated as (RFC-014 §4.6). It lives
//! here, beside the wire types, so that the server's pure cores (`mcpl-server-core`) name a
//! principal without depending on the transport; `mcpl_transport::Principal` is this type.

use std::sync::atomic::{AtomicU64, Ordering};

/// Who a server-side connection authenticated as (RFC-014 §4.6).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Principal {
    /// A principal the operator configured (a bearer token's name, or stdio's principal).
    /// Connections of one named principal share its toolsets.
    Named(String),
    /// A connection the operator let in without a token; its own principal, sharing nothing.
    Anonymous(u64),
}

impl Principal {
    /// A fresh anonymous principal, distinct from every other in this process.
    pub fn anonymous() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Principal::Anonymous(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// A name for logs and for other principals to refer to (an anonymous one gets
    /// `anon-N`).
    pub fn name(&self) -> String {
        match self {
            Principal::Named(n) => n.clone(),
            Principal::Anonymous(n) => format!("anon-{n}"),
        }
    }
}
