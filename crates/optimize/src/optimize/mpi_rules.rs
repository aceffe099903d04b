//! A tuning table as MPI libraries' own tuning files, for the algorithms
//! they share with topocoll: Open MPI's coll/tuned dynamic rules and MPICH's
//! collective selection JSON.
//!
//! A decision whose algorithm the library lacks (Trinaryx3, A2AT, the
//! multi-lane ones...) falls back to the library's closest relative when
//! one exists ([`ompi_algorithm`], [`mpich_algorithm`] say which), and is
//! otherwise left to the library (no rule at that size: the previous rule
//! covers it). Sizes are converted to each library's measure of a message.

use super::tune::{Decision, Table};
use std::io::{self, Write};

/// Open MPI 4.1's number for a collective in a rules file
/// (`COLLTYPE_T` in `coll_base_functions.h`).
pub fn ompi_collective(collective: &str) -> Option<u32> {
    Some(match collective {
        "allgather" => 0,
        "allreduce" => 2,
        "alltoall" => 3,
        "bcast" => 7,
        "gather" => 9,
        "reduce" => 11,
        "reduce_scatter" => 13,
        "scatter" => 15,
        _ => return None,
    })
}

/// Open MPI 4.1's coll/tuned algorithm for a topocoll algorithm: (number,
/// Open MPI's name), or `None` when it has none alike.
pub fn ompi_algorithm(collective: &str, algorithm: &str) -> Option<(u32, &'static str)> {
    Some(match (collective, algorithm) {
        ("allreduce", "recursive_doubling") => (3, "recursive_doubling"),
        ("allreduce", "ring") => (4, "ring"),
        ("allreduce", "rabenseifner") => (6, "rabenseifner"),
        ("allreduce", "reduce_bcast") => (2, "nonoverlapping"),
        ("bcast", "pipeline") => (3, "pipeline"),
        ("bcast", "binary") => (5, "binary_tree"),
        ("bcast", "binomial") => (6, "binomial"),
        ("bcast", "scatter_allgather") => (9, "scatter_allgather_ring"),
        ("reduce", "binomial") => (5, "binomial"),
        ("allgather", "bruck") => (2, "bruck"),
        ("allgather", "recursive_doubling") => (3, "recursive_doubling"),
        ("allgather", "ring") => (4, "ring"),
        ("alltoall", "linear") => (1, "linear"),
        ("alltoall", "ring") => (2, "pairwise"),
        ("alltoall", "bruck") => (3, "modified_bruck"),
        ("reduce_scatter", "recursive_halving") => (3, "recursive_halving"),
        ("scatter", "linear") => (1, "basic_linear"),
        ("scatter", "binomial") => (2, "binomial"),
        ("gather", "linear") => (1, "basic_linear"),
        ("gather", "binomial") => (2, "binomial"),
        _ => return None,
    })
}

/// The bytes Open MPI 4.1's dynamic rules compare with a rule's message
/// size, for a topocoll size (`--size`) on `ranks` ranks.
pub fn ompi_message_bytes(collective: &str, size_bytes: u64, ranks: usize) -> u64 {
    match collective {
        // Every rank's block together.
        "allgather" | "gather" | "scatter" => size_bytes * ranks as u64,
        // The block per peer, or the whole buffer.
        _ => size_bytes,
    }
}

/// MPICH 4.0's algorithm for a topocoll algorithm, or `None`.
pub fn mpich_algorithm(collective: &str, algorithm: &str) -> Option<&'static str> {
    Some(match (collective, algorithm) {
        ("allreduce", "recursive_doubling") => "MPIR_Allreduce_intra_recursive_doubling",
        ("allreduce", "rabenseifner") => "MPIR_Allreduce_intra_reduce_scatter_allgather",
        ("allreduce", "ring") => "MPIR_Allreduce_intra_ring",
        ("bcast", "binomial") => "MPIR_Bcast_intra_binomial",
        ("bcast", "scatter_allgather") => "MPIR_Bcast_intra_scatter_ring_allgather",
        ("reduce", "binomial") => "MPIR_Reduce_intra_binomial",
        ("allgather", "recursive_doubling") => "MPIR_Allgather_intra_recursive_doubling",
        ("allgather", "bruck") => "MPIR_Allgather_intra_brucks",
        ("allgather", "ring") => "MPIR_Allgather_intra_ring",
        ("alltoall", "bruck") => "MPIR_Alltoall_intra_brucks",
        ("alltoall", "pairwise") => "MPIR_Alltoall_intra_pairwise",
        ("alltoall", "linear") => "MPIR_Alltoall_intra_scattered",
        ("reduce_scatter", "recursive_halving") => {
            "MPIR_Reduce_scatter_block_intra_recursive_halving"
        }
        ("scatter", "binomial") => "MPIR_Scatter_intra_binomial",
        ("gather", "binomial") => "MPIR_Gather_intra_binomial",
        _ => return None,
    })
}

