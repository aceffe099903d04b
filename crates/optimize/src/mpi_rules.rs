//! A tuning table as MPI libraries' own tuning files, for the algorithms
//! they share with topocoll: Open MPI 4.1's coll/tuned dynamic rules and
//! MPICH 4.0's collective selection JSON.
//!
//! Which algorithms map, and to what, is each registry entry's
//! [`Algorithm::mpi`]: the library's algorithm that runs the same
//! messages between the same ranks, and nothing for an algorithm whose
//! nearest relative there runs something else. A table meant for a
//! library is tuned among the algorithms it runs ([`Library`],
//! `tune::Problem::library`); a decision whose algorithm the library lacks
//! (in a table tuned among every algorithm) makes no rule: the rule
//! before it covers it. Sizes are converted to what
//! each library compares a rule with (its "message size", which differs by
//! collective).

use super::tune::{Decision, Table};
use std::io::{self, Write};
use topocoll_algorithms::{Algorithm, Ompi};
use topocoll_schedule::CollectiveKind;

/// An MPI library whose tuning file a table is exported to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    /// Open MPI 4.1's coll/tuned dynamic rules.
    Ompi,
    /// MPICH 4.0's collective selection JSON.
    Mpich,
}

impl Library {
    pub fn name(self) -> &'static str {
        match self {
            Library::Ompi => "Open MPI",
            Library::Mpich => "MPICH",
        }
    }

    /// Whether the library runs `alg`'s schedule: its registry entry names
    /// an exact counterpart there ([`Algorithm::mpi`]). A table exported to
    /// the library is tuned among these alone, so that what was simulated
    /// is what the library runs.
    pub fn runs(self, alg: &Algorithm) -> bool {
        match self {
            Library::Ompi => alg.mpi.ompi.is_some(),
            Library::Mpich => alg.mpi.mpich.is_some(),
        }
    }
}

/// The algorithms of `collective` that Open MPI 4.1 has, with their Open
/// MPI counterparts, in registry order.
pub fn ompi_algorithms(
    collective: CollectiveKind,
) -> impl Iterator<Item = (&'static Algorithm, &'static Ompi)> {
    topocoll_algorithms::of(collective).filter_map(|a| a.mpi.ompi.as_ref().map(|o| (a, o)))
}

/// The algorithms of `collective` that MPICH 4.0 has, with their MPICH
/// counterparts, in registry order.
pub fn mpich_algorithms(
    collective: CollectiveKind,
) -> impl Iterator<Item = (&'static Algorithm, &'static str)> {
    topocoll_algorithms::of(collective).filter_map(|a| a.mpi.mpich.map(|m| (a, m)))
}

/// Open MPI 4.1's number for a collective in a rules file (`COLLTYPE_T`).
/// topocoll's reduce_scatter gives every rank an equal chunk: Open MPI's
/// reduce_scatter_block.
pub fn ompi_collective(collective: CollectiveKind) -> u32 {
    match collective {
        CollectiveKind::Allgather => 0,
        CollectiveKind::Allreduce => 2,
        CollectiveKind::Alltoall => 3,
        CollectiveKind::Bcast => 7,
        CollectiveKind::Gather => 9,
        CollectiveKind::Reduce => 11,
        CollectiveKind::ReduceScatter => 13,
        CollectiveKind::Scatter => 15,
        CollectiveKind::Barrier => 6,
        CollectiveKind::Exscan => 8,
        CollectiveKind::Scan => 14,
        CollectiveKind::Allgatherv => 1,
        CollectiveKind::Alltoallv => 4,
    }
}

/// The bytes Open MPI 4.1's dynamic rules compare with a rule's message
/// size, for a topocoll size (`--size`) on `ranks` ranks: the whole buffer
/// for allreduce, bcast, reduce and reduce_scatter_block; every rank's
/// block together for the others.
pub fn ompi_message_bytes(collective: CollectiveKind, size_bytes: u64, ranks: usize) -> u64 {
    if collective.with_root(0).size_is_block() {
        size_bytes * ranks as u64
    } else {
        size_bytes
    }
}

