//! The sizes of a v-collective (allgatherv, alltoallv): how many elements
//! each rank contributes (allgatherv) or each rank sends each rank
//! (alltoallv), read from a CSV file or drawn by a seeded generator.
//!
//! Counts are in elements of the schedule's element type, as MPI's
//! `recvcounts` and `sendcounts` are. Blocks lie packed in rank order: an
//! alltoallv's rank s sends its block for d from input offset
//! `Σ_{d'<d} m[s][d']` and rank d receives it at output offset
//! `Σ_{s'<s} m[s'][d]`; an allgatherv's block of rank s lands at output
//! offset `Σ_{s'<s} c[s']` on every rank. The format and the generators are
//! described in docs/vcollectives.md.

use crate::error::fail;
use crate::error::{Error, Result};
use std::path::Path;
use topocoll_base::param;

/// Which v-collective the sizes are for: one count per rank, or a P×P matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SizesShape {
    /// allgatherv: rank r contributes `c[r]` elements.
    PerRank,
    /// alltoallv: row s, column d is what rank s sends rank d.
    PerPair,
}

/// The counts of a v-collective with their displacements worked out once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes {
    shape: SizesShape,
    ranks: usize,
    /// P counts (per rank) or P×P counts, row-major (row = sender).
    counts: Vec<u64>,
    /// Per rank: `at[r]` is rank r's block's output offset. Per pair:
    /// `send_at[s·P + d]`, the offset of s's block for d in s's input.
    send_at: Vec<u64>,
    /// Per pair: `recv_at[d·P + s]`, where d receives s's block (empty per rank).
    recv_at: Vec<u64>,
}

impl Sizes {
    /// Every block `count` elements: the v-collective that is its regular
    /// collective (what a request without sizes of its own runs).
    pub fn equal(shape: SizesShape, ranks: usize, count: u64) -> Result<Sizes> {
        match shape {
            SizesShape::PerRank => Sizes::per_rank(vec![count; ranks]),
            SizesShape::PerPair => {
                check_pair_ranks(ranks)?;
                Sizes::per_pair(ranks, vec![count; ranks * ranks])
            }
        }
    }

    /// allgatherv's sizes: rank r contributes `counts[r]` elements.
    pub fn per_rank(counts: Vec<u64>) -> Result<Sizes> {
        let ranks = counts.len();
        if ranks == 0 {
            return Err(fail!(Schedule, Format, "sizes: no ranks"));
        }
        let send_at = prefix(counts.iter().copied())?;
        Ok(Sizes {
            shape: SizesShape::PerRank,
            ranks,
            counts,
            send_at,
            recv_at: Vec::new(),
        })
    }

    /// alltoallv's sizes: `counts[s·P + d]` elements from rank s to rank d.
    pub fn per_pair(ranks: usize, counts: Vec<u64>) -> Result<Sizes> {
        check_pair_ranks(ranks)?;
        if ranks == 0 || ranks.checked_mul(ranks) != Some(counts.len()) {
            return Err(fail!(
                Schedule,
                Format,
                "sizes: {} counts are not a {ranks}×{ranks} matrix",
                counts.len()
            ));
        }
        let mut send_at = Vec::with_capacity(counts.len());
        for row in counts.chunks(ranks) {
            send_at.extend(prefix(row.iter().copied())?);
        }
        let mut recv_at = Vec::with_capacity(counts.len());
        for d in 0..ranks {
            recv_at.extend(prefix((0..ranks).map(|s| counts[s * ranks + d]))?);
        }
        Ok(Sizes {
            shape: SizesShape::PerPair,
            ranks,
            counts,
            send_at,
            recv_at,
        })
    }

    pub fn shape(&self) -> SizesShape {
        self.shape
    }

    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// The counts as stored: P values, or P×P row-major.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Elements rank `from`'s block for rank `to` holds (allgatherv: `from`'s
    /// block, the same for every `to`).
    pub fn block(&self, from: usize, to: usize) -> u64 {
        match self.shape {
            SizesShape::PerRank => self.counts[from],
            SizesShape::PerPair => self.counts[from * self.ranks + to],
        }
    }

    /// Where `from`'s block for `to` starts in `from`'s input (allgatherv: 0,
    /// the whole input).
    pub fn send_at(&self, from: usize, to: usize) -> u64 {
        match self.shape {
            SizesShape::PerRank => 0,
            SizesShape::PerPair => self.send_at[from * self.ranks + to],
        }
    }

    /// Where `to` receives `from`'s block in its output.
    pub fn recv_at(&self, to: usize, from: usize) -> u64 {
        match self.shape {
            SizesShape::PerRank => self.send_at[from],
            SizesShape::PerPair => self.recv_at[to * self.ranks + from],
        }
    }

