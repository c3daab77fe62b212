//! `hip-unroll.toml` through the crate's public API: discovery upward, the `[compile]` and
//! `[vgpr-pressure]` sections moved here from the binary, and the typed errors.

use config::{find_config, load, Error, TuneSection, CONFIG_NAME};
use std::path::{Path, PathBuf};

fn write(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join(CONFIG_NAME);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn compile_and_pressure_sections_parse_and_reject_unknown_keys() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "[compile]\ncommand = \"cc {src} -o {out}\"\narch = \"gfx942\"\ncache-dir = \"c\"\n[vgpr-pressure]\nmax-occupancy-loss = 2\n",
    );
    let cfg = load(&p).unwrap();
    let c = cfg.compile;
    assert_eq!(c.command.as_deref(), Some("cc {src} -o {out}"));
    assert_eq!(c.arch.as_deref(), Some("gfx942"));
    assert_eq!(c.cache_dir, Some(PathBuf::from("c")));
    let v = cfg.vgpr_pressure;
    assert_eq!(v.max_occupancy_loss, Some(2));
    // Absent sections are their defaults.
    assert_eq!(cfg.tune, TuneSection::default());

    let p = write(
        dir.path(),
        "[compile]\narhc = \"gfx90a\"\n[vgpr-pressure]\nmax-occupancy-loss = -1\n",
    );
    let e = load(&p).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Toml {
                at: Some((2, 1)),
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("unknown key `arhc` in [compile]"),
        "{e}"
    );
    let p = write(dir.path(), "[vgpr-pressure]\nmax-occupancy-loss = -1\n");
    let e = load(&p).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:2:22: ", p.display())), "{e}");
}

#[test]
fn find_config_takes_the_nearest_and_stops_at_none() {
    let dir = tempfile::tempdir().unwrap();
    let outer = write(dir.path(), "");
    let inner_dir = dir.path().join("a");
    std::fs::create_dir_all(inner_dir.join("b")).unwrap();
    let inner = write(&inner_dir, "");
    // A directory as the start point, and the nearest file wins over the outer one.
    assert_eq!(
        find_config(&inner_dir.join("b")).unwrap(),
        std::fs::canonicalize(&inner).unwrap()
    );
    assert_eq!(
        find_config(dir.path()).unwrap(),
        std::fs::canonicalize(&outer).unwrap()
    );
    // A directory named like the config file is not a config file.
    let other = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(other.path().join(CONFIG_NAME)).unwrap();
    let found = find_config(other.path());
    assert!(
        found
            .as_deref()
            .is_none_or(|f| !f.starts_with(other.path())),
        "{found:?}"
    );
}

#[test]
fn unreadable_config_is_a_read_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join(CONFIG_NAME);
    let e = load(&missing).unwrap_err();
    assert!(matches!(e, Error::Read { .. }), "{e:?}");
    assert_eq!(e.to_string(), format!("cannot read {}", missing.display()));
}
