//! topocoll's integration tests, one binary with a module per layer
//! (`cargo test --release --test suite`; a module's tests alone:
//! `cargo test --release --test suite -- sim::`).

mod algorithms;
mod cli;
mod common;
mod docs;
mod errors;
mod formats;
mod model;
mod optimize;
mod reproduce;
mod runtime;
mod schedule;
mod sim;
mod topology;
