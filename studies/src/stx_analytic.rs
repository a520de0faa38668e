//! The analytic model of speculative transmission (STX) of seed 004,
//! section IV (Iliadis & Minkenberg, "Performance of a Speculative
//! Transmission Scheme for Arbitration Latency Reduction"), equations
//! (1)–(51) with the two fixed-point iterations (46) and (47).
//!
//! For an `N x NR` input-queued crossbar with `R` receivers per output, a
//! round trip of `RTT` slots and uniform Bernoulli traffic of load `λ`, it
//! gives the mean switch delay with STX (48) and without STX
//! (`X_g + RTT`), and every intermediate measure (`P_S`, `P_{s|S}`, `P_Ss`,
//! `Q`, `P_w`, `σ`, ...). Pure `f64` arithmetic, no I/O.
//!
//! Where the PDF-to-text conversion of the seed damaged a formula, the
//! reconstruction is written next to the code and in `docs/stx.md`:
//!
//! - (54): the first integral of the second line runs over `[0, X_g]`, not
//!   `[0, ∞)` (the split of `∫_0^∞` at `X_g` by (53)); (39) is the result.
//! - (30): the doubled `∪ ∪` in the case `n = R - 1` is one union.
//! - (44), (57), (58): `P_{s|s}` in the appendix is `P_{s|S}` of (25).
//! - The integrals `∫_0^Y τ^j e^{-aτ-bτ²} dτ` behind (39), (44) and
//!   (49)–(51) are evaluated in a numerically stable arrangement of the same
//!   closed forms (scaled complementary error function `erfcx` instead of
//!   `e^{a²/4b}·[erf - erf]`, which overflows for small `b`); where even that
//!   form cancels (`b·Y²` tiny) a composite Gauss–Legendre quadrature of the
//!   same integral is used. Tests check both against each other.

use std::f64::consts::PI;

/// `erf(x)`, the error function (absolute error below about 1e-15).
pub fn erf(x: f64) -> f64 {
    if x < 0.0 {
        return -erf(-x);
    }
    if x < 2.5 {
        erf_series(x)
    } else {
        1.0 - erfcx(x) * (-x * x).exp()
    }
}

/// `erfc(x) = 1 - erf(x)`, accurate in relative terms for large `x`.
pub fn erfc(x: f64) -> f64 {
    if x < 0.5 {
        1.0 - erf(x)
    } else {
        erfcx(x) * (-x * x).exp()
    }
}

/// The scaled complementary error function `erfcx(x) = e^{x²} erfc(x)`.
pub fn erfcx(x: f64) -> f64 {
    if x < 0.0 {
        // erfc(-y) = 2 - erfc(y)
        let y = -x;
        return 2.0 * (y * y).exp() - erfcx(y);
    }
    if x < 2.5 {
        (x * x).exp() * (1.0 - erf_series(x))
    } else {
        // Continued fraction erfcx(x) = 1/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x +
        // (3/2)/(x + ...)))), evaluated backwards from a fixed depth.
        let mut f = x;
        for k in (1..=120).rev() {
            f = x + (k as f64 / 2.0) / f;
        }
        1.0 / (PI.sqrt() * f)
    }
}

/// `erf` by the series `2/sqrt(pi) e^{-x²} Σ 2^n x^{2n+1} / (2n+1)!!`
/// (all terms positive, no cancellation), for `0 <= x < 3`.
fn erf_series(x: f64) -> f64 {
    let x2 = x * x;
    let mut term = x;
    let mut sum = x;
    let mut n = 0.0;
    while term > 1e-18 * sum {
        n += 1.0;
        term *= 2.0 * x2 / (2.0 * n + 1.0);
        sum += term;
    }
    2.0 / PI.sqrt() * (-x2).exp() * sum
}

