//! SimGrid's flow model on top of RTT-weighted max-min sharing, as its CM02
//! and SMPI network models price a message (SimGrid 3.32,
//! `network_cm02.cpp`, `network_smpi.cpp`):
//!
//! - the message's latency is its route's times a **latency factor**, and
//!   its rate the max-min share times a **bandwidth factor**, both of the
//!   message's size (SMPI: piecewise, `smpi/lat-factor`, `smpi/bw-factor`;
//!   CM02: constants, `network/latency-factor`, `network/bandwidth-factor`);
//! - a flow's share is weighted by one over its **penalty**: its route's
//!   latency plus `network/weight-S` over each link's bandwidth;
//! - with **cross-traffic** (`network/crosstraffic`), a flow also takes 5%
//!   of its rate on each link of the route back, as its acknowledgements do.
//!
//! Why a factor divides the bytes: SimGrid's action advances at its max-min
//! variable's value times the bandwidth factor, while the links carry the
//! variable, not the product. A message of S bytes at factor f is so a
//! flow of S / f bytes at the variable's rate, and the solver needs no
//! factor of its own. The TCP window's cap is on the variable too, over the
//! route's latency before its factor (`SimConfig::tcp_window`).

use crate::error::fail;
use crate::error::Result;
use crate::{Fairness, Sharing, SimConfig};

/// A factor by message size: `first` up to the first threshold, then each
/// step's value for sizes above its threshold, as SimGrid's `parse_factor`
/// reads `T0:V0;T1:V1;...` and `get_*_factor` looks a size up (a size equal
/// to a threshold takes the value below it).
#[derive(Clone, Debug, PartialEq)]
pub struct Factors {
    first: f64,
    /// (threshold in bytes, the value for sizes above it), by threshold.
    steps: Vec<(u64, f64)>,
}

impl Factors {
    /// The same factor at every size.
    pub fn constant(value: f64) -> Factors {
        Factors {
            first: value,
            steps: Vec::new(),
        }
    }

    /// `T0:V0;T1:V1;...` as SimGrid reads `smpi/bw-factor` and
    /// `smpi/lat-factor` (chunks in any order; 1 below the smallest
    /// threshold). `key` names the option in errors.
    pub fn parse(key: &str, text: &str) -> Result<Factors> {
        let mut steps = Vec::new();
        for chunk in text.split(';').filter(|c| !c.is_empty()) {
            let Some((t, v)) = chunk.split_once(':') else {
                return Err(fail!(
                    Sim,
                    Config,
                    "--cfg={key}: chunk '{chunk}' is not THRESHOLD:VALUE (65472:0.94;15424:0.70)"
                ));
            };
            let t: u64 = t.trim().parse().map_err(|_| {
                fail!(
                    Sim,
                    Config,
                    "--cfg={key}: threshold '{t}' of chunk '{chunk}' is not a byte count"
                )
            })?;
            let v: f64 = v.trim().parse().map_err(|_| {
                fail!(
                    Sim,
                    Config,
                    "--cfg={key}: value '{v}' of chunk '{chunk}' is not a number"
                )
            })?;
            if !(v.is_finite() && v > 0.0) {
                return Err(fail!(
                    Sim,
                    Config,
                    "--cfg={key}: value '{v}' of chunk '{chunk}' must be a positive number"
                ));
            }
            steps.push((t, v));
        }
        if steps.is_empty() {
            return Err(fail!(Sim, Config, "--cfg={key}: no THRESHOLD:VALUE chunk"));
        }
        steps.sort_by_key(|s| s.0);
        Ok(Factors { first: 1.0, steps })
    }

    /// The factor of a message of `bytes`.
    pub fn at(&self, bytes: f64) -> f64 {
        let mut current = self.first;
        for &(t, v) in &self.steps {
            if bytes <= t as f64 {
                return current;
            }
            current = v;
        }
        current
    }
}

/// SimGrid's flow model (see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct SimgridModel {
    pub bandwidth_factor: Factors,
    pub latency_factor: Factors,
    /// `network/weight-S` (bytes): each link adds weight-S over its
    /// bandwidth to a flow's penalty.
    pub weight_s: f64,
    /// `network/crosstraffic`: a flow takes 5% of its rate on the links of
    /// the route back.
    pub crosstraffic: bool,
}

/// The share of a flow's rate its route back takes under cross-traffic.
pub const CROSSTRAFFIC: f64 = 0.05;

/// SMPI's default bandwidth factors (SimGrid 3.32, `smpi/bw-factor`).
pub const SMPI_BW_FACTOR: &str = "65472:0.940694;15424:0.697866;9376:0.58729;5776:1.08739;3484:0.77493;1426:0.608902;732:0.341987;257:0.338112;0:0.812084";
/// SMPI's default latency factors (SimGrid 3.32, `smpi/lat-factor`).
pub const SMPI_LAT_FACTOR: &str = "65472:11.6436;15424:3.48845;9376:2.59299;5776:2.18796;3484:1.88101;1426:1.61075;732:1.9503;257:1.95341;0:2.01467";
/// SMPI's `network/weight-S`.
pub const SMPI_WEIGHT_S: f64 = 8775.0;

