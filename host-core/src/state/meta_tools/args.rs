//! The meta-tools' own arguments, parsed strictly: an unknown member or a wrong type is
//! refused with what is wrong, before anything is resolved.

use super::defs::{ACT, CLOSE, LOOK, OPEN};
use super::error::MetaError;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// `toolsets--open {server?, toolset, instance?, options?}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct OpenArgs {
    pub server: Option<String>,
    pub toolset: String,
    pub instance: Option<String>,
    pub options: Option<Map<String, Value>>,
}

/// `toolsets--act {server?, tool, instance?, args?}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ActArgs {
    pub server: Option<String>,
    pub tool: String,
    pub instance: Option<String>,
    pub args: Option<Map<String, Value>>,
}

/// `toolsets--look {server?, toolset?, instance?, tool?}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LookArgs {
    pub server: Option<String>,
    pub toolset: Option<String>,
    pub instance: Option<String>,
    pub tool: Option<String>,
}

/// `toolsets--close {server?, toolset, instance?}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CloseArgs {
    pub server: Option<String>,
    pub toolset: String,
    pub instance: Option<String>,
}

fn parse<T: DeserializeOwned>(tool: &'static str, args: &Value) -> Result<T, MetaError> {
    // A missing arguments object is an empty one.
    let args = if args.is_null() {
        Value::Object(Map::new())
    } else {
        args.clone()
    };
    serde_json::from_value(args).map_err(|e| MetaError::BadArguments {
        tool,
        detail: e.to_string(),
    })
}

pub(super) fn open(args: &Value) -> Result<OpenArgs, MetaError> {
    parse(OPEN, args)
}

pub(super) fn act(args: &Value) -> Result<ActArgs, MetaError> {
    parse(ACT, args)
}

pub(super) fn look(args: &Value) -> Result<LookArgs, MetaError> {
    parse(LOOK, args)
}

pub(super) fn close(args: &Value) -> Result<CloseArgs, MetaError> {
    parse(CLOSE, args)
}
