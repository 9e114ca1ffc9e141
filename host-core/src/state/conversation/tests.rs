//! Conversation and tool-list tests; vector 12 here.

use super::*;
use crate::state::fixtures::*;
use crate::state::meta_tools::{ACT, CLOSE, LOOK, OPEN};
use crate::state::presenter::TextBounds;
use crate::state::tool_policy::ToolPolicy;
use mcpl_protocol::hints::ToolsetChange;
use mcpl_protocol::{ToolHint, ToolsetState};
use serde_json::json;

fn marker() -> Marker {
    Marker::new("arcade", "game", Some("g1"))
}

fn announcing(text: &str) -> AgentMessage {
    AgentMessage {
        kind: MessageKind::Notice,
        server: Some("arcade".into()),
        text: text.into(),
        announces: [marker()].into(),
        restates: false,
    }
}

#[test]
fn the_window_is_the_last_n_messages() {
    let mut c = Conversation::new(ConversationConfig {
        window: 3,
        history: 5,
        ..Default::default()
    });
    c.push(announcing("opened"));
    assert!(c.announced_in_context(&marker()));
    c.push_plain(MessageKind::Assistant, "a");
    c.push_plain(MessageKind::User, "b");
    assert!(
        c.announced_in_context(&marker()),
        "3 messages: still in view"
    );
    c.push_plain(MessageKind::Assistant, "c");
    assert!(!c.announced_in_context(&marker()));
    assert_eq!(c.context().count(), 3);
    for i in 0..5 {
        c.push_plain(MessageKind::Assistant, format!("{i}"));
    }
    assert_eq!(c.messages().count(), 5, "history is bounded");
    assert_eq!(c.last().unwrap().seq, 8);
}

#[test]
fn a_compaction_empties_the_context() {
    let mut c = Conversation::new(ConversationConfig::default());
    c.push(announcing("opened"));
    c.compact();
    assert!(!c.announced_in_context(&marker()));
    assert_eq!(c.context().count(), 0);
    c.push(announcing("reminded"));
    assert!(c.announced_in_context(&marker()));
}

#[test]
fn namespaced_names_split_against_known_servers() {
    let servers = ["arcade", "arc", "a--b"];
    assert_eq!(
        split_namespaced("arcade--play", servers),
        Some(("arcade", "play"))
    );
    assert_eq!(
        split_namespaced("arc--play--x", servers),
        Some(("arc", "play--x"))
    );
    assert_eq!(
        split_namespaced("a--b--tool", servers),
        Some(("a--b", "tool"))
    );
    assert_eq!(split_namespaced("arcade--", servers), None);
    assert_eq!(split_namespaced("other--play", servers), None);
    assert_eq!(namespaced("arcade", "play"), "arcade--play");
}

#[test]
fn the_tool_list_is_meta_tools_then_static_tools_namespaced() {
    let h = Host::with_arcade("arcade", true);
    let list = h.core.conversation.tool_list();
    assert_eq!(list.names(), [OPEN, ACT, LOOK, CLOSE, "arcade--clock"]);
    let all = list.to_vec();
    let clock = &all[4];
    assert!(clock.meta.is_none() && clock.annotations.is_none());
    for t in &all[..4] {
        assert_eq!(t.input_schema["type"], "object");
        assert_eq!(t.input_schema["additionalProperties"], false);
        assert!(t.description.as_ref().is_some_and(|d| d.len() > 40));
    }
}

/// Issue #42: every host's list holds the same one copy of the meta-tools' definitions,
/// where each host built its own (about 15 KiB of schemas a host).
#[test]
fn every_tool_list_shares_one_copy_of_the_meta_tools() {
    let (a, b) = (
        Host::with_arcade("arcade", true),
        Host::with_arcade("arcade", true),
    );
    let (a, b) = (
        a.core.conversation.tool_list(),
        b.core.conversation.tool_list(),
    );
    let (Some(ma), Some(mb)) = (&a.meta, &b.meta) else {
        panic!(
            "both lists name the meta-tools: {:?}, {:?}",
            a.names(),
            b.names()
        );
    };
    assert!(std::sync::Arc::ptr_eq(ma, mb));
    assert_eq!(a, b);
}

#[test]
fn the_tool_list_applies_policy_and_bounds_descriptions() {
    let mut h = Host::new(40, Default::default());
    h.add_server("b", true, ToolPolicy::allow_all().deny(["clock"]));
    h.add_server("a", true, ToolPolicy::allow_all());
    let views: Vec<_> = h.core.servers.iter().map(|s| s.view()).collect();
    let bounds = TextBounds {
        per_item: 5,
        ..Default::default()
    };
    let list = ToolList::build(&views, &bounds);
    assert_eq!(list.names()[4..], ["a--clock"]);
    assert_eq!(
        list.to_vec()[4].description.as_deref(),
        Some("clock… [15 more characters cut by the host]")
    );
}

#[test]
fn vector_12_visibility_changes_never_change_the_tool_list() {
    let mut h = Host::with_arcade("arcade", true);
    let before = h.core.conversation.tool_list().to_json();
    open_game(&mut h, "g1", 2);
    let mut rev = 3;
    for round in 0..20 {
        let visible = round % 2 == 0;
        let mut c = changes(
            rev,
            vec![
                vis("play", Some("g1"), visible),
                vis("seek", None, !visible),
                vis("roam", None, visible),
                def(
                    "play",
                    Some("g1"),
                    &format!("round {round}"),
                    json!({"type": "object"}),
                ),
            ],
            vec![ToolsetChange {
                title: Some(format!("Go, move {round}")),
                ..set("game", Some("g1"), ToolsetState::Open)
            }],
        );
        if round == 7 {
            c.entries
                .toolsets
                .push(set("game", Some("g2"), ToolsetState::Open));
            c.entries.tools.push(ToolHint {
                name: "resign".into(),
                instance: Some("g2".into()),
                visible: Some(true),
                ..Default::default()
            });
        }
        if round == 13 {
            c.entries
                .toolsets
                .push(set("game", Some("g2"), ToolsetState::Closed));
        }
        h.standalone(0, c);
        rev += 1;
        assert_eq!(
            h.core.conversation.tool_list().to_json(),
            before,
            "round {round}"
        );
    }
    let p = push_params(
        "ev-1",
        "moved",
        Some(changes(rev, vec![vis("play", Some("g1"), true)], vec![])),
    );
    h.push(0, &p, true);
    // A boundary without presence moves rebuilds the same list, byte for byte.
    assert!(!h.boundary());
    assert_eq!(h.core.conversation.tool_list().to_json(), before);
}

#[test]
fn history_is_bounded_in_bytes_too_the_newest_kept() {
    let mut c = Conversation::new(ConversationConfig {
        window: 3,
        history: 100,
        history_bytes: 10,
    });
    for _ in 0..4 {
        c.push_plain(MessageKind::Push, "abcd");
    }
    assert_eq!(c.messages().count(), 2, "8 bytes kept of 16");
    assert_eq!(c.bytes(), 8);
    c.push_plain(MessageKind::Push, "x".repeat(50));
    assert_eq!(
        c.messages().count(),
        1,
        "a message larger than the bound stays alone"
    );
    assert_eq!(c.bytes(), 50);
    assert_eq!(c.last().unwrap().seq, 4);
}
