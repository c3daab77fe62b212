//! AQL packets: the kernel dispatch packet replay submits (built from the snapshot: geometry,
//! segment sizes from the captured packet, kernarg address, completion signal) and the
//! barrier-AND packet capture uses to drain a queue. Pure; the header is stored last by the
//! caller so that the packet processor never sees half a packet.

use crate::ffi::{self, BarrierAndPacket, KernelDispatchPacket, Signal};

/// What a dispatch needs, independent of where it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Grid size in work-items per dimension.
    pub grid: [u32; 3],
    /// Work-group size per dimension.
    pub block: [u16; 3],
    /// Number of dimensions (1..=3); from the captured packet's setup when known.
    pub dimensions: u16,
}

impl Geometry {
    /// The dimension count a packet of this geometry needs: the captured one when given,
    /// otherwise the highest dimension whose grid or block exceeds 1 (as rocm-perf-lab).
    pub fn new(grid: [u32; 3], block: [u16; 3], dimensions: Option<u16>) -> Geometry {
        let dimensions = dimensions.unwrap_or(if grid[2] > 1 || block[2] > 1 {
            3
        } else if grid[1] > 1 || block[1] > 1 {
            2
        } else {
            1
        });
        Geometry {
            grid,
            block,
            dimensions,
        }
    }
}

/// The header of a kernel dispatch: type KERNEL_DISPATCH, the BARRIER bit (each replay waits
/// for everything before it), system-scope acquire and release fences (outputs are read back
/// by the host).
pub fn dispatch_header() -> u16 {
    (ffi::PACKET_TYPE_KERNEL_DISPATCH << ffi::PACKET_HEADER_TYPE)
        | (1 << ffi::PACKET_HEADER_BARRIER)
        | (ffi::FENCE_SCOPE_SYSTEM << ffi::PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)
        | (ffi::FENCE_SCOPE_SYSTEM << ffi::PACKET_HEADER_SCRELEASE_FENCE_SCOPE)
}

/// The header of a barrier-AND packet with the BARRIER bit and system-scope fences.
pub fn barrier_header() -> u16 {
    (ffi::PACKET_TYPE_BARRIER_AND << ffi::PACKET_HEADER_TYPE)
        | (1 << ffi::PACKET_HEADER_BARRIER)
        | (ffi::FENCE_SCOPE_SYSTEM << ffi::PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)
        | (ffi::FENCE_SCOPE_SYSTEM << ffi::PACKET_HEADER_SCRELEASE_FENCE_SCOPE)
}

/// The packet type of a header.
pub fn packet_type(header: u16) -> u16 {
    (header >> ffi::PACKET_HEADER_TYPE) & ((1 << ffi::PACKET_HEADER_WIDTH_TYPE) - 1)
}

/// The dimension count of a dispatch packet's `setup`.
pub fn setup_dimensions(setup: u16) -> u16 {
    (setup >> ffi::KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS)
        & ((1 << ffi::KERNEL_DISPATCH_PACKET_SETUP_WIDTH_DIMENSIONS) - 1)
}

/// A dispatch packet with every field set and `header` filled in; the caller writes the body
/// first and stores the header last (see [`split_header`]).
pub fn dispatch_packet(
    g: &Geometry,
    kernel_object: u64,
    kernarg_address: u64,
    group_segment_size: u32,
    private_segment_size: u32,
    completion_signal: Signal,
) -> KernelDispatchPacket {
    KernelDispatchPacket {
        header: dispatch_header(),
        setup: g.dimensions << ffi::KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS,
        workgroup_size_x: g.block[0],
        workgroup_size_y: g.block[1],
        workgroup_size_z: g.block[2],
        reserved0: 0,
        grid_size_x: g.grid[0],
        grid_size_y: g.grid[1],
        grid_size_z: g.grid[2],
        private_segment_size,
        group_segment_size,
        kernel_object,
        kernarg_address,
        reserved2: 0,
        completion_signal,
    }
}

/// A barrier-AND packet with no dependencies: it completes (decrementing `completion_signal`)
/// once every packet before it on the queue has completed.
pub fn barrier_packet(completion_signal: Signal) -> BarrierAndPacket {
    BarrierAndPacket {
        header: barrier_header(),
        completion_signal,
        ..Default::default()
    }
}