/// MPICH's collective name in a selection file.
fn mpich_collective(collective: &str) -> &str {
    match collective {
        "reduce_scatter" => "reduce_scatter_block",
        c => c,
    }
}

/// The bytes MPICH 4.0 compares with `avg_msg_size` for a topocoll size.
pub fn mpich_message_bytes(collective: &str, size_bytes: u64, _ranks: usize) -> u64 {
    let _ = collective;
    size_bytes
}

/// Each size's decision as the library's algorithm: the rules from
/// `decisions` that map, with the size each starts at, consecutive equal
/// ones merged.
fn runs<T: PartialEq + Copy>(
    decisions: &[&Decision],
    map: impl Fn(&Decision) -> Option<T>,
) -> Vec<(u64, T, Option<u64>)> {
    let mut out: Vec<(u64, T, Option<u64>)> = Vec::new();
    for d in decisions {
        let Some(alg) = map(d) else { continue };
        let seg = d.choice.segment_bytes;
        if out.last().is_some_and(|l| l.1 == alg && l.2 == seg) {
            continue;
        }
        out.push((d.size_bytes, alg, seg));
    }
    out
}

/// Writes `decisions` (increasing sizes of `table`) as an Open MPI 4.1
/// coll/tuned dynamic rules file for communicators of `ranks` ranks.
pub fn write_ompi(
    w: &mut dyn Write,
    table: &Table,
    decisions: &[&Decision],
    ranks: usize,
) -> io::Result<()> {
    let coll = table.collective.as_str();
    let Some(id) = ompi_collective(coll) else {
        return Err(io::Error::other(format!("Open MPI's rules have no {coll}")));
    };
    let rules = runs(decisions, |d| {
        ompi_algorithm(coll, &d.choice.algorithm).map(|a| a.0)
    });
    if rules.is_empty() {
        return Err(io::Error::other(format!(
            "no choice of the table maps to an Open MPI {coll} algorithm"
        )));
    }
    writeln!(w, "1 # number of collectives")?;
    writeln!(w, "{id} # {coll}")?;
    writeln!(w, "1 # number of communicator sizes")?;
    writeln!(w, "{ranks} # communicator size")?;
    writeln!(w, "{} # number of message sizes", rules.len())?;
    for (i, (size, alg, seg)) in rules.iter().enumerate() {
        // The first rule covers every size from 0.
        let from = if i == 0 {
            0
        } else {
            ompi_message_bytes(coll, *size, ranks)
        };
        let name = ompi_algorithm(
            coll,
            &decisions
                .iter()
                .find(|d| d.size_bytes == *size)
                .expect("a run starts at a decision")
                .choice
                .algorithm,
        )
        .map_or("", |a| a.1);
        writeln!(w, "{from} {alg} 0 {} # {name}", seg.unwrap_or(0))?;
    }
    Ok(())
}

/// Writes `decisions` as MPICH 4.0's collective selection JSON
/// (`MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE`) for intra-communicators of
/// at most `ranks` ranks (larger ones fall to the last rule).
pub fn write_mpich(
    w: &mut dyn Write,
    table: &Table,
    decisions: &[&Decision],
    ranks: usize,
) -> io::Result<()> {
    let coll = table.collective.as_str();
    let rules = runs(decisions, |d| mpich_algorithm(coll, &d.choice.algorithm));
    if rules.is_empty() {
        return Err(io::Error::other(format!(
            "no choice of the table maps to an MPICH {coll} algorithm"
        )));
    }
    let mut sizes = serde_json::Map::new();
    for (i, (_, alg, _)) in rules.iter().enumerate() {
        let leaf = serde_json::json!({ format!("algorithm={alg}"): {} });
        match rules.get(i + 1) {
            // Up to just below where the next rule starts.
            Some((next, _, _)) => {
                let upto = mpich_message_bytes(coll, *next, ranks) - 1;
                sizes.insert(format!("avg_msg_size<={upto}"), leaf);
            }
            None => {
                sizes.insert("any".to_string(), leaf);
            }
        }
    }
    let doc = serde_json::json!({
        format!("collective={}", mpich_collective(coll)): {
            "comm_type=intra": {
                format!("comm_size<={ranks}"): sizes,
                "any": { format!("algorithm={}", rules.last().expect("non-empty").1): {} }
            }
        }
    });
    writeln!(w, "{}", serde_json::to_string_pretty(&doc).expect("JSON"))
}
