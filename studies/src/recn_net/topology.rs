//! The folded butterfly (bidirectional MIN) of the network study, and its
//! deterministic source routes (AS turnpools).
//!
//! `n` stages of switches of radix `R = 2k`. A switch of stages
//! `0..n-1` has `k` down ports (`0..k`) and `k` up ports (`k..2k`); a switch
//! of the top stage `n-1` has all `2k` ports down. End points:
//! `N = k^(n-1) * 2k` (8-port switches and 3 stages: 128, the paper's
//! network; 4-port switches and 3 stages: 16).
//!
//! An end point `e` has the digits `e_0 .. e_(n-1)`: `e_s = (e / k^s) mod k`
//! for `s < n-1`, and `e_(n-1) = e / k^(n-1)` (in `0..2k`). A switch of stage
//! `s` is `(a, b)`: `a` the digits `e_(s+1) ..` common to the `k^(s+1)` end
//! points below it (none at the top), `b` in `0..k^s` which of the switches
//! above that group it is. Its up port `k + u` reaches the switch
//! `(a / r, b + u k^s)` of stage `s + 1` at that switch's down port
//! `a mod r` (`r` the radix of digit `s + 1`: `k`, or `2k` for the top one).
//!
//! Routing: up to the lowest stage `t` whose subtree holds the destination,
//! taking up port `k + dst_s` at stage `s` (destination-mod-k, so that all
//! the traffic to one end point meets on one tree), then down through ports
//! `dst_t, .., dst_0`. `2t + 1` hops; the turnpool holds one `log2(R)`-bit
//! turn per hop, the first hop in the least significant bits.

/// Where a switch port leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// End point `e` (a down port of a leaf switch).
    Endpoint(usize),
    /// Switch `sw`, its port `port`.
    Switch {
        /// Global switch index.
        sw: usize,
        /// Its port.
        port: usize,
    },
    /// Not connected (never: every port of a top switch is down).
    None,
}

/// The network graph.
#[derive(Clone, Debug)]
pub struct Topology {
    /// Down ports per switch below the top (`k`).
    pub k: usize,
    /// Stages.
    pub n: usize,
    /// Switch radix `2k`.
    pub radix: usize,
    /// End points.
    pub endpoints: usize,
    /// First global switch index of each stage, and the total at the end.
    pub stage_base: Vec<usize>,
    /// Per switch, per port: the peer.
    pub peers: Vec<Vec<Peer>>,
    /// Bits per turn: `log2(radix)`.
    pub tb: u32,
}

impl Topology {
    /// A folded butterfly of `n >= 1` stages of switches of radix `2k`
    /// (`k` a power of two >= 1).
    pub fn new(k: usize, n: usize) -> Self {
        assert!(k.is_power_of_two() && n >= 1, "k a power of two, n >= 1");
        let radix = 2 * k;
        let endpoints = k.pow(n as u32 - 1) * radix;
        let per_stage = |s: usize| {
            if s + 1 < n {
                endpoints / k
            } else {
                k.pow(n as u32 - 1)
            }
        };
        let mut stage_base = vec![0];
        for s in 0..n {
            stage_base.push(stage_base[s] + per_stage(s));
        }
        let total = stage_base[n];
        let mut peers = vec![vec![Peer::None; radix]; total];
        // Leaves: down ports to end points.
        for e in 0..endpoints {
            let (sw, port) = Self::leaf_of(k, n, e);
            peers[sw][port] = Peer::Endpoint(e);
        }
        // Up links of stage s to stage s + 1.
        for s in 0..n.saturating_sub(1) {
            let ks = k.pow(s as u32);
            for idx in 0..per_stage(s) {
                let (a, b) = (idx / ks, idx % ks);
                let r = if s + 2 == n { radix } else { k };
                for u in 0..k {
                    let (a2, b2) = (a / r, b + u * ks);
                    let up = stage_base[s + 1] + a2 * k.pow(s as u32 + 1) + b2;
                    let dp = a % r;
                    let me = stage_base[s] + idx;
                    peers[me][k + u] = Peer::Switch { sw: up, port: dp };
                    peers[up][dp] = Peer::Switch {
                        sw: me,
                        port: k + u,
                    };
                }
            }
        }
        Topology {
            k,
            n,
            radix,
            endpoints,
            stage_base,
            peers,
            tb: radix.trailing_zeros(),
        }
    }

    fn leaf_of(k: usize, n: usize, e: usize) -> (usize, usize) {
        if n == 1 {
            (0, e)
        } else {
            (e / k, e % k)
        }
    }

