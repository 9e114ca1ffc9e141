//! Fuzz target `hint_state`: see [`mcpl_fuzz::hint_state`] for the input and the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcpl_fuzz::hint_state::check(data));
