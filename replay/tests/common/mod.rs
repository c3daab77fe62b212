//! Shared by the replay tests: real code objects built with hipcc from `testdata/replay`, and
//! snapshot directories in rocm-perf-lab's layout written byte for byte as its capture tool
//! formats them (its `fprintf`/`ostream` output, reproduced from the documented layout).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// `testdata/replay` of the workspace (found upward from the crate running the tests).
pub fn testdata() -> PathBuf {
    let mut d = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    loop {
        if d.join("testdata/replay").is_dir() {
            return d.join("testdata/replay");
        }
        assert!(
            d.pop(),
            "no testdata/replay above {}",
            env!("CARGO_MANIFEST_DIR")
        );
    }
}

pub struct Objects {
    _dir: tempfile::TempDir,
    /// `hipcc --genco` bundles.
    pub base: PathBuf,
    pub unrolled: PathBuf,
    pub changed: PathBuf,
    pub gfx940: PathBuf,
    /// `kernels.buggy.hip`: same signatures, marked for the fake runtime to compute wrong.
    pub buggy: PathBuf,
    /// The gfx90a ELF of `fill.hip` (one extern "C" kernel).
    pub fill_elf: PathBuf,
    /// The gfx90a ELF of `base`, unbundled by clang-offload-bundler (what HIP hands the
    /// runtime, and what a capture writes as kernel.hsaco).
    pub base_elf: Vec<u8>,
}

fn run(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e} (install the tools in .ci/run)"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Build every object once per test binary, in parallel.
pub fn objects() -> &'static Objects {
    static O: OnceLock<Objects> = OnceLock::new();
    O.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        let jobs = [
            ("kernels.hip", "gfx90a", p("base.hsaco")),
            ("kernels.unrolled.hip", "gfx90a", p("unrolled.hsaco")),
            ("kernels.changed.hip", "gfx90a", p("changed.hsaco")),
            ("kernels.hip", "gfx940", p("gfx940.hsaco")),
            ("fill.hip", "gfx90a", p("fill.hsaco")),
            ("kernels.buggy.hip", "gfx90a", p("buggy.hsaco")),
        ];
        let td = testdata();
        let td = &td;
        std::thread::scope(|s| {
            for (src, arch, out) in &jobs {
                s.spawn(move || {
                    run(Command::new("hipcc")
                        .arg(format!("--offload-arch={arch}"))
                        .args(["--genco", "-O3"])
                        .arg(td.join(src))
                        .arg("-o")
                        .arg(out));
                });
            }
        });
        let unbundle = |input: &str, output: &Path| {
            run(Command::new("clang-offload-bundler-19")
                .args(["--unbundle", "--type=o"])
                .arg(format!("--input={}", p(input).display()))
                .arg(format!("--output={}", output.display()))
                .arg("--targets=hipv4-amdgcn-amd-amdhsa--gfx90a"));
        };
        let elf = p("base.gfx90a.elf");
        unbundle("base.hsaco", &elf);
        let base_elf = std::fs::read(&elf).unwrap();
        let fill_elf = p("fill.gfx90a.elf");
        unbundle("fill.hsaco", &fill_elf);
        Objects {
            base: p("base.hsaco"),
            unrolled: p("unrolled.hsaco"),
            changed: p("changed.hsaco"),
            gfx940: p("gfx940.hsaco"),
            buggy: p("buggy.hsaco"),
            base_elf,
            fill_elf,
            _dir: dir,
        }
    })
}