/// For each collective MPICH can be told to run by size, the algorithms a
/// rule falls back to where the table does not decide (other communicator
/// sizes, and the cases the table's algorithms do not take: in-place
/// buffers, non-commutative or user-defined operators): (MPICH's
/// collective, intra-communicator algorithm, inter-communicator algorithm).
const MPICH_FALLBACK: &[(&str, &str, &str)] = &[
    (
        "allreduce",
        "MPIR_Allreduce_intra_recursive_doubling",
        "MPIR_Allreduce_inter_reduce_exchange_bcast",
    ),
    (
        "bcast",
        "MPIR_Bcast_intra_binomial",
        "MPIR_Bcast_inter_remote_send_local_bcast",
    ),
    (
        "reduce",
        "MPIR_Reduce_intra_binomial",
        "MPIR_Reduce_inter_local_reduce_remote_send",
    ),
    (
        "allgather",
        "MPIR_Allgather_intra_ring",
        "MPIR_Allgather_inter_local_gather_remote_bcast",
    ),
    (
        "alltoall",
        "MPIR_Alltoall_intra_pairwise_sendrecv_replace",
        "MPIR_Alltoall_inter_pairwise_exchange",
    ),
    (
        "reduce_scatter_block",
        "MPIR_Reduce_scatter_block_intra_recursive_doubling",
        "MPIR_Reduce_scatter_block_inter_remote_reduce_local_scatter",
    ),
];

/// MPICH's name for a topocoll collective, and the condition its sizes are
/// compared under: `avg_msg_size` (the buffer, or the block per peer) where
/// MPICH defines it, `total_msg_size` (bytes of every rank's block
/// together) otherwise. Scatter and gather have one algorithm in MPICH;
/// barrier, scan and exscan get no rules (a message size does not choose
/// among their algorithms).
fn mpich_collective(collective: CollectiveKind) -> Option<(&'static str, &'static str)> {
    Some(match collective {
        CollectiveKind::Allreduce => ("allreduce", "avg_msg_size"),
        CollectiveKind::Bcast => ("bcast", "avg_msg_size"),
        CollectiveKind::Reduce => ("reduce", "avg_msg_size"),
        CollectiveKind::Alltoall => ("alltoall", "avg_msg_size"),
        CollectiveKind::Allgather => ("allgather", "total_msg_size"),
        CollectiveKind::ReduceScatter => ("reduce_scatter_block", "total_msg_size"),
        CollectiveKind::Scatter
        | CollectiveKind::Gather
        | CollectiveKind::Barrier
        | CollectiveKind::Scan
        | CollectiveKind::Exscan
        // A v-collective's sizes are a matrix, not one message size.
        | CollectiveKind::Alltoallv
        | CollectiveKind::Allgatherv => return None,
    })
}

/// The bytes MPICH 4.0 compares with a rule for a topocoll size.
pub fn mpich_message_bytes(collective: CollectiveKind, size_bytes: u64, ranks: usize) -> u64 {
    match collective {
        CollectiveKind::Allgather => size_bytes * ranks as u64,
        _ => size_bytes,
    }
}

/// The decisions as rules: (topocoll size the rule starts at, the
/// library's algorithm, the segment where the library takes one),
/// consecutive equal ones merged.
fn rules<T: PartialEq + Copy>(
    decisions: &[&Decision],
    map: impl Fn(&Decision) -> Option<(T, Option<u64>)>,
) -> Vec<(u64, T, Option<u64>)> {
    let mut out: Vec<(u64, T, Option<u64>)> = Vec::new();
    for d in decisions {
        let Some((alg, seg)) = map(d) else { continue };
        if out.last().is_some_and(|l| l.1 == alg && l.2 == seg) {
            continue;
        }
        out.push((d.size_bytes, alg, seg));
    }
    out
}

/// The collective of a table (as its cache file names it).
fn table_collective(table: &Table) -> io::Result<CollectiveKind> {
    CollectiveKind::parse(&table.collective).map_err(|e| io::Error::other(e.to_string()))
}

