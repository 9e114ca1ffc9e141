//! `mcpl-host play`: short commands for a person playing the agent's part.
//!
//! | command | does |
//! |---|---|
//! | `open [server/]toolset[:instance] [key=value…]` | `toolsets--open`, the pairs as its options |
//! | `act [server/]tool[:instance] [value] [key=value…]` | `toolsets--act`; a lone value fills the tool's single required string argument |
//! | `look [[server/]toolset[:instance]]`, `look server/` | `toolsets--look` |
//! | `close [[server/]toolset[:instance]]` | `toolsets--close`; without a target, the only open game (never a toolset without instances, such as the default-open lobby) |
//! | `board [[server/]toolset[:instance]]` | the game's board tool (`<toolset>_board`) through `toolsets--act`, else `toolsets--look` of the game; without a target, the only open game |
//! | `status` | each server's connection (and why one is down), and what is open |
//! | `call server--tool [key=value…]` | a static tool from the model's list |
//! | `tools`, `help`, `quit` | the model's tool list, this table, the end |
//!
//! Values are JSON when they parse as JSON (`size=9` is a number), text otherwise.

use super::words::{self, WordsError, pair};
use crate::state::meta_tools::{ACT, CLOSE, LOOK, OPEN};
use mcpl_protocol::Tool;
use serde_json::{Map, Value, json};

/// What the `help` command prints.
pub const HELP: &str = "\
open [server/]toolset[:instance] [key=value…]   open a toolset (or an instance); pairs are its options
act [server/]tool[:instance] [value] [key=value…] act with a tool; a lone value fills its one required text argument
look [[server/]toolset[:instance]]              what is open, usable, ended, suggested (`look arcade/` for one server)
close [[server/]toolset[:instance]]             close a toolset or instance (the only open game when left out)
board [[server/]toolset[:instance]]             show a game's board (the only open game when left out)
status                                          each server's connection (why one is down) and what is open
call server--tool [key=value…]                  call a tool from your tool list
tools                                           your tool list
help                                            this
quit                                            leave (Ctrl-D too)
Values are JSON when they parse as JSON (size=9 is a number), text otherwise.
In a game (the arcade's, say): `open go` starts one; `look go:go-1` shows its tools and
what changed; `board` shows the board, `act go_play D4` plays, `act go_pass` passes,
`act go_resign` resigns; `close` leaves the only open game.
The prompt shows each server's connection; a change is told as it happens.";

/// `[server/]name[:instance]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    /// The server, when given.
    pub server: Option<String>,
    /// The toolset or tool; empty for `server/` alone.
    pub name: String,
    /// The instance, when given.
    pub instance: Option<String>,
}

impl Target {
    /// Reads `[server/]name[:instance]`.
    pub fn parse(s: &str) -> Target {
        let (server, rest) = match s.split_once('/') {
            Some((srv, rest)) => (Some(srv.to_owned()), rest),
            None => (None, s),
        };
        let (name, instance) = match rest.split_once(':') {
            Some((n, i)) => (n.to_owned(), Some(i.to_owned())),
            None => (rest.to_owned(), None),
        };
        Target {
            server,
            name,
            instance,
        }
    }

    fn insert(&self, args: &mut Map<String, Value>, name_key: &str) {
        if let Some(s) = &self.server {
            args.insert("server".into(), json!(s));
        }
        if !self.name.is_empty() {
            args.insert(name_key.into(), json!(self.name));
        }
        if let Some(i) = &self.instance {
            args.insert("instance".into(), json!(i));
        }
    }
}

/// A command, read.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Nothing typed.
    Empty,
    /// A tool call, ready to send.
    Call {
        /// The tool.
        tool: String,
        /// Its arguments.
        args: Value,
    },
    /// `act`, whose lone value needs the tool's definition ([`fill_act`]).
    Act(ActCommand),
    /// `close` without a target: the only open instance ([`close_only`]).
    CloseOnly,
    /// `board`: a game's board ([`board_of`], [`board_call`]).
    Board(Option<Target>),
    /// Each server's connection and what is open ([`super::status::status_text`]).
    Status,
    /// The model's tool list.
    Tools,
    /// The help.
    Help,
    /// The end.
    Quit,
}

/// `act` as typed.
#[derive(Debug, Clone, PartialEq)]
pub struct ActCommand {
    /// The tool, its server and instance.
    pub target: Target,
    /// A lone value, if one was typed.
    pub value: Option<Value>,
    /// The `key=value` arguments.
    pub named: Map<String, Value>,
}

