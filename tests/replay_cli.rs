//! `hip-unroll capture`, `replay` and `replay reserve-check` end to end, as a user runs them.
//!
//! On this machine (no AMD GPU) each command reaches the real HSA runtime (Debian's
//! libhsa-runtime64) and must fail at once with one line saying no GPU agent was found, exit 2.
//! Past that point the commands run against `testdata/replay/fake_hsa.c`, a fake runtime built
//! here (`cc -shared`) and chosen with `HIP_UNROLL_HSA_RUNTIME`: a runtime without the vmem API
//! (like ROCm 5.2), one with only CPU agents, and one that simulates a GPU on the host so that
//! exact-address reservation, memory restore, kernel lookup by name, dispatch through an AQL
//! ring, timestamps and output comparison all run for real.
//! Needs: hipcc, clang-offload-bundler-19, cc, libhsa-runtime64 (+ -dev headers).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

#[path = "../replay/tests/common/mod.rs"]
mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn hip_unroll(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut c = Command::new(BIN);
    c.args(args)
        .env_remove("HIP_UNROLL_HSA_RUNTIME")
        .env_remove("HSA_TOOLS_LIB");
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Exactly one line on stderr, exit 2.
fn one_line_error(o: &Output) -> String {
    let e = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "stderr: {e} stdout: {}",
        stdout(o)
    );
    assert_eq!(e.lines().count(), 1, "one line expected: {e}");
    assert!(e.starts_with("error: "), "{e}");
    e
}

fn snapshot(t: &tempfile::TempDir, spec: &Spec) -> String {
    let dir = t.path().join("cap");
    write_perf_lab(&dir, spec);
    dir.display().to_string()
}

/// Whether this machine shows no GPU device node; a counted skip (`testenv`) otherwise.
fn no_gpu_here() -> bool {
    !testenv::lacks(
        "no-gpu",
        !testenv::has_gpu_device(),
        "a GPU device node exists: the no-GPU assertions do not apply",
    )
}

#[test]
fn without_a_gpu_every_command_fails_at_once_with_one_line() {
    if !no_gpu_here() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let dir = snapshot(&t, &scale_spec());
    let unrolled = objects().unrolled.display().to_string();
    for args in [
        vec!["replay", &dir],
        vec!["replay", &dir, "--hsaco", &unrolled, "--compare"],
        vec!["replay", "reserve-check", &dir],
    ] {
        let start = Instant::now();
        let o = hip_unroll(&args, &[]);
        let e = one_line_error(&o);
        assert!(
            e.starts_with(
                "error: no GPU agent found: hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES"
            ),
            "{args:?}: {e}"
        );
        assert!(e.contains("/dev/kfd is missing"), "{e}");
        assert!(stdout(&o).is_empty(), "nothing on stdout: {}", stdout(&o));
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{args:?} took {:?}",
            start.elapsed()
        );
    }
    // capture checks before starting the application: it is never run.
    let started = t.path().join("started");
    let script = format!("touch {}; sleep 100", started.display());
    let out = t.path().join("snap");
    let start = Instant::now();
    let o = hip_unroll(
        &[
            "capture",
            "--kernel",
            "scale",
            "-o",
            out.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ],
        &[],
    );
    let e = one_line_error(&o);
    assert!(
        e.starts_with("error: no GPU agent found: hsa_init failed"),
        "{e}"
    );
    assert!(start.elapsed() < Duration::from_secs(20));
    assert!(
        !started.exists(),
        "the application must not run without a GPU"
    );
    assert!(!out.exists());
}

#[test]
fn a_missing_runtime_library_is_named() {
    let t = tempfile::tempdir().unwrap();
    let dir = snapshot(&t, &scale_spec());
    let env = [(
        "HIP_UNROLL_HSA_RUNTIME",
        "/nonexistent/libhsa-runtime64.so.1",
    )];
    for args in [
        vec!["replay", dir.as_str()],
        vec!["replay", "reserve-check", &dir],
        vec!["capture", "--kernel", "x", "--", "true"],
    ] {
        let e = one_line_error(&hip_unroll(&args, &env));
        assert!(
            e.starts_with("error: the HSA runtime library /nonexistent/libhsa-runtime64.so.1 cannot be loaded"),
            "{e}"
        );
    }
}

