//! Barrier algorithms. A barrier moves no data: its messages carry zero
//! elements, and what the verifier proves is that every rank's last
//! operation waits, through dependencies and messages, on an operation of
//! every rank (`schedule::verify`).

pub mod dissemination;
pub mod linear;
pub mod node_aware;
pub mod tree;

use topocoll_schedule::{Buf, Region};

/// The region of a zero-byte message: no elements of the (empty) output.
pub(crate) const NOTHING: Region = Region {
    buf: Buf::Output,
    offset: 0,
    count: 0,
};
