//! The compiler as a process: a time limit that kills its whole group, a private `TMPDIR`
//! removed afterwards, and one-line errors with the full output kept in a log. With fake
//! compilers (shell scripts that sleep, start children, leave temp directories) and the real
//! ones (hipcc, clang-19). Needs: hipcc, clang-19.

use codeobj::compile::{CompileError, Compiler, DEFAULT_COMMAND};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn data(n: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/codeobj")).join(n)
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

fn gone_within(pid: u32, limit: Duration) -> bool {
    let t0 = Instant::now();
    while alive(pid) {
        if t0.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// A compile past its limit is killed with everything it started, and says so in one line.
#[test]
fn a_compile_past_its_time_limit_is_killed_with_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let cc = script(
        dir.path(),
        "slow-cc.sh",
        &format!(
            "[ \"$1\" = --version ] && {{ echo slow-cc 1; exit 0; }}\nsleep 60 &\necho $! > {0}.tmp; mv {0}.tmp {0}\nwait\n",
            pidfile.display()
        ),
    );
    let c = Compiler::new(
        format!("{} {{src}} -o {{out}}", cc.display()),
        "gfx90a",
        dir.path().join("cache"),
    )
    .with_timeout(Duration::from_secs(1));
    let t0 = Instant::now();
    let e = c.compile(&data("rowsum.cu")).unwrap_err();
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    assert!(matches!(e, CompileError::Timeout { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "{msg}");
    assert!(
        msg.contains("slow-cc.sh ran longer than 1 s and was killed"),
        "{msg}"
    );
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        gone_within(pid, Duration::from_secs(5)),
        "the compiler's child {pid} outlived the time limit"
    );
    // No half-written object is left in the cache.
    let left: Vec<_> = std::fs::read_dir(dir.path().join("cache"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with(".tmp-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn time_limits_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    for t in [
        Duration::ZERO,
        Duration::from_millis(500),
        Duration::from_secs(86_401),
    ] {
        let e = Compiler::new(DEFAULT_COMMAND, "gfx90a", dir.path())
            .with_timeout(t)
            .compile(&data("rowsum.cu"))
            .unwrap_err();
        assert!(matches!(e, CompileError::BadTimeout(_)), "{t:?}: {e:?}");
        assert!(
            e.to_string()
                .starts_with("compile time limit must be 1 s to 86400 s"),
            "{e}"
        );
    }
}

/// What the compiler leaves in `$TMPDIR` (hipcc: two directories per compile) goes with the
/// private directory it was given.
fn private_tmpdir_is_removed(wrapped: &str, src: &Path, args: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("tmpdir.txt");
    let listing = dir.path().join("listing.txt");
    let cc = script(
        dir.path(),
        "cc.sh",
        &format!(
            "echo \"$TMPDIR\" > {seen}\n{wrapped} \"$@\"\nrc=$?\nls -A \"$TMPDIR\" > {listing}\nexit $rc\n",
            seen = seen.display(),
            listing = listing.display()
        ),
    );
    let c = Compiler::new(
        format!("{} {args} {{src}} -o {{out}}", cc.display()),
        "gfx90a",
        dir.path().join("cache"),
    );
    c.compile(src).unwrap_or_else(|e| panic!("{e}"));
    let tmp = PathBuf::from(std::fs::read_to_string(&seen).unwrap().trim());
    assert_ne!(
        tmp,
        std::env::temp_dir(),
        "the compiler got the shared TMPDIR"
    );
    assert!(
        tmp.starts_with(std::env::temp_dir()),
        "{} is not in the temp directory",
        tmp.display()
    );
    assert!(!tmp.exists(), "{} was not removed", tmp.display());
    std::fs::read_to_string(&listing)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_fake_compilers_temp_dirs_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let fake = script(
        dir.path(),
        "fake.sh",
        "mkdir \"$TMPDIR/a\" \"$TMPDIR/b\"\ntouch \"$TMPDIR/a/f\"\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then printf x > \"$2\"; fi; shift; done\n",
    );
    // `Output::Text`-like: the fake writes no code object, so read it back as text.
    let left = {
        let d = tempfile::tempdir().unwrap();
        let seen = d.path().join("seen");
        let cc = script(
            d.path(),
            "cc.sh",
            &format!(
                "echo \"$TMPDIR\" > {}\n{} \"$@\"\n",
                seen.display(),
                fake.display()
            ),
        );
        let c = Compiler::new(
            format!("{} {{src}} -o {{out}}", cc.display()),
            "x",
            d.path().join("cache"),
        )
        .with_output(codeobj::compile::Output::Text("txt"));
        c.compile(&data("rowsum.cu"))
            .unwrap_or_else(|e| panic!("{e}"));
        PathBuf::from(std::fs::read_to_string(&seen).unwrap().trim())
    };
    assert_ne!(left, std::env::temp_dir());
    assert!(!left.exists(), "{} was not removed", left.display());
}

#[test]
fn hipcc_temp_dirs_are_removed() {
    let left = private_tmpdir_is_removed(
        "hipcc",
        &data("rowsum.cu"),
        "--offload-arch={arch} --genco -O3",
    );
    // hipcc did use the private directory (it leaves two directories per compile).
    assert!(!left.is_empty(), "hipcc left nothing: was TMPDIR private?");
}

#[test]
fn clang19_compiles_with_a_private_tmpdir() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k.cu");
    std::fs::write(
        &src,
        "__attribute__((global)) void k(float* p) { p[__builtin_amdgcn_workitem_id_x()] = 1.0f; }\n",
    )
    .unwrap();
    private_tmpdir_is_removed(
        "clang-19",
        &src,
        "-x hip --offload-arch=gfx942 --cuda-device-only --no-gpu-bundle-output -nogpulib -nogpuinc -O3",
    );
}

/// A failed compile is one line: the compiler's first error line, and where its whole output is.
#[test]
fn a_failed_compile_is_one_line_with_the_first_error_and_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let body = "__global__ void k(float* p) {\n  p[0] = undeclared_a;\n  p[1] = undeclared_b;\n}\n";
    for (header, command) in [
        ("#include <hip/hip_runtime.h>\n", DEFAULT_COMMAND.to_string()),
        ("#define __global__ __attribute__((global))\n", "clang-19 -x hip --offload-arch={arch} --cuda-device-only --no-gpu-bundle-output -nogpulib -nogpuinc -O3 {src} -o {out}".to_string()),
    ] {
        let bad = dir.path().join("bad.cu");
        std::fs::write(&bad, format!("{header}{body}")).unwrap();
        let c = Compiler::new(&command, "gfx90a", dir.path().join("cache"));
        let e = c.compile(&bad).unwrap_err();
        let CompileError::Failed { stderr, log, .. } = &e else {
            panic!("{e:?}")
        };
        assert!(stderr.lines().count() >= 5, "{stderr}");
        let msg = e.to_string();
        assert!(!msg.contains('\n'), "{msg}");
        assert!(
            msg.contains("bad.cu:3:10: error: use of undeclared identifier 'undeclared_a'"),
            "{msg}"
        );
        assert!(!msg.contains("undeclared_b"), "{msg}");
        let log = log.as_ref().expect("a log");
        assert!(msg.ends_with(&format!("(full output: {})", log.display())), "{msg}");
        let text = std::fs::read_to_string(log).unwrap();
        assert!(text.contains("undeclared_b") && text.contains(&command[..8]), "{text}");
    }
}

/// A source, or a header it includes, larger than the source cap (a sparse file of 65 MiB) is a
/// one-line error before any compile: the hashing of the inputs reads through fsio's bounded
/// read (it read whole files of any size). A FIFO named as the source is refused, never waited on.
#[test]
fn sources_and_headers_past_the_cap_are_refused_before_the_compile() {
    let dir = tempfile::tempdir().unwrap();
    let cc = script(
        dir.path(),
        "cc.sh",
        "while [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then printf x > \"$2\"; fi; shift; done\n",
    );
    let c = Compiler::new(
        format!("{} {{src}} -o {{out}}", cc.display()),
        "x",
        dir.path().join("cache"),
    )
    .with_output(codeobj::compile::Output::Text("txt"));
    let big = dir.path().join("big.h");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(fsio::SOURCE_CAP + (1 << 20))
        .unwrap();
    let src = dir.path().join("k.cu");
    std::fs::write(&src, "#include \"big.h\"\n__global__ void k() {}\n").unwrap();
    for s in [&src, &big] {
        let e = c.compile(s).unwrap_err().to_string();
        assert!(e.contains("big.h"), "{e}");
        assert!(e.contains("larger than") || e.contains("too large"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    let fifo = dir.path().join("fifo.cu");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let e = c.compile(&fifo).unwrap_err().to_string();
    assert!(e.contains("fifo.cu"), "{e}");
}

/// Two compiles of the same text at once (two working copies of one variant, or a compile sent
/// ahead that the gates now need) run the compiler once: the second waits and takes the object.
#[test]
fn concurrent_compiles_of_one_key_run_the_compiler_once() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs.txt");
    let cc = script(
        dir.path(),
        "counting-cc.sh",
        &format!(
            "[ \"$1\" = --version ] && {{ echo counting-cc 1; exit 0; }}\necho run >> {}\nsleep 0.5\ncp \"$1\" \"$3\"\n",
            runs.display()
        ),
    );
    let c = Compiler::new(
        format!("{} {{src}} -o {{out}}", cc.display()),
        "sm_90",
        dir.path().join("cache"),
    )
    .with_output(codeobj::compile::Output::Text("ptx"));
    // The same bytes in two directories.
    let copies: Vec<PathBuf> = (0..4)
        .map(|i| {
            let d = dir.path().join(format!("copy{i}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("k.cu"), "__global__ void k() {}\n").unwrap();
            d.join("k.cu")
        })
        .collect();
    let results: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = copies
            .iter()
            .map(|p| {
                let c = c.clone();
                s.spawn(move || c.compile(p).unwrap())
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ran = std::fs::read_to_string(&runs).unwrap();
    assert_eq!(ran.lines().count(), 1, "the compiler ran {ran:?}");
    assert_eq!(results.iter().filter(|r| !r.cached).count(), 1);
    assert!(results.iter().all(|r| r.object == results[0].object));
    // Another text is another key: it compiles.
    std::fs::write(&copies[0], "__global__ void k2() {}\n").unwrap();
    assert!(!c.compile(&copies[0]).unwrap().cached);
    assert_eq!(std::fs::read_to_string(&runs).unwrap().lines().count(), 2);
}