#[test]
fn a_runtime_without_vmem_or_without_a_gpu_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let dir = snapshot(&t, &scale_spec());
    let lib = fakes().no_vmem.display().to_string();
    let e = one_line_error(&hip_unroll(
        &["replay", &dir],
        &[("HIP_UNROLL_HSA_RUNTIME", &lib)],
    ));
    assert_eq!(
        e.trim_end(),
        format!("error: the HSA runtime library {lib} lacks hsa_amd_vmem_address_reserve, hsa_amd_vmem_address_free, hsa_amd_vmem_handle_create, hsa_amd_vmem_handle_release, hsa_amd_vmem_map, hsa_amd_vmem_unmap, hsa_amd_vmem_set_access (exact-address replay needs the vmem API of ROCm 6.0 or newer)")
    );
    let e = one_line_error(&hip_unroll(
        &["replay", "reserve-check", &dir],
        &[("HIP_UNROLL_HSA_RUNTIME", &lib), ("FAKE_HSA_NO_GPU", "1")],
    ));
    assert_eq!(
        e.trim_end(),
        "error: no GPU agent found: the HSA runtime started but reports only CPU agents"
    );
}

fn fake6(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, String)> {
    let meta = kernel_meta(SCALE);
    let mut v = vec![
        ("HIP_UNROLL_HSA_RUNTIME", fakes().vmem.display().to_string()),
        (
            "FAKE_HSA_KERNARG_SIZE",
            meta.kernarg_segment_size.to_string(),
        ),
    ];
    v.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
    v
}

