//! `hip-unroll inspect`, `pressure` and `check --hsaco` on real code objects built here with
//! Debian's hipcc (gfx90a) and clang-19 (gfx1100 wave64, compressed bundle). Field-by-field
//! agreement of the parser with `llvm-readelf` is tested in codeobj/tests/real_objects.rs; here
//! the command's JSON must be exactly that parser's document, and errors must exit 2.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");
const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/codeobj");

struct Built {
    dir: tempfile::TempDir,
}

impl Built {
    fn path(&self, n: &str) -> PathBuf {
        self.dir.path().join(n)
    }
}

fn run_ok(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn built() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| {
        let b = Built {
            dir: tempfile::tempdir().unwrap(),
        };
        let kernels = format!("{TESTDATA}/kernels.cu");
        let bare = format!("{TESTDATA}/bare.cu");
        let (k1, k2, bare1, bare2) = (kernels.clone(), kernels, bare.clone(), bare);
        let (o1, o2, o3, o4) = (
            b.path("k.hsaco"),
            b.path("app"),
            b.path("w64.co"),
            b.path("ccob.co"),
        );
        std::thread::scope(|s| {
            s.spawn(|| {
                run_ok(
                    Command::new("hipcc")
                        .args(["--offload-arch=gfx90a", "--genco", "-O3", &k1, "-o"])
                        .arg(&o1),
                )
            });
            s.spawn(|| {
                run_ok(
                    Command::new("hipcc")
                        .args(["--offload-arch=gfx90a", "-O3", &k2, "-o"])
                        .arg(&o2),
                )
            });
            let dev = [
                "-x",
                "hip",
                "--cuda-device-only",
                "-nogpulib",
                "-nogpuinc",
                "-O3",
            ];
            s.spawn(move || {
                run_ok(
                    Command::new("clang-19")
                        .args(dev)
                        .args([
                            "--offload-arch=gfx1100",
                            "-mwavefrontsize64",
                            "--no-gpu-bundle-output",
                            &bare1,
                            "-o",
                        ])
                        .arg(&o3),
                )
            });
            s.spawn(move || {
                run_ok(
                    Command::new("clang-19")
                        .args(dev)
                        .args(["--offload-arch=gfx942", "--offload-compress", &bare2, "-o"])
                        .arg(&o4),
                )
            });
        });
        b
    })
}