/// Nodes and weights of the `n`-point Gauss–Legendre rule on `[-1, 1]`.
fn gauss_legendre(n: usize) -> Vec<(f64, f64)> {
    let mut v = vec![(0.0, 0.0); n];
    let nf = n as f64;
    for i in 0..n.div_ceil(2) {
        let mut z = (PI * (i as f64 + 0.75) / (nf + 0.5)).cos();
        let mut pp;
        loop {
            let (mut p1, mut p2) = (1.0, 0.0);
            for j in 1..=n {
                let p3 = p2;
                p2 = p1;
                let jf = j as f64;
                p1 = ((2.0 * jf - 1.0) * z * p2 - (jf - 1.0) * p3) / jf;
            }
            pp = nf * (z * p1 - p2) / (z * z - 1.0);
            let z1 = z;
            z = z1 - p1 / pp;
            if (z - z1).abs() < 1e-15 {
                break;
            }
        }
        let w = 2.0 / ((1.0 - z * z) * pp * pp);
        v[i] = (-z, w);
        v[n - 1 - i] = (z, w);
    }
    v
}

/// `[J0, J1, J2]` with `Jj = ∫_0^y τ^j e^{-aτ-bτ²} dτ` by composite
/// 16-point Gauss–Legendre quadrature (panels of at most 2 slots).
pub fn moments_quadrature(a: f64, b: f64, y: f64) -> [f64; 3] {
    if y <= 0.0 {
        return [0.0; 3];
    }
    let gl = gauss_legendre(16);
    let panels = (y / 2.0).ceil().max(1.0) as usize;
    let h = y / panels as f64;
    let mut j = [0.0; 3];
    for p in 0..panels {
        let lo = p as f64 * h;
        for &(z, w) in &gl {
            let t = lo + (z + 1.0) * h / 2.0;
            let e = (-a * t - b * t * t).exp() * w * h / 2.0;
            j[0] += e;
            j[1] += e * t;
            j[2] += e * t * t;
        }
    }
    j
}

/// `G(y) = ∫_0^y e^{-aτ-bτ²} dτ` by the closed form behind (39), (44) and
/// (49): `(1/2) sqrt(π/b) e^{a²/4b} [erf(sqrt(b)(y+c)) - erf(sqrt(b) c)]`
/// with `c = a/2b`, rearranged with `erfcx` so that nothing overflows.
/// `b > 0`.
pub fn g_closed(a: f64, b: f64, y: f64) -> f64 {
    let sb = b.sqrt();
    let c = a / (2.0 * b);
    let u1 = sb * c;
    let u2 = sb * (y + c);
    // e^{u1² - u2²} = e^{-a y - b y²}: the integrand at y.
    let ey = (-a * y - b * y * y).exp();
    let half = 0.5 * PI.sqrt() / sb;
    if u1 >= 0.0 {
        half * (erfcx(u1) - erfcx(u2) * ey)
    } else if u2 <= 0.0 {
        half * (erfcx(-u2) * ey - erfcx(-u1))
    } else {
        // The maximum of the integrand lies inside (0, y); e^{u1²} is
        // bounded by e^{|a| y / 2} there.
        half * (u1 * u1).exp() * (erf(u2) + erf(-u1))
    }
}

/// `[J0, J1, J2]` (see [`moments_quadrature`]) by the closed forms of (49),
/// (50) and (51): `J1 = (1 - E(y))/2b - c·J0`,
/// `J2 = (1 + 2bc²)·J0/2b + ((c - y)E(y) - c)/2b` with `E(y) = e^{-ay-by²}`.
/// Falls back to quadrature where these forms cancel: for small `b` the
/// terms are of order `1/b²` while the result is of order one. The
/// condition number of each form is estimated from its terms; above 1e4
/// (more than about 1e-12 relative error) the quadrature is used instead.
pub fn moments(a: f64, b: f64, y: f64) -> [f64; 3] {
    if y <= 0.0 {
        return [0.0; 3];
    }
    match moments_closed(a, b, y) {
        Some(m) => m,
        None => moments_quadrature(a, b, y),
    }
}

/// The closed forms of [`moments`], or `None` where they are
/// ill-conditioned (condition number above 1e4) or `b` is not positive.
pub fn moments_closed(a: f64, b: f64, y: f64) -> Option<[f64; 3]> {
    if b <= 0.0 || !b.is_finite() {
        return None;
    }
    let c = a / (2.0 * b);
    let ey = (-a * y - b * y * y).exp();
    let j0 = g_closed(a, b, y);
    let j1 = (1.0 - ey) / (2.0 * b) - c * j0;
    let j2 = (1.0 + 2.0 * b * c * c) * j0 / (2.0 * b) + ((c - y) * ey - c) / (2.0 * b);
    let cond1 = ((1.0 - ey).abs() / (2.0 * b) + (c * j0).abs()) / j1.abs();
    let cond2 = ((1.0 + 2.0 * b * c * c) * j0 / (2.0 * b)
        + (((c - y) * ey).abs() + c.abs()) / (2.0 * b))
        / j2.abs();
    let ok = |x: f64| x.is_finite() && x < 1e4;
    (ok(cond1) && ok(cond2)).then_some([j0, j1, j2])
}