/// A packet's 64 bytes as the 16-bit header and the 62 bytes after it, so that the body can be
/// written into a queue slot before the header is published with a release store.
pub fn split_header<T: Copy>(packet: &T) -> (u16, [u8; 62]) {
    assert_eq!(std::mem::size_of::<T>(), 64);
    // SAFETY: T is a 64-byte repr(C) packet of plain integers.
    let bytes: [u8; 64] = unsafe { std::mem::transmute_copy(packet) };
    let header = u16::from_le_bytes([bytes[0], bytes[1]]);
    let mut body = [0u8; 62];
    body.copy_from_slice(&bytes[2..]);
    (header, body)
}

/// Why a geometry cannot be dispatched.
pub fn check_geometry(g: &Geometry) -> Result<(), String> {
    if !(1..=3).contains(&g.dimensions) {
        return Err(format!("{} grid dimensions (1 to 3)", g.dimensions));
    }
    for d in 0..3 {
        if g.grid[d] == 0 || g.block[d] == 0 {
            return Err(format!(
                "grid {:?} / block {:?} has a zero dimension",
                g.grid, g.block
            ));
        }
        if d >= g.dimensions as usize && (g.grid[d] != 1 || g.block[d] != 1) {
            return Err(format!(
                "dimension {} of grid {:?} / block {:?} is not 1 in a {}-dimensional dispatch",
                d, g.grid, g.block, g.dimensions
            ));
        }
    }
    let threads: u64 = g.block.iter().map(|&b| b as u64).product();
    if threads > 1024 {
        return Err(format!(
            "work-group of {threads} work-items (block {:?}); AMD GPUs allow 1024",
            g.block
        ));
    }
    Ok(())
}

/// Convert a span of system timestamps to nanoseconds (`HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY` is
/// in Hz; it is 1 GHz on most systems, but not all, so ticks are never taken for nanoseconds).
pub fn ticks_to_ns(start: u64, end: u64, frequency_hz: u64) -> Option<u64> {
    let ticks = end.checked_sub(start)?;
    if frequency_hz == 0 {
        return None;
    }
    u64::try_from(ticks as u128 * 1_000_000_000u128 / frequency_hz as u128).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_bits() {
        let h = dispatch_header();
        assert_eq!(packet_type(h), ffi::PACKET_TYPE_KERNEL_DISPATCH);
        assert_eq!(h & (1 << 8), 1 << 8, "barrier bit");
        assert_eq!((h >> 9) & 3, 2, "acquire fence scope system");
        assert_eq!((h >> 11) & 3, 2, "release fence scope system");
        assert_eq!(h, 0x1502);
        assert_eq!(packet_type(barrier_header()), ffi::PACKET_TYPE_BARRIER_AND);
        assert_eq!(barrier_header(), 0x1503);
    }

    #[test]
    fn geometry_dimensions() {
        assert_eq!(Geometry::new([64, 1, 1], [64, 1, 1], None).dimensions, 1);
        assert_eq!(Geometry::new([64, 2, 1], [64, 1, 1], None).dimensions, 2);
        assert_eq!(Geometry::new([64, 1, 1], [8, 1, 2], None).dimensions, 3);
        // The captured setup wins: a 3-D dispatch of extent 1 stays 3-D.
        assert_eq!(Geometry::new([64, 1, 1], [64, 1, 1], Some(3)).dimensions, 3);
        assert!(check_geometry(&Geometry::new([64, 1, 1], [64, 1, 1], None)).is_ok());
        assert!(check_geometry(&Geometry::new([0, 1, 1], [64, 1, 1], None)).is_err());
        assert!(check_geometry(&Geometry::new([64, 2, 1], [64, 1, 1], Some(1))).is_err());
        assert!(check_geometry(&Geometry::new([2048, 1, 1], [2048, 1, 1], None)).is_err());
    }

    #[test]
    fn timestamps_scale_by_frequency() {
        assert_eq!(ticks_to_ns(100, 1100, 1_000_000_000), Some(1000));
        assert_eq!(ticks_to_ns(0, 100, 100_000_000), Some(1000));
        assert_eq!(ticks_to_ns(5, 4, 1_000_000_000), None);
        assert_eq!(ticks_to_ns(0, 4, 0), None);
    }
}
