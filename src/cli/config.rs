//! `hip-unroll.toml`: found upward from a file; each command reads its own section
//! (`[check]`, `[compile]`, `[vgpr-pressure]`, `[profile]`) with its own serde struct.

use std::path::{Path, PathBuf};

pub const CONFIG_NAME: &str = "hip-unroll.toml";

/// The nearest `hip-unroll.toml` in `start` (a file or directory) or any of its ancestors.
pub fn find_config(start: &Path) -> Option<PathBuf> {
    let abs = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    let mut dir = if abs.is_dir() { Some(abs.as_path()) } else { abs.parent() };
    while let Some(d) = dir {
        let candidate = d.join(CONFIG_NAME);
        if candidate.is_file() {
            return Some(candidate);
        }
        dir = d.parent();
    }
    None
}

/// Read and parse a config file into a TOML table (errors name the file).
pub fn load_table(path: &Path) -> anyhow::Result<toml::Table> {
    use anyhow::Context;
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("invalid TOML in {}", path.display()))
}