/// Binomial pmf `P(X = k)`, `k = 0..=n`, for `n` trials of probability `p`.
pub fn binomial_pmf(n: usize, p: f64) -> Vec<f64> {
    let mut v = vec![0.0; n + 1];
    if p <= 0.0 {
        v[0] = 1.0;
        return v;
    }
    if p >= 1.0 {
        v[n] = 1.0;
        return v;
    }
    v[0] = (1.0 - p).powi(n as i32);
    let r = p / (1.0 - p);
    for k in 1..=n {
        v[k] = v[k - 1] * r * (n - k + 1) as f64 / k as f64;
    }
    v
}

/// The inputs of the model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inputs {
    /// Switch size `N`.
    pub n: usize,
    /// Receivers per output `R` (1..=N).
    pub r: usize,
    /// Round trip in slots.
    pub rtt: f64,
    /// Load `λ` (0 < λ < 1).
    pub lambda: f64,
    /// Our variant, not the paper's: every grant reserves the arbitrated
    /// receiver of its output, also a grant that turns out wasted (as the
    /// arbiter does, not knowing cells). The speculative successes (22) are
    /// then computed with granted arrivals of rate `λ` (all grants) instead
    /// of `σ` (grants that carry a cell), and `μ_F = μ_s + σ` (24). `false`
    /// is the paper's model.
    pub reserve_wasted: bool,
}

/// Every measure of the model at its fixed point.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    /// The inputs.
    pub inp: Inputs,
    /// (3) mean sojourn time in the arbiter queue `T_A`.
    pub t_a: f64,
    /// (4) mean request-to-grant time `X_g = RTT + T_A`.
    pub x_g: f64,
    /// Rate of departures due to grants `σ` (fixed point of (47)).
    pub sigma: f64,
    /// (27) rate of pure departures `σ_p`.
    pub sigma_p: f64,
    /// (28) rate of duplicate departures `σ_d`.
    pub sigma_d: f64,
    /// (34) service probability of the NSTX queue `μ = 1 - σ`.
    pub mu: f64,
    /// Probability that a grant is spurious `Q` (fixed point of (46)).
    pub q: f64,
    /// (42)/(43) probability that a grant is wasted `P_w`.
    pub p_w: f64,
    /// (55) `P_sw = Q + P_w`.
    pub p_sw: f64,
    /// (39) probability that the NSTX queue is empty `p_0`.
    pub p0: f64,
    /// (40) probability of missing the deadline `α_d`.
    pub alpha_d: f64,
    /// (41) probability that a cell is speculatively transmitted `P_S`.
    pub p_s: f64,
    /// (7) rate of speculative cells per output `λ_S`.
    pub lambda_s: f64,
    /// (19) rate of cells through the fabric per output `μ_F`.
    pub mu_f: f64,
    /// (23) rate of successful speculative cells per output `μ_s`.
    pub mu_s: f64,
    /// (25) probability that a speculative cell succeeds `P_{s|S}`.
    pub p_s_given_s: f64,
    /// (26) probability that a cell succeeds speculatively `P_Ss`.
    pub p_ss: f64,
    /// (44) probability of a successful STX acknowledged before the grant.
    pub p_sa: f64,
    /// (45) probability of no arrival to a VOQ during `X_g` slots.
    pub p_na: f64,
    /// (36) mean impatience `θ̄`.
    pub theta: f64,
    /// (32) mean net arrivals to the output queue `E(B)`.
    pub b1: f64,
    /// (32) `E(B²)`.
    pub b2: f64,
    /// (33) mean wait in the output queue `W_B`.
    pub w_b: f64,
    /// (49)–(51) `I_0, I_1, I_2`.
    pub i: [f64; 3],
    /// (48) mean switch delay with STX.
    pub delay_stx: f64,
    /// Mean switch delay without STX, `X_g + RTT = T_A + 2 RTT`.
    pub delay_no_stx: f64,
    /// Outer (σ) iterations used.
    pub outer_iters: usize,
    /// Total inner (Q) iterations used.
    pub inner_iters: usize,
}

