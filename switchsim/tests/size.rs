//! `switchsim size` against the system it sizes: the PFC + MMU system of
//! `studies::pfc_system` with the headroom the sizing command computes.

use studies::pfc_system as system;
use switchsim::size::{size, SizeArgs};

/// The headroom `switchsim size` prints, checked in bytes with a real MTU:
/// the MMU + PFC system above, the upstream sending MTU packets of 1500 or
/// 9216 bytes back to back (byte-exact, not whole cells) into cells of
/// 256 B, one MMU whose four ingress ports have the headroom `size` gives
/// for cables of 10, 100 and 300 m (and none on port 3), at 100 and
/// 400 Gb/s. Each cable's port in turn is congested: no frame is lost with
/// the sized headroom, and one is with one MTU (in cells) less. Where the
/// naive `ceil(eta / cell)` is below the sized headroom, it loses frames too.
#[test]
fn system_sized_headroom_in_bytes() {
    const CABLES: [f64; 3] = [10.0, 100.0, 300.0];
    const CELL: u32 = 256;
    println!(
        "| speed | MTU (B) | cable (m) | link (cycles) | eta (B) | sized (cells) | max used | drops | \
         sized - MTU (cells) | drops | ceil(eta/cell) | drops |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for gbps in [100.0, 400.0] {
        for mtu in [1500u64, 9216] {
            let sized = size(&SizeArgs {
                gbps,
                cables: CABLES.to_vec(),
                mtu,
                cell: CELL as u64,
                lossless: 1 << 3,
                ..SizeArgs::default()
            })
            .expect("the sizing of a legal link");
            let hdrm: [u32; 4] = sized.mmu.1.cfg_hdrm_cells_i.clone().try_into().unwrap();
            assert_eq!(hdrm[3], 0, "no cable on port 3");
            for (port, h) in sized.headroom.iter().enumerate() {
                assert_eq!(hdrm[port] as u64, h.eta_cells);
                let link = h.wire_bytes.div_ceil(system::BYTES_PER_CYCLE);
                let s = system::Setup::sized(link, mtu as u32, CELL, port, hdrm);
                let l = s.mtu_cells();
                let ok = system::run(&s);
                let short = system::run(&s.with_eta(hdrm[port] - l));
                let naive = h.naive_cells as u32;
                let nv = (naive < hdrm[port]).then(|| system::run(&s.with_eta(naive)));
                println!(
                    "| {gbps}G | {mtu} | {} | {link} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    CABLES[port],
                    h.eta_bytes,
                    hdrm[port],
                    ok.max_headroom,
                    ok.drops,
                    hdrm[port] - l,
                    short.drops,
                    naive,
                    nv.as_ref().map_or("-".to_string(), |o| o.drops.to_string()),
                );
                let what = format!("{gbps}G MTU {mtu} cable {} m", CABLES[port]);
                assert_eq!(ok.drops, 0, "{what}: drop with the sized headroom: {ok:?}");
                assert_eq!(ok.gaps, 0, "{what}: the upstream was released while OFF");
                assert!(ok.resumed, "{what}: never resumed");
                assert!(
                    ok.max_headroom > hdrm[port] - l,
                    "{what}: the worst case is not reached ({} of {})",
                    ok.max_headroom,
                    hdrm[port]
                );
                assert!(
                    short.drops >= 1,
                    "{what}: no drop with one MTU less: {short:?}"
                );
                if let Some(nv) = nv {
                    assert!(
                        nv.drops >= 1,
                        "{what}: no drop with ceil(eta / cell): {nv:?}"
                    );
                }
            }
        }
    }
}
