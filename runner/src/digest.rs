//! BLAKE3 digests of large buffers, computed piece by piece on every core: the buffer is cut
//! into pieces of [`PIECE`] bytes, each piece is hashed alone (on any thread, in any order) as
//! the subtree of the BLAKE3 tree it is, and the pieces are merged up the tree. The result is
//! exactly `blake3::hash` of the whole buffer, whatever the number of threads, and a piece whose
//! bytes are known to equal another buffer's piece takes that piece's value without being read
//! again (a variant's output that matches the baseline's costs a comparison, not a hash).
//!
//! The tree is BLAKE3's own (its paper, section 2.1): a subtree of `n` bytes keeps the largest
//! power-of-two number of 1 KiB chunks that leaves at least one byte on its right. A piece is a
//! power-of-two number of chunks at an offset that is a multiple of its size, so every whole
//! piece, and the short last one, is a subtree of that tree (`blake3::hazmat`).

use blake3::hazmat::{
    left_subtree_len, merge_subtrees_non_root, merge_subtrees_root, ChainingValue, HasherExt, Mode,
};
use rayon::prelude::*;

/// The size of a piece: 16 MiB (a power of two of BLAKE3 chunks; a multiple of every element
/// size, so a piece never splits an element).
pub const PIECE: usize = 1 << 24;

/// A buffer's BLAKE3 hash and the value of each of its pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    len: u64,
    piece: usize,
    /// One value per piece: its chaining value, or, for a buffer of one piece, the root hash.
    pieces: Vec<ChainingValue>,
    root: blake3::Hash,
}

impl Digest {
    /// The digest of `bytes`, its pieces hashed in parallel.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest::with_pieces(bytes, PIECE, |_| None)
    }

    /// The digest of `bytes` in pieces of `piece` bytes (a power of two of 1 KiB chunks), where
    /// `known(i)` may give piece `i`'s value without hashing it (the value of the same bytes at
    /// the same place in another buffer of the same length and piece size: [`Digest::piece`]).
    pub fn with_pieces(
        bytes: &[u8],
        piece: usize,
        known: impl Fn(usize) -> Option<ChainingValue> + Sync,
    ) -> Digest {
        assert!(
            piece >= blake3::CHUNK_LEN && piece.is_power_of_two(),
            "a piece is a power of two of BLAKE3 chunks"
        );
        let count = bytes.len().div_ceil(piece).max(1);
        let pieces: Vec<ChainingValue> = (0..count)
            .into_par_iter()
            .map(|i| {
                known(i).unwrap_or_else(|| {
                    let at = i * piece;
                    piece_value(&bytes[at..(at + piece).min(bytes.len())], at, count == 1)
                })
            })
            .collect();
        Digest::from_pieces(bytes.len() as u64, piece, pieces)
    }

    /// A digest from its pieces' values (see [`piece_value`]).
    pub fn from_pieces(len: u64, piece: usize, pieces: Vec<ChainingValue>) -> Digest {
        let root = if pieces.len() == 1 {
            blake3::Hash::from_bytes(pieces[0])
        } else {
            merge(&pieces, piece as u64, len, true)
        };
        Digest {
            len,
            piece,
            pieces,
            root,
        }
    }

    /// `blake3::hash` of the whole buffer.
    pub fn hash(&self) -> blake3::Hash {
        self.root
    }

    /// The hash as lowercase hex (what reports show).
    pub fn hex(&self) -> String {
        self.root.to_hex().to_string()
    }

    /// The value of piece `i` (for [`Digest::with_pieces`]'s `known`).
    pub fn piece(&self, i: usize) -> Option<ChainingValue> {
        self.pieces.get(i).copied()
    }

    /// How many pieces the buffer has.
    pub fn pieces(&self) -> usize {
        self.pieces.len()
    }

    /// The piece size.
    pub fn piece_len(&self) -> usize {
        self.piece
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.pieces.capacity() * std::mem::size_of::<ChainingValue>()
    }
}

/// A fast fingerprint of `bytes` (not a cryptographic hash: for telling whether a buffer
/// changed, as the input check does): XXH3-128 of each piece, on every core, then XXH3-128 of
/// the length and the pieces' hashes in order. The same bytes give the same fingerprint
/// whatever the number of threads.
pub fn fingerprint(bytes: &[u8]) -> u128 {
    let pieces: Vec<u128> = bytes
        .par_chunks(PIECE)
        .map(twox_hash::XxHash3_128::oneshot)
        .collect();
    let mut h = twox_hash::XxHash3_128::new();
    h.write(&(bytes.len() as u64).to_le_bytes());
    for p in pieces {
        h.write(&p.to_le_bytes());
    }
    h.finish_128()
}

