//! The `topocoll` command: its verbs, its refusals of bad input, and
//! fuzzing of every input it reads.

mod commands;
mod fuzz;
mod gpu_servers;
mod refusals;