    /// Elements of rank r's input: its row's sum, or its one block.
    pub fn input_len(&self, r: usize) -> u64 {
        match self.shape {
            SizesShape::PerRank => self.counts[r],
            SizesShape::PerPair => {
                let p = self.ranks;
                self.send_at[r * p + p - 1] + self.counts[r * p + p - 1]
            }
        }
    }

    /// Elements of rank r's output: its column's sum, or every block.
    pub fn output_len(&self, r: usize) -> u64 {
        let p = self.ranks;
        match self.shape {
            SizesShape::PerRank => self.send_at[p - 1] + self.counts[p - 1],
            SizesShape::PerPair => self.recv_at[r * p + p - 1] + self.counts[(p - 1) * p + r],
        }
    }

    /// The largest block.
    pub fn max_block(&self) -> u64 {
        self.counts.iter().copied().max().unwrap_or(0)
    }

    /// Elements over all blocks (each counted once, as sent).
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The elements rank r sends other ranks and receives from them, at
    /// least (its own block stays): what any schedule must move in and out
    /// of it.
    pub fn moved(&self, r: usize) -> (u64, u64) {
        let p = self.ranks;
        match self.shape {
            SizesShape::PerRank => {
                let out = if p > 1 { self.counts[r] } else { 0 };
                (out, self.output_len(r) - self.counts[r])
            }
            SizesShape::PerPair => (
                self.input_len(r) - self.block(r, r),
                self.output_len(r) - self.block(r, r),
            ),
        }
    }

    /// Checks that the sizes fit `ranks` ranks and that no buffer passes
    /// `max_elems` elements.
    pub fn check(&self, shape: SizesShape, ranks: usize, max_elems: u64) -> Result<()> {
        if shape != self.shape {
            return Err(fail!(
                Schedule,
                Format,
                "sizes: {} for a collective that wants {}",
                shape_name(self.shape),
                shape_name(shape)
            ));
        }
        if self.ranks != ranks {
            return Err(param!(
                "counts",
                ": {} are for {} ranks, not {ranks}",
                shape_name(self.shape),
                self.ranks
            ));
        }
        for r in 0..ranks {
            let longest = self.input_len(r).max(self.output_len(r));
            if longest > max_elems {
                return Err(param!(
                    "counts",
                    ": rank {r}'s buffer of {longest} elements is larger than 2^50 bytes"
                ));
            }
        }
        Ok(())
    }

    /// The sizes `spec` names: a generator (`uniform:MAX`, `zipf:S`,
    /// `hot:K`) or else a CSV file's path. `mean` is the mean block in
    /// elements the generators aim at (`--size`), `elem` the element's bytes
    /// (uniform's MAX is in bytes), `seed` the generators' seed.
    pub fn parse(
        spec: &str,
        shape: SizesShape,
        ranks: usize,
        mean: u64,
        elem: u64,
        seed: u64,
    ) -> Result<Sizes> {
        let sizes = match Generator::parse(spec, elem)? {
            Some(g) => g.generate(shape, ranks, mean, seed),
            None => Sizes::read_csv(Path::new(spec), shape, ranks),
        };
        // The counts come from `--counts`: a refusal names it.
        sizes.map_err(|e| match e {
            e if e == past_u64() => {
                param!("counts", " {spec}: the counts add up past 2^64 elements")
            }
            e => e,
        })
    }

