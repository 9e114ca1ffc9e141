//! RFC-014 on MCP 2026-07-28: this project's stateless profile as the link speaks it
//! (`docs/rfc014-stateless.md`, **\[project\]**, issue #40). Sans-IO.
//!
//! A modern server whose `server/discover` declares `extensions["mcpl/core"]` and answers
//! the probe with `_meta["mcpl/hints"]` (it hints this host's requests: a named principal,
//! profile §3.6) is served under the profile: every request declares `mcpl/core` and
//! carries the link's mark (`mcpl/since`) and grant (`mcpl/grant`, profile §3.2), and
//! every stamped message the host reads goes through one [`StampedView`] per link (it
//! outlives connections: a new connection is no new start, profile §3.6).
//!
//! **One host, both eras.** Everything the host shows the agent (the model's tool list,
//! the meta-tools, the presenter's notices) is fed from a [`crate::state::HintState`] per
//! connection, as on legacy. Under the profile its input comes from the stamped view: each
//! message the view applies is handed on as the legacy message that says what it changed
//! in the view — every key it changed, with the view's value for that key, under the
//! connection's next rev (1, 2, 3 … in read order, so the hint state never holds or
//! recovers) — and a `toolsets/list` as a legacy statement of the whole view. So the rules
//! of order are the stamps' (the view's), and what the agent sees follows the view exactly
//! as it follows a legacy connection (vector S16).
//!
//! Only the results the host core reads as they are read (`RESULTS_READ`: `toolsets/list`,
//! `tools/call`, `toolsets/open`, `toolsets/close`) and the listen stream's
//! `notifications/mcpl/hints` are applied; other results' hints are left alone and the
//! mark stays, so the next applied result carries their entries again (profile §3.3: a
//! delta since the mark).

use crate::state::stamped::{StampedApplied, StampedCarrier, StampedView};
use mcpl_protocol::hints::{HintChanges, HintEntries, ToolHint, ToolsetChange, ToolsetState};
use mcpl_protocol::jsonrpc::{RawValue, to_raw};
use mcpl_protocol::mcp::Tool;
use mcpl_protocol::meta::HINTS;
use mcpl_protocol::method::{
    CallTool, Method, PushEvent, ToolHints, ToolsetsClose, ToolsetsList, ToolsetsOpen,
};
use mcpl_protocol::stateless::{
    EVENT_NOTIFICATION, GRANT, HINTS_NOTIFICATION, SINCE, VersionedHints,
};
use mcpl_protocol::toolsets::OpenRecord;
use mcpl_protocol::{Notification, Response};
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashMap};

/// The id of the `push/event` a stream's `notifications/mcpl/event` is handed on as
/// ([`Profile::read`]): on a link under the profile, a `push/event` with it came from the
/// stream and is not answered (a notification has no answer, profile §3.5).
pub const STREAM_EVENT_ID: &str = "mcpl/event";

/// What this host declares under `extensions["mcpl/core"]` (profile §3.1: as legacy
/// `experimental.mcpl` says it).
pub fn declaration() -> Value {
    json!({"version": "0.5", "toolHints": true, "pushEvents": true})
}

/// The keys a request carries under the profile (profile §3.2), in its `_meta`.
pub fn stamp_request(meta: &mut Map<String, Value>, since: u64, grant: &[String]) {
    meta.insert(SINCE.to_owned(), Value::from(since));
    meta.insert(GRANT.to_owned(), json!({ "effectiveCapabilities": grant }));
}

/// The methods whose results are applied (module docs).
fn applied_result(method: &str) -> bool {
    [
        ToolsetsList::NAME,
        CallTool::NAME,
        ToolsetsOpen::NAME,
        ToolsetsClose::NAME,
    ]
    .contains(&method)
}

/// How many requests' marks are remembered at most; past it they are forgotten (a result
/// then counts as answering the link's mark when it was read, which only delays raising
/// the mark).
const MAX_SENT: usize = 4_096;

/// What one connection's requests carry under the profile, kept by the connection's core:
/// the link's mark and grant, and the mark each request went out with.
#[derive(Debug, Clone, Default)]
pub struct Hinted {
    /// The mark to send (the link's [`Profile::since`], as last told).
    pub since: u64,
    /// The grant requests run under (profile §3.2).
    pub grant: Vec<String>,
    sent: HashMap<i64, u64>,
}

impl Hinted {
    /// Stamps request `id`'s params with the profile's keys and remembers its mark.
    pub fn stamp(&mut self, id: i64, params: Box<RawValue>) -> Box<RawValue> {
        if self.sent.len() >= MAX_SENT {
            self.sent.clear();
        }
        self.sent.insert(id, self.since);
        stamped_params(&params, self.since, &self.grant)
    }