/// (3): mean sojourn of the `Geo^X/D/1` arbiter queue with binomial batches (1).
pub fn t_a(n: usize, lambda: f64) -> f64 {
    let a1 = lambda;
    let a2 = lambda * lambda + lambda * (1.0 - lambda / n as f64);
    1.0 + (a2 - a1) / (2.0 * a1 * (1.0 - a1))
}

/// Intermediate state of one pass of (46) for given `σ` and `Q`.
#[derive(Clone, Copy, Debug)]
struct Pass {
    theta: f64,
    a: f64,
    b: f64,
    p0: f64,
    alpha_d: f64,
    p_s: f64,
    lambda_s: f64,
    mu_s: f64,
    mu_f: f64,
    p_s_given_s: f64,
    p_sa: f64,
    g_x: f64,
}

impl Inputs {
    fn x_g(&self) -> f64 {
        self.rtt + t_a(self.n, self.lambda)
    }

    /// One pass of the chain (46) for fixed `σ`, from `Q`.
    fn pass(&self, sigma: f64, q: f64) -> Pass {
        let lam = self.lambda;
        let x = self.x_g();
        let mu = 1.0 - sigma; // (34)
        let theta = (1.0 - q / 2.0) * x; // (36)
        let a = mu - lam; // (38)
        let b = lam * q / (2.0 * x); // (38)
                                     // (39): p0 = (1 + λ [G(X_g) + e^{λθ̄ - μ X_g}/μ])^{-1}.
        let g_x = if b > 0.0 {
            moments(a, b, x)[0]
        } else if a.abs() < 1e-300 {
            x
        } else {
            (1.0 - (-a * x).exp()) / a
        };
        let tail = (lam * theta - mu * x).exp() / mu;
        let p0 = 1.0 / (1.0 + lam * (g_x + tail));
        let alpha_d = 1.0 - mu / lam * (1.0 - p0); // (40)
        let p_s = (1.0 - alpha_d).clamp(0.0, 1.0); // (41)
        let lambda_s = lam * p_s; // (7)
        let (mu_s, mu_f) = if self.reserve_wasted {
            let (ms, _) = fabric(self.n, self.r, lambda_s, lam);
            (ms, ms + sigma)
        } else {
            fabric(self.n, self.r, lambda_s, sigma)
        };
        let p_s_given_s = if lambda_s > 0.0 { mu_s / lambda_s } else { 1.0 }; // (25)
                                                                              // (44): P_SA = p0 {1 + λ G(X_g - RTT)} P_{s|S}.
        let y = x - self.rtt;
        let g_y = if b > 0.0 {
            moments(a, b, y)[0]
        } else if a.abs() < 1e-300 {
            y
        } else {
            (1.0 - (-a * y).exp()) / a
        };
        let p_sa = p0 * (1.0 + lam * g_y) * p_s_given_s;
        Pass {
            theta,
            a,
            b,
            p0,
            alpha_d,
            p_s,
            lambda_s,
            mu_s,
            mu_f,
            p_s_given_s,
            p_sa,
            g_x,
        }
    }

    /// (45).
    fn p_na(&self) -> f64 {
        (1.0 - self.lambda / self.n as f64).powf(self.x_g())
    }

    /// (42) and (43): `(Q, P_w)` from `P_SA`.
    fn q_pw(&self, p_sa: f64) -> (f64, f64) {
        let p_na = self.p_na();
        let den = 1.0 - (1.0 - p_sa) * (1.0 - p_na);
        (p_sa * (1.0 - p_na) / den, p_sa * p_na / den)
    }

    /// The fixed point `Q(σ)` of (46).
    fn q_of_sigma(&self, sigma: f64, q0: f64, iters: &mut usize) -> f64 {
        let mut q = q0;
        for _ in 0..10_000 {
            *iters += 1;
            let p = self.pass(sigma, q);
            let (qn, _) = self.q_pw(p.p_sa);
            if (qn - q).abs() < 1e-13 {
                return qn;
            }
            q = qn;
        }
        q
    }