    /// Reads a CSV file of counts (see [`Sizes::from_csv`]).
    pub fn read_csv(path: &Path, shape: SizesShape, ranks: usize) -> Result<Sizes> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            // Invalid, not Io: the hint follows the system's error.
            crate::error::fail!(
                Schedule,
                Format,
                "{name}: {e} (--counts takes a CSV file or uniform:MAX, zipf:S, hot:K)"
            )
        })?;
        Sizes::from_csv(&name, &text, shape, ranks)
    }

    /// Parses CSV counts: for alltoallv P rows of P counts (row = sender,
    /// column = receiver), for allgatherv one row of P counts or P rows of
    /// one. Counts are whole numbers ≥ 0; blank lines and lines starting
    /// with `#` are skipped (rows are numbered as lines of the file). An
    /// error names the file, the row and the column.
    pub fn from_csv(name: &str, text: &str, shape: SizesShape, ranks: usize) -> Result<Sizes> {
        if shape == SizesShape::PerPair {
            check_pair_ranks(ranks)?;
        }
        let mut rows: Vec<(usize, Vec<u64>)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut row = Vec::new();
            for (j, field) in line.split(',').enumerate() {
                let field = field.trim();
                let value =
                    field.parse::<u64>().map_err(|_| {
                        fail!(Schedule, Format,
                        "{name}: row {}, column {}: '{field}' is not a count (a whole number ≥ 0)",
                        i + 1,
                        j + 1
                    )
                    })?;
                row.push(value);
            }
            rows.push((i + 1, row));
        }
        let want = |what: &str, n: usize| {
            fail!(Schedule, Format, "{name}: {n} {what}, want {ranks} (ranks)")
        };
        match shape {
            SizesShape::PerRank => {
                let counts: Vec<u64> = match rows.as_slice() {
                    [(_, row)] if ranks != 1 || row.len() == 1 => {
                        if row.len() != ranks {
                            return Err(want("values in its one row", row.len()));
                        }
                        row.clone()
                    }
                    _ => {
                        if let Some((line, row)) = rows.iter().find(|(_, r)| r.len() != 1) {
                            return Err(fail!(Schedule, Format,
                                "{name}: row {line} has {} values, want 1 (one count per rank in a column, or P counts in one row)",
                                row.len()
                            ));
                        }
                        if rows.len() != ranks {
                            return Err(want("rows", rows.len()));
                        }
                        rows.iter().map(|(_, r)| r[0]).collect()
                    }
                };
                Sizes::per_rank(counts)
            }
            SizesShape::PerPair => {
                if let Some((line, row)) = rows.iter().find(|(_, r)| r.len() != ranks) {
                    return Err(fail!(
                        Schedule,
                        Format,
                        "{name}: row {line} has {} values, want {ranks} (ranks)",
                        row.len()
                    ));
                }
                if rows.len() != ranks {
                    return Err(want("rows", rows.len()));
                }
                Sizes::per_pair(ranks, rows.into_iter().flat_map(|(_, r)| r).collect())
            }
        }
    }

    /// The counts as CSV, in the form [`Sizes::from_csv`] reads.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        for row in self.counts.chunks(self.ranks) {
            let cells: Vec<String> = row.iter().map(u64::to_string).collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }
}

fn shape_name(shape: SizesShape) -> &'static str {
    match shape {
        SizesShape::PerRank => "one count per rank (allgatherv)",
        SizesShape::PerPair => "a matrix of counts per pair (alltoallv)",
    }
}

/// The most ranks an alltoallv takes: its P×P counts are held three
/// times over (counts and both displacements), 96 MiB at this limit.
pub const MAX_PAIR_RANKS: usize = 2048;

/// Refuses an alltoallv of more ranks than [`MAX_PAIR_RANKS`], before its
/// matrix is read, drawn or allocated.
pub fn check_pair_ranks(ranks: usize) -> Result<()> {
    if ranks > MAX_PAIR_RANKS {
        return Err(param!(
            "ranks",
            " {ranks}: an alltoallv's matrix of counts is held for at most {MAX_PAIR_RANKS} ranks"
        ));
    }
    Ok(())
}

/// Counts whose sums pass `u64`, as the library names them (`sizes`).
fn past_u64() -> Error {
    fail!(Schedule, Format, "sizes: the counts add up past 2^64")
}

/// Exclusive prefix sums, refusing a total past `u64`.
fn prefix(values: impl Iterator<Item = u64>) -> Result<Vec<u64>> {
    let mut at = 0u64;
    let mut out = Vec::new();
    for v in values {
        out.push(at);
        at = at.checked_add(v).ok_or_else(past_u64)?;
    }
    Ok(out)
}

/// A seeded generator of sizes (see docs/vcollectives.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Generator {
    /// Every count uniform in 0..=max elements.
    Uniform { max: u64 },
    /// Each row's counts fall off as 1/k^s over a seeded order of its
    /// columns, scaled so the row's mean is the mean block.
    Zipf { s: f64 },
    /// Mixture-of-experts routing: `k` hot ranks (the same for every
    /// sender, drawn by the seed) get [`HOT_SHARE`] of each row.
    Hot { k: usize },
}

/// The share of each row the hot ranks of `hot:K` get together.
pub const HOT_SHARE: f64 = 0.9;

impl Generator {
    /// A generator's spec, or `None` when `spec` names none (a file).
    pub fn parse(spec: &str, elem: u64) -> Result<Option<Generator>> {
        let Some((name, arg)) = spec.split_once(':') else {
            return Ok(None);
        };
        let bad = |what: &str| -> Error { param!("counts", " {spec}: {what}") };
        Ok(Some(match name {
            "uniform" => {
                let bytes = topocoll_base::units::parse_bytes(arg)
                    .map_err(|_| bad("MAX is a size in bytes (uniform:4KiB)"))?;
                Generator::Uniform { max: bytes / elem }
            }
            "zipf" => {
                let s: f64 = arg
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                    .ok_or_else(|| bad("S is an exponent ≥ 0 (zipf:1.1)"))?;
                Generator::Zipf { s }
            }
            "hot" => {
                let k: usize = arg
                    .parse()
                    .ok()
                    .filter(|&k| k >= 1)
                    .ok_or_else(|| bad("K is a count of hot ranks ≥ 1 (hot:2)"))?;
                Generator::Hot { k }
            }
            _ => return Ok(None),
        }))
    }