    /// The mark request `id` went out with (forgotten once asked).
    pub fn sent(&mut self, id: Option<&mcpl_protocol::Id>) -> Option<u64> {
        match id? {
            mcpl_protocol::Id::Number(n) => self.sent.remove(n),
            _ => None,
        }
    }

    /// What a new connection's requests carry: the link's mark and the grant.
    pub fn new(since: u64, grant: Vec<String>) -> Self {
        Hinted {
            since,
            grant,
            sent: HashMap::new(),
        }
    }
}

/// The link's side of the profile: the stamped view, the connection's legacy revs, and its
/// listen stream's first message.
#[derive(Debug, Default)]
pub struct Profile {
    view: StampedView,
    /// The last legacy rev handed on on this connection.
    rev: u64,
    /// The listen stream's mark, until its first message (a complete answer) is read.
    listen_first: Option<u64>,
}

impl Profile {
    /// The mark sent as `mcpl/since`.
    pub fn since(&self) -> u64 {
        self.view.since()
    }

    /// A new connection: its legacy revs start from 1 (the host core's hint state is
    /// fresh); the view and its mark are kept.
    pub fn connected(&mut self) {
        self.rev = 0;
        self.listen_first = None;
    }

    /// The listen stream opened with the mark `since` was acknowledged with `mcpl/hints`:
    /// its first message is a complete answer since that mark.
    pub fn listen_acknowledged(&mut self, since: u64) {
        self.listen_first = Some(since);
    }

    /// A message read: returned as the host core reads it (module docs), with a line for
    /// each entry ignored. `answers`: the method a response answers, and the mark its
    /// request went out with. `tools`: the connection's listed tools (a tool's toolset,
    /// for tombstones).
    pub fn read(
        &mut self,
        message: mcpl_protocol::Message,
        answers: Option<(&str, Option<u64>)>,
        tools: &[Tool],
    ) -> (mcpl_protocol::Message, Vec<String>) {
        use mcpl_protocol::Message as M;
        let mut ignored = Vec::new();
        let message = match message {
            M::Response(r) => M::Response(self.result(r, answers, tools, &mut ignored)),
            M::Notification(n) if n.method == HINTS_NOTIFICATION => {
                match self.notification(&n, tools, &mut ignored) {
                    Some(n) => M::Notification(n),
                    None => M::Notification(n),
                }
            }
            M::Notification(n) if n.method == EVENT_NOTIFICATION => {
                match self.event(&n, tools, &mut ignored) {
                    Some(r) => M::Request(r),
                    None => M::Notification(n),
                }
            }
            other => other,
        };
        (message, ignored)
    }

