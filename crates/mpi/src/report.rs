//! What the library ran, per collective, communicator size, size and
//! algorithm (`TOPOCOLL_REPORT`, written at `MPI_Finalize`).
//!
//! Each rank counts its own calls; rank 0 of the world gathers them. A row
//! gives the most calls any rank made of it and the longest time any rank
//! spent in them, so a row of a collective on the world is its calls and
//! its time as the slowest rank saw it.

use crate::abi::{Coll, Fallback};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One row of the report.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub collective: String,
    pub comm_ranks: usize,
    /// topocoll's `--size` of the call (the block per peer for alltoall,
    /// allgather, scatter and gather; the largest block for the
    /// v-collectives; the whole buffer otherwise).
    pub size_bytes: u64,
    /// The algorithm, the schedule file, or `native`.
    pub algorithm: String,
    /// Why the library's own collective ran, for `native` rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    pub calls: u64,
    pub time_s: f64,
}

type RowKey = (String, usize, u64, String, Option<String>);

/// A call's row as it is counted: nothing in it allocates (the count is on
/// every call's path).
type CallKey = (Coll, usize, u64, Arc<str>, Option<Fallback>);

/// One rank's counts, or the merged counts of every rank.
#[derive(Default, Debug)]
pub struct Report {
    calls: FxHashMap<CallKey, (u64, f64)>,
    rows: BTreeMap<RowKey, (u64, f64)>,
}

impl Report {
    pub fn add(
        &mut self,
        coll: Coll,
        comm_ranks: usize,
        size_bytes: u64,
        algorithm: &Arc<str>,
        fallback: Option<Fallback>,
        seconds: f64,
    ) {
        let key = (coll, comm_ranks, size_bytes, algorithm.clone(), fallback);
        let e = self.calls.entry(key).or_insert((0, 0.0));
        e.0 += 1;
        e.1 += seconds;
    }

    /// The rows by name: the counted calls with the merged ones.
    fn named(&self) -> BTreeMap<RowKey, (u64, f64)> {
        let mut rows = self.rows.clone();
        for ((c, r, s, a, f), &(calls, t)) in &self.calls {
            let key = (
                c.kind().name().to_string(),
                *r,
                *s,
                a.to_string(),
                f.map(|f| f.describe().to_string()),
            );
            let e = rows.entry(key).or_insert((0, 0.0));
            e.0 += calls;
            e.1 += t;
        }
        rows
    }

    pub fn rows(&self) -> Vec<Row> {
        self.named()
            .iter()
            .map(|((c, r, s, a, f), &(calls, t))| Row {
                collective: c.clone(),
                comm_ranks: *r,
                size_bytes: *s,
                algorithm: a.clone(),
                fallback: f.clone(),
                calls,
                time_s: t,
            })
            .collect()
    }

    /// One rank's rows, as rank 0 reads them back.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.rows()).expect("rows serialise")
    }

    pub fn from_json(bytes: &[u8]) -> Result<Report, serde_json::Error> {
        let rows: Vec<Row> = serde_json::from_slice(bytes)?;
        let mut r = Report::default();
        for row in rows {
            r.rows.insert(
                (
                    row.collective,
                    row.comm_ranks,
                    row.size_bytes,
                    row.algorithm,
                    row.fallback,
                ),
                (row.calls, row.time_s),
            );
        }
        Ok(r)
    }

    /// Adds another rank's rows: the most calls and the longest time.
    pub fn merge(&mut self, other: &Report) {
        for (k, &(calls, t)) in &other.named() {
            let e = self.rows.entry(k.clone()).or_insert((0, 0.0));
            e.0 = e.0.max(calls);
            e.1 = e.1.max(t);
        }
    }

    /// The report file: JSON with the world's size, the rows, and the
    /// fallbacks counted by reason.
    pub fn render(&self, world_ranks: usize) -> String {
        let rows = self.rows();
        let mut fallbacks: BTreeMap<String, u64> = BTreeMap::new();
        for r in &rows {
            if let Some(f) = &r.fallback {
                *fallbacks.entry(f.clone()).or_default() += r.calls;
            }
        }
        let fallbacks: Vec<_> = fallbacks
            .into_iter()
            .map(|(reason, calls)| serde_json::json!({ "reason": reason, "calls": calls }))
            .collect();
        let out = serde_json::json!({
            "world_ranks": world_ranks,
            "rows": rows,
            "fallbacks": fallbacks,
        });
        serde_json::to_string_pretty(&out).expect("the report serialises") + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_rows_keep_the_most_calls_and_the_longest_time() {
        let (ring, native): (Arc<str>, Arc<str>) = ("ring".into(), "native".into());
        let mut a = Report::default();
        a.add(Coll::Allreduce, 4, 64, &ring, None, 0.5);
        a.add(Coll::Allreduce, 4, 64, &ring, None, 0.5);
        let mut b = Report::default();
        b.add(Coll::Allreduce, 4, 64, &ring, None, 2.0);
        b.add(Coll::Bcast, 4, 8, &native, Some(Fallback::UserOp), 0.1);
        let mut m = Report::from_json(a.to_json().as_bytes()).unwrap();
        m.merge(&Report::from_json(b.to_json().as_bytes()).unwrap());
        let rows = m.rows();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].calls, rows[0].time_s), (2, 2.0));
        let text = m.render(4);
        assert!(text.contains("\"fallbacks\""), "{text}");
    }
}
