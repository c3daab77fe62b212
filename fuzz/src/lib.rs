//! The bodies of the fuzz targets, shared by the cargo-fuzz binaries (nightly, libFuzzer) and
//! usable from any stable driver: each must return without panicking on any input.

pub mod snapshot;

/// Offload bundles, plain and `CCOB`-compressed, and the whole reader on top.
pub fn bundle(data: &[u8]) {
    if let Ok(b) = codeobj::bundle::parse(data) {
        for e in &b.entries {
            let _ = e.target().processor().len();
            assert!(e.data.len() as u64 <= data.len() as u64);
        }
        assert!(b.len <= data.len() as u64);
    }
    if let Ok(h) = codeobj::compressed::parse_header(data) {
        let _ = codeobj::compressed::blob_len(&h, data);
    }
    if let Ok(out) = codeobj::compressed::decompress(data) {
        let _ = codeobj::read(&out, "fuzz");
    }
    let _ = codeobj::read(data, "fuzz");
}

/// The ELF reader (notes, symbols, kernel descriptors) and the msgpack metadata decoder.
pub fn elf_note(data: &[u8]) {
    let _ = codeobj::metadata::decode(data);
    let _ = codeobj::elf::parse(data);
    let _ = codeobj::elf::find_metadata(data);
    let _ = codeobj::elf::section_data(data, b".hip_fatbin");
    if let Ok(d) = codeobj::elf::KernelDescriptor::parse(data) {
        let _ = (
            d.wgp_mode(),
            d.wave32(),
            d.granulated_vgprs(),
            d.granulated_sgprs(),
        );
    }
}

/// `.hip_fatbin` contents: the scan for concatenated bundles and the reader on each blob.
pub fn fatbin(data: &[u8]) {
    if let Ok(blobs) = codeobj::fatbin::scan(data) {
        for b in blobs {
            assert!(b.offset as usize + b.data.len() <= data.len());
            let _ = codeobj::read(b.data, "fuzz");
        }
    }
}