impl SimgridModel {
    /// `network/model:SMPI` as `smpirun` runs it by default.
    pub fn smpi() -> SimgridModel {
        SimgridModel {
            bandwidth_factor: Factors::parse("smpi/bw-factor", SMPI_BW_FACTOR)
                .expect("SimGrid's default parses"),
            latency_factor: Factors::parse("smpi/lat-factor", SMPI_LAT_FACTOR)
                .expect("SimGrid's default parses"),
            weight_s: SMPI_WEIGHT_S,
            crosstraffic: true,
        }
    }

    /// `network/model:CM02`: no factors, no weight-S, cross-traffic on.
    pub fn cm02() -> SimgridModel {
        SimgridModel {
            bandwidth_factor: Factors::constant(1.0),
            latency_factor: Factors::constant(1.0),
            weight_s: 0.0,
            crosstraffic: true,
        }
    }
}

/// The TCP window `network/TCP-gamma` defaults to (bytes).
pub const TCP_GAMMA: f64 = 4194304.0;

/// Bytes SMPI's messages carry besides their data.
pub const HEADER_BYTES: u64 = 16;

/// SimGrid's network options (`--cfg=KEY:VALUE`) that [`configure`] reads.
pub const NETWORK_KEYS: [&str; 8] = [
    "network/model",
    "network/crosstraffic",
    "network/weight-S",
    "network/TCP-gamma",
    "network/latency-factor",
    "network/bandwidth-factor",
    "smpi/bw-factor",
    "smpi/lat-factor",
];

/// Prices as `smpirun` does by default (`network/model:SMPI`: rendezvous
/// matching, SMPI's header, RTT-weighted max-min shares under this model,
/// the TCP window), with SimGrid's network options (KEY, VALUE) over it as
/// SimGrid applies them: `network/model` chooses the defaults, and every
/// other option overrides its default whatever its place.
pub fn configure(cfg: &mut SimConfig, options: &[(&str, &str)]) -> Result<()> {
    let mut model = SimgridModel::smpi();
    for &(key, value) in options.iter().filter(|o| o.0 == "network/model") {
        model = match value {
            "SMPI" => SimgridModel::smpi(),
            "CM02" => SimgridModel::cm02(),
            other => {
                return Err(fail!(
                    Sim,
                    Config,
                    "--cfg={key}:{other}: the network models priced are SMPI and CM02"
                ))
            }
        };
    }
    let mut window = TCP_GAMMA;
    for &(key, value) in options.iter().filter(|o| o.0 != "network/model") {
        let number = || -> Result<f64> {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    fail!(
                        Sim,
                        Config,
                        "--cfg={key}:{value}: not a non-negative number"
                    )
                })
        };
        let positive = || -> Result<f64> {
            Some(number()?)
                .filter(|v| *v > 0.0)
                .ok_or_else(|| fail!(Sim, Config, "--cfg={key}:{value}: must be more than 0"))
        };
        match key {
            "network/crosstraffic" => {
                model.crosstraffic = match value {
                    "1" | "yes" | "on" | "true" => true,
                    "0" | "no" | "off" | "false" => false,
                    _ => return Err(fail!(Sim, Config, "--cfg={key}:{value}: not yes or no")),
                }
            }
            "network/weight-S" => model.weight_s = number()?,
            "network/TCP-gamma" => window = positive()?,
            "network/latency-factor" => model.latency_factor = Factors::constant(positive()?),
            "network/bandwidth-factor" => model.bandwidth_factor = Factors::constant(positive()?),
            "smpi/bw-factor" => model.bandwidth_factor = Factors::parse(key, value)?,
            "smpi/lat-factor" => model.latency_factor = Factors::parse(key, value)?,
            _ => {
                return Err(fail!(
                    Sim,
                    Config,
                    "--cfg={key}: not a network option priced ({})",
                    NETWORK_KEYS.join(", ")
                ))
            }
        }
    }
    cfg.fairness = Fairness::Rtt;
    cfg.sharing = Sharing::MaxMin;
    cfg.rendezvous = true;
    cfg.header_bytes = HEADER_BYTES;
    cfg.tcp_window = Some(window);
    cfg.simgrid = Some(std::sync::Arc::new(model));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A size equal to a threshold takes the value below it, as SimGrid's
    /// lookup does; below the smallest threshold the factor is 1.
    #[test]
    fn a_factor_is_looked_up_as_simgrid_does() {
        let f = Factors::parse("smpi/bw-factor", SMPI_BW_FACTOR).unwrap();
        assert_eq!(f.at(0.0), 1.0);
        assert_eq!(f.at(1.0), 0.812084);
        assert_eq!(f.at(257.0), 0.812084);
        assert_eq!(f.at(258.0), 0.338112);
        assert_eq!(f.at(65472.0), 0.697866);
        assert_eq!(f.at(65473.0), 0.940694);
        assert_eq!(f.at(1e9), 0.940694);
        assert_eq!(Factors::parse("k", "0:1").unwrap().at(5e6), 1.0);
        assert_eq!(Factors::constant(13.01).at(7.0), 13.01);
    }

    /// Malformed factors are refused naming the option and the chunk.
    #[test]
    fn malformed_factors_are_refused_naming_the_chunk() {
        for (text, what) in [
            ("65472", "'65472' is not THRESHOLD:VALUE"),
            ("x:1", "threshold 'x'"),
            ("0:fast", "value 'fast'"),
            ("0:-1", "positive"),
            ("", "no THRESHOLD:VALUE"),
        ] {
            let e = Factors::parse("smpi/bw-factor", text)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("smpi/bw-factor") && e.contains(what),
                "{text}: {e}"
            );
        }
    }
}