    /// Solves the model: the fixed point of (47) around (46), then (48).
    pub fn solve(&self) -> Solution {
        assert!(
            self.n >= 1 && self.r >= 1 && self.r <= self.n,
            "1 <= R <= N"
        );
        assert!(self.lambda > 0.0 && self.lambda < 1.0, "0 < λ < 1");
        assert!(self.rtt > 0.0, "RTT > 0");
        let lam = self.lambda;
        let x = self.x_g();
        let mut sigma = lam;
        let mut q = 0.1;
        let mut outer = 0;
        let mut inner = 0;
        for _ in 0..10_000 {
            outer += 1;
            q = self.q_of_sigma(sigma, q, &mut inner);
            let p = self.pass(sigma, q);
            let (_, p_w) = self.q_pw(p.p_sa);
            let sn = lam * (1.0 - p_w); // (5)
            if (sn - sigma).abs() < 1e-13 {
                sigma = sn;
                break;
            }
            sigma = sn;
        }
        let q = self.q_of_sigma(sigma, q, &mut inner);
        let p = self.pass(sigma, q);
        let (_, p_w) = self.q_pw(p.p_sa);
        let sigma_p = lam - p.mu_s; // (27)
        let sigma_d = p.mu_f - lam; // (28)
        let (b1, b2) = output_moments(self.n, self.r, p.lambda_s, sigma, sigma_p, sigma_d);
        let w_b = if b1 > 0.0 {
            (b2 - b1) / (2.0 * b1 * (1.0 - b1))
        } else {
            0.0
        }; // (33)
           // (49)-(51): I_j = ∫_0^{X_g} ω^j f_U(ω) dω.
        let m = if p.b > 0.0 {
            moments(p.a, p.b, x)
        } else {
            moments_quadrature(p.a, 0.0, x)
        };
        let _ = p.g_x;
        let i0 = p.p0 * (1.0 + lam * m[0]);
        let i1 = p.p0 * lam * m[1];
        let i2 = p.p0 * lam * m[2];
        // (48)
        let delay_stx =
            self.rtt + w_b + p.theta - p.p_s_given_s * (p.theta * i0 - i1 + q / (2.0 * x) * i2);
        Solution {
            inp: *self,
            t_a: x - self.rtt,
            x_g: x,
            sigma,
            sigma_p,
            sigma_d,
            mu: 1.0 - sigma,
            q,
            p_w,
            p_sw: q + p_w,
            p0: p.p0,
            alpha_d: p.alpha_d,
            p_s: p.p_s,
            lambda_s: p.lambda_s,
            mu_f: p.mu_f,
            mu_s: p.mu_s,
            p_s_given_s: p.p_s_given_s,
            p_ss: p.mu_s / lam,
            p_sa: p.p_sa,
            p_na: self.p_na(),
            theta: p.theta,
            b1,
            b2,
            w_b,
            i: [i0, i1, i2],
            delay_stx,
            delay_no_stx: x + self.rtt,
            outer_iters: outer,
            inner_iters: inner,
        }
    }
}

/// (8), (18), (19), (22), (23): `(μ_s, μ_F)` for speculative arrivals
/// `A_S ~ Bin(N, λ_S/N)` and granted arrivals `A_g ~ Bernoulli(σ)`.
pub fn fabric(n: usize, r: usize, lambda_s: f64, sigma: f64) -> (f64, f64) {
    let pa = binomial_pmf(n, lambda_s / n as f64);
    let ge = |k: usize| -> f64 { pa.iter().skip(k).sum() };
    // (22)
    let mut pm = vec![0.0; r + 1];
    if r == 1 {
        pm[0] = (1.0 - sigma) * pa[0] + sigma;
    } else {
        pm[0] = pa[0];
        for (k, v) in pm.iter_mut().enumerate().take(r - 1).skip(1) {
            *v = pa[k];
        }
        pm[r - 1] = (1.0 - sigma) * pa[r - 1] + sigma * ge(r - 1);
    }
    pm[r] = (1.0 - sigma) * ge(r);
    let mu_s: f64 = pm.iter().enumerate().map(|(k, p)| k as f64 * p).sum(); // (23)
                                                                            // (18)
    let mut pf = vec![0.0; r + 1];
    pf[0] = (1.0 - sigma) * pa[0];
    for (k, v) in pf.iter_mut().enumerate().take(r).skip(1) {
        *v = (1.0 - sigma) * pa[k] + sigma * pa[k - 1];
    }
    pf[r] = (1.0 - sigma) * ge(r) + sigma * ge(r - 1);
    let mu_f: f64 = pf.iter().enumerate().map(|(k, p)| k as f64 * p).sum(); // (19)
    (mu_s, mu_f)
}

