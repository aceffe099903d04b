//! Analytical models: lower bounds and the papers' cost formulas.

pub mod trinaryx3;
