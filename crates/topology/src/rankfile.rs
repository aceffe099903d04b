//! Rankfiles: the host of each rank, in rank order, for
//! [`RankMap::List`](super::RankMap).

use crate::error::fail;
use crate::error::{Error, Result};
use std::path::Path;
use topocoll_base::units;

/// Largest rankfile read (bytes).
const MAX_BYTES: u64 = 64 << 20;

/// A rankfile's hosts in rank order: one host (a name or an index) per
/// line, `HOST:N` for N ranks in a row on one host (SimGrid's hostfiles,
/// as its `smpirun` unrolls them), or Open MPI's `rank N=HOST [slot=...]`
/// lines in any order; blank lines and `#` comments are skipped. Errors name the file and the line.
pub fn read_rankfile(path: &Path) -> Result<Vec<String>> {
    let shown = path.display();
    let meta = std::fs::metadata(path)
        .map_err(|e| Error::io(format!("cannot read rankfile '{shown}'"), e))?;
    if meta.len() > MAX_BYTES {
        return Err(fail!(
            Topology,
            Placement,
            "rankfile '{shown}' is larger than 64 MiB"
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("cannot read rankfile '{shown}' as UTF-8 text"), e))?;
    parse_rankfile(&text, &shown.to_string())
}

/// [`read_rankfile`] of a file's text; `name` names it in errors.
pub fn parse_rankfile(text: &str, name: &str) -> Result<Vec<String>> {
    let mut plain = Vec::new();
    let mut numbered: Vec<(usize, String)> = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("rank") {
            let (rank, host) = rest.split_once('=').ok_or_else(|| {
                fail!(
                    Topology,
                    Placement,
                    "rankfile '{name}' line {}: 'rank N=HOST'",
                    k + 1
                )
            })?;
            let rank: usize = rank.trim().parse().map_err(|_| {
                fail!(
                    Topology,
                    Placement,
                    "rankfile '{name}' line {}: '{}' is not a rank number",
                    k + 1,
                    units::shorten(rank.trim())
                )
            })?;
            let host = host.split_whitespace().next().unwrap_or("");
            numbered.push((rank, host.to_string()));
        } else if let Some((host, n)) = line
            .rsplit_once(':')
            .and_then(|(h, n)| Some((h, n.trim().parse::<usize>().ok()?)))
        {
            if n > topocoll_base::limits::MAX_RANKS {
                return Err(fail!(
                    Topology,
                    Placement,
                    "rankfile '{name}' line {}: {n} ranks on one host is too many",
                    k + 1
                ));
            }
            plain.extend(std::iter::repeat_n(host.trim().to_string(), n));
        } else {
            plain.push(line.to_string());
        }
    }
    match (plain.is_empty(), numbered.is_empty()) {
        (false, true) => Ok(plain),
        (true, false) => {
            numbered.sort_by_key(|x| x.0);
            if let Some((i, (r, _))) = numbered.iter().enumerate().find(|(i, (r, _))| i != r) {
                return Err(fail!(
                    Topology,
                    Placement,
                    "rankfile '{name}' names rank {r} where rank {i} is missing or given twice"
                ));
            }
            Ok(numbered.into_iter().map(|x| x.1).collect())
        }
        (true, true) => Err(fail!(
            Topology,
            Placement,
            "rankfile '{name}' names no rank"
        )),
        (false, false) => Err(fail!(
            Topology,
            Placement,
            "rankfile '{name}' mixes 'rank N=HOST' lines with plain host lines"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_rankfile;

    /// SimGrid's `HOST:N`: N ranks in a row on the host.
    #[test]
    fn unrolls_simgrid_host_counts() {
        assert_eq!(
            parse_rankfile("a:2\nb\nc:1\n", "f").unwrap(),
            vec!["a", "a", "b", "c"]
        );
    }

    #[test]
    fn reads_plain_and_numbered_lines() {
        assert_eq!(
            parse_rankfile("a\n# c\n\nb # x\n", "f").unwrap(),
            vec!["a", "b"]
        );
        assert_eq!(
            parse_rankfile("rank 1=h1 slot=0\nrank 0=h0\n", "f").unwrap(),
            vec!["h0", "h1"]
        );
        for (text, says) in [
            ("rank 0=a\nb\n", "mixes"),
            ("rank 1=a\n", "where rank 0 is missing"),
            ("# nothing\n", "names no rank"),
            ("rank x=a\n", "line 1: 'x' is not a rank number"),
            ("rank 0 a\n", "line 1: 'rank N=HOST'"),
        ] {
            let e = parse_rankfile(text, "f").unwrap_err().to_string();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }
}