/// The value of one piece that starts at byte `offset`: its chaining value, or the root hash
/// when it is the whole buffer (`whole`).
pub fn piece_value(bytes: &[u8], offset: usize, whole: bool) -> ChainingValue {
    if whole {
        return *blake3::hash(bytes).as_bytes();
    }
    blake3::Hasher::new()
        .set_input_offset(offset as u64)
        .update(bytes)
        .finalize_non_root()
}

/// The value of the subtree of `len` bytes made of `pieces` (each `piece` bytes, the last one
/// possibly short): merged as BLAKE3's tree splits it.
fn merge(pieces: &[ChainingValue], piece: u64, len: u64, root: bool) -> blake3::Hash {
    let cv = |pieces: &[ChainingValue], len: u64| -> ChainingValue {
        if pieces.len() == 1 {
            pieces[0]
        } else {
            *merge(pieces, piece, len, false).as_bytes()
        }
    };
    let left = left_subtree_len(len);
    let split = (left / piece) as usize;
    let (l, r) = (cv(&pieces[..split], left), cv(&pieces[split..], len - left));
    if root {
        merge_subtrees_root(&l, &r, Mode::Hash)
    } else {
        blake3::Hash::from_bytes(merge_subtrees_non_root(&l, &r, Mode::Hash))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: usize, seed: u8) -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 11) as u8)
            .collect()
    }

    /// Equal to `blake3::hash` at every length around the piece and chunk boundaries, for
    /// several piece sizes.
    #[test]
    fn the_digest_is_blake3_of_the_whole_buffer() {
        for piece in [1024, 4096, 1 << 14] {
            for n in [
                0,
                1,
                1023,
                1024,
                1025,
                piece - 1,
                piece,
                piece + 1,
                2 * piece,
                2 * piece + 7,
                3 * piece,
                5 * piece - 1,
                8 * piece,
                8 * piece + 1,
                13 * piece + 1000,
            ] {
                let b = bytes(n, 3);
                let d = Digest::with_pieces(&b, piece, |_| None);
                assert_eq!(d.hash(), blake3::hash(&b), "{n} bytes in pieces of {piece}");
                assert_eq!(d.pieces(), n.div_ceil(piece).max(1));
            }
        }
        let b = bytes(3 * PIECE / 2, 9);
        assert_eq!(Digest::of(&b).hex(), blake3::hash(&b).to_hex().to_string());
    }

    /// One thread or four: the same pieces, the same hash.
    #[test]
    fn the_digest_does_not_depend_on_the_thread_count() {
        let b = bytes(37 * 4096 + 5, 1);
        let on = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| Digest::with_pieces(&b, 4096, |_| None))
        };
        assert_eq!(on(1), on(4));
    }

    /// A fingerprint tells buffers apart, and does not depend on the thread count.
    #[test]
    fn fingerprints() {
        let b = bytes(3 * PIECE / 2 + 3, 4);
        let on = |threads: usize, b: &[u8]| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| fingerprint(b))
        };
        assert_eq!(on(1, &b), on(4, &b));
        let mut c = b.clone();
        c[PIECE + 5] ^= 0x10;
        assert_ne!(fingerprint(&b), fingerprint(&c));
        assert_ne!(fingerprint(&b[..10]), fingerprint(&b[..11]));
        assert_ne!(fingerprint(&[]), fingerprint(&[0]));
    }

    /// Pieces known equal to another buffer's are taken from it: the same hash as hashing them,
    /// and a changed piece changes it.
    #[test]
    fn known_pieces_are_reused() {
        let a = bytes(10 * 4096 + 100, 5);
        let da = Digest::with_pieces(&a, 4096, |_| None);
        let mut b = a.clone();
        b[4 * 4096 + 17] ^= 1;
        let equal = |i: usize| {
            let r = i * 4096..((i + 1) * 4096).min(a.len());
            (a[r.clone()] == b[r]).then(|| da.piece(i).unwrap())
        };
        let db = Digest::with_pieces(&b, 4096, equal);
        assert_eq!(db.hash(), blake3::hash(&b));
        assert_ne!(db.hash(), da.hash());
        // A wrong "known" value shows: the reuse is trusted, so callers compare first.
        let lie = Digest::with_pieces(&b, 4096, |i| da.piece(i));
        assert_eq!(lie.hash(), da.hash());
    }
}
