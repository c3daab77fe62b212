//! Neovim's built-in LSP client against `hip-unroll server`: Neovim runs headless
//! (`testdata/server/nvim_client.lua`) on a copy of `testdata/server/kernels.cu`, and the
//! diagnostics it stored (`vim.diagnostic.get`) must be `check --format json`'s, before and
//! after an edit that Neovim sends incrementally; its hover request is answered. Needs `nvim`
//! (Debian's `neovim`, which `.ci/run` installs; CI names the `neovim` capability, so a
//! missing Neovim fails there instead of skipping).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn check_rows(root: &Path) -> Vec<(u64, u64, String, u64, String)> {
    let out = Command::new(BIN)
        .args(["check", "--format", "json", "kernels.cu"])
        .current_dir(root)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut rows: Vec<_> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            // Neovim's severities: 1 error, 2 warning, 3 info, 4 hint.
            let sev = match d["severity"].as_str().unwrap() {
                "error" => 1,
                "warning" => 2,
                _ => 4,
            };
            (
                d["line"].as_u64().unwrap() - 1,
                d["column"].as_u64().unwrap() - 1,
                d["rule"].as_str().unwrap().to_string(),
                sev,
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    rows.sort();
    rows
}

fn nvim_rows(v: &serde_json::Value) -> Vec<(u64, u64, String, u64, String)> {
    let mut rows: Vec<_> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            assert_eq!(d["source"], "hip-unroll", "{d}");
            (
                d["lnum"].as_u64().unwrap(),
                d["col"].as_u64().unwrap(),
                d["code"].as_str().unwrap_or("").to_string(),
                d["severity"].as_u64().unwrap(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn neovim_receives_checks_diagnostics() {
    let present = Command::new("nvim")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if testenv::lacks(
        "neovim",
        present,
        "nvim is not installed (apt-get install neovim)",
    ) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/server");
    for rel in ["kernels.cu", "include/helpers.cuh", "hip-unroll.toml"] {
        let to = root.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(src.join(rel), to).unwrap();
    }
    let before = check_rows(&root);
    let out = root.join("nvim.json");
    let status = Command::new("nvim")
        .args(["--headless", "--clean", "-n", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", src.join("nvim_client.lua").display()))
        .env("HIP_UNROLL_BIN", BIN)
        .env("FILE", root.join("kernels.cu"))
        .env("OUT", &out)
        .env("XDG_STATE_HOME", root.join("state"))
        .env("XDG_DATA_HOME", root.join("data"))
        .env("XDG_CONFIG_HOME", root.join("config"))
        .current_dir(&root)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&out).unwrap_or_else(|e| {
        panic!(
            "nvim wrote no result ({e}): {status:?}\n{}",
            String::from_utf8_lossy(&status.stderr)
        )
    });
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["first_ok"], true, "{v}");
    assert_eq!(nvim_rows(&v["first"]), before, "{v}");
    assert!(before.iter().any(|r| r.2 == "wave-size"));

    // The shuffle's line deleted in Neovim: check of the same text.
    let kernels = root.join("kernels.cu");
    let edited: String = std::fs::read_to_string(&kernels)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("__shfl_down"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&kernels, edited).unwrap();
    let after = check_rows(&root);
    assert_eq!(v["second_ok"], true, "{v}");
    assert_eq!(nvim_rows(&v["second"]), after, "{v}");
    assert_eq!(after.len() + 1, before.len());
    let hover = v["hover"].as_str().unwrap_or_default();
    assert!(
        hover.contains("scale:0") && hover.contains("barrier"),
        "{v}"
    );
}