fn unmapped(library: &str, coll: CollectiveKind) -> io::Error {
    io::Error::other(format!(
        "no choice of the table is an algorithm {library} has for {coll}"
    ))
}

/// Writes `decisions` (increasing sizes of `table`) as an Open MPI 4.1
/// coll/tuned dynamic rules file for communicators of `ranks` ranks (Open
/// MPI applies a file's only communicator size to every size). Each rule's
/// comment names the function that runs it.
pub fn write_ompi(
    w: &mut dyn Write,
    table: &Table,
    decisions: &[&Decision],
    ranks: usize,
) -> io::Result<()> {
    let coll = table_collective(table)?;
    let id = ompi_collective(coll);
    let find = |alg: &str| ompi_algorithms(coll).find(|(a, _)| a.name == alg);
    // Of these algorithms only Open MPI's pipelined bcast and segmented
    // ring allreduce take a segment; the ring's is written even where the
    // choice took its default, since Open MPI's default (none) runs the
    // plain ring.
    let rules = rules(decisions, |d| {
        find(&d.choice.algorithm).map(|(_, m)| {
            let seg = match m.name {
                "pipeline" => d.choice.segment_bytes,
                "segmented_ring" => Some(
                    d.choice
                        .segment_bytes
                        .unwrap_or(topocoll_algorithms::pipelined::DEFAULT_SEGMENT_BYTES),
                ),
                _ => None,
            };
            (m.id, seg)
        })
    });
    if rules.is_empty() {
        return Err(unmapped("Open MPI", coll));
    }
    // Open MPI chooses its alltoallv by the rule at 0 bytes alone (no rank
    // knows the total), so only the smallest size's choice is written.
    let rules = if coll == CollectiveKind::Alltoallv {
        rules.into_iter().take(1).collect()
    } else {
        rules
    };
    let ompi_coll = if coll == CollectiveKind::ReduceScatter {
        "reduce_scatter_block"
    } else {
        coll.name()
    };
    writeln!(w, "# topocoll tune: {}", table.description)?;
    writeln!(
        w,
        "# --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE"
    )?;
    writeln!(w, "1 # collectives")?;
    writeln!(w, "{id} # {ompi_coll}")?;
    writeln!(w, "1 # communicator sizes")?;
    writeln!(w, "{ranks} {} # ranks, message sizes", rules.len())?;
    for (i, &(size, alg, seg)) in rules.iter().enumerate() {
        // The first rule covers every size from 0 bytes.
        let from = if i == 0 {
            0
        } else {
            ompi_message_bytes(coll, size, ranks)
        };
        let (a, m) = ompi_algorithms(coll)
            .find(|(_, m)| m.id == alg)
            .expect("a rule's algorithm is in the registry");
        writeln!(
            w,
            "{from} {alg} 0 {} # from {size} B: topocoll {} -> {} (ompi_coll_base_{ompi_coll}_intra_{})",
            seg.unwrap_or(0),
            a.name,
            m.name,
            m.function
        )?;
    }
    Ok(())
}

