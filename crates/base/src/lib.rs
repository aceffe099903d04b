//! What every topocoll layer shares, below them all: the shared errors
//! and the pattern of each layer's own ([`error`]), the limits every layer obeys ([`limits`]), sizes and rates
//! as the command line writes them ([`units`]) and the memory available
//! ([`memory`]). It knows nothing of networks, schedules or time.

pub mod error;
pub mod limits;
pub mod memory;
pub mod units;

pub use error::{did_you_mean, Error, IoCause, Result};
