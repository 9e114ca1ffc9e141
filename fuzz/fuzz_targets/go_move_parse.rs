//! Fuzz target `go_move_parse`: see [`mcpl_fuzz::go_move`] for the input and the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcpl_fuzz::go_move::check(data));
