//! Ethernet frames as a pcap file (libpcap format, nanosecond timestamps,
//! link type 1), written as they come: constant memory for a run of any
//! length.

use std::io::{self, Write};

/// Writes frames to `W` in pcap format.
pub struct PcapWriter<W: Write> {
    w: W,
    frames: u64,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header (nanosecond magic, version 2.4, snap length
    /// 65535, Ethernet).
    pub fn new(mut w: W) -> io::Result<Self> {
        let mut h = Vec::with_capacity(24);
        h.extend(0xa1b2_3c4du32.to_le_bytes());
        h.extend(2u16.to_le_bytes());
        h.extend(4u16.to_le_bytes());
        h.extend(0i32.to_le_bytes());
        h.extend(0u32.to_le_bytes());
        h.extend(65535u32.to_le_bytes());
        h.extend(1u32.to_le_bytes());
        w.write_all(&h)?;
        Ok(PcapWriter { w, frames: 0 })
    }

    /// Appends one frame, stamped `ns` nanoseconds from the start.
    pub fn frame(&mut self, ns: u64, bytes: &[u8]) -> io::Result<()> {
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
        h[12..16].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
        self.w.write_all(&h)?;
        self.w.write_all(bytes)?;
        self.frames += 1;
        Ok(())
    }

    /// Frames written.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}

/// The pcap file of `frames` (timestamp in ns, bytes).
pub fn to_vec(frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let mut p = PcapWriter::new(Vec::new()).expect("writing to memory");
    for (ns, f) in frames {
        p.frame(*ns, f).expect("writing to memory");
    }
    p.finish().expect("writing to memory")
}
