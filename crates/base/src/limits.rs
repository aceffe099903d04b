//! Limits every layer shares, below them all.

/// Most ranks a topology or a schedule may have.
pub const MAX_RANKS: usize = 1 << 24;
