//! One line of news ([`Fragment`]) and the lines that say the same thing wherever they
//! are told: an open toolset, a presence move, a suggestion.

use crate::state::conversation::namespaced;
use crate::state::presenter::render::{TextBounds, act_call};
use crate::state::view::{Marker, OpenSet, ServerView, shown_name};
use mcpl_protocol::{Presence, Suggestion};

/// What a line is about: toolset state, a tool, or a suggestion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rank {
    Toolset,
    Tool,
    Suggestion,
}

/// One line of news.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Fragment {
    pub rank: Rank,
    pub text: String,
    /// The open toolset this line announces.
    pub announces: Option<Marker>,
    /// The toolset or instance whose state this line tells (opened, closed, ended).
    pub subject: Option<Marker>,
    /// The ended record's id this line tells (§4.3).
    pub ended: Option<String>,
    /// The line only says what is open or usable now (a look says it too).
    pub restates: bool,
}

impl Fragment {
    pub(super) fn new(rank: Rank, text: String) -> Self {
        Fragment {
            rank,
            text,
            announces: None,
            subject: None,
            ended: None,
            restates: false,
        }
    }

    /// News about a tool past the pass's budget of worded lines: counted, not worded
    /// (an empty text), in the line that summarises the rest.
    pub(super) fn held() -> Self {
        Fragment::new(Rank::Tool, String::new())
    }
}

/// `[m] "Title" (from server)`.
pub(super) fn open_line(
    server: &str,
    marker: &Marker,
    title: &Option<String>,
    b: &TextBounds,
) -> String {
    match title {
        Some(t) => format!("{marker} {} (from {server})", b.inline(t)),
        None => marker.to_string(),
    }
}

/// A presence move, told at the boundary that applies it (§3, vectors 15, 24).
pub(super) fn presence_moved(view: &ServerView<'_>, tool: &str, p: Presence) -> Fragment {
    let name = namespaced(view.name, &shown_name(tool));
    let text = match p {
        Presence::Static => format!("{name} is now in your tool list: call it directly."),
        Presence::Dynamic => format!(
            "{name} left your tool list: when it is usable, call it through {}.",
            act_call(&Marker::server(view.name), tool)
        ),
    };
    Fragment::new(Rank::Tool, text)
}

pub(super) fn opened(view: &ServerView<'_>, set: &OpenSet, b: &TextBounds) -> Fragment {
    let what = open_line(view.name, &set.marker, &set.shown_title().cloned(), b);
    let group = if set.group {
        " (a group of tools the host opens and closes itself)"
    } else {
        ""
    };
    Fragment {
        announces: Some(set.marker.clone()),
        subject: Some(set.marker.clone()),
        restates: true,
        ..Fragment::new(Rank::Toolset, format!("Opened {what}{group}."))
    }
}

pub(super) fn suggestion(view: &ServerView<'_>, s: &Suggestion, b: &TextBounds) -> Fragment {
    Fragment::new(Rank::Suggestion, b.suggestion(view.name, s))
}
