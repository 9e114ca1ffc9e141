//! Durable instances (issue #15 **\[project\]**): an instance's logic that survives a
//! restart of the server, because it can be written down and read back.
//!
//! An author opts in per toolset: the logic type implements [`Durable`] (serde, with a
//! format version), the open returns it with [`Started::durable`](crate::Started::durable),
//! and the toolset registers how to read it back with
//! [`Toolset::durable`](crate::Toolset::durable). On a server built with a
//! [`Store`](crate::Store), the SDK writes the logic's state after every step, before the
//! step's answers and events go out, and reads it back when the server starts again.
//!
//! Logic that does not opt in keeps today's behaviour: it lives as long as the process.
//! After a restart its instances end, each with an ended record saying the server
//! restarted, so a host is told once what became of them (§4.3).

use super::context::InstanceContext;
use super::logic::{InstanceLogic, Joined, Refusal, Reply, ToolCall};
use super::participant::ParticipantId;
use mcpl_protocol::mcp::ContentBlock;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;

/// An instance's logic that is kept across restarts. See the module docs.
///
/// ```
/// use mcpl_server::{Durable, InstanceLogic, NoArguments, Reply, Started, Toolset};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize)]
/// struct Counter { n: u64 }
///
/// impl InstanceLogic for Counter {}
///
/// impl Durable for Counter {
///     const FORMAT: u32 = 1;
/// }
///
/// let counters = Toolset::new("counter")
///     .instances()
///     .route("count", "Counts", |c: &mut Counter, _: NoArguments, _, _| {
///         c.n += 1;
///         Reply::text(c.n.to_string())
///     })
///     .on_open(|_, _| Ok(Started::durable(Counter { n: 0 })))
///     .durable::<Counter>();
/// # let _ = counters;
/// ```
pub trait Durable: InstanceLogic + Serialize {
    /// The version of the format the state is written in. Change it when the serialized
    /// form changes in a way older data cannot be read as; a toolset registered with
    /// [`Toolset::durable_with`](crate::Toolset::durable_with) may read older formats.
    const FORMAT: u32;

    /// The instance came back after a restart, before anything else reaches it: set again
    /// the timers it had ([`InstanceContext::wake_after`]: a bot's move, a clock) and
    /// anything else that lived only in the process. Its participants' visibility and
    /// definitions were kept. By default nothing happens.
    fn resumed(&mut self, cx: &mut InstanceContext) {
        let _ = cx;
    }
}

/// The state of a durable logic, as written: its format and its serde value.
pub(crate) type Saved = (u32, Value);

/// An instance's logic as the SDK holds it: the author's, and whether (and how) it is kept.
pub(crate) trait Logic: InstanceLogic {
    /// Its state, for a durable logic (an `Err` says why it could not be written).
    fn save(&self) -> Option<Result<Saved, String>>;
    /// The instance came back after a restart.
    fn resume(&mut self, cx: &mut InstanceContext);
    /// The author's logic itself, for the routes written for its type (`route.rs`).
    fn author(&mut self) -> &mut dyn std::any::Any;
}

/// Reads a durable logic back: its toolset's, registered with `Toolset::durable`.
pub(crate) type RestoreFn = Arc<dyn Fn(u32, Value) -> Result<Box<dyn Logic>, String> + Send + Sync>;

/// The restore of a durable `T` that deserializes itself, in its own format only.
pub(crate) fn restore_fn<T: Durable + DeserializeOwned>() -> RestoreFn {
    restore_with(|format, state| {
        if format != T::FORMAT {
            return Err(format!(
                "its state is in format {format}; this server reads format {}",
                T::FORMAT
            ));
        }
        serde_json::from_value::<T>(state).map_err(|e| format!("its state does not read: {e}"))
    })
}

/// The restore of a durable `T` read by `read` (which may hold what the logic shares, and
/// read older formats).
pub(crate) fn restore_with<T, F>(read: F) -> RestoreFn
where
    T: Durable,
    F: Fn(u32, Value) -> Result<T, String> + Send + Sync + 'static,
{
    Arc::new(move |format, state| Ok(Box::new(kept(read(format, state)?)) as Box<dyn Logic>))
}

/// The author's logic, with what the SDK needs of it.
pub(crate) struct Held<L> {
    logic: L,
    save: fn(&L) -> Option<Result<Saved, String>>,
    resume: fn(&mut L, &mut InstanceContext),
}

/// Logic that lives only as long as the process.
pub(crate) fn volatile<L: InstanceLogic>(logic: L) -> Held<L> {
    Held {
        logic,
        save: |_| None,
        resume: |_, _| {},
    }
}

/// Logic kept across restarts.
pub(crate) fn kept<L: Durable>(logic: L) -> Held<L> {
    Held {
        logic,
        save: |l| {
            Some(
                serde_json::to_value(l)
                    .map(|v| (L::FORMAT, v))
                    .map_err(|e| e.to_string()),
            )
        },
        resume: L::resumed,
    }
}

impl<L: InstanceLogic> Logic for Held<L> {
    fn save(&self) -> Option<Result<Saved, String>> {
        (self.save)(&self.logic)
    }

    fn resume(&mut self, cx: &mut InstanceContext) {
        (self.resume)(&mut self.logic, cx);
    }

    fn author(&mut self) -> &mut dyn std::any::Any {
        &mut self.logic
    }
}

impl<L: InstanceLogic> InstanceLogic for Held<L> {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        self.logic.call(call, cx)
    }

    fn join(&mut self, who: ParticipantId, cx: &mut InstanceContext) -> Result<Joined, Refusal> {
        self.logic.join(who, cx)
    }

    fn close(&mut self, who: ParticipantId, cx: &mut InstanceContext) -> Vec<ContentBlock> {
        self.logic.close(who, cx)
    }

    fn wake(&mut self, tag: u64, cx: &mut InstanceContext) {
        self.logic.wake(tag, cx);
    }

    fn invited(&mut self, who: ParticipantId, name: Option<&str>, cx: &mut InstanceContext) {
        self.logic.invited(who, name, cx);
    }

    fn declined(&mut self, who: ParticipantId, cx: &mut InstanceContext) {
        self.logic.declined(who, cx);
    }
}