    fn result(
        &mut self,
        mut r: Response,
        answers: Option<(&str, Option<u64>)>,
        tools: &[Tool],
        ignored: &mut Vec<String>,
    ) -> Response {
        let Some((method, sent)) = answers.filter(|(m, _)| applied_result(m)) else {
            return r;
        };
        let since = sent.unwrap_or(self.since());
        let Ok(result) = &r.outcome else {
            return r;
        };
        let Ok(Value::Object(mut result)) = serde_json::from_str::<Value>(result.get()) else {
            return r;
        };
        let raw = result.get("_meta").and_then(|m| m.get(HINTS)).cloned();
        let hints = match raw.as_ref().map(VersionedHints::read) {
            Some(Ok((hints, why))) => {
                ignored.extend(why);
                Some(hints)
            }
            Some(Err(e)) => {
                ignored.push(format!("a result's mcpl/hints this host cannot read: {e}"));
                None
            }
            None => None,
        };
        let applied = hints.as_ref().map(|h| {
            self.view
                .apply(h, StampedCarrier::Complete { since }, toolset_of(tools))
        });
        let meta = result
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(meta) = meta else {
            return r;
        };
        if method == ToolsetsList::NAME {
            // A statement of the whole view, whatever this one carried (module docs).
            let (changes, open) =
                self.statement(hints.map(|h| h.entries.suggest).unwrap_or_default());
            meta.insert(HINTS.to_owned(), to_value(&changes));
            let options: HashMap<(String, Option<String>), Value> = result
                .get("open")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|o| serde_json::from_value::<OpenRecord>(o.clone()).ok())
                .filter_map(|o| Some(((o.toolset, o.instance), o.options?)))
                .collect();
            let open: Vec<Value> = open
                .into_iter()
                .map(|(key, title)| {
                    let options = options.get(&key).cloned();
                    to_value(&OpenRecord {
                        toolset: key.0,
                        instance: key.1,
                        title,
                        options,
                    })
                })
                .collect();
            result.insert("open".to_owned(), Value::Array(open));
        } else {
            match applied.and_then(|a| self.delta(&a)) {
                Some(changes) => {
                    meta.insert(HINTS.to_owned(), to_value(&changes));
                }
                None => {
                    meta.remove(HINTS);
                }
            }
        }
        r.outcome = Ok(to_raw(&result));
        r
    }

    /// A `notifications/mcpl/hints` read: the legacy `notifications/tools/hints` saying
    /// what it changed; `None` when it changed nothing or cannot be read at all (it is
    /// then handed on as read, which the host core ignores).
    fn notification(
        &mut self,
        n: &Notification,
        tools: &[Tool],
        ignored: &mut Vec<String>,
    ) -> Option<Notification> {
        let params = n.params_value()?;
        let (hints, why) = match VersionedHints::read(&params) {
            Ok(read) => read,
            Err(e) => {
                ignored.push(format!("a stream's mcpl/hints this host cannot read: {e}"));
                return None;
            }
        };
        ignored.extend(why);
        let carrier = match self.listen_first.take() {
            Some(since) => StampedCarrier::Complete { since },
            None => StampedCarrier::Change,
        };
        let applied = self.view.apply(&hints, carrier, toolset_of(tools));
        // Nothing changed: no legacy message (and no rev) for it.
        let changes = self.delta(&applied)?;
        Some(Notification {
            method: ToolHints::NAME.to_owned(),
            params: Some(to_raw(&to_value(&changes))),
        })
    }

    /// A `notifications/mcpl/event` read (profile §3.5): its stamped `hints` applied to the
    /// view as a stream's change, and the event handed on as the legacy `push/event` it
    /// stands for — its params as sent, its `hints` the legacy changes it made in the view
    /// (none when it changed nothing), under the id [`STREAM_EVENT_ID`], which the link
    /// does not answer. `None` when its params are not an object (it is then handed on as
    /// read, which nothing acts on).
    fn event(
        &mut self,
        n: &Notification,
        tools: &[Tool],
        ignored: &mut Vec<String>,
    ) -> Option<mcpl_protocol::Request> {
        let Value::Object(mut params) = n.params_value()? else {
            ignored.push("a stream's mcpl/event whose params are not an object".to_owned());
            return None;
        };
        params.remove("_meta");
        let hints = match params.remove("hints").map(|h| VersionedHints::read(&h)) {
            Some(Ok((hints, why))) => {
                ignored.extend(why);
                Some(hints)
            }
            Some(Err(e)) => {
                ignored.push(format!("an event's mcpl/hints this host cannot read: {e}"));
                None
            }
            None => None,
        };
        if let Some(changes) = hints
            .map(|h| {
                self.view
                    .apply(&h, StampedCarrier::Change, toolset_of(tools))
            })
            .and_then(|a| self.delta(&a))
        {
            params.insert("hints".to_owned(), to_value(&changes));
        }
        Some(mcpl_protocol::Request {
            id: mcpl_protocol::Id::String(STREAM_EVENT_ID.to_owned()),
            method: PushEvent::NAME.to_owned(),
            params: Some(to_raw(&params)),
        })
    }

    /// The legacy changes saying what `applied` changed in the view, under the next rev;
    /// `None` when it changed nothing and suggested nothing.
    fn delta(&mut self, applied: &StampedApplied) -> Option<HintChanges> {
        if applied.tools.is_empty() && applied.toolsets.is_empty() && applied.suggest.is_empty() {
            return None;
        }
        self.rev += 1;
        let tools: BTreeSet<&(String, Option<String>)> = applied.tools.iter().collect();
        let toolsets: BTreeSet<&(String, Option<String>)> = applied.toolsets.iter().collect();
        Some(HintChanges {
            rev: self.rev,
            entries: HintEntries {
                tools: tools
                    .into_iter()
                    .map(
                        |(name, instance)| match self.view.tool(name, instance.as_deref()) {
                            Some(t) => ToolHint {
                                name: name.clone(),
                                instance: instance.clone(),
                                presence: t.presence,
                                visible: Some(t.visible),
                                definition: t.definition.clone(),
                            },
                            // Dropped: what the host holds for a key it no longer knows is the
                            // default, invisible.
                            None => ToolHint {
                                name: name.clone(),
                                instance: instance.clone(),
                                presence: None,
                                visible: Some(false),
                                definition: None,
                            },
                        },
                    )
                    .collect(),
                toolsets: toolsets
                    .into_iter()
                    .map(|(toolset, instance)| {
                        match self.view.toolset(toolset, instance.as_deref()) {
                            Some(s) => ToolsetChange {
                                toolset: toolset.clone(),
                                instance: instance.clone(),
                                state: s.state,
                                title: s.title.clone(),
                                reason: s.reason.clone(),
                                ended: s.ended.clone(),
                            },
                            None => ToolsetChange {
                                toolset: toolset.clone(),
                                instance: instance.clone(),
                                state: ToolsetState::Closed,
                                title: None,
                                reason: None,
                                ended: None,
                            },
                        }
                    })
                    .collect(),
                suggest: applied.suggest.clone(),
            },
        })
    }

    /// The whole view as a legacy statement under the next rev, and what is open.
    #[allow(clippy::type_complexity)]
    fn statement(
        &mut self,
        suggest: Vec<mcpl_protocol::Suggestion>,
    ) -> (HintChanges, Vec<((String, Option<String>), Option<String>)>) {
        self.rev += 1;
        let open: Vec<_> = self.view.open().into_iter().collect();
        let changes = HintChanges {
            rev: self.rev,
            entries: HintEntries {
                tools: self
                    .view
                    .visible()
                    .into_iter()
                    .map(|((name, instance), definition)| ToolHint {
                        presence: self
                            .view
                            .tool(&name, instance.as_deref())
                            .and_then(|t| t.presence),
                        name,
                        instance,
                        visible: Some(true),
                        definition,
                    })
                    .collect(),
                toolsets: open
                    .iter()
                    .map(|((toolset, instance), title)| ToolsetChange {
                        toolset: toolset.clone(),
                        instance: instance.clone(),
                        state: ToolsetState::Open,
                        title: title.clone(),
                        reason: None,
                        ended: None,
                    })
                    .collect(),
                suggest,
            },
        };
        (changes, open)
    }
}

