//! What the studies' sweeps share (`stx`, `bcn`, `recn`, the mutation
//! campaign): independent points run on a fixed number of threads with the
//! results in point order ([`par_map`], through `rayon`), and rows written
//! as CSV ([`csv_string`], through `csv` and `serde`).

use anyhow::{anyhow, Result};
use rayon::prelude::*;
use serde::Serialize;

/// `f(worker, item)` for every item of `items` on `jobs` threads (at least
/// one), in any order; the results come back in the order of `items`.
/// `worker` is the index (`0..jobs`) of the thread running the item, for
/// work that needs a scratch place of its own. The first error ends the
/// run: no new item starts, and that error is returned.
pub fn par_map<T, R, F>(items: &[T], jobs: usize, f: F) -> Result<Vec<R>>
where
    T: Sync,
    R: Send,
    F: Fn(usize, &T) -> Result<R> + Sync + Send,
{
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .thread_name(|k| format!("sweep-{k}"))
        .build()
        .map_err(|e| anyhow!("cannot start {jobs} worker threads: {e}"))?;
    pool.install(|| {
        items
            .par_iter()
            // One item per task: the points are few and their costs differ
            // by orders of magnitude, so none waits behind a long one.
            .with_max_len(1)
            .map(|x| f(rayon::current_thread_index().unwrap_or(0), x))
            .collect()
    })
}

/// `rows` as CSV text: a header from the first row's field names, then one
/// line per row.
pub fn csv_string<R: Serialize>(rows: impl IntoIterator<Item = R>) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn results_keep_the_item_order_and_workers_stay_in_range() {
        let items: Vec<u64> = (0..50).collect();
        let seen = AtomicUsize::new(0);
        let out = par_map(&items, 3, |w, &x| {
            assert!(w < 3, "worker {w}");
            seen.fetch_add(1, Ordering::Relaxed);
            // Later items finish first.
            std::thread::sleep(std::time::Duration::from_micros(50 * (50 - x)));
            Ok(x * x)
        })
        .unwrap();
        assert_eq!(out, items.iter().map(|x| x * x).collect::<Vec<_>>());
        assert_eq!(seen.load(Ordering::Relaxed), 50);
    }

    #[test]
    fn an_error_is_returned_and_stops_new_items() {
        let items: Vec<u32> = (0..1000).collect();
        let ran = AtomicUsize::new(0);
        let r = par_map(&items, 1, |_, &x| {
            ran.fetch_add(1, Ordering::Relaxed);
            if x == 3 {
                Err(anyhow!("point {x} failed"))
            } else {
                Ok(x)
            }
        });
        assert_eq!(r.unwrap_err().to_string(), "point 3 failed");
        assert!(ran.load(Ordering::Relaxed) < 1000);
    }

    #[derive(Serialize)]
    struct Row {
        load: f64,
        name: &'static str,
    }

    #[test]
    fn csv_has_a_header_and_a_line_per_row() {
        let t = csv_string([
            Row {
                load: 0.5,
                name: "a",
            },
            Row {
                load: 1.0,
                name: "b,c",
            },
        ])
        .unwrap();
        assert_eq!(t, "load,name\n0.5,a\n1.0,\"b,c\"\n");
    }
}
