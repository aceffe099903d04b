//! docs/algorithms.md is the registry written out: its table is made here
//! from `ALGORITHMS` and held to the file (`TOPOCOLL_BLESS=1` writes it).

use topocoll::algorithms::{Algorithm, RankNeed, RootNeed, TopologyNeed, ALGORITHMS};
use topocoll::schedule::CollectiveKind;

const START: &str = "<!-- the registry's table: written by tests/suite/docs.rs -->";
const END: &str = "<!-- end of the registry's table -->";

fn applies(a: &Algorithm) -> String {
    let mut out = vec![match a.applies.topology {
        TopologyNeed::Any => "any network, or ranks alone".to_string(),
        TopologyNeed::Grid => "a mesh or torus (Tofu's virtual torus too)".to_string(),
        TopologyNeed::OffsetGrid { max_dims } => {
            format!(
                "a mesh or torus routed by offsets, at most {max_dims} dimensions longer than 1"
            )
        }
        TopologyNeed::Torus => "a torus (every dimension longer than 2 wraps)".to_string(),
        TopologyNeed::Sites => "a grid of sites".to_string(),
        TopologyNeed::Nodes(_) => {
            "ranks several to a node (`--ranks-per-node`, `--map`)".to_string()
        }
    }];
    match a.applies.ranks {
        RankNeed::Any => {}
        RankNeed::PowerOfTwo(_) => out.push("P a power of two".to_string()),
        RankNeed::Even(_) => out.push("P even".to_string()),
    }
    if a.applies.root == RootNeed::Zero {
        out.push("root 0".to_string());
    }
    out.join("; ")
}

fn options(a: &Algorithm) -> String {
    let mut out = Vec::new();
    if a.segmented {
        out.push("`--segment`");
    }
    if a.lanes {
        out.push("`--lanes`");
    }
    if a.radix {
        out.push("`--radix`");
    }
    if a.takes_inter() {
        out.push("`--inter`");
    }
    if a.stream.is_some() {
        out.push("generated op by op");
    }
    out.join(", ")
}

fn mpi(a: &Algorithm) -> (String, String) {
    let ompi = a
        .mpi
        .ompi
        .map_or(String::new(), |o| format!("`{}` ({})", o.name, o.id));
    let mpich = a.mpi.mpich.map_or(String::new(), |m| format!("`{m}`"));
    (ompi, mpich)
}

/// The table, one section a collective in the registry's order of them.
fn table() -> String {
    let mut kinds: Vec<CollectiveKind> = Vec::new();
    for a in ALGORITHMS {
        if !kinds.contains(&a.collective) {
            kinds.push(a.collective);
        }
    }
    let mut out = format!("{START}\n");
    for kind in kinds {
        out += &format!(
            "\n### {kind}\n\n| algorithm | what it does | where it applies | takes | Open MPI | MPICH |\n|---|---|---|---|---|---|\n"
        );
        for a in ALGORITHMS.iter().filter(|a| a.collective == kind) {
            let (ompi, mpich) = mpi(a);
            out += &format!(
                "| `{}` | {} | {} | {} | {ompi} | {mpich} |\n",
                a.name,
                a.summary.replace('|', "\\|"),
                applies(a),
                options(a)
            );
        }
    }
    out + "\n" + END
}

#[test]
fn the_algorithms_page_lists_the_registry() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/algorithms.md");
    let text = std::fs::read_to_string(path).unwrap();
    let (a, b) = (
        text.find(START).unwrap(),
        text.find(END).unwrap() + END.len(),
    );
    let want = table();
    if std::env::var_os("TOPOCOLL_BLESS").is_some() {
        std::fs::write(path, format!("{}{want}{}", &text[..a], &text[b..])).unwrap();
        return;
    }
    assert!(
        text[a..b] == want,
        "docs/algorithms.md's table is not the registry's: run TOPOCOLL_BLESS=1 cargo test --release --test suite docs::"
    );
}