    /// Draws the sizes of `ranks` ranks: a row per sender (alltoallv) or
    /// one row (allgatherv), each from its own stream of the seed.
    pub fn generate(self, shape: SizesShape, ranks: usize, mean: u64, seed: u64) -> Result<Sizes> {
        let rows = match shape {
            SizesShape::PerRank => 1,
            SizesShape::PerPair => ranks,
        };
        if shape == SizesShape::PerPair {
            check_pair_ranks(ranks)?;
        }
        let row_total = mean.checked_mul(ranks as u64).ok_or_else(|| -> Error {
            param!("size", " times {ranks} ranks passes 2^64 elements")
        })?;
        let mut rng = SplitMix(seed);
        // Hot ranks are global (every sender's tokens favour the same experts).
        let hot: Vec<bool> = match self {
            Generator::Hot { k } => {
                if k > ranks {
                    return Err(param!("counts", " hot:{k}: only {ranks} ranks"));
                }
                let order = rng.permutation(ranks);
                let mut hot = vec![false; ranks];
                for &h in &order[..k] {
                    hot[h] = true;
                }
                hot
            }
            _ => Vec::new(),
        };
        let mut counts = Vec::with_capacity(rows * ranks);
        for _ in 0..rows {
            match self {
                Generator::Uniform { max } => {
                    counts.extend((0..ranks).map(|_| rng.below(max.saturating_add(1))));
                }
                Generator::Zipf { s } => {
                    let order = rng.permutation(ranks);
                    let mut weights = vec![0.0; ranks];
                    for (k, &col) in order.iter().enumerate() {
                        weights[col] = 1.0 / ((k + 1) as f64).powf(s);
                    }
                    counts.extend(split(row_total, &weights));
                }
                Generator::Hot { k } => {
                    let cold = ranks - k;
                    let weights: Vec<f64> = hot
                        .iter()
                        .map(|&h| {
                            let share = match (h, cold) {
                                (true, 0) => 1.0 / k as f64,
                                (true, _) => HOT_SHARE / k as f64,
                                (false, _) => (1.0 - HOT_SHARE) / cold as f64,
                            };
                            // ±50% jitter, so rows differ as routed tokens do.
                            share * (0.5 + rng.unit())
                        })
                        .collect();
                    counts.extend(split(row_total, &weights));
                }
            }
        }
        match shape {
            SizesShape::PerRank => Sizes::per_rank(counts),
            SizesShape::PerPair => Sizes::per_pair(ranks, counts),
        }
    }
}

/// `total` split in proportion to `weights`: each floor of its share, and
/// what the floors leave to the heaviest, so the row sums to `total`.
fn split(total: u64, weights: &[f64]) -> Vec<u64> {
    let sum: f64 = weights.iter().sum();
    let mut out: Vec<u64> = weights
        .iter()
        .map(|w| (total as f64 * w / sum).floor() as u64)
        .collect();
    let given: u64 = out.iter().sum();
    let heaviest = (0..weights.len())
        .max_by(|&a, &b| weights[a].total_cmp(&weights[b]).then(b.cmp(&a)))
        .unwrap_or(0);
    // Rounding may give a few elements too many or too few; the heaviest
    // block absorbs the difference.
    if given <= total {
        out[heaviest] += total - given;
    } else {
        out[heaviest] = out[heaviest].saturating_sub(given - total);
    }
    out
}

/// SplitMix64: small, seeded and the same on every platform.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n ≥ 1; the modulo's bias is below 2^-40 for the
    /// counts drawn here).
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return self.next();
        }
        self.next() % n
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A Fisher-Yates shuffle of 0..n.
    fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.below(i as u64 + 1) as usize;
            order.swap(i, j);
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displacements_are_packed_in_rank_order() {
        let s = Sizes::per_pair(3, vec![1, 0, 2, 3, 4, 0, 0, 5, 6]).unwrap();
        assert_eq!(s.send_at(0, 2), 1);
        assert_eq!(s.recv_at(1, 2), 4);
        assert_eq!(s.input_len(1), 7);
        assert_eq!(s.output_len(2), 8);
        assert_eq!(s.moved(2), (5, 2));
        let g = Sizes::per_rank(vec![2, 0, 3]).unwrap();
        assert_eq!(g.recv_at(0, 2), 2);
        assert_eq!(g.output_len(1), 5);
    }

    #[test]
    fn generated_rows_keep_the_mean() {
        for spec in ["zipf:1.2", "hot:2", "zipf:0"] {
            let g = Generator::parse(spec, 1).unwrap().unwrap();
            let s = g.generate(SizesShape::PerPair, 7, 100, 3).unwrap();
            for row in s.counts().chunks(7) {
                assert_eq!(row.iter().sum::<u64>(), 700, "{spec}");
            }
        }
    }
}
