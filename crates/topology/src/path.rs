//! Explicit paths: a list of links that a schedule names as a send's route
//! (`Schedule::paths`), checked against the network here.
//!
//! A path is the links a message crosses, in order, from one node to
//! another, each from its `from` to its `to`; a link that carries data
//! both ways (a half-duplex cable of a graph, tree, grid of sites or
//! platform, [`Topology::both_ways`]) may be crossed from its `to` to its
//! `from` too. A path visits no node twice: a message that comes back to a
//! node it left only loads links for nothing, and a loop is more likely a
//! mistake than a choice.

use super::{LinkId, NodeId, Topology};

/// How many of a path's links an error message lists before "...".
const SHOWN: usize = 12;

impl Topology {
    /// What is wrong with `path` as a route from node `from` to node `to`,
    /// if anything: one line naming the link that breaks it (its index and
    /// name). `None` when the path is a simple path of this topology from
    /// `from` to `to`.
    pub fn path_fault(&self, from: NodeId, to: NodeId, path: &[LinkId]) -> Option<String> {
        if from == to {
            return Some(format!(
                "the sender and the receiver share node {}: a send inside a node takes route 0, the node's own",
                self.node_name(from)
            ));
        }
        if path.is_empty() {
            return Some("the path is empty: a path lists the links a send crosses".into());
        }
        let n = self.links.len();
        if let Some(&l) = path.iter().find(|&&l| l as usize >= n) {
            return Some(format!(
                "link {l} is not a link of topology {} (its links are 0..{})",
                self.name,
                n.saturating_sub(1)
            ));
        }
        let mut visited = vec![from];
        let mut at = from;
        for (k, &l) in path.iter().enumerate() {
            let link = &self.links[l as usize];
            let name = self.link_name(l);
            let next = if link.from == at && link.to != at {
                link.to
            } else if link.to == at && link.from != at && self.both_ways(l) {
                link.from
            } else if link.to == at && link.from != at {
                return Some(format!(
                    "link {l} ({name}) is crossed against its direction: it carries data from {} to {} only (the other direction of a full-duplex cable is another link)",
                    self.node_name(link.from),
                    self.node_name(link.to)
                ));
            } else if k == 0 {
                return Some(format!(
                    "starts with link {l} ({name}), which does not leave the sender's node {}",
                    self.node_name(from)
                ));
            } else {
                return Some(format!(
                    "link {l} ({name}) does not join link {} before it: the path is at {} and link {l} joins {} and {}",
                    path[k - 1],
                    self.node_name(at),
                    self.node_name(link.from),
                    self.node_name(link.to)
                ));
            };
            if visited.contains(&next) {
                return Some(format!(
                    "not a simple path: link {l} ({name}) comes back to {}",
                    self.node_name(next)
                ));
            }
            visited.push(next);
            at = next;
        }
        (at != to).then(|| {
            format!(
                "the path ends at {}, not at the receiver's node {}",
                self.node_name(at),
                self.node_name(to)
            )
        })
    }
}

/// A path for error messages: its first links, `[3, 5, 9]`.
pub fn show_path(path: &[LinkId]) -> String {
    let mut shown: Vec<String> = path.iter().take(SHOWN).map(|l| l.to_string()).collect();
    if path.len() > SHOWN {
        shown.push(format!("... {} links", path.len()));
    }
    format!("[{}]", shown.join(", "))
}
