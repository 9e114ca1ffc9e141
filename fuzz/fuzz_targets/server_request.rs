//! Fuzz target `server_request`: see [`mcpl_fuzz::server`] for the input and the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcpl_fuzz::server::check(data));
