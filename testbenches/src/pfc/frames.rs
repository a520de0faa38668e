//! Frames put on the receive stream: valid PFC frames and malformed ones,
//! built byte for byte, and their strategies.

use super::*;
// Frames

/// Which DA a generated frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Da {
    /// 01-80-C2-00-00-01.
    Pfc,
    /// The receiver's own address (`cfg_sa_i`).
    Own,
    /// Another address.
    Other(u64),
}

/// What is done to a frame after it is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// Nothing: a valid frame of its kind.
    None,
    /// One bit flipped (bit index modulo the frame's bits), FCS left alone.
    FlipBit(u16),
    /// Cut to `n` bytes (1..=63).
    Truncate(u8),
    /// `n` more bytes of padding; with `fix`, the FCS is recomputed.
    Extend(u8, bool),
    /// Another EtherType, FCS recomputed.
    EtherType(u16),
    /// Another opcode, FCS recomputed.
    Opcode(u16),
    /// A data frame (EtherType 0x0800) of this many bytes (64..), good FCS.
    Data(u16),
}

/// A frame to put on the receive stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameSpec {
    /// Destination address.
    pub da: Da,
    /// Class-enable vector, both octets (the upper one is reserved).
    pub cev: u16,
    /// The eight times.
    pub times: [u16; PRIOS],
    /// What is done to it.
    pub mutation: Mutation,
}

impl FrameSpec {
    /// A valid PFC frame to the PFC address.
    pub fn pfc(cev: u8, times: [u16; PRIOS]) -> Self {
        FrameSpec {
            da: Da::Pfc,
            cev: cev as u16,
            times,
            mutation: Mutation::None,
        }
    }

    /// The frame's bytes, FCS included, as received by a port whose address
    /// is `own_sa`.
    pub fn bytes(&self, own_sa: u64) -> Vec<u8> {
        let da = match self.da {
            Da::Pfc => PFC_DA,
            Da::Own => mac_bytes(own_sa),
            Da::Other(a) => mac_bytes(a),
        };
        let mut f = pfc_frame(PEER_SA, self.cev, &self.times).to_vec();
        f[0..6].copy_from_slice(&da);
        let refcs = |f: &mut Vec<u8>| {
            let n = f.len() - 4;
            let fcs = crc32(&f[..n]);
            f[n..].copy_from_slice(&fcs.to_le_bytes());
        };
        refcs(&mut f);
        match self.mutation {
            Mutation::None => {}
            Mutation::FlipBit(b) => {
                let b = b as usize % (f.len() * 8);
                f[b / 8] ^= 1 << (b % 8);
            }
            Mutation::Truncate(n) => f.truncate((n as usize).clamp(1, 63)),
            Mutation::Extend(n, fix) => {
                let fcs: Vec<u8> = f[60..].to_vec();
                f.truncate(60);
                f.extend(std::iter::repeat_n(0u8, n.max(1) as usize));
                f.extend(fcs);
                if fix {
                    refcs(&mut f);
                }
            }
            Mutation::EtherType(t) => {
                f[12..14].copy_from_slice(&t.to_be_bytes());
                refcs(&mut f);
            }
            Mutation::Opcode(op) => {
                f[14..16].copy_from_slice(&op.to_be_bytes());
                refcs(&mut f);
            }
            Mutation::Data(n) => f = data_frame(da, PEER_SA, n as usize),
        }
        f
    }
}

fn times_strategy() -> impl Strategy<Value = u16> {
    prop_oneof![
        2 => Just(0u16),
        2 => Just(1u16),
        4 => 1u16..=8,
        3 => 1u16..=300,
        1 => Just(65535u16),
        1 => any::<u16>(),
    ]
}

/// Frames of every kind (valid and malformed) for the receive stream.
pub fn frame_spec_strategy() -> impl Strategy<Value = FrameSpec> {
    let da = prop_oneof![
        8 => Just(Da::Pfc),
        2 => Just(Da::Own),
        1 => any::<u64>().prop_map(|a| Da::Other(a & 0xffff_ffff_ffff)),
        1 => Just(Da::Other(0x0180_c200_0002)),
    ];
    let cev = prop_oneof![
        6 => any::<u8>().prop_map(|c| c as u16),
        2 => (0usize..8).prop_map(|p| 1u16 << p),
        1 => Just(0xffu16),
        1 => any::<u16>(),
    ];
    let mutation = prop_oneof![
        12 => Just(Mutation::None),
        2 => any::<u16>().prop_map(Mutation::FlipBit),
        2 => (1u8..=63).prop_map(Mutation::Truncate),
        1 => Just(Mutation::Truncate(60)),
        2 => (1u8..=24, any::<bool>()).prop_map(|(n, f)| Mutation::Extend(n, f)),
        1 => prop_oneof![Just(0x0800u16), Just(0x8809), any::<u16>()].prop_map(Mutation::EtherType),
        1 => prop_oneof![Just(OPCODE_PAUSE), Just(0x0102u16), any::<u16>()].prop_map(Mutation::Opcode),
        1 => (64u16..=200).prop_map(Mutation::Data),
    ];
    (
        da,
        cev,
        proptest::array::uniform8(times_strategy()),
        mutation,
    )
        .prop_map(|(da, cev, times, mutation)| FrameSpec {
            da,
            cev,
            times,
            mutation,
        })
}
