//! The actors RFC-014 adds around the sessions: a [`Registry`] per server, a
//! [`PrincipalActor`] per principal and an [`InstanceActor`] per open instance. Their messages are typed (no `serde_json::Value`
//! where a type can say what is meant), and each handler decodes, calls a core or the
//! author's logic, and sends what came back.
//!
//! ```text
//!  host ─▶ SessionActor ──OpenToolset/CloseToolset/CallTool/ListTools(ets)──▶ PrincipalActor (PrincipalState)
//!  handler ─▶ SessionActor ──OpenToolset/CloseToolset (Via::Handler), ListInvitations, DeclineInvitation──▶ ″
//!                                                                 │   ▲
//!                 Start/Join/CloseInstance (awaited), Call, Leave, Unlink │   │ Batch (changes, events,
//!                 Decline (awaited by a spawned future),          │   │ answers, holds, end)
//!                 InvitationNamed                                 ▼   │
//!  InstanceWaker (any thread) ──Woken──────────────────────▶ InstanceActor (the logic)
//!  PrincipalActor ──Deliver (draft + answers + events + hold), Statement, ToolsView──▶ every SessionActor
//!
//!  SessionActor ──AttachSession (awaited)/DetachSession──▶ Registry ──Attach/Detach, Invitation,
//!  InstanceActor ──ToPrincipal (invitation, withdrawal)──▶ ″     InvitationWithdrawn, SwapCatalog,
//!  PrincipalActor ──Idle──▶ ″ ──Retire (awaited by a spawned future)──▶ PrincipalActor
//!  Server::replace_manifest ──SwapCatalog──▶ ″
//! ```
//!
//! **Dependencies run one way**: session → registry → principal → instance. An actor
//! lower down reaches one above it only through a `Recipient` of a message it defines
//! itself (`SessionAddr`, `Registrar`, `Link`), and every actor reads the server's
//! configuration from [`Shared`](crate::shared::Shared), never from the `Server` handle.
//!
//! **Across servers** (issue #41, `remote.rs`): a principal's link to an instance, and an
//! instance's to a participant's principal, is local (an address, as above) or remote (the
//! instance's id, the principal's name), reached through the server's peers with the
//! same messages as JSON (`mcpl_server_core::wire`); each actor serves its own address
//! there while it runs here.
//!
//! **Order.** Everything a session learns about its principal's state comes from that
//! principal's actor, through the session's mailbox, in the order the state changed: hint
//! drafts, call answers, `toolsets/list` statements and `tools/list` visibility alike. The
//! session numbers each draft as it writes it (§5.2), so its revs follow the state's order.
//! A principal awaits its instance only to open, join or close (so nothing observes a
//! half-opened instance), and hears a decline's end without blocking its mailbox; an
//! instance never awaits anyone, so the two cannot deadlock. The registry awaits nobody in
//! its mailbox (a retiring principal's answer comes back as a spawned future, and a
//! principal's record read on its first use, issue #41, as a `FetchedFor` message from a
//! blocking task).

pub(crate) mod instance;
pub(crate) mod outbox;
pub(crate) mod principal;
pub(crate) mod registry;
pub(crate) mod remote;
pub(crate) mod restore;