/// The metadata of a kernel of the base object.
pub fn kernel_meta(name: &str) -> codeobj::KernelMeta {
    let cos = codeobj::read(&objects().base_elf, "base").unwrap();
    cos[0]
        .kernels
        .iter()
        .find(|k| k.meta.name == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .meta
        .clone()
}

pub const SCALE: &str = "_Z5scalePfPKfif";
pub const DYN_LDS: &str = "_ZN2ns7dyn_ldsEPKiPi";
pub const SAXPY: &str = "_Z5saxpyPfPKf6Params";

/// One captured dispatch, as the tests describe it.
#[derive(Clone)]
pub struct Spec {
    pub mangled: String,
    pub demangled: String,
    pub agent: String,
    pub isa: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub group: u32,
    pub private: u32,
    pub kernarg: Vec<u8>,
    pub hsaco: Vec<u8>,
    pub regions: Vec<(u64, Vec<u8>)>,
}

pub const OUT: u64 = 0x5100_0000_0000;
pub const IN: u64 = 0x5100_0010_0000;
pub const N: usize = 1024;

/// A dispatch of `scale(out, in, N, 2.0)` over two 4 KiB buffers, as the runtime names it.
pub fn scale_spec() -> Spec {
    let meta = kernel_meta(SCALE);
    let mut kernarg = vec![0u8; meta.kernarg_segment_size as usize];
    kernarg[0..8].copy_from_slice(&OUT.to_le_bytes());
    kernarg[8..16].copy_from_slice(&IN.to_le_bytes());
    kernarg[16..20].copy_from_slice(&(N as i32).to_le_bytes());
    kernarg[20..24].copy_from_slice(&2.0f32.to_le_bytes());
    let input: Vec<u8> = (0..N).flat_map(|i| (i as f32).to_le_bytes()).collect();
    Spec {
        mangled: format!("{SCALE}.kd"),
        demangled: "scale(float*, float const*, int, float) [clone .kd]".into(),
        agent: "gfx90a".into(),
        isa: "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-".into(),
        grid: [N as u32, 1, 1],
        block: [256, 1, 1],
        group: 0,
        private: 0,
        kernarg,
        hsaco: objects().base_elf.clone(),
        regions: vec![(OUT, vec![0u8; N * 4]), (IN, input)],
    }
}

/// Write `spec` as rocm-perf-lab's isolate tool does: `dispatch.json` through an ostream,
/// `memory_regions.json` through fprintf (`%lu`, `%zu`, booleans as words), region files named
/// `region_%lx.bin`, no escaping of names.
pub fn write_perf_lab(dir: &Path, s: &Spec) {
    std::fs::create_dir_all(dir.join("memory")).unwrap();
    let d = format!(
        "{{\n  \"mangled_name\": \"{}\",\n  \"demangled_name\": \"{}\",\n  \"agent_name\": \"{}\",\n  \"isa_name\": \"{}\",\n  \"wavefront_size\": 64,\n  \"kernel_object\": 140737354125312,\n  \"grid\": [{}, {}, {}],\n  \"block\": [{}, {}, {}],\n  \"group_segment_size\": {},\n  \"private_segment_size\": {},\n  \"kernarg_size\": {},\n  \"dispatch_index\": 0\n}}\n",
        s.mangled,
        s.demangled,
        s.agent,
        s.isa,
        s.grid[0],
        s.grid[1],
        s.grid[2],
        s.block[0],
        s.block[1],
        s.block[2],
        s.group,
        s.private,
        s.kernarg.len()
    );
    std::fs::write(dir.join("dispatch.json"), d).unwrap();
    std::fs::write(dir.join("kernarg.bin"), &s.kernarg).unwrap();
    std::fs::write(dir.join("kernel.hsaco"), &s.hsaco).unwrap();
    let mut m = String::from("{\n  \"regions\": [\n");
    for (i, (base, bytes)) in s.regions.iter().enumerate() {
        m.push_str(&format!(
            "    {{\"base\": {base}, \"size\": {}, \"is_pool\": true, \"is_vmem\": false, \"contains_kernarg\": false, \"handle\": 0, \"access\": 0}}{}\n",
            bytes.len(),
            if i + 1 < s.regions.len() { "," } else { "" }
        ));
        std::fs::write(dir.join(format!("memory/region_{base:x}.bin")), bytes).unwrap();
    }
    m.push_str("  ]\n}\n");
    std::fs::write(dir.join("memory_regions.json"), m).unwrap();
}

/// Write `spec` as a version-1 snapshot with replay's writer.
pub fn write_v1(dir: &Path, s: &Spec) -> PathBuf {
    use replay::snapshot::write::SnapshotWriter;
    use replay::snapshot::{DispatchFile, RegionRecord};
    let mut w = SnapshotWriter::create(dir).unwrap();
    w.write_kernarg(&s.kernarg).unwrap();
    w.write_hsaco(&s.hsaco).unwrap();
    for (base, bytes) in &s.regions {
        let mut sink = w.begin_region(RegionRecord::new(*base, bytes.len() as u64, "pool"));
        for chunk in bytes.chunks(1000) {
            sink.write(chunk);
        }
        w.end_region(sink);
    }
    w.finish(DispatchFile {
        snapshot_version: None,
        mangled_name: s.mangled.clone(),
        demangled_name: s.demangled.clone(),
        agent_name: s.agent.clone(),
        isa_name: s.isa.clone(),
        wavefront_size: 64,
        kernel_object: 0x7fff_0000_1000,
        grid: s.grid,
        block: s.block,
        group_segment_size: s.group,
        private_segment_size: s.private,
        kernarg_size: s.kernarg.len() as u32,
        dispatch_index: 3,
        setup_dimensions: Some(1),
        packet_header: Some(replay::aql::dispatch_header()),
        kernarg_address: Some(0x7fff_1000_0000),
        kernarg_blake3: None,
        hsaco_blake3: None,
        hsaco_source: Some("memory".into()),
        drained: Some(true),
        drain_error: None,
        tool: Some("test".into()),
    })
    .unwrap()
}

/// The fake HSA runtime of `fake_hsa.c`, built without and with the vmem API.
pub struct Fakes {
    _dir: tempfile::TempDir,
    pub no_vmem: PathBuf,
    pub vmem: PathBuf,
}

pub fn fakes() -> &'static Fakes {
    static F: OnceLock<Fakes> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let src = testdata().join("fake_hsa.c");
        let build = |out: &Path, extra: &[&str]| {
            let o = Command::new("cc")
                .args(["-shared", "-fPIC", "-O1", "-o"])
                .arg(out)
                .args(extra)
                .arg(&src)
                .output()
                .expect("cc (install gcc)");
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        };
        let no_vmem = dir.path().join("libfake-hsa-5.so");
        let vmem = dir.path().join("libfake-hsa-6.so");
        build(&no_vmem, &[]);
        build(&vmem, &["-DFAKE_VMEM"]);
        Fakes {
            _dir: dir,
            no_vmem,
            vmem,
        }
    })
}
