//! Ethernet byte streams as the blocks see them (`pfc`, `bcn_cp`): the
//! CRC-32 register of `rtl/prim_crc32.v` ([`crc32_byte`], [`crc32_beat`]),
//! the frame check sequence, MAC addresses, a reference data frame, and
//! frames cut into the 8-byte beats of the `rx_*` / `tx_*` ports.

/// Bytes per beat of the stream.
pub const BEAT_BYTES: usize = 8;
/// Bytes of the minimum Ethernet frame, FCS included (a PFC or BCN frame).
pub const FRAME_BYTES: usize = 64;
/// Beats of a minimum frame.
pub const FRAME_BEATS: usize = FRAME_BYTES / BEAT_BYTES;
/// CRC register (before the final complement) after a frame with a correct
/// FCS has gone through it, FCS included.
pub const CRC_RESIDUE: u32 = 0xdebb_20e3;
/// Initial value of the CRC register.
pub const CRC_INIT: u32 = 0xffff_ffff;

/// CRC-32 (reflected, polynomial 0xEDB88320) of one byte into register
/// `crc`: the model twin of `rtl/prim_crc32.v`, bit for bit.
pub fn crc32_byte(mut crc: u32, b: u8) -> u32 {
    crc ^= b as u32;
    for _ in 0..8 {
        crc = if crc & 1 != 0 {
            (crc >> 1) ^ 0xedb8_8320
        } else {
            crc >> 1
        };
    }
    crc
}

/// The CRC register after the first `n` bytes of a beat (byte 0 = bits 7:0).
pub fn crc32_beat(mut crc: u32, data: u64, n: usize) -> u32 {
    for k in 0..n.min(BEAT_BYTES) {
        crc = crc32_byte(crc, (data >> (8 * k)) as u8);
    }
    crc
}

/// The Ethernet FCS of `bytes` (the zlib CRC-32, through `crc32fast`: an
/// implementation independent of [`crc32_byte`], the RTL's twin, so the
/// reference frames check it).
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// The MAC address `a` (48 bits, most significant byte first on the wire).
pub fn mac_bytes(a: u64) -> [u8; 6] {
    let b = a.to_be_bytes();
    [b[2], b[3], b[4], b[5], b[6], b[7]]
}

/// An IPv4-typed data frame of `len` bytes (at least 64), FCS included:
/// `da`, `sa`, EtherType 0x0800, payload byte `k` (frame offset) =
/// `37 k ^ 0x5a`. What a MAC sends between PFC frames; the receive side
/// classifies it as another frame.
pub fn data_frame(da: [u8; 6], sa: u64, len: usize) -> Vec<u8> {
    let len = len.max(FRAME_BYTES);
    let mut f = Vec::with_capacity(len);
    f.extend_from_slice(&da);
    f.extend_from_slice(&mac_bytes(sa));
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    f.extend((14..len - 4).map(|k| (k as u8).wrapping_mul(37) ^ 0x5a));
    let fcs = crc32(&f);
    f.extend_from_slice(&fcs.to_le_bytes());
    f
}

/// One beat of the byte stream: (data, last, empty), as on `rx_*` / `tx_*`.
pub type Beat = (u64, bool, u8);

/// The beats of `bytes` (8 bytes per beat, byte 0 in bits 7:0; the last beat
/// says how many of its bytes are empty).
pub fn beats(bytes: &[u8]) -> Vec<Beat> {
    bytes
        .chunks(BEAT_BYTES)
        .enumerate()
        .map(|(k, chunk)| {
            let v = chunk
                .iter()
                .enumerate()
                .fold(0u64, |v, (j, &b)| v | (b as u64) << (8 * j));
            let last = (k + 1) * BEAT_BYTES >= bytes.len();
            let empty = if last {
                (BEAT_BYTES - chunk.len()) as u8
            } else {
                0
            };
            (v, last, empty)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rtl_twin_agrees_with_the_reference_crc() {
        let f = data_frame([2, 0, 0, 0, 0, 1], 0x0200_0000_0002, 93);
        let body = &f[..f.len() - 4];
        // Beat by beat, as prim_crc32 sees the frame.
        let reg = beats(body).iter().fold(CRC_INIT, |c, &(d, last, empty)| {
            crc32_beat(
                c,
                d,
                if last {
                    BEAT_BYTES - empty as usize
                } else {
                    BEAT_BYTES
                },
            )
        });
        assert_eq!(!reg, crc32(body));
        assert_eq!(f[f.len() - 4..], crc32(body).to_le_bytes());
        // The whole frame, FCS included, leaves the residue.
        let all = f.iter().fold(CRC_INIT, |c, &b| crc32_byte(c, b));
        assert_eq!(all, CRC_RESIDUE);
    }

    #[test]
    fn beats_say_how_many_bytes_of_the_last_are_empty() {
        let b = beats(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0], (0x0807_0605_0403_0201, false, 0));
        assert_eq!(b[1], (0x0a09, true, 6));
        assert_eq!(
            mac_bytes(0x0123_4567_89ab),
            [0x01, 0x23, 0x45, 0x67, 0x89, 0xab]
        );
    }
}