/// (31), (32): `(E(B), E(B²))` of the net arrivals to the output queue.
pub fn output_moments(
    n: usize,
    r: usize,
    lambda_s: f64,
    sigma: f64,
    sigma_p: f64,
    sigma_d: f64,
) -> (f64, f64) {
    let pa = binomial_pmf(n, lambda_s / n as f64);
    let at = |k: isize| -> f64 {
        if k < 0 {
            0.0
        } else {
            pa[k as usize]
        }
    };
    let ge = |k: usize| -> f64 { pa.iter().skip(k).sum() };
    let mut pb = vec![0.0; r + 1];
    if r == 1 {
        pb[0] = (1.0 - sigma) * pa[0] + sigma_d;
    } else {
        pb[0] = (1.0 - sigma_p) * pa[0];
        for (k, v) in pb.iter_mut().enumerate().take(r - 1).skip(1) {
            *v = (1.0 - sigma_p) * pa[k] + sigma_p * pa[k - 1];
        }
        pb[r - 1] = (1.0 - sigma) * pa[r - 1] + sigma_p * at(r as isize - 2) + sigma_d * ge(r - 1);
    }
    pb[r] = (1.0 - sigma) * ge(r) + sigma_p * ge(r - 1);
    let b1 = pb.iter().enumerate().map(|(k, p)| k as f64 * p).sum();
    let b2 = pb.iter().enumerate().map(|(k, p)| (k * k) as f64 * p).sum();
    (b1, b2)
}

/// Solves the paper's model for `(N, R, RTT, λ)`.
pub fn solve(n: usize, r: usize, rtt: f64, lambda: f64) -> Solution {
    Inputs {
        n,
        r,
        rtt,
        lambda,
        reserve_wasted: false,
    }
    .solve()
}