/// Why a command could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// The line does not split into words.
    #[error(transparent)]
    Words(#[from] WordsError),
    /// No such command.
    #[error("unknown command {0:?} (try help)")]
    Unknown(String),
    /// A command without what it needs.
    #[error("{command} needs {what}")]
    Missing {
        /// The command.
        command: &'static str,
        /// What it needs.
        what: &'static str,
    },
    /// A word that should have been `key=value`.
    #[error("{word:?} is not key=value")]
    NotAPair {
        /// The word.
        word: String,
    },
    /// `act` with more than one lone value.
    #[error("act takes at most one value without a key; name the others key=value")]
    TooManyValues,
    /// A lone value for a tool without exactly one required text argument left to fill.
    #[error("{tool} has no single required text argument to fill with {value}: name it key=value")]
    NoSlot {
        /// The tool.
        tool: String,
        /// The value typed.
        value: String,
    },
}

fn pairs(rest: &[String]) -> Result<Map<String, Value>, CommandError> {
    rest.iter()
        .map(|w| {
            pair(w)
                .map(|(k, v)| (k.to_owned(), v))
                .ok_or_else(|| CommandError::NotAPair { word: w.clone() })
        })
        .collect()
}

/// Reads one line.
pub fn parse(line: &str) -> Result<Command, CommandError> {
    let w = words::split(line)?;
    let Some((first, rest)) = w.split_first() else {
        return Ok(Command::Empty);
    };
    let target = rest.first().map(|t| Target::parse(t));
    match first.as_str() {
        "open" => {
            let t = target
                .filter(|t| !t.name.is_empty())
                .ok_or(CommandError::Missing {
                    command: "open",
                    what: "a toolset: open [server/]toolset[:instance]",
                })?;
            let mut args = Map::new();
            t.insert(&mut args, "toolset");
            let options = pairs(&rest[1..])?;
            if !options.is_empty() {
                args.insert("options".into(), Value::Object(options));
            }
            Ok(Command::Call {
                tool: OPEN.into(),
                args: Value::Object(args),
            })
        }
        "act" => {
            let t = target
                .filter(|t| !t.name.is_empty())
                .ok_or(CommandError::Missing {
                    command: "act",
                    what: "a tool: act [server/]tool[:instance] [value] [key=value…]",
                })?;
            let mut value = None;
            let mut named = Map::new();
            for word in &rest[1..] {
                match pair(word) {
                    Some((k, v)) => {
                        named.insert(k.to_owned(), v);
                    }
                    None if value.is_none() => value = Some(Value::String(word.clone())),
                    None => return Err(CommandError::TooManyValues),
                }
            }
            Ok(Command::Act(ActCommand {
                target: t,
                value,
                named,
            }))
        }
        "look" => {
            let mut args = Map::new();
            if let Some(t) = target {
                t.insert(&mut args, "toolset");
            }
            Ok(Command::Call {
                tool: LOOK.into(),
                args: Value::Object(args),
            })
        }
        "close" => match target {
            None => Ok(Command::CloseOnly),
            Some(t) => {
                let mut args = Map::new();
                t.insert(&mut args, "toolset");
                Ok(Command::Call {
                    tool: CLOSE.into(),
                    args: Value::Object(args),
                })
            }
        },
        "call" => {
            let tool = rest.first().ok_or(CommandError::Missing {
                command: "call",
                what: "a tool: call server--tool [key=value…]",
            })?;
            Ok(Command::Call {
                tool: tool.clone(),
                args: Value::Object(pairs(&rest[1..])?),
            })
        }
        "board" => Ok(Command::Board(target)),
        "status" => Ok(Command::Status),
        "tools" => Ok(Command::Tools),
        "help" | "?" => Ok(Command::Help),
        "quit" | "exit" => Ok(Command::Quit),
        other => Err(CommandError::Unknown(other.to_owned())),
    }
}