    /// The leaf switch of end point `e` and its port there.
    pub fn leaf(&self, e: usize) -> (usize, usize) {
        Self::leaf_of(self.k, self.n, e)
    }

    /// Switches in all.
    pub fn switches(&self) -> usize {
        self.stage_base[self.n]
    }

    /// Stage of switch `sw`.
    pub fn stage(&self, sw: usize) -> usize {
        (0..self.n)
            .find(|&s| sw < self.stage_base[s + 1])
            .expect("switch index")
    }

    /// Digit `s` of end point `e`.
    pub fn digit(&self, e: usize, s: usize) -> usize {
        let q = e / self.k.pow(s as u32);
        if s + 1 < self.n {
            q % self.k
        } else {
            q
        }
    }

    /// The turns from `src` to `dst`, first hop first.
    pub fn turns(&self, src: usize, dst: usize) -> Vec<usize> {
        // The lowest stage whose subtree holds both: digits above it agree.
        let t = (0..self.n)
            .find(|&s| (s + 1..self.n).all(|d| self.digit(src, d) == self.digit(dst, d)))
            .expect("the top stage holds every end point");
        let mut v: Vec<usize> = (0..t).map(|s| self.k + self.digit(dst, s)).collect();
        v.extend((0..=t).rev().map(|s| self.digit(dst, s)));
        v
    }

    /// The turnpool from `src` to `dst` and its hop count.
    pub fn route(&self, src: usize, dst: usize) -> (u32, u32) {
        let t = self.turns(src, dst);
        let r = t
            .iter()
            .enumerate()
            .fold(0u32, |r, (h, &o)| r | ((o as u32) << (h as u32 * self.tb)));
        (r, t.len() as u32)
    }

    /// The links from `src` to `dst`, in order: the injection link
    /// `(usize::MAX, src)`, then each switch's output link `(switch,
    /// output port)`.
    pub fn links(&self, src: usize, dst: usize) -> Vec<(usize, usize)> {
        let (mut sw, _) = self.leaf(src);
        let mut v = vec![(usize::MAX, src)];
        for o in self.turns(src, dst) {
            v.push((sw, o));
            if let Peer::Switch { sw: s2, .. } = self.peers[sw][o] {
                sw = s2;
            }
        }
        v
    }

    /// Bits of the longest turnpool: `(2n - 1) log2(radix)`.
    pub fn route_bits(&self) -> u32 {
        (2 * self.n as u32 - 1) * self.tb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Following every route from every source reaches its destination,
    /// and every link is symmetric.
    fn check(k: usize, n: usize, endpoints: usize, switches: usize) {
        let t = Topology::new(k, n);
        assert_eq!((t.endpoints, t.switches()), (endpoints, switches));
        for (sw, ps) in t.peers.iter().enumerate() {
            for (p, peer) in ps.iter().enumerate() {
                match *peer {
                    Peer::Switch { sw: s2, port } => {
                        assert_eq!(t.peers[s2][port], Peer::Switch { sw, port: p })
                    }
                    Peer::Endpoint(e) => assert_eq!(t.leaf(e), (sw, p)),
                    Peer::None => panic!("switch {sw} port {p} unconnected"),
                }
            }
        }
        for src in 0..t.endpoints {
            for dst in 0..t.endpoints {
                let (mut sw, _) = t.leaf(src);
                let turns = t.turns(src, dst);
                assert_eq!(turns.len() % 2, 1);
                for (h, &o) in turns.iter().enumerate() {
                    match t.peers[sw][o] {
                        Peer::Switch { sw: s2, .. } => sw = s2,
                        Peer::Endpoint(e) => {
                            assert_eq!(h + 1, turns.len());
                            assert_eq!(e, dst, "{src} -> {dst}");
                        }
                        Peer::None => panic!(),
                    }
                }
            }
        }
    }

    #[test]
    fn folded_butterflies_route_everyone() {
        check(4, 3, 128, 80);
        check(2, 3, 16, 20);
        check(4, 2, 32, 12);
        check(2, 1, 4, 1);
    }

    #[test]
    fn routes_fit_the_turnpool() {
        let t = Topology::new(4, 3);
        assert_eq!((t.tb, t.route_bits()), (3, 15));
        let (r, h) = t.route(0, 127);
        assert_eq!(h, 5);
        assert!(r < 1 << 15);
        assert_eq!(t.route(0, 1), (1, 1));
    }
}