/// Writes `decisions` as the rules of MPICH 4.0's collective selection
/// JSON (`MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE`) for the table's
/// collective on intra-communicators of `ranks` ranks; other communicators,
/// in-place buffers and operators the algorithms do not take fall back to
/// an algorithm that takes them.
///
/// MPICH reads a file in place of its own choices and stops at a collective
/// it finds no rule for, so the rules go into `base` (a whole selection
/// file, such as MPICH's own), replacing its rules for this collective;
/// without one the file holds this collective alone.
pub fn write_mpich(
    w: &mut dyn Write,
    table: &Table,
    decisions: &[&Decision],
    ranks: usize,
    base: Option<&str>,
) -> io::Result<()> {
    let coll = table_collective(table)?;
    let (name, measure) = mpich_collective(coll).ok_or_else(|| {
        io::Error::other(match coll {
            CollectiveKind::Scatter | CollectiveKind::Gather => {
                format!("MPICH has one algorithm for {coll}")
            }
            // MPICH selects these by communicator size alone; no
            // size-keyed rules are written for them.
            _ => format!("topocoll writes no MPICH selection rules for {coll}"),
        })
    })?;
    let find = |d: &Decision| -> Option<(&'static str, Option<u64>)> {
        let (_, alg) = mpich_algorithms(coll).find(|(a, _)| a.name == d.choice.algorithm)?;
        // MPICH does not check these algorithms' conditions on a file's
        // choice: a rule that breaks one is not written.
        let pof2 = 1u64 << (usize::BITS - 1 - ranks.leading_zeros());
        let elems = d.size_bytes / 8;
        match alg {
            "MPIR_Allreduce_intra_reduce_scatter_allgather" if elems < pof2 => None,
            "MPIR_Allgather_intra_recursive_doubling" if !ranks.is_power_of_two() => None,
            _ => Some((alg, None)),
        }
    };
    let rules = rules(decisions, find);
    if rules.is_empty() {
        return Err(unmapped("MPICH", coll));
    }
    let leaf = |alg: &str| Node(vec![(format!("algorithm={alg}"), Node(Vec::new()))]);
    let &(_, intra_any, inter_any) = MPICH_FALLBACK
        .iter()
        .find(|f| f.0 == name)
        .expect("every collective mpich_collective names");
    let by_size = Node(
        rules
            .iter()
            .enumerate()
            .map(|(i, &(_, alg, _))| match rules.get(i + 1) {
                // Up to just below where the next rule starts.
                Some(&(next, _, _)) => (
                    format!("{measure}<={}", mpich_message_bytes(coll, next, ranks) - 1),
                    leaf(alg),
                ),
                None => (format!("{measure}=any"), leaf(alg)),
            })
            .collect(),
    );
    // What the table's algorithms need: buffers apart (alltoall), a
    // commutative operator (reduce_scatter), a built-in one (allreduce).
    let guard = match name {
        "alltoall" => Some("is_sendbuf_inplace"),
        "reduce_scatter_block" => Some("is_commutative"),
        "allreduce" => Some("is_op_built_in"),
        _ => None,
    };
    let tuned = match guard {
        Some("is_sendbuf_inplace") => Node(vec![
            ("is_sendbuf_inplace=yes".into(), leaf(intra_any)),
            ("is_sendbuf_inplace=no".into(), by_size),
        ]),
        Some(g) => Node(vec![
            (format!("{g}=yes"), by_size),
            (format!("{g}=no"), leaf(intra_any)),
        ]),
        None => by_size,
    };
    // Conditions are tried in order, each key's subtree taken when it holds.
    let mut intra = Vec::new();
    if ranks > 1 {
        intra.push((format!("comm_size<={}", ranks - 1), leaf(intra_any)));
    }
    intra.push((format!("comm_size<={ranks}"), tuned));
    intra.push(("comm_size=any".into(), leaf(intra_any)));
    let section = Node(vec![
        ("comm_type=intra".into(), Node(intra)),
        ("comm_type=inter".into(), leaf(inter_any)),
    ]);
    let key = format!("collective={name}");
    let mut text = Vec::new();
    section.write(&mut text, 1)?;
    let section = String::from_utf8(text).expect("ASCII");
    match base {
        None => writeln!(w, "{{\n  \"{key}\": {section}\n}}"),
        Some(base) => writeln!(w, "{}", replace_member(base, &key, &section)?),
    }
}