/// The host's text for the agent, in the words a person types here (issue #43 item 3):
/// each meta-tool call it suggests (`toolsets--act {"server":"arcade","tool":"go_play",
/// "instance":"go-1"}`) becomes the command that makes it (`act arcade/go_play:go-1`),
/// and a bare meta-tool name (`toolsets--look lists …`) the command's name. A call this
/// syntax cannot say (a `look` of one tool, text that is not a whole JSON object) is left
/// as the agent sees it.
pub fn in_terminal_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((at, tool, command)) = next_meta_name(rest) {
        out.push_str(&rest[..at]);
        rest = &rest[at + tool.len()..];
        let object = rest
            .strip_prefix(' ')
            .filter(|r| r.starts_with('{'))
            .and_then(|r| {
                let mut stream = serde_json::Deserializer::from_str(r).into_iter::<Value>();
                match stream.next() {
                    Some(Ok(Value::Object(args))) => Some((args, 1 + stream.byte_offset())),
                    _ => None,
                }
            });
        match object {
            Some((args, len)) => match typed(command, &args) {
                Some(typed) => {
                    out.push_str(&typed);
                    rest = &rest[len..];
                }
                None => out.push_str(tool),
            },
            // Something like an object that does not read as one: left as it is.
            None if rest.starts_with(" {") => out.push_str(tool),
            None => out.push_str(command),
        }
    }
    out.push_str(rest);
    out
}

/// The first meta-tool name in `text`: where, the name, and the command that calls it.
fn next_meta_name(text: &str) -> Option<(usize, &'static str, &'static str)> {
    [
        (OPEN, "open"),
        (ACT, "act"),
        (LOOK, "look"),
        (CLOSE, "close"),
    ]
    .into_iter()
    .filter_map(|(tool, command)| text.find(tool).map(|at| (at, tool, command)))
    .min_by_key(|(at, ..)| *at)
}

/// A meta-tool call's arguments as the command line that makes it, if it can say them.
fn typed(command: &str, args: &Map<String, Value>) -> Option<String> {
    let (name_key, pairs_key) = match command {
        "act" => ("tool", Some("args")),
        "open" => ("toolset", Some("options")),
        _ => ("toolset", None),
    };
    let text = |key: &str| match args.get(key) {
        None => Some(None),
        Some(Value::String(s)) => Some(Some(s.as_str())),
        Some(_) => None,
    };
    let (server, name, instance) = (text("server")?, text(name_key)?, text("instance")?);
    let known = ["server", name_key, "instance"];
    let pairs = match pairs_key.and_then(|k| args.get(k)) {
        None => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return None,
    };
    if args
        .keys()
        .any(|k| !known.contains(&k.as_str()) && Some(k.as_str()) != pairs_key)
    {
        return None;
    }
    let mut line = command.to_owned();
    match (server, name, instance) {
        (None, None, None) => {}
        // `close` and `look` take a target; `act` and `open` need the name.
        (_, None, _) if command == "act" || command == "open" => return None,
        (server, name, instance) => {
            line.push(' ');
            if let Some(s) = server {
                line.push_str(s);
                line.push('/');
            }
            line.push_str(name.unwrap_or_default());
            if let Some(i) = instance {
                line.push(':');
                line.push_str(i);
            }
        }
    }
    for (key, value) in &pairs {
        line.push(' ');
        line.push_str(key);
        line.push('=');
        line.push_str(&typed_value(value));
    }
    Some(line)
}

/// A value as typed so that it reads back the same (`words::pair`): plain text when it is
/// not JSON, else its JSON; in double quotes (`\` before `"` and `\`) where it holds a
/// space or a quote.
fn typed_value(value: &Value) -> String {
    let plain = match value {
        Value::String(s) if words::json_ish(s) == *value => s.clone(),
        other => other.to_string(),
    };
    if plain
        .chars()
        .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\'))
    {
        let mut quoted = String::with_capacity(plain.len() + 2);
        quoted.push('"');
        for c in plain.chars() {
            if matches!(c, '"' | '\\') {
                quoted.push('\\');
            }
            quoted.push(c);
        }
        quoted.push('"');
        quoted
    } else {
        plain
    }
}

/// One open toolset, as the host's status lists it: server, toolset, instance.
pub type OpenEntry = (String, String, Option<String>);

