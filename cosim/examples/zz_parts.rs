use model::stim::Cycle;
use model::{Block, Params, PortGroup};
use std::hint::black_box;
use std::time::Instant;
use testbenches::Bench;

fn go<B: Bench>(variant: &str, cycles: usize) {
    let p = B::variants().into_iter().find(|p| p.label() == variant).unwrap();
    let cfg = B::default_config(&p);
    let stim = testbenches::generate::<B>(&p, 1, cycles, Some(&cfg));
    let il = B::Inputs::layout(&p);
    let ol = B::Outputs::layout(&p);
    for part in 0..5 {
        let mut best = f64::MAX;
        for _ in 0..3 {
            let mut m = B::new(&p, &cfg);
            let mut o = B::Outputs::zero(&p);
            let mut iw = vec![0u32; il.words];
            let ow = vec![0u32; ol.words];
            let mut hits = vec![0u64; B::bins().len()];
            let mut eq = 0u64;
            let t0 = Instant::now();
            for c in &stim.cycles {
                if let Cycle::Drive(i) = c {
                    if part == 1 || part == 4 { i.pack(&p, &mut iw).unwrap(); }
                    m.step_into(black_box(i), &mut o);
                    if part == 2 || part == 4 { m.sample(i, &o, &mut hits); }
                    if part == 3 || part == 4 { eq += u64::from(o.eq_words(&p, black_box(&ow))); }
                    black_box(&o);
                }
            }
            black_box((&hits, eq, &iw));
            best = best.min(t0.elapsed().as_secs_f64());
        }
        let names = ["step", "+inpack", "+sample", "+eq", "all"];
        println!("{:8} {:6.1} ns/cycle", names[part], best * 1e9 / stim.cycles.len() as f64);
    }
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = a[2].parse().unwrap();
    match a[0].as_str() {
        "mmu" => go::<model::mmu::Mmu>(&a[1], n),
        "pfc" => go::<model::pfc::Pfc>(&a[1], n),
        "credit" => go::<model::credit::Credit>(&a[1], n),
        _ => go::<model::arbiter::Arbiter>(&a[1], n),
    }
}