/// `base`, a JSON object, with its member `key` given `value` (added at the
/// end when it has none); everything else as it was, in its order.
fn replace_member(base: &str, key: &str, value: &str) -> io::Result<String> {
    let bad = |why: &str| io::Error::other(format!("--mpich-base: {why}"));
    serde_json::from_str::<serde_json::Value>(base)
        .map_err(|e| bad(&format!("not JSON ({e})")))?
        .as_object()
        .ok_or_else(|| bad("not a JSON object"))?;
    // One walk over the top-level object: a string at depth 1 right after
    // `{` or `,` is a member's key; a member's value runs from its colon to
    // the `,` or `}` that ends it at depth 1.
    let b = base.as_bytes();
    let mut depth = 0usize;
    let mut expect_key = false;
    let mut ours = false;
    let mut from = None;
    let mut found: Option<(usize, usize)> = None;
    let mut last_close = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i + 1;
                i += 1;
                while b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if depth == 1 && expect_key {
                    ours = found.is_none() && &base[start..i] == key;
                    expect_key = false;
                }
            }
            b':' if depth == 1 && ours => from = Some(i + 1),
            b'{' | b'[' => {
                depth += 1;
                expect_key = depth == 1;
            }
            b',' if depth == 1 => {
                if let (Some(f), true) = (from.take(), ours) {
                    found = Some((f, i));
                }
                ours = false;
                expect_key = true;
            }
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    last_close = i;
                    if let (Some(f), true) = (from.take(), ours) {
                        found = Some((f, i));
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(match found {
        Some((from, to)) => format!("{} {}{}", &base[..from], value, &base[to..]),
        None => {
            let body = base[..last_close].trim_end();
            let comma = if body.ends_with('{') { "" } else { "," };
            format!(
                "{body}{comma}\n  \"{key}\": {value}\n{}",
                &base[last_close..]
            )
        }
    })
}

/// A JSON object whose keys keep their order (MPICH reads them in order).
struct Node(Vec<(String, Node)>);

impl Node {
    fn write(&self, w: &mut dyn Write, depth: usize) -> io::Result<()> {
        let items = &self.0;
        if items.is_empty() {
            return write!(w, "{{}}");
        }
        writeln!(w, "{{")?;
        for (i, (k, v)) in items.iter().enumerate() {
            // Keys are ASCII conditions and names: no escaping needed.
            write!(w, "{:width$}\"{k}\": ", "", width = 2 * (depth + 1))?;
            v.write(w, depth + 1)?;
            writeln!(w, "{}", if i + 1 < items.len() { "," } else { "" })?;
        }
        write!(w, "{:width$}}}", "", width = 2 * depth)
    }
}

#[cfg(test)]
mod tests {
    use super::replace_member;
    use serde_json::{json, Value};

    #[test]
    fn a_member_is_replaced_in_place_and_the_rest_kept_as_written() {
        let base = r#"{ "a": {"x": "}{,\"" , "y": [1, {"z": 2}]},
  "collective=allreduce" : {"old": {}},
  "b": "text with , and }" }"#;
        let out = replace_member(base, "collective=allreduce", r#"{"new": {}}"#).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["collective=allreduce"], json!({"new": {}}));
        assert_eq!(v["a"], json!({"x": "}{,\"", "y": [1, {"z": 2}]}));
        assert_eq!(v["b"], json!("text with , and }"));
        // Untouched text stays byte for byte.
        assert!(out.starts_with(r#"{ "a": {"x": "}{,\"" , "y": [1, {"z": 2}]},"#));
        assert!(out.ends_with(r#""b": "text with , and }" }"#));
        // The last member, and a key that appears only nested.
        let out = replace_member(base, "b", "3").unwrap();
        assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["b"], json!(3));
        let out = replace_member(base, "z", "4").unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            v["z"],
            json!(4),
            "a nested key is not a member: added at the end"
        );
        assert_eq!(v["a"]["y"][1]["z"], json!(2));
    }

    #[test]
    fn a_missing_member_is_added_and_bad_bases_refused() {
        let out = replace_member("{}", "k", "1").unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            json!({"k": 1})
        );
        let out = replace_member(r#"{"a": 1}"#, "k", "{}").unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            json!({"a": 1, "k": {}})
        );
        // A string value equal to the key is not the member.
        let out = replace_member(r#"{"a": "k", "b": 1, "k": 1}"#, "k", "2").unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            json!({"a": "k", "b": 1, "k": 2})
        );
        assert!(replace_member("[1]", "k", "1").is_err());
        assert!(replace_member("{", "k", "1").is_err());
    }
}