fn hip_unroll(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn inspect_json_is_the_parsers_document() {
    let b = built();
    let files: Vec<String> = ["k.hsaco", "app", "w64.co", "ccob.co"]
        .iter()
        .map(|n| s(&b.path(n)))
        .collect();
    let mut args = vec!["inspect", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let out = hip_unroll(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let objects: Vec<codeobj::CodeObject> = files
        .iter()
        .flat_map(|f| codeobj::load(Path::new(f)).unwrap())
        .collect();
    let want = serde_json::to_value(codeobj::inspect::document(&objects)).unwrap();
    assert_eq!(got, want);
    // The shape the issue specifies, on one kernel.
    let cos = got["code_objects"].as_array().unwrap();
    assert_eq!(cos.len(), 4);
    let k = cos[0]["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "_Z5scaleILi4EEvPfPKfif")
        .unwrap();
    let keys: Vec<&str> = k.as_object().unwrap().keys().map(String::as_str).collect();
    for key in [
        "name",
        "demangled",
        "symbol",
        "arch",
        "wavefront_size",
        "vgpr_count",
        "agpr_count",
        "sgpr_count",
        "vgpr_spill_count",
        "sgpr_spill_count",
        "lds_bytes",
        "scratch_bytes",
        "kernarg_size",
        "max_flat_workgroup_size",
        "occupancy",
    ] {
        assert!(keys.contains(&key), "missing {key} in {k}");
    }
    assert_eq!(keys.len(), 15);
    assert_eq!(
        k["demangled"],
        "void scale<4>(float*, float const*, int, float)"
    );
    assert_eq!(k["lds_bytes"], 1024);
    assert!(k["occupancy"]["waves_per_simd"].as_u64().unwrap() >= 1);
    assert_eq!(cos[2]["kernels"][0]["wavefront_size"], 64);
    assert_eq!(cos[2]["arch"], "gfx1100");
}

#[test]
fn inspect_table_lists_every_kernel() {
    let b = built();
    let out = hip_unroll(&["inspect", &s(&b.path("k.hsaco"))]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for name in [
        "void scale<4>(float*, float const*, int, float)",
        "plain",
        "ns::dyn_lds(int const*, int*)",
        "spiller(float const*, float*, int)",
    ] {
        assert!(text.contains(name), "{name} missing:\n{text}");
    }
    assert!(text.contains("(vgpr)"), "{text}");
}

#[test]
fn bad_inputs_exit_2_naming_the_file() {
    let b = built();
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(b.path("k.hsaco")).unwrap();
    let mut cases: Vec<(String, Vec<u8>)> = vec![
        ("empty.hsaco".into(), vec![]),
        (
            "random.hsaco".into(),
            (0..4096u32)
                .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
                .collect(),
        ),
        ("truncated.hsaco".into(), good[..good.len() / 3].to_vec()),
        ("header-only.hsaco".into(), good[..40].to_vec()),
        (
            "elf-truncated.co".into(),
            std::fs::read(b.path("w64.co")).unwrap()[..300].to_vec(),
        ),
    ];
    // A bundle whose second entry points past the end.
    let mut lying = good.clone();
    let off = 24 + 8 + 24 + 25; // magic, count, first entry header and its 25-byte host id
    lying[off..off + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    cases.push(("lying.hsaco".into(), lying));
    for (name, bytes) in &cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let out = hip_unroll(&["inspect", &s(&p)]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(&s(&p)),
            "{name}: message must name the file: {err}"
        );
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    let out = hip_unroll(&["inspect", "/no/such/file.hsaco"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "error: /no/such/file.hsaco: no such file or directory"
    );
    let out = hip_unroll(&["inspect", &s(dir.path())]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!("error: {}: is a directory, not a file", s(dir.path()))
    );
}

fn pressure(dir: &Path, base: &str, var: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "pressure".to_string(),
        s(&dir.join(base)),
        s(&dir.join(var)),
        "--cache-dir".into(),
        s(&dir.join("cache")),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    Command::new(BIN).args(&args).output().unwrap()
}

#[test]
fn pressure_verdicts_exit_codes_and_config() {
    let dir = tempfile::tempdir().unwrap();
    for n in [
        "tile_gemm.cu",
        "tile_gemm.unrolled.cu",
        "tile_gemm_lb.cu",
        "tile_gemm_lb.unrolled.cu",
        "rowsum.cu",
        "rowsum.unrolled.cu",
    ] {
        std::fs::copy(format!("{TESTDATA}/{n}"), dir.path().join(n)).unwrap();
    }
    let d = dir.path();
    // Spills: blocked, exit 1, numbers before and after in the JSON.
    let out = pressure(
        d,
        "tile_gemm.cu",
        "tile_gemm.unrolled.cu",
        &["--format", "json", "--arch", "gfx90a"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["blocked"], true);
    let k = &j["kernels"][0];
    assert_eq!(k["before"]["vgpr_spill_count"], 0);
    assert!(k["after"]["vgpr_spill_count"].as_u64().unwrap() > 0);
    assert!(k["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["reason"] == "vgpr-spill"));
    // Cheap: accepted, exit 0; the table shows the numbers.
    let out = pressure(d, "rowsum.cu", "rowsum.unrolled.cu", &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("ok: rowsum(float const*, float*, int) on gfx90a") && text.contains("vgpr"),
        "{text}"
    );
    // Occupancy loss: blocked by default, accepted with the threshold from hip-unroll.toml.
    let out = pressure(d, "tile_gemm_lb.cu", "tile_gemm_lb.unrolled.cu", &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    std::fs::write(
        d.join("hip-unroll.toml"),
        "[vgpr-pressure]\nmax-occupancy-loss = 4\n",
    )
    .unwrap();
    let out = pressure(d, "tile_gemm_lb.cu", "tile_gemm_lb.unrolled.cu", &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The command line wins over the config.
    let out = pressure(
        d,
        "tile_gemm_lb.cu",
        "tile_gemm_lb.unrolled.cu",
        &["--max-occupancy-loss", "0"],
    );
    assert_eq!(out.status.code(), Some(1));
    // A missing compiler (from the config's [compile] section): exit 2 naming the command.
    std::fs::write(
        d.join("hip-unroll.toml"),
        "[compile]\ncommand = \"no-such-hipcc {src} -o {out}\"\n",
    )
    .unwrap();
    let out = pressure(d, "rowsum.cu", "rowsum.unrolled.cu", &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no-such-hipcc"), "{err}");
    // An unknown kernel name: exit 2.
    std::fs::remove_file(d.join("hip-unroll.toml")).unwrap();
    let out = pressure(d, "rowsum.cu", "rowsum.unrolled.cu", &["--kernel", "nope"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn check_hsaco_attaches_resources_and_flags_spilling_kernels() {
    let b = built();
    let src = format!("{TESTDATA}/kernels.cu");
    let out = hip_unroll(&[
        "check",
        &src,
        "--hsaco",
        &s(&b.path("k.hsaco")),
        "--format",
        "json",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("cannot attach"), "{err}");
    let j: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    let funcs = j["files"][0]["functions"].as_array().unwrap();
    let objects = codeobj::load(&b.path("k.hsaco")).unwrap();
    for name in ["scale", "plain", "dyn_lds", "spiller"] {
        let f = funcs
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in {funcs:?}"));
        let res = f["resources"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: no resources"));
        assert!(!res.is_empty(), "{name}");
        let k = objects[0]
            .kernels
            .iter()
            .find(|k| codeobj::metadata::base_name(&k.meta.name) == name)
            .unwrap();
        assert!(
            res.iter().any(|r| r["vgpr_count"] == k.meta.vgpr_count
                && r["sgpr_count"] == k.meta.sgpr_count
                && r["arch"] == "gfx90a"),
            "{name}: {res:?}"
        );
    }
    let spills: Vec<&serde_json::Value> = j["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == "vgpr-spill")
        .collect();
    assert_eq!(spills.len(), 1, "only spiller spills: {spills:?}");
    assert!(spills[0]["message"].as_str().unwrap().contains("spiller"));
    assert_eq!(spills[0]["severity"], "warning");
    // A bad code object is an error (exit 2) naming it.
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.hsaco");
    std::fs::write(&junk, b"not a code object").unwrap();
    let out = hip_unroll(&["check", &src, "--hsaco", &s(&junk)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("junk.hsaco"));
}

/// A reader that closes the pipe early (`| head`) ends the output quietly: no panic, no
/// backtrace (Rust ignores SIGPIPE, so `println!` would panic on the failed write).
#[test]
fn output_into_a_closed_pipe_does_not_panic() {
    let b = built();
    let k = s(&b.path("k.hsaco"));
    let profile = format!(
        "{}/testdata/profiler/rocprofv3-1.0",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut inspect = vec!["inspect".to_string(), "--format".into(), "table".into()];
    inspect.extend(std::iter::repeat_n(k, 200));
    let mut inspect_json = inspect.clone();
    inspect_json[2] = "json".into();
    let profile = ["profile", "--format", "json", "--from", &profile].map(String::from);
    let explain = ["explain", "--list"].map(String::from);
    for args in [&inspect[..], &inspect_json, &profile, &explain] {
        let mut child = Command::new(BIN)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{:?}: {err}", &args[..2]);
        assert_eq!(out.status.code(), Some(0), "{:?}: {err}", &args[..2]);
    }
}

/// `pressure` names what a path is when it is not a source file.
#[test]
fn pressure_on_a_directory_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let src = format!("{TESTDATA}/rowsum.cu");
    let out = hip_unroll(&["pressure", &s(dir.path()), &src]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim(),
        format!("error: {}: is a directory, not a file", s(dir.path())),
        "{err}"
    );
    let missing = dir.path().join("missing.cu");
    let out = hip_unroll(&["pressure", &src, &s(&missing)]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!("error: {}: no such file or directory", s(&missing))
    );
}

/// A code object whose metadata claims absurd register counts (assembled with llvm-mc-19 from
/// a hand-written note) is read, not a panic: rounding 2^32-1 VGPRs up to the allocation
/// granule overflowed to 0 and divided by it.
#[test]
fn inspect_forged_register_counts() {
    let dir = tempfile::tempdir().unwrap();
    let asm = dir.path().join("forged.s");
    std::fs::write(
        &asm,
        ".amdgcn_target \"amdgcn-amd-amdhsa--gfx90a\"\n.amdgpu_metadata\n---\namdhsa.kernels:\n  - .name: forged\n    .symbol: forged.kd\n    .vgpr_count: 4294967295\n    .sgpr_count: 4294967295\n    .agpr_count: 0\n    .vgpr_spill_count: 0\n    .sgpr_spill_count: 0\n    .group_segment_fixed_size: 0\n    .private_segment_fixed_size: 0\n    .kernarg_segment_size: 0\n    .kernarg_segment_align: 8\n    .wavefront_size: 64\n    .max_flat_workgroup_size: 256\n    .args: []\namdhsa.target: amdgcn-amd-amdhsa--gfx90a\namdhsa.version:\n  - 1\n  - 2\n...\n.end_amdgpu_metadata\n",
    )
    .unwrap();
    let obj = dir.path().join("forged.o");
    run_ok(
        Command::new("llvm-mc-19")
            .args([
                "-triple",
                "amdgcn-amd-amdhsa",
                "-mcpu=gfx90a",
                "-filetype=obj",
            ])
            .arg(&asm)
            .arg("-o")
            .arg(&obj),
    );
    let out = hip_unroll(&["inspect", "--format", "json", &s(&obj)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let k = &v["code_objects"][0]["kernels"][0];
    assert_eq!(k["vgpr_count"], 4294967295u32);
    assert_eq!(k["occupancy"]["waves_per_simd"], 1, "{k}");
    assert_eq!(k["occupancy"]["limited_by"], "vgpr", "{k}");
}