/// What a bare `close` closes: the only open *instance* (a game), as `toolsets--close`
/// arguments; or what to say instead. Toolsets without instances are left alone — the
/// lobby is open by default, and a bare `close` meant to leave a game must not close it
/// (the server keeps it closed for the principal); they close when named.
pub fn close_only(open: &[OpenEntry]) -> Result<Value, String> {
    let name = |(s, t, i): &OpenEntry| match i {
        Some(i) => format!("{s}/{t}:{i}"),
        None => format!("{s}/{t}"),
    };
    let instances: Vec<&OpenEntry> = open.iter().filter(|(_, _, i)| i.is_some()).collect();
    match instances.as_slice() {
        [(server, toolset, Some(instance))] => {
            Ok(json!({"server": server, "toolset": toolset, "instance": instance}))
        }
        [] if open.is_empty() => Err("nothing is open".to_owned()),
        [] => Err(format!(
            "no game is open; to close a toolset, name it: close {}",
            open.iter().map(name).collect::<Vec<_>>().join(" | close ")
        )),
        many => Err(format!(
            "close which? open: {}",
            many.iter().map(|e| name(e)).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The game `board` shows: the open instance `target` names (its server and instance may
/// be left out when only one fits), or the only open instance without a target.
pub fn board_of(open: &[OpenEntry], target: Option<&Target>) -> Result<OpenEntry, String> {
    let fits = |(s, t, i): &&OpenEntry| {
        i.is_some()
            && target.is_none_or(|want| {
                (want.name.is_empty() || want.name == *t)
                    && want.server.as_deref().is_none_or(|w| w == s)
                    && want
                        .instance
                        .as_deref()
                        .is_none_or(|w| Some(w) == i.as_deref())
            })
    };
    let games: Vec<&OpenEntry> = open.iter().filter(fits).collect();
    match games.as_slice() {
        [one] => Ok((*one).clone()),
        [] if target.is_some() => Err("no open game fits that; status lists what is open".into()),
        [] => Err("no game is open: open one first (open go)".to_owned()),
        many => Err(format!(
            "board of which? open: {}",
            many.iter()
                .map(|(s, t, i)| format!("{s}/{t}:{}", i.as_deref().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// A game toolset's board tool, by the arcade's convention: `<toolset>_board`.
pub fn board_tool(toolset: &str) -> String {
    format!("{toolset}_board")
}

/// What `board` calls for `game`: its board tool through `toolsets--act` when the host
/// offers one ([`board_tool`]), else `toolsets--look` of the game.
pub fn board_call(game: &OpenEntry, has_board_tool: bool) -> (&'static str, Value) {
    let (server, toolset, instance) = game;
    if has_board_tool {
        let args = json!({"server": server, "tool": board_tool(toolset), "instance": instance, "args": {}});
        (ACT, args)
    } else {
        (
            LOOK,
            json!({"server": server, "toolset": toolset, "instance": instance}),
        )
    }
}

/// `act`'s `toolsets--act` arguments. A lone value fills the one required argument of
/// type string that the tool's current `definition` has and the pairs did not name.
pub fn fill_act(act: &ActCommand, definition: Option<&Tool>) -> Result<Value, CommandError> {
    let mut named = act.named.clone();
    if let Some(value) = &act.value {
        let slots: Vec<&str> = definition
            .map(|d| required_strings(&d.input_schema))
            .unwrap_or_default()
            .into_iter()
            .filter(|k| !named.contains_key(*k))
            .collect();
        match slots.as_slice() {
            [one] => {
                named.insert((*one).to_owned(), value.clone());
            }
            _ => {
                return Err(CommandError::NoSlot {
                    tool: act.target.name.clone(),
                    value: value.to_string(),
                });
            }
        }
    }
    let mut args = Map::new();
    act.target.insert(&mut args, "tool");
    args.insert("args".into(), Value::Object(named));
    Ok(Value::Object(args))
}

/// The required properties of an object schema whose own schema says `"type": "string"`
/// or is an `enum` of strings.
fn required_strings(schema: &Value) -> Vec<&str> {
    let props = schema.get("properties");
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|k| {
            let p = props.and_then(|p| p.get(*k));
            let typed = p.and_then(|p| p.get("type")) == Some(&json!("string"));
            let strings = p
                .and_then(|p| p.get("enum"))
                .and_then(Value::as_array)
                .is_some_and(|e| !e.is_empty() && e.iter().all(Value::is_string));
            typed || strings
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// Issue #43 item 3: what the host tells the agent reads, in `play`, as the commands
    /// a person types, and each command so written reads back as the same call.
    #[test]
    fn issue43_03_meta_tool_calls_read_as_the_commands_that_make_them() {
        let told = "Changed: play in [arcade/game:g1] — \"Play\" (from arcade). Arguments: {move: \"E5\" | \"pass\"}. Call it with toolsets--act {\"instance\":\"g1\",\"server\":\"arcade\",\"tool\":\"play\"}.\nSuggestion from arcade (the host does not act on it): open [arcade/go:m1] — bob challenges you (from arcade). To accept, call toolsets--open {\"options\":{\"note\":\"a b\",\"size\":9,\"s\":\"9\"},\"server\":\"arcade\",\"toolset\":\"go\",\"instance\":\"m1\"}.\ntoolsets--look shows what is open; toolsets--close {} closes; toolsets--look {\"tool\":\"x\"} stays.";
        let shown = in_terminal_words(told);
        assert_eq!(
            shown,
            "Changed: play in [arcade/game:g1] — \"Play\" (from arcade). Arguments: {move: \"E5\" | \"pass\"}. Call it with act arcade/play:g1.\nSuggestion from arcade (the host does not act on it): open [arcade/go:m1] — bob challenges you (from arcade). To accept, call open arcade/go:m1 note=\"a b\" s=\"\\\"9\\\"\" size=9.\nlook shows what is open; close closes; toolsets--look {\"tool\":\"x\"} stays."
        );
        let (open_line, _) = shown
            .split_once("To accept, call ")
            .unwrap()
            .1
            .split_once(".\n")
            .unwrap();
        assert_eq!(
            call(open_line),
            (
                OPEN.into(),
                json!({"server": "arcade", "toolset": "go", "instance": "m1",
                       "options": {"note": "a b", "size": 9, "s": "9"}})
            )
        );
        // A call the commands cannot say, or text that is no JSON object, stays as is.
        for kept in [
            "toolsets--act {\"tool\": 3}",
            "toolsets--act {\"server\":\"a\",\"tool\":\"b\", …}",
            "toolsets--open {\"server\":\"a\"}",
        ] {
            assert_eq!(in_terminal_words(kept), kept);
        }
        assert_eq!(
            in_terminal_words("toolsets--act {\"tool\":\"go_play\",\"args\":{\"move\":\"D4\"}}"),
            "act go_play move=D4"
        );
    }

    use super::*;

    fn call(line: &str) -> (String, Value) {
        match parse(line).unwrap() {
            Command::Call { tool, args } => (tool, args),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn open_look_close_and_call_become_meta_tool_calls() {
        assert_eq!(
            call("open arcade/game size=9 komi=6.5"),
            (
                OPEN.into(),
                json!({"server": "arcade", "toolset": "game", "options": {"size": 9, "komi": 6.5}})
            )
        );
        assert_eq!(
            call("open game:g1"),
            (OPEN.into(), json!({"toolset": "game", "instance": "g1"}))
        );
        assert_eq!(call("look"), (LOOK.into(), json!({})));
        assert_eq!(
            call("look arcade/"),
            (LOOK.into(), json!({"server": "arcade"}))
        );
        assert_eq!(
            call("close game:g2"),
            (CLOSE.into(), json!({"toolset": "game", "instance": "g2"}))
        );
        assert_eq!(parse("close").unwrap(), Command::CloseOnly);
    }

    #[test]
    fn help_says_how_to_see_the_board_pass_resign_and_leave_a_game() {
        for what in ["board", "pass", "resign", "leaves the only open game"] {
            assert!(HELP.contains(what), "help does not say {what:?}:\n{HELP}");
        }
        // Every command `parse` knows is in the help.
        for command in [
            "open", "act", "look", "close", "board", "status", "call", "tools", "help", "quit",
        ] {
            assert!(HELP.lines().any(|l| l.starts_with(command)), "{command}");
            assert!(
                !matches!(parse(command), Err(CommandError::Unknown(_))),
                "{command} is in the help but not a command"
            );
        }
    }

    #[test]
    fn a_bare_close_closes_the_only_game_never_the_default_open_lobby() {
        let entry =
            |t: &str, i: Option<&str>| ("arcade".to_owned(), t.to_owned(), i.map(str::to_owned));
        let lobby = entry("lobby", None);
        let game = entry("go", Some("go-1"));
        assert_eq!(
            close_only(&[lobby.clone(), game.clone()]),
            Ok(json!({"server": "arcade", "toolset": "go", "instance": "go-1"}))
        );
        let only_lobby = close_only(std::slice::from_ref(&lobby)).unwrap_err();
        assert!(
            only_lobby.contains("no game is open") && only_lobby.contains("close arcade/lobby"),
            "{only_lobby}"
        );
        assert_eq!(close_only(&[]), Err("nothing is open".to_owned()));
        let two = close_only(&[game, entry("tictactoe", Some("tictactoe-1")), lobby]).unwrap_err();
        assert_eq!(
            two,
            "close which? open: arcade/go:go-1, arcade/tictactoe:tictactoe-1"
        );
        assert_eq!(
            call("call arcade--clock tz=UTC"),
            ("arcade--clock".into(), json!({"tz": "UTC"}))
        );
        assert_eq!(parse("  ").unwrap(), Command::Empty);
        assert_eq!(parse("tools").unwrap(), Command::Tools);
        assert_eq!(parse("quit").unwrap(), Command::Quit);
    }

    #[test]
    fn board_shows_the_only_open_game_or_the_one_named() {
        let entry =
            |t: &str, i: Option<&str>| ("arcade".to_owned(), t.to_owned(), i.map(str::to_owned));
        let open = [entry("lobby", None), entry("go", Some("go-1"))];
        assert_eq!(parse("board").unwrap(), Command::Board(None));
        assert_eq!(parse("status").unwrap(), Command::Status);
        let Command::Board(t) = parse("board go:go-1").unwrap() else {
            panic!()
        };
        assert_eq!(board_of(&open, t.as_ref()), Ok(entry("go", Some("go-1"))));
        assert_eq!(board_of(&open, None), Ok(entry("go", Some("go-1"))));
        assert!(board_of(&open, Some(&Target::parse("tictactoe"))).is_err());
        assert!(
            board_of(&open[..1], None)
                .unwrap_err()
                .contains("no game is open")
        );
        let two = [open[1].clone(), entry("go", Some("go-2"))];
        assert!(board_of(&two, None).unwrap_err().contains("arcade/go:go-2"));
        assert_eq!(
            board_of(&two, Some(&Target::parse("arcade/go:go-2"))),
            Ok(entry("go", Some("go-2")))
        );
        assert_eq!(
            board_call(&open[1], true),
            (
                ACT,
                json!({"server": "arcade", "tool": "go_board", "instance": "go-1", "args": {}})
            )
        );
        assert_eq!(
            board_call(&open[1], false),
            (
                LOOK,
                json!({"server": "arcade", "toolset": "go", "instance": "go-1"})
            )
        );
    }

    #[test]
    fn bad_commands_say_why() {
        assert!(matches!(parse("dance"), Err(CommandError::Unknown(_))));
        assert!(matches!(
            parse("open"),
            Err(CommandError::Missing {
                command: "open",
                ..
            })
        ));
        assert!(matches!(
            parse("open game 9"),
            Err(CommandError::NotAPair { .. })
        ));
        assert!(matches!(
            parse("act play D4 Q16"),
            Err(CommandError::TooManyValues)
        ));
        assert!(matches!(
            parse("act"),
            Err(CommandError::Missing { command: "act", .. })
        ));
    }

    #[test]
    fn a_lone_value_fills_the_single_required_string_argument() {
        let play = Tool::new(
            "play",
            "plays",
            json!({"type": "object", "properties": {"move": {"type": "string"}, "note": {"type": "string"}},
                   "required": ["move"]}),
        );
        let Command::Act(a) = parse("act arcade/play:g1 D4").unwrap() else {
            panic!()
        };
        assert_eq!(
            fill_act(&a, Some(&play)).unwrap(),
            json!({"server": "arcade", "tool": "play", "instance": "g1", "args": {"move": "D4"}})
        );
        let Command::Act(a) = parse("act play move=Q16 note=hi").unwrap() else {
            panic!()
        };
        assert_eq!(
            fill_act(&a, None).unwrap(),
            json!({"tool": "play", "args": {"move": "Q16", "note": "hi"}})
        );
        let enumerated = Tool::new(
            "play",
            "plays",
            json!({"type": "object", "properties": {"move": {"enum": ["D4", "pass"]}}, "required": ["move"]}),
        );
        let Command::Act(a) = parse("act play pass").unwrap() else {
            panic!()
        };
        assert_eq!(
            fill_act(&a, Some(&enumerated)).unwrap()["args"],
            json!({"move": "pass"})
        );
        let two = Tool::new(
            "say",
            "says",
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                   "required": ["a", "b"]}),
        );
        let Command::Act(a) = parse("act say hi").unwrap() else {
            panic!()
        };
        assert!(matches!(
            fill_act(&a, Some(&two)),
            Err(CommandError::NoSlot { .. })
        ));
        let Command::Act(a) = parse("act say hi b=there").unwrap() else {
            panic!()
        };
        assert_eq!(
            fill_act(&a, Some(&two)).unwrap()["args"],
            json!({"a": "hi", "b": "there"})
        );
    }
}
