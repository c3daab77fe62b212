//! The Rust HSA definitions (`replay::ffi`, `replay::table`) against the C headers: a C++
//! program compiled against `/usr/include/hsa` (Debian's ROCm 5.2 `libhsa-runtime-dev`) prints
//! `sizeof`/`offsetof` of every struct and table entry used and the value of every constant,
//! and each is compared with Rust's `size_of`/`offset_of!`.
//!
//! Set `HIP_UNROLL_HSA_INCLUDE_CURRENT` to a directory holding ROCm 6's `hsa/` headers to also
//! check the current `AmdExtTable` order and the vmem types against them.
//! Needs: g++ (or `$CXX`) and /usr/include/hsa (apt: libhsa-runtime-dev).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use replay::ffi::*;
use replay::table::{Amd, AmdLayout, Core};
use std::collections::HashMap;
use std::mem::{offset_of, size_of};
use std::process::Command;

/// Compile and run a probe printing `key value` lines.
fn probe(include: &str, body: &str) -> HashMap<String, u64> {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("probe.cpp");
    let exe = dir.path().join("probe");
    let text = format!(
        "#define AMD_INTERNAL_BUILD\n#include <hsa/hsa.h>\n#include <hsa/hsa_ext_amd.h>\n\
         #include <hsa/hsa_api_trace.h>\n#include <cstdio>\n#include <cstddef>\n#include <cstring>\n\
         #define P(k, v) std::printf(\"%s %llu\\n\", k, (unsigned long long)(v));\n\
         int main() {{\n{body}\nreturn 0;\n}}\n"
    );
    std::fs::write(&src, text).unwrap();
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    let out = Command::new(&cxx)
        .arg(format!("-I{include}"))
        .arg(format!("-I{include}/hsa"))
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cxx}: {e} (install g++)"));
    assert!(
        out.status.success(),
        "{cxx} failed against {include}/hsa (install libhsa-runtime-dev):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

fn size(ty: &str) -> String {
    format!("P(\"sizeof {ty}\", sizeof({ty}))")
}
fn off(ty: &str, field: &str) -> String {
    format!("P(\"offsetof {ty}.{field}\", offsetof({ty}, {field}))")
}
fn val(name: &str) -> String {
    format!("P(\"{name}\", {name})")
}

struct Checks {
    c: HashMap<String, u64>,
    failures: Vec<String>,
}

impl Checks {
    fn eq(&mut self, key: &str, rust: usize) {
        match self.c.get(key) {
            Some(&v) if v == rust as u64 => {}
            Some(&v) => self
                .failures
                .push(format!("{key}: C says {v}, Rust {rust}")),
            None => self.failures.push(format!("{key}: not printed")),
        }
    }
}

const PACKET_FIELDS: [&str; 15] = [
    "header",
    "setup",
    "workgroup_size_x",
    "workgroup_size_y",
    "workgroup_size_z",
    "reserved0",
    "grid_size_x",
    "grid_size_y",
    "grid_size_z",
    "private_segment_size",
    "group_segment_size",
    "kernel_object",
    "kernarg_address",
    "reserved2",
    "completion_signal",
];

fn rust_packet_offsets() -> [usize; 15] {
    type P = KernelDispatchPacket;
    [
        offset_of!(P, header),
        offset_of!(P, setup),
        offset_of!(P, workgroup_size_x),
        offset_of!(P, workgroup_size_y),
        offset_of!(P, workgroup_size_z),
        offset_of!(P, reserved0),
        offset_of!(P, grid_size_x),
        offset_of!(P, grid_size_y),
        offset_of!(P, grid_size_z),
        offset_of!(P, private_segment_size),
        offset_of!(P, group_segment_size),
        offset_of!(P, kernel_object),
        offset_of!(P, kernarg_address),
        offset_of!(P, reserved2),
        offset_of!(P, completion_signal),
    ]
}

const CONSTANTS: &[(&str, u32)] = &[
    ("HSA_STATUS_SUCCESS", STATUS_SUCCESS),
    ("HSA_STATUS_INFO_BREAK", STATUS_INFO_BREAK),
    ("HSA_STATUS_ERROR", STATUS_ERROR),
    (
        "HSA_STATUS_ERROR_INVALID_ARGUMENT",
        STATUS_ERROR_INVALID_ARGUMENT,
    ),
    (
        "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
        STATUS_ERROR_OUT_OF_RESOURCES,
    ),
    (
        "HSA_PACKET_TYPE_VENDOR_SPECIFIC",
        PACKET_TYPE_VENDOR_SPECIFIC as u32,
    ),
    ("HSA_PACKET_TYPE_INVALID", PACKET_TYPE_INVALID as u32),
    (
        "HSA_PACKET_TYPE_KERNEL_DISPATCH",
        PACKET_TYPE_KERNEL_DISPATCH as u32,
    ),
    (
        "HSA_PACKET_TYPE_BARRIER_AND",
        PACKET_TYPE_BARRIER_AND as u32,
    ),
    ("HSA_PACKET_HEADER_TYPE", PACKET_HEADER_TYPE as u32),
    ("HSA_PACKET_HEADER_BARRIER", PACKET_HEADER_BARRIER as u32),
    (
        "HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE",
        PACKET_HEADER_SCACQUIRE_FENCE_SCOPE as u32,
    ),
    (
        "HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE",
        PACKET_HEADER_SCRELEASE_FENCE_SCOPE as u32,
    ),
    (
        "HSA_PACKET_HEADER_WIDTH_TYPE",
        PACKET_HEADER_WIDTH_TYPE as u32,
    ),
    (
        "HSA_PACKET_HEADER_WIDTH_SCACQUIRE_FENCE_SCOPE",
        PACKET_HEADER_WIDTH_FENCE_SCOPE as u32,
    ),
    ("HSA_FENCE_SCOPE_NONE", FENCE_SCOPE_NONE as u32),
    ("HSA_FENCE_SCOPE_AGENT", FENCE_SCOPE_AGENT as u32),
    ("HSA_FENCE_SCOPE_SYSTEM", FENCE_SCOPE_SYSTEM as u32),
    (
        "HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS",
        KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS as u32,
    ),
    (
        "HSA_KERNEL_DISPATCH_PACKET_SETUP_WIDTH_DIMENSIONS",
        KERNEL_DISPATCH_PACKET_SETUP_WIDTH_DIMENSIONS as u32,
    ),
    ("HSA_AGENT_INFO_NAME", AGENT_INFO_NAME),
    ("HSA_AGENT_INFO_WAVEFRONT_SIZE", AGENT_INFO_WAVEFRONT_SIZE),
    ("HSA_AGENT_INFO_DEVICE", AGENT_INFO_DEVICE),
    ("HSA_AGENT_INFO_ISA", AGENT_INFO_ISA),
    ("HSA_DEVICE_TYPE_CPU", DEVICE_TYPE_CPU),
    ("HSA_DEVICE_TYPE_GPU", DEVICE_TYPE_GPU),
    ("HSA_SYSTEM_INFO_VERSION_MAJOR", SYSTEM_INFO_VERSION_MAJOR),
    ("HSA_SYSTEM_INFO_VERSION_MINOR", SYSTEM_INFO_VERSION_MINOR),
    (
        "HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY",
        SYSTEM_INFO_TIMESTAMP_FREQUENCY,
    ),
    ("HSA_ISA_INFO_NAME", ISA_INFO_NAME),
    (
        "HSA_EXECUTABLE_SYMBOL_INFO_TYPE",
        EXECUTABLE_SYMBOL_INFO_TYPE,
    ),
    (
        "HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH",
        EXECUTABLE_SYMBOL_INFO_NAME_LENGTH,
    ),
    (
        "HSA_EXECUTABLE_SYMBOL_INFO_NAME",
        EXECUTABLE_SYMBOL_INFO_NAME,
    ),
    (
        "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE",
        EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
    ),
    (
        "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE",
        EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
    ),
    (
        "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE",
        EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
    ),
    (
        "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT",
        EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
    ),
    ("HSA_SYMBOL_KIND_KERNEL", SYMBOL_KIND_KERNEL),
    ("HSA_SIGNAL_CONDITION_EQ", SIGNAL_CONDITION_EQ),
    ("HSA_SIGNAL_CONDITION_LT", SIGNAL_CONDITION_LT),
    ("HSA_WAIT_STATE_BLOCKED", WAIT_STATE_BLOCKED),
    ("HSA_WAIT_STATE_ACTIVE", WAIT_STATE_ACTIVE),
    ("HSA_QUEUE_TYPE_MULTI", QUEUE_TYPE_MULTI),
    ("HSA_QUEUE_TYPE_SINGLE", QUEUE_TYPE_SINGLE),
    ("HSA_PROFILE_FULL", PROFILE_FULL),
    (
        "HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT",
        DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
    ),
    ("HSA_ACCESS_PERMISSION_RO", ACCESS_PERMISSION_RO),
    ("HSA_ACCESS_PERMISSION_WO", ACCESS_PERMISSION_WO),
    ("HSA_ACCESS_PERMISSION_RW", ACCESS_PERMISSION_RW),
    (
        "HSA_AMD_MEMORY_POOL_INFO_SEGMENT",
        AMD_MEMORY_POOL_INFO_SEGMENT,
    ),
    (
        "HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS",
        AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
    ),
    ("HSA_AMD_MEMORY_POOL_INFO_SIZE", AMD_MEMORY_POOL_INFO_SIZE),
    (
        "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED",
        AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
    ),
    (
        "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE",
        AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE,
    ),
    ("HSA_AMD_SEGMENT_GLOBAL", AMD_SEGMENT_GLOBAL),
    (
        "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT",
        AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT,
    ),
    (
        "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED",
        AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
    ),
    (
        "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED",
        AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
    ),
];

/// Structs, constants and the core table: the same in every release.
fn common_checks(include: &str) -> Checks {
    let mut body = vec![
        size("hsa_kernel_dispatch_packet_t"),
        size("hsa_barrier_and_packet_t"),
        size("hsa_queue_t"),
        size("hsa_amd_profiling_dispatch_time_t"),
        size("ApiTableVersion"),
        size("hsa_agent_t"),
        size("hsa_signal_t"),
        size("hsa_amd_memory_pool_t"),
        size("CoreApiTable"),
        off("hsa_barrier_and_packet_t", "dep_signal"),
        off("hsa_barrier_and_packet_t", "completion_signal"),
        off("hsa_queue_t", "base_address"),
        off("hsa_queue_t", "doorbell_signal"),
        off("hsa_queue_t", "size"),
        off("hsa_queue_t", "id"),
        off("hsa_amd_profiling_dispatch_time_t", "end"),
        off("ApiTableVersion", "minor_id"),
        off("HsaApiTable", "core_"),
        off("HsaApiTable", "amd_ext_"),
        off("HsaApiTable", "finalizer_ext_"),
        off("HsaApiTable", "image_ext_"),
    ];
    body.extend(
        PACKET_FIELDS
            .iter()
            .map(|f| off("hsa_kernel_dispatch_packet_t", f)),
    );
    body.extend(Core::ALL.iter().map(|e| off("CoreApiTable", e.field())));
    body.extend(CONSTANTS.iter().map(|(n, _)| val(n)));
    let c = probe(include, &body.join("\n"));
    let mut k = Checks {
        c,
        failures: Vec::new(),
    };
    k.eq(
        "sizeof hsa_kernel_dispatch_packet_t",
        size_of::<KernelDispatchPacket>(),
    );
    for (f, o) in PACKET_FIELDS.iter().zip(rust_packet_offsets()) {
        k.eq(&format!("offsetof hsa_kernel_dispatch_packet_t.{f}"), o);
    }
    k.eq(
        "sizeof hsa_barrier_and_packet_t",
        size_of::<BarrierAndPacket>(),
    );
    k.eq(
        "offsetof hsa_barrier_and_packet_t.dep_signal",
        offset_of!(BarrierAndPacket, dep_signal),
    );
    k.eq(
        "offsetof hsa_barrier_and_packet_t.completion_signal",
        offset_of!(BarrierAndPacket, completion_signal),
    );
    k.eq("sizeof hsa_queue_t", size_of::<Queue>());
    k.eq(
        "offsetof hsa_queue_t.base_address",
        offset_of!(Queue, base_address),
    );
    k.eq(
        "offsetof hsa_queue_t.doorbell_signal",
        offset_of!(Queue, doorbell_signal),
    );
    k.eq("offsetof hsa_queue_t.size", offset_of!(Queue, size));
    k.eq("offsetof hsa_queue_t.id", offset_of!(Queue, id));
    k.eq(
        "sizeof hsa_amd_profiling_dispatch_time_t",
        size_of::<DispatchTime>(),
    );
    k.eq(
        "offsetof hsa_amd_profiling_dispatch_time_t.end",
        offset_of!(DispatchTime, end),
    );
    k.eq("sizeof ApiTableVersion", size_of::<ApiTableVersion>());
    k.eq(
        "offsetof ApiTableVersion.minor_id",
        offset_of!(ApiTableVersion, minor_id),
    );
    k.eq("offsetof HsaApiTable.core_", offset_of!(HsaApiTable, core));
    k.eq(
        "offsetof HsaApiTable.amd_ext_",
        offset_of!(HsaApiTable, amd_ext),
    );
    k.eq(
        "offsetof HsaApiTable.finalizer_ext_",
        offset_of!(HsaApiTable, finalizer_ext),
    );
    k.eq(
        "offsetof HsaApiTable.image_ext_",
        offset_of!(HsaApiTable, image_ext),
    );
    for t in ["hsa_agent_t", "hsa_signal_t", "hsa_amd_memory_pool_t"] {
        k.eq(&format!("sizeof {t}"), size_of::<Agent>());
    }
    // The core table is 1016 bytes in every release (ROCm 5.2 and 6.x alike).
    k.eq("sizeof CoreApiTable", 1016);
    for e in Core::ALL {
        k.eq(&format!("offsetof CoreApiTable.{}", e.field()), e.offset());
    }
    for (n, v) in CONSTANTS {
        k.eq(n, *v as usize);
    }
    k
}

#[test]
fn rust_definitions_match_debians_hsa_headers() {
    let mut k = common_checks("/usr/include");
    // Debian's AmdExtTable is the legacy order (ROCm 5.2, 400 bytes): every entry capture
    // wraps that it has sits where Amd::legacy_index says.
    let body: Vec<String> = std::iter::once(size("AmdExtTable"))
        .chain(
            Amd::ALL
                .iter()
                .filter(|e| e.legacy_index().is_some())
                .map(|e| off("AmdExtTable", e.field())),
        )
        .collect();
    let c = probe("/usr/include", &body.join("\n"));
    k.c.extend(c);
    k.eq("sizeof AmdExtTable", 400);
    let v = ApiTableVersion {
        major_id: 1,
        minor_id: 400,
        step_id: 0,
        reserved: 0,
    };
    assert_eq!(replay::table::amd_layout(&v), Ok(AmdLayout::Legacy));
    for e in Amd::ALL {
        match replay::table::amd_offset(AmdLayout::Legacy, &v, e) {
            Some(o) => k.eq(&format!("offsetof AmdExtTable.{}", e.field()), o),
            None => assert!(
                e.legacy_index().is_none(),
                "{} is in the 5.2 table but the layout hides it",
                e.field()
            ),
        }
    }
    assert!(k.failures.is_empty(), "{}", k.failures.join("\n"));
    // The check can fail: a deliberately wrong expectation is reported.
    k.eq("sizeof hsa_kernel_dispatch_packet_t", 63);
    assert_eq!(k.failures.len(), 1);
}

#[test]
fn aql_dispatch_packet_bytes_match_a_packet_built_in_c() {
    // Field by field: the same dispatch built by C through hsa_kernel_dispatch_packet_t and by
    // replay::aql, compared as 64 bytes.
    let g = replay::aql::Geometry::new([4096, 3, 1], [256, 2, 1], None);
    let p = replay::aql::dispatch_packet(
        &g,
        0x7f12_3456_7000,
        0x7f00_0000_1000,
        65536 - 4096,
        48,
        Signal {
            handle: 0xdead_beef_0000,
        },
    );
    let body = "hsa_kernel_dispatch_packet_t p; std::memset(&p, 0, sizeof p);\n\
        p.header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) | \
        (1 << HSA_PACKET_HEADER_BARRIER) | \
        (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) | \
        (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);\n\
        p.setup = 2 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;\n\
        p.workgroup_size_x = 256; p.workgroup_size_y = 2; p.workgroup_size_z = 1;\n\
        p.grid_size_x = 4096; p.grid_size_y = 3; p.grid_size_z = 1;\n\
        p.private_segment_size = 48; p.group_segment_size = 65536 - 4096;\n\
        p.kernel_object = 0x7f1234567000ull; p.kernarg_address = (void*)0x7f0000001000ull;\n\
        p.completion_signal.handle = 0xdeadbeef0000ull;\n\
        const unsigned char* b = (const unsigned char*)&p;\n\
        for (int i = 0; i < 64; i++) { char k[16]; std::snprintf(k, sizeof k, \"byte%02d\", i); P(k, b[i]); }";
    let c = probe("/usr/include", body);
    // SAFETY: a 64-byte repr(C) packet of integers.
    let rust: [u8; 64] = unsafe { std::mem::transmute(p) };
    for (i, b) in rust.iter().enumerate() {
        assert_eq!(
            c[&format!("byte{i:02}")],
            *b as u64,
            "byte {i} of the dispatch packet"
        );
    }
    let (header, body) = replay::aql::split_header(&p);
    assert_eq!(header, p.header);
    assert_eq!(&body[..], &rust[2..]);
}

/// ROCm 6's headers, when a directory holding them is given: the current AmdExtTable order
/// and the vmem types.
#[test]
fn rust_definitions_match_current_rocm_headers_when_given() {
    let include = std::env::var("HIP_UNROLL_HSA_INCLUDE_CURRENT");
    if testenv::lacks(
        "rocm6-headers",
        include.is_ok(),
        "HIP_UNROLL_HSA_INCLUDE_CURRENT not set: only Debian's 5.2 headers checked",
    ) {
        return;
    }
    let include = include.expect("checked");
    let mut k = common_checks(&include);
    let mut body: Vec<String> = vec![
        size("AmdExtTable"),
        size("hsa_amd_memory_access_desc_t"),
        off("hsa_amd_memory_access_desc_t", "agent_handle"),
        size("hsa_amd_vmem_alloc_handle_t"),
        val("MEMORY_TYPE_NONE"),
        val("HSA_AMD_EXT_API_TABLE_MAJOR_VERSION"),
    ];
    body.extend(Amd::ALL.iter().map(|e| off("AmdExtTable", e.field())));
    k.c.extend(probe(&include, &body.join("\n")));
    let size = k.c["sizeof AmdExtTable"] as u32;
    let v = ApiTableVersion {
        major_id: k.c["HSA_AMD_EXT_API_TABLE_MAJOR_VERSION"] as u32,
        minor_id: size,
        step_id: 0,
        reserved: 0,
    };
    assert_eq!(replay::table::amd_layout(&v), Ok(AmdLayout::Current));
    for e in Amd::ALL {
        let o = replay::table::amd_offset(AmdLayout::Current, &v, e)
            .unwrap_or_else(|| panic!("{} absent from a {size}-byte table", e.field()));
        k.eq(&format!("offsetof AmdExtTable.{}", e.field()), o);
    }
    k.eq(
        "sizeof hsa_amd_memory_access_desc_t",
        size_of::<MemoryAccessDesc>(),
    );
    k.eq(
        "offsetof hsa_amd_memory_access_desc_t.agent_handle",
        offset_of!(MemoryAccessDesc, agent_handle),
    );
    k.eq(
        "sizeof hsa_amd_vmem_alloc_handle_t",
        size_of::<VmemHandle>(),
    );
    k.eq("MEMORY_TYPE_NONE", AMD_MEMORY_TYPE_NONE as usize);
    assert!(k.failures.is_empty(), "{}", k.failures.join("\n"));
}
