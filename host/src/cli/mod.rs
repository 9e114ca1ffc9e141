//! The pure parts of the `mcpl-host` binary's two front ends, kept here so they are
//! unit-tested without a terminal or a process:
//!
//! | module | what |
//! |---|---|
//! | [`console`] | `mcpl-host console`: one JSON object per line in, one per line out |
//! | [`play`] | `mcpl-host play`: short commands a person types (`open arcade/game size=9`, `act play D4`) |
//! | [`status`] | `mcpl-host play`'s connection lines, prompt and `status` text |
//! | [`words`] | splitting a command line into words and `key=value` pairs with JSON-ish values |

pub mod console;
pub mod play;
pub mod status;
pub mod words;
