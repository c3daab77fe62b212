//! Where replay reserves address space: every region at its captured address, widened to the
//! allocation granule of the backing pool. Regions whose widened spans share a granule become
//! one reservation (reserving them apart would make the second one relocate), each region at
//! its offset inside. Pure.

/// Lowest address a reservation may start at (Linux's default `vm.mmap_min_addr`).
pub const MIN_ADDRESS: u64 = 0x1_0000;
/// One past the highest user address on x86-64 with 4-level paging (47 bits), which is also
/// the top of the GPU's SVM aperture.
pub const MAX_ADDRESS: u64 = 1 << 47;

/// One exact-address reservation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// Granule-aligned start.
    pub va: u64,
    /// Granule multiple.
    pub size: u64,
    /// The regions inside it, in address order.
    pub members: Vec<Member>,
}

/// A region inside a reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    /// Index into the region list given to [`plan`].
    pub region: usize,
    /// Offset of the region's base from the reservation's start.
    pub offset: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("allocation granule {0} is not a power of two")]
    Granule(u64),
    #[error("region {0:#x}..{1:#x} overlaps the region before it")]
    Overlap(u64, u64),
    #[error("region {0:#x}..{1:#x} lies outside the user address space ({MIN_ADDRESS:#x}..{MAX_ADDRESS:#x}) once aligned to the {2}-byte granule")]
    OutOfRange(u64, u64, u64),
}

/// Plan reservations for `regions` (`(base, size)`, sorted by base, non-empty) with allocation
/// granule `granule`.
pub fn plan(regions: &[(u64, u64)], granule: u64) -> Result<Vec<Reservation>, PlanError> {
    if granule == 0 || !granule.is_power_of_two() {
        return Err(PlanError::Granule(granule));
    }
    let mut out: Vec<Reservation> = Vec::new();
    let mut prev_end = 0u64;
    for (i, &(base, size)) in regions.iter().enumerate() {
        let end = base.checked_add(size).filter(|&e| e > base);
        let end = end.ok_or(PlanError::OutOfRange(base, base, granule))?;
        if i > 0 && base < prev_end {
            return Err(PlanError::Overlap(base, end));
        }
        prev_end = end;
        let lo = base & !(granule - 1);
        let hi = end
            .checked_add(granule - 1)
            .map(|e| e & !(granule - 1))
            .filter(|&h| h <= MAX_ADDRESS);
        let hi = match hi {
            Some(h) if lo >= MIN_ADDRESS => h,
            _ => return Err(PlanError::OutOfRange(base, end, granule)),
        };
        match out.last_mut() {
            // Shares a granule with the previous reservation: widen it.
            Some(r) if lo < r.va + r.size => {
                let new_end = hi.max(r.va + r.size);
                r.size = new_end - r.va;
                r.members.push(Member {
                    region: i,
                    offset: base - r.va,
                });
            }
            _ => out.push(Reservation {
                va: lo,
                size: hi - lo,
                members: vec![Member {
                    region: i,
                    offset: base - lo,
                }],
            }),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = 4096;

    #[test]
    fn aligned_regions_are_reserved_exactly() {
        let r = plan(&[(0x7f00_0000_0000, 8192), (0x7f00_0001_0000, 4096)], G).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].va, r[0].size), (0x7f00_0000_0000, 8192));
        assert_eq!((r[1].va, r[1].size), (0x7f00_0001_0000, 4096));
        assert_eq!(
            r[1].members,
            vec![Member {
                region: 1,
                offset: 0
            }]
        );
    }

    #[test]
    fn unaligned_regions_are_widened_and_offset() {
        let r = plan(&[(0x7f00_0000_0100, 100)], G).unwrap();
        assert_eq!((r[0].va, r[0].size), (0x7f00_0000_0000, 4096));
        assert_eq!(r[0].members[0].offset, 0x100);
        // Crossing a granule boundary takes two granules.
        let r = plan(&[(0x7f00_0000_0f00, 0x200)], G).unwrap();
        assert_eq!((r[0].va, r[0].size), (0x7f00_0000_0000, 8192));
    }

    #[test]
    fn regions_sharing_a_granule_share_a_reservation() {
        // Two 256-byte allocations in one page, then one in the next page, then a far one.
        let regions = [
            (0x7f00_0000_0000, 256),
            (0x7f00_0000_0100, 256),
            (0x7f00_0000_0f80, 0x100),
            (0x7f00_0100_0000, 4096),
        ];
        let r = plan(&regions, G).unwrap();
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!((r[0].va, r[0].size), (0x7f00_0000_0000, 8192));
        let offs: Vec<(usize, u64)> = r[0].members.iter().map(|m| (m.region, m.offset)).collect();
        assert_eq!(offs, vec![(0, 0), (1, 0x100), (2, 0xf80)]);
        assert_eq!(r[1].members[0].region, 3);
        // With a 2 MiB granule everything near shares one reservation.
        let r = plan(&regions[..3], 2 << 20).unwrap();
        assert_eq!((r.len(), r[0].size), (1, 2 << 20));
    }

    #[test]
    fn adjacent_granules_stay_separate() {
        let r = plan(&[(0x7f00_0000_0000, 4096), (0x7f00_0000_1000, 4096)], G).unwrap();
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn refusals() {
        assert_eq!(plan(&[(0x10000, 1)], 3000), Err(PlanError::Granule(3000)));
        assert!(matches!(
            plan(&[(0x7f00_0000_0000, 512), (0x7f00_0000_0100, 16)], G),
            Err(PlanError::Overlap(..))
        ));
        assert!(matches!(
            plan(&[(0x100, 16)], G),
            Err(PlanError::OutOfRange(..))
        ));
        assert!(matches!(
            plan(&[(MAX_ADDRESS - 16, 32)], G),
            Err(PlanError::OutOfRange(..))
        ));
        assert!(matches!(
            plan(&[(u64::MAX - 4, 16)], G),
            Err(PlanError::OutOfRange(..))
        ));
    }
}
