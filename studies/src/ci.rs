//! 95 % confidence intervals of a mean across independent runs (seeds,
//! traffic draws): what every study reports.

/// Mean and half-width of the 95 % confidence interval of the mean of `x`
/// (independent samples, Student t with `len - 1` degrees of freedom);
/// NaN half-width for fewer than two samples.
pub fn mean_ci(x: &[f64]) -> (f64, f64) {
    let k = x.len();
    if k == 0 {
        return (f64::NAN, f64::NAN);
    }
    let m = x.iter().sum::<f64>() / k as f64;
    if k < 2 {
        return (m, f64::NAN);
    }
    let var = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (k - 1) as f64;
    (m, t975(k - 1) * (var / k as f64).sqrt())
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => T[df - 1],
        _ => 1.96 + 2.4 / df as f64,
    }
}