fn run_fake(args: &[&str], env: &[(&'static str, String)]) -> Output {
    let e: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    hip_unroll(args, &e)
}

#[test]
fn replay_on_the_simulated_gpu_times_every_iteration() {
    let t = tempfile::tempdir().unwrap();
    let dir = snapshot(&t, &scale_spec());
    let o = run_fake(
        &[
            "replay",
            &dir,
            "--iterations",
            "5",
            "--warmup",
            "2",
            "--format",
            "json",
        ],
        &fake6(&[]),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    // The fake takes 1000 + (code object size % 997) ticks of a 100 MHz clock: 10 ns each.
    let ticks = 1000 + objects().base_elf.len() as u64 % 997;
    let samples: Vec<u64> = r["baseline"]["samples_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(samples, vec![ticks * 10; 5]);
    assert_eq!(r["baseline"]["summary"]["median_ns"], (ticks * 10) as f64);
    assert_eq!(r["baseline"]["summary"]["mad_ns"], 0.0);
    assert_eq!(r["agent"], "gfx90a");
    assert_eq!(
        r["kernel"],
        "scale(float*, float const*, int, float) [clone .kd]"
    );
    assert_eq!(r["recopy"], true);
    // Human output.
    let o = run_fake(
        &["replay", &dir, "--iterations", "3", "--no-recopy"],
        &fake6(&[]),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("on gfx90a (3 iterations, 1 warm-up, memory restored once)"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "baseline  median {:.3} us",
            ticks as f64 * 10.0 / 1000.0
        )),
        "{text}"
    );
}

#[test]
fn compare_finds_the_element_a_wrong_variant_computes() {
    let t = tempfile::tempdir().unwrap();
    let dir = snapshot(&t, &scale_spec());
    let env = fake6(&[]);
    // The unrolled variant computes the same: identical outputs, exit 0.
    let unrolled = objects().unrolled.display().to_string();
    let o = run_fake(
        &[
            "replay",
            &dir,
            "--hsaco",
            &unrolled,
            "--compare",
            "--iterations",
            "2",
        ],
        &env,
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("outputs identical: 1 of 2 regions written, all equal"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("variant/baseline median: "),
        "{}",
        stdout(&o)
    );
    // The buggy variant gets out[5] wrong (136 instead of 137 would be right... it adds 1):
    // byte-exact, the first differing byte is the third of element 5 (0x43080000 vs 0x43090000).
    let buggy = objects().buggy.display().to_string();
    let o = run_fake(&["replay", &dir, "--hsaco", &buggy, "--compare"], &env);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(&format!(
            "differs: region {OUT:#x} (4096 bytes): 1 byte differ, first at offset 0x16 ({:#x}): ",
            OUT + 0x16
        )),
        "{text}"
    );
    // Typed as f32: element 5 at offset 0x14, 136 vs 137.
    let fr = format!("{OUT:#x}:f32");
    let o = run_fake(
        &[
            "replay",
            &dir,
            "--hsaco",
            &buggy,
            "--compare",
            "--float-region",
            &fr,
            "--format",
            "json",
        ],
        &env,
    );
    assert_eq!(o.status.code(), Some(1));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let d = &r["comparison"]["differences"][0];
    assert_eq!(
        (
            d["first_offset"].as_u64(),
            d["unit"].as_str(),
            d["a"].as_str(),
            d["b"].as_str()
        ),
        (Some(0x14), Some("f32"), Some("1.36e2"), Some("1.37e2"))
    );
    assert_eq!(r["comparison"]["unstable"].as_array().unwrap().len(), 0);
    // Within --atol 1.5 the outputs agree.
    let o = run_fake(
        &[
            "replay",
            &dir,
            "--hsaco",
            &buggy,
            "--compare",
            "--float-region",
            &fr,
            "--atol",
            "1.5",
        ],
        &env,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    // A float region that is not a region's base is a usage error.
    let o = run_fake(
        &[
            "replay",
            &dir,
            "--hsaco",
            &buggy,
            "--compare",
            "--float-region",
            "0x1234:f32",
        ],
        &env,
    );
    let e = one_line_error(&o);
    assert!(
        e.contains("--float-region 0x1234: no region of the snapshot starts there"),
        "{e}"
    );
}

#[test]
fn a_variant_with_another_kernarg_layout_is_refused_before_any_runtime_call() {
    let t = tempfile::tempdir().unwrap();
    let mut spec = scale_spec();
    let meta = kernel_meta(SAXPY);
    spec.mangled = format!("{SAXPY}.kd");
    spec.kernarg = vec![0u8; meta.kernarg_segment_size as usize];
    let dir = snapshot(&t, &spec);
    let changed = objects().changed.display().to_string();
    // A runtime that cannot even load: the refusal comes first.
    let o = hip_unroll(
        &["replay", &dir, "--hsaco", &changed, "--compare"],
        &[("HIP_UNROLL_HSA_RUNTIME", "/nonexistent.so")],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.starts_with(&format!("refused: {changed}: refused: the variant's `{SAXPY}` differs from the captured kernel: ")), "{e}");
    assert!(e.contains("argument 2 size `8` -> `16`"), "{e}");
}

#[test]
fn reserve_check_exit_codes_exact_failed_relocated() {
    let t = tempfile::tempdir().unwrap();
    let dir = snapshot(&t, &scale_spec());
    let o = run_fake(&["replay", "reserve-check", &dir], &fake6(&[]));
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains(
            "2 regions, 8192 bytes, 2 reservations of 4096-byte granules on gfx90a: all exact"
        ),
        "{}",
        stdout(&o)
    );
    let o = run_fake(
        &["replay", "reserve-check", &dir],
        &fake6(&[("FAKE_HSA_RESERVE", "fail")]),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("FAILED: HSA_STATUS_ERROR: fake failure"),
        "{}",
        stdout(&o)
    );
    let o = run_fake(
        &["replay", "reserve-check", &dir, "--format", "json"],
        &fake6(&[("FAKE_HSA_RESERVE", "relocate")]),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["verdict"], "relocated");
    assert_eq!(r["reservations"][0]["status"], "relocated");
    assert!(
        stderr(&o).is_empty(),
        "a relocation is a result, not an error: {}",
        stderr(&o)
    );
    // A relocation stops a replay with one line.
    let e = one_line_error(&run_fake(
        &["replay", &dir],
        &fake6(&[("FAKE_HSA_RESERVE", "relocate")]),
    ));
    assert!(
        e.starts_with(&format!("error: cannot reserve {OUT:#x}..")),
        "{e}"
    );
    assert!(
        e.contains("at its captured address: relocated to 0x"),
        "{e}"
    );
}

#[test]
fn regions_that_were_not_captured_need_force() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("snap");
    write_v1(&dir, &scale_spec());
    let p = dir.join("memory_regions.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    let r = &mut v["regions"][0];
    r.as_object_mut().unwrap().remove("blake3");
    r["copy_error"] = "hsa_memory_copy failed".into();
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    std::fs::remove_file(dir.join(format!("memory/region_{OUT:x}.bin"))).unwrap();
    let d = dir.display().to_string();
    let e = one_line_error(&run_fake(&["replay", &d], &fake6(&[])));
    assert!(e.contains("1 region(s) were not captured (0x510000000000..0x510000001000 (4096 bytes)); --force replays them zero-filled"), "{e}");
    let o = run_fake(&["replay", &d, "--force", "--iterations", "1"], &fake6(&[]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn capture_runs_the_application_with_the_tool_in_hsa_tools_lib() {
    let t = tempfile::tempdir().unwrap();
    let envfile = t.path().join("env.txt");
    let script = format!(
        "printf '%s\\n%s\\n%s\\n' \"$HSA_TOOLS_LIB\" \"$HIP_UNROLL_CAPTURE_KERNEL\" \"$HIP_UNROLL_CAPTURE_DISPATCH\" > {}",
        envfile.display()
    );
    let out = t.path().join("snap");
    let o = run_fake(
        &[
            "capture",
            "--kernel",
            "scale<4>",
            "--dispatch",
            "3",
            "-o",
            out.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ],
        &fake6(&[]),
    );
    let e = one_line_error(&o);
    assert!(
        e.contains("the application never loaded the capture tool"),
        "{e}"
    );
    let env = std::fs::read_to_string(&envfile).unwrap();
    let lines: Vec<&str> = env.lines().collect();
    assert!(
        lines[0].ends_with("/libhip_unroll_capture.so") && Path::new(lines[0]).is_file(),
        "{env}"
    );
    assert_eq!(&lines[1..], &["scale<4>", "3"]);
    // An existing output directory is refused before anything runs.
    std::fs::create_dir(&out).unwrap();
    let e = one_line_error(&run_fake(
        &[
            "capture",
            "--kernel",
            "x",
            "-o",
            out.to_str().unwrap(),
            "--",
            "true",
        ],
        &fake6(&[]),
    ));
    assert!(
        e.ends_with("snap already exists; choose another -o\n"),
        "{e}"
    );
    let e = one_line_error(&hip_unroll(
        &["capture", "--kernel", "(", "--", "true"],
        &[],
    ));
    assert_eq!(e, "error: --kernel: `(` is not a regex: unclosed group\n");
}

#[test]
fn bad_snapshots_are_one_line_errors() {
    let t = tempfile::tempdir().unwrap();
    let dir = snapshot(&t, &scale_spec());
    std::fs::write(
        Path::new(&dir).join(format!("memory/region_{IN:x}.bin")),
        b"short",
    )
    .unwrap();
    for args in [
        vec!["replay", dir.as_str()],
        vec!["replay", "reserve-check", &dir],
    ] {
        let e = one_line_error(&hip_unroll(&args, &[]));
        assert!(
            e.contains("truncated or padded: 4096 bytes expected"),
            "{e}"
        );
    }
}

/// What `capture` reports from the tool's status file (written here by the application itself,
/// standing in for the tool, since no test machine can run the tool inside a real runtime).
#[test]
fn capture_reports_what_the_tool_wrote() {
    let t = tempfile::tempdir().unwrap();
    let run = |status: &str, code: i32| {
        let out = t.path().join(format!("snap-{code}-{}", status.len()));
        let script =
            format!("printf '%s' '{status}' > \"$HIP_UNROLL_CAPTURE_STATUS\"; exit {code}");
        run_fake(
            &[
                "capture",
                "--kernel",
                "scale",
                "--dispatch",
                "1",
                "-o",
                out.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                &script,
            ],
            &fake6(&[]),
        )
    };
    let o = run(
        r#"{"tool":"t","pid":1,"captured":{"dir":"/x/snap","kernel":"_Z5scalePfPKfif.kd","dispatch_index":1,"regions":300,"bytes":1228800,"failed_regions":1}}"#,
        0,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "captured _Z5scalePfPKfif.kd dispatch 1 into /x/snap: 300 regions, 1228800 bytes\n\
         warning: 1 region(s) could not be copied (recorded in memory_regions.json; replay needs --force)\n"
    );
    let o = run(
        r#"{"tool":"t","pid":1,"kernels":[{"name":"_Z5scalePfPKfif.kd","dispatches":1},{"name":"fill.kd","dispatches":4}]}"#,
        3,
    );
    let e = one_line_error(&o);
    assert_eq!(
        e,
        "error: no dispatch 1 of a kernel matching `scale` was seen; kernels dispatched: _Z5scalePfPKfif.kd (1), fill.kd (4) (the application exited with exit status: 3)\n"
    );
    let o = run(
        r#"{"tool":"t","pid":1,"captured":{"dir":"/x/snap","kernel":"k.kd","dispatch_index":1,"regions":2,"bytes":8192,"failed_regions":0},"capture_error":"the barrier packet did not complete within 60.0 s"}"#,
        0,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).starts_with("captured k.kd dispatch 1"));
    assert_eq!(
        stderr(&o),
        "error: the snapshot is not usable: the barrier packet did not complete within 60.0 s\n"
    );
    let o = run(
        r#"{"tool":"t","pid":1,"error":"unknown AMD extension table version (major 3, 600 bytes); this capture tool knows majors 1 and 2"}"#,
        0,
    );
    let e = one_line_error(&o);
    assert!(
        e.starts_with("error: capture tool: unknown AMD extension table version"),
        "{e}"
    );
}