/// A listed tool's toolset (`_meta["mcpl/toolset"]`), for the view's tombstones.
fn toolset_of(tools: &[Tool]) -> impl Fn(&str) -> Option<String> + '_ {
    move |name| {
        tools
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.meta.as_ref())
            .and_then(|m| m.toolset.clone())
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// `params` with the profile's keys in its `_meta` (params that are not an object get
/// one).
fn stamped_params(params: &RawValue, since: u64, grant: &[String]) -> Box<RawValue> {
    let mut object = serde_json::from_str::<Map<String, Value>>(params.get()).unwrap_or_default();
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        stamp_request(meta, since, grant);
    }
    to_raw(&object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::{Id, Message};

    fn result(id: i64, result: Value) -> Message {
        Message::Response(Response {
            id: Some(Id::Number(id)),
            outcome: Ok(to_raw(&result)),
        })
    }

    fn result_of(m: &Message) -> Value {
        let Message::Response(r) = m else {
            panic!("{m:?}")
        };
        serde_json::from_str(r.outcome.as_ref().unwrap().get()).unwrap()
    }

    fn secret(visible: bool, v: u64) -> Value {
        json!({"name": "secret", "instance": "g1", "visible": visible, "v": v})
    }

    #[test]
    fn a_result_hands_on_what_it_changed_under_the_next_rev_and_a_stale_one_nothing() {
        let mut p = Profile::default();
        let read = result(
            1,
            json!({"content": [], "_meta": {"mcpl/hints": {"version": 5, "tools": [secret(true, 5)]}}}),
        );
        let (m, ignored) = p.read(read, Some((CallTool::NAME, Some(0))), &[]);
        assert!(ignored.is_empty(), "{ignored:?}");
        assert_eq!(
            result_of(&m)["_meta"]["mcpl/hints"],
            json!({"rev": 1, "tools": [{"name": "secret", "instance": "g1", "visible": true}]})
        );
        assert_eq!(p.since(), 5);
        // Older than what is held (S5): nothing is handed on, no rev taken, the mark stays.
        let late = result(
            2,
            json!({"content": [], "_meta": {"mcpl/hints": {"version": 4, "tools": [secret(false, 4)]}}}),
        );
        let (m, _) = p.read(late, Some((CallTool::NAME, Some(0))), &[]);
        assert!(result_of(&m)["_meta"].get("mcpl/hints").is_none(), "{m:?}");
        assert_eq!(p.since(), 5);
        // A result the host core does not read as read is left as it is, the mark too.
        let listed = result(
            3,
            json!({"tools": [], "_meta": {"mcpl/hints": {"version": 9}}}),
        );
        let (m, _) = p.read(listed.clone(), Some(("tools/list", Some(5))), &[]);
        assert_eq!(m, listed);
        assert_eq!(p.since(), 5);
    }

    #[test]
    fn a_stream_event_is_handed_on_as_the_push_it_stands_for_with_what_it_changed() {
        let mut p = Profile::default();
        let event = |hints: Value| {
            Message::Notification(Notification {
                method: EVENT_NOTIFICATION.to_owned(),
                params: Some(to_raw(&json!({"featureSet": "f", "eventId": "e1",
                    "timestamp": "2026-12-07T00:00:00.000Z",
                    "payload": {"content": [{"type": "text", "text": "rang"}]},
                    "toolset": "game", "instance": "g1", "hints": hints,
                    "_meta": {"io.modelcontextprotocol/subscriptionId": 10}}))),
            })
        };
        let (m, ignored) = p.read(
            event(json!({"version": 1, "tools": [secret(true, 1)]})),
            None,
            &[],
        );
        assert!(ignored.is_empty(), "{ignored:?}");
        let Message::Request(r) = &m else {
            panic!("{m:?}")
        };
        assert_eq!(r.method, PushEvent::NAME);
        assert_eq!(r.id, mcpl_protocol::Id::String(STREAM_EVENT_ID.to_owned()));
        let params = r.params_value().unwrap();
        assert_eq!(params["eventId"], "e1");
        assert_eq!(params["instance"], "g1");
        assert!(params.get("_meta").is_none(), "{params}");
        assert_eq!(
            params["hints"],
            json!({"rev": 1, "tools": [{"name": "secret", "instance": "g1", "visible": true}]})
        );
        // A stream's change: the mark rises only by one version (profile §3.5).
        assert_eq!(p.since(), 1);
        // Again: nothing new in the view, so no hints and no rev.
        let (m, _) = p.read(
            event(json!({"version": 1, "tools": [secret(true, 1)]})),
            None,
            &[],
        );
        let Message::Request(r) = &m else {
            panic!("{m:?}")
        };
        assert!(r.params_value().unwrap().get("hints").is_none(), "{r:?}");
        // Hints that cannot be read are left out and said; the event is still handed on.
        let (m, ignored) = p.read(event(json!("no")), None, &[]);
        assert!(matches!(m, Message::Request(_)), "{m:?}");
        assert_eq!(ignored.len(), 1, "{ignored:?}");
    }

    #[test]
    fn a_toolsets_list_is_a_statement_of_the_whole_view() {
        let mut p = Profile::default();
        let change = Notification {
            method: HINTS_NOTIFICATION.to_owned(),
            params: Some(to_raw(&json!({"version": 7, "tools": [secret(true, 7)],
                "toolsets": [{"toolset": "game", "instance": "g1", "state": "open", "v": 7}]}))),
        };
        let (m, _) = p.read(Message::Notification(change), None, &[]);
        let Message::Notification(n) = &m else {
            panic!("{m:?}")
        };
        assert_eq!(n.method, ToolHints::NAME);
        assert_eq!(n.params_value().unwrap()["rev"], 1);
        // A statement read before that change (version 6) states none of it: the view keeps
        // the newer entries (profile §3.3), and the legacy statement says the whole view.
        let list = result(
            4,
            json!({"open": [], "ended": [], "_meta": {"mcpl/hints": {"version": 6, "statement": true}}}),
        );
        let (m, _) = p.read(list, Some((ToolsetsList::NAME, Some(0))), &[]);
        let v = result_of(&m);
        assert_eq!(v["open"], json!([{"toolset": "game", "instance": "g1"}]));
        assert_eq!(
            v["_meta"]["mcpl/hints"],
            json!({"rev": 2, "tools": [{"name": "secret", "instance": "g1", "visible": true}],
                "toolsets": [{"toolset": "game", "instance": "g1", "state": "open"}]})
        );
    }

    #[test]
    fn requests_carry_the_mark_and_the_grant_and_remember_their_mark() {
        let mut h = Hinted::new(41, vec!["tools".to_owned()]);
        let params = h.stamp(
            3,
            to_raw(&json!({"name": "t", "_meta": {"mcpl/instance": "g1"}})),
        );
        let v: Value = serde_json::from_str(params.get()).unwrap();
        assert_eq!(
            v["_meta"],
            json!({"mcpl/instance": "g1", "mcpl/since": 41,
                "mcpl/grant": {"effectiveCapabilities": ["tools"]}})
        );
        assert_eq!(h.sent(Some(&Id::Number(3))), Some(41));
        assert_eq!(h.sent(Some(&Id::Number(3))), None);
    }
}
