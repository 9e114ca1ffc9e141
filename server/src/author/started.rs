//! How an instance opens: the toolset's logic ([`ToolsetLogic`]), and what an open returns
//! ([`Started`]): the new instance's logic, kept across restarts or not, and what the
//! opener is told; and the logic of a toolset declared without any.

use super::context::InstanceContext;
use super::durable::{Durable, Logic, kept, volatile};
use super::logic::{InstanceLogic, Opening, Refusal};
use mcpl_protocol::mcp::ContentBlock;

/// Opens instances of one toolset. Runs inside the new instance's actor; a panic refuses
/// the open with an internal error.
pub trait ToolsetLogic: Send + Sync + 'static {
    /// A principal opened the toolset (or its default-open instance was opened for it, or a
    /// host without `toolHints` opened it implicitly, §8). The options passed the declared
    /// schema. Return the instance's logic with its title and what to tell the opener (a
    /// board), or refuse (the open fails with -32602 naming the refusal).
    fn open(&self, opening: Opening, cx: &mut InstanceContext) -> Result<Started, Refusal>;
}

/// A closure opening instances; see [`Toolset::on_open`](crate::Toolset::on_open).
pub(crate) struct OpenFn<F>(pub(crate) F);

impl<F> ToolsetLogic for OpenFn<F>
where
    F: Fn(Opening, &mut InstanceContext) -> Result<Started, Refusal> + Send + Sync + 'static,
{
    fn open(&self, opening: Opening, cx: &mut InstanceContext) -> Result<Started, Refusal> {
        (self.0)(opening, cx)
    }
}

/// A new instance: its logic, its title, what to tell the opener.
pub struct Started {
    pub(crate) logic: Box<dyn Logic>,
    pub(crate) title: Option<String>,
    pub(crate) content: Vec<ContentBlock>,
}

impl Started {
    /// An instance run by `logic`, titled as the toolset is declared, with nothing to say.
    pub fn new(logic: impl InstanceLogic) -> Self {
        Started {
            logic: Box::new(volatile(logic)),
            title: None,
            content: Vec::new(),
        }
    }

    /// An instance run by `logic`, kept across restarts on a server with a
    /// [`Store`](crate::Store) (issue #15; register its toolset with
    /// [`Toolset::durable`](crate::Toolset::durable) so it can be read back).
    pub fn durable(logic: impl Durable) -> Self {
        Started {
            logic: Box::new(kept(logic)),
            title: None,
            content: Vec::new(),
        }
    }

    told_builders!("opener", "\"Go 9x9 vs bot\"", " (a board as an image, say)");
}

impl std::fmt::Debug for Started {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Started")
            .field("title", &self.title)
            .field("content", &self.content)
            .finish_non_exhaustive()
    }
}

/// The logic of a toolset declared without any: instances with nothing of their own, whose
/// tools are answered by their own handlers.
pub(crate) struct PlainToolset;

impl ToolsetLogic for PlainToolset {
    fn open(&self, _: Opening, _: &mut InstanceContext) -> Result<Started, Refusal> {
        Ok(Started::durable(PlainInstance))
    }
}

/// A plain instance: nothing of its own, so nothing to lose in a restart.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct PlainInstance;

impl Durable for PlainInstance {
    const FORMAT: u32 = 1;
}

/// Its tools have handlers of their own: nothing reaches it (the default `call` answers
/// what would).
impl InstanceLogic for PlainInstance {}