/// Solves our variant in which wasted grants reserve a receiver too (see
/// [`Inputs::reserve_wasted`]).
pub fn solve_reserving(n: usize, r: usize, rtt: f64, lambda: f64) -> Solution {
    Inputs {
        n,
        r,
        rtt,
        lambda,
        reserve_wasted: true,
    }
    .solve()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
    }

    #[test]
    fn error_function_values() {
        // Reference values (Abramowitz & Stegun tables, 16 digits).
        assert!(close(erf(0.5), 0.520_499_877_813_046_5, 1e-15));
        assert!(close(erf(1.0), 0.842_700_792_949_714_9, 1e-15));
        assert!(close(erf(2.0), 0.995_322_265_018_952_7, 1e-15));
        assert!((erfc(3.0) / 2.209_049_699_858_544e-5 - 1.0).abs() < 1e-12);
        assert!((erfc(5.0) / 1.537_459_794_428_035e-12 - 1.0).abs() < 1e-12);
        assert!(close(erfcx(1.0), 0.427_583_576_155_807, 1e-13));
        // Series and continued fraction agree where both apply.
        for k in 0..=20 {
            let x = 2.0 + k as f64 * 0.025;
            let s = (x * x).exp() * (1.0 - erf_series(x));
            let mut f = x;
            for j in (1..=200).rev() {
                f = x + (j as f64 / 2.0) / f;
            }
            let cf = 1.0 / (PI.sqrt() * f);
            assert!((s / cf - 1.0).abs() < 1e-11, "x={x}: {s} vs {cf}");
        }
        // erf' = 2/sqrt(pi) e^{-x²}.
        for k in 1..60 {
            let x = k as f64 * 0.1;
            let h = 1e-5;
            let d = (erf(x + h) - erf(x - h)) / (2.0 * h);
            assert!(close(d, 2.0 / PI.sqrt() * (-x * x).exp(), 1e-8), "x={x}");
        }
        assert!(close(erfcx(-1.0), 2.0 * 1f64.exp() - erfcx(1.0), 1e-14));
    }

    #[test]
    fn closed_form_integrals_match_quadrature() {
        let mut used = 0;
        for &a in &[-0.9, -0.3, -0.01, 0.0, 0.05, 0.4, 0.95] {
            for &b in &[1e-6, 1e-5, 1e-4, 1e-3, 5e-3, 0.05] {
                for &y in &[1.0, 3.5, 65.0, 75.0, 140.0] {
                    let Some(c) = moments_closed(a, b, y) else {
                        continue;
                    };
                    used += 1;
                    let q = moments_quadrature(a, b, y);
                    for j in 0..3 {
                        assert!(
                            (c[j] / q[j] - 1.0).abs() < 1e-10,
                            "a={a} b={b} y={y} J{j}: closed {} quad {}",
                            c[j],
                            q[j]
                        );
                    }
                }
            }
        }
        assert!(used > 40, "closed forms used in only {used} cases");
    }

    #[test]
    fn quadrature_is_exact_for_plain_exponentials() {
        // b = 0: ∫_0^y e^{-aτ} = (1 - e^{-ay})/a.
        for &a in &[-0.5, 0.1, 0.9] {
            let y = 130.0;
            let q = moments_quadrature(a, 0.0, y);
            assert!(close(q[0], (1.0 - (-a * y).exp()) / a, 1e-12));
        }
    }

    #[test]
    fn binomial_sums_to_one_with_mean_np() {
        let p = binomial_pmf(64, 0.3 / 64.0);
        let s: f64 = p.iter().sum();
        let m: f64 = p.iter().enumerate().map(|(k, v)| k as f64 * v).sum();
        assert!(close(s, 1.0, 1e-14) && close(m, 0.3, 1e-14));
    }

    #[test]
    fn flow_conservation_24_holds() {
        // μ_s = μ_F - σ for any λ_S and σ (identity of (18)-(24)).
        for &r in &[1, 2, 3, 8] {
            for &ls in &[0.01, 0.3, 0.7] {
                for &s in &[0.0, 0.2, 0.6] {
                    let (ms, mf) = fabric(64, r, ls, s);
                    assert!(close(ms, mf - s, 1e-13), "R={r} λs={ls} σ={s}");
                }
            }
        }
    }

    #[test]
    fn net_output_arrivals_follow_31() {
        // E(B) = μ_s + σ_p (duplicates dropped), by (29).
        for &r in &[1, 2, 8] {
            let (ls, s, sp) = (0.4, 0.3, 0.2);
            let (ms, _) = fabric(64, r, ls, s);
            let (b1, _) = output_moments(64, r, ls, s, sp, s - sp);
            assert!(close(b1, ms + sp, 1e-13), "R={r}: {b1} vs {}", ms + sp);
        }
    }

    #[test]
    fn light_load_limits() {
        // λ -> 0: every cell goes speculatively at once and succeeds; the
        // delay approaches RTT with STX and T_A + 2 RTT -> 1 + 2 RTT without.
        for &r in &[1, 2, 8] {
            let s = solve(64, r, 64.0, 0.001);
            assert!(s.p_s > 0.999, "P_S {}", s.p_s);
            assert!(s.p_s_given_s > 0.999, "P_s|S {}", s.p_s_given_s);
            assert!((s.delay_stx - 64.0).abs() < 0.2, "D {}", s.delay_stx);
            assert!((s.delay_no_stx - 129.0).abs() < 0.01);
            // and almost every grant is wasted
            assert!(s.p_w > 0.9, "P_w {}", s.p_w);
        }
    }

    #[test]
    fn fixed_point_is_consistent() {
        for &r in &[1, 2, 8] {
            for k in 1..=9 {
                let lam = k as f64 / 10.0;
                let s = solve(64, r, 64.0, lam);
                // (5) holds at the fixed point
                assert!(close(s.sigma, lam * (1.0 - s.p_w), 1e-10));
                // (26)
                assert!(close(s.p_ss, s.p_s * s.p_s_given_s, 1e-10));
                // (40)/(41)
                assert!(close(s.p_s, s.mu / lam * (1.0 - s.p0), 1e-10));
                assert!(s.delay_stx.is_finite() && s.delay_no_stx.is_finite());
                assert!((0.0..=1.0).contains(&s.q) && (0.0..=1.0).contains(&s.p_w));
            }
        }
    }

    #[test]
    fn reserving_variant_lowers_r1_speculative_success() {
        // With every grant reserving the receiver, at R = 1 a speculative
        // cell wins iff no grant reserved its output and no other SRQ won:
        // P_{s|S} = (1 - λ) P(A_S >= 1) / λ_S.
        let v = solve_reserving(64, 1, 64.0, 0.1);
        let pa = binomial_pmf(64, v.lambda_s / 64.0);
        let expect = (1.0 - 0.1) * (1.0 - pa[0]) / v.lambda_s;
        assert!(close(v.p_s_given_s, expect, 1e-9));
        let p = solve(64, 1, 64.0, 0.1);
        assert!(v.p_s_given_s < p.p_s_given_s - 0.05 && v.delay_stx > p.delay_stx + 3.0);
        // no wasted grants at high load: both models coincide
        let (v, p) = (solve_reserving(64, 2, 64.0, 0.8), solve(64, 2, 64.0, 0.8));
        assert!(close(v.delay_stx, p.delay_stx, 1e-6));
    }

    #[test]
    fn paper_curve_shapes() {
        let d = |r, l| solve(64, r, 64.0, l);
        for &r in &[1, 2, 8] {
            // delay with STX below the delay without up to 70 % load (at 80 %
            // and 90 % the output-queue wait W_B, absent from X_g + RTT, puts
            // the STX curve slightly above the other)
            for k in 1..=7 {
                let s = d(r, k as f64 / 10.0);
                assert!(s.delay_stx < s.delay_no_stx, "R={r} λ=0.{k}");
            }
            // delay increases with load
            let mut prev = 0.0;
            for k in 1..=9 {
                let s = d(r, k as f64 / 10.0);
                assert!(s.delay_stx > prev);
                prev = s.delay_stx;
            }
        }
        // R = 1 -> 2 helps much more than 2 -> 8 (Fig. 6a, 6c)
        for &l in &[0.3, 0.4, 0.5] {
            let (d1, d2, d8) = (d(1, l), d(2, l), d(8, l));
            assert!(d1.delay_stx - d2.delay_stx > 2.0 * (d2.delay_stx - d8.delay_stx));
            assert!(d2.p_ss - d1.p_ss > 2.0 * (d8.p_ss - d2.p_ss));
        }
        // R >= 2: most cells succeed speculatively below 50 % load, few above
        for &r in &[2, 8] {
            assert!(d(r, 0.3).p_ss > 0.5, "R={r} λ=0.3: {}", d(r, 0.3).p_ss);
            assert!(d(r, 0.8).p_ss < 0.3, "R={r} λ=0.8: {}", d(r, 0.8).p_ss);
        }
        // P_S does not depend on R much (Fig. 6d); with R = 8 almost every
        // speculation succeeds (Fig. 6e)
        assert!(d(8, 0.4).p_s_given_s > 0.97);
        // most grants wasted below 50 %, almost none beyond (Fig. 6g)
        assert!(d(2, 0.2).p_w > 0.5);
        assert!(d(2, 0.8).p_w < 0.1);
    }
}

#[cfg(test)]
mod table {
    #[test]
    #[ignore]
    fn print_table() {
        for &r in &[1, 2, 8] {
            for k in 1..=9 {
                let l = k as f64 / 10.0;
                let s = super::solve(64, r, 64.0, l);
                let v = super::solve_reserving(64, r, 64.0, l);
                println!(
                    "  variant: D={:.2} Ps|S={:.3} PSs={:.3} Pw={:.3}",
                    v.delay_stx, v.p_s_given_s, v.p_ss, v.p_w
                );
                println!(
                    "R={r} λ={l:.1} D={:.2} D0={:.2} PS={:.3} Ps|S={:.3} PSs={:.3} Q={:.3} Pw={:.3} σ={:.3} σd={:.4} WB={:.3} it={}/{}",
                    s.delay_stx, s.delay_no_stx, s.p_s, s.p_s_given_s, s.p_ss, s.q, s.p_w, s.sigma, s.sigma_d, s.w_b, s.outer_iters, s.inner_iters
                );
            }
        }
    }
}
