//! `hip-unroll inspect FILE... [--format table|json]`: one row per kernel per target of every
//! AMDGPU code object in the files (bare ELF, offload bundles, compressed bundles, host binaries).

use anyhow::bail;
use clap::ValueEnum;
use std::path::PathBuf;
use std::process::ExitCode;

/// `--format` of `inspect` and `pressure`.
#[derive(Debug, Clone, Copy, ValueEnum, Default)]
pub enum Format {
    /// Aligned columns, for people.
    #[default]
    Table,
    /// One JSON document, for tools.
    Json,
}

#[derive(clap::Args)]
pub struct InspectArgs {
    /// Code objects (.hsaco, .co), offload bundles, or host executables / shared libraries.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(args: InspectArgs) -> anyhow::Result<ExitCode> {
    let mut objects = Vec::new();
    let mut errors = Vec::new();
    for f in &args.files {
        match codeobj::load(f) {
            Ok(cos) if cos.is_empty() => {
                errors.push(format!("{}: no AMDGPU code object found", f.display()))
            }
            Ok(cos) => objects.extend(cos),
            Err(e) => errors.push(crate::files::load_error(&e)),
        }
    }
    if !errors.is_empty() {
        bail!("{}", errors.join("\nerror: "));
    }
    let text = match args.format {
        Format::Json => serde_json::to_string_pretty(&codeobj::inspect::document(&objects))? + "\n",
        Format::Table => table(&objects),
    };
    crate::files::stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

const HEADER: [&str; 10] = [
    "arch",
    "kernel",
    "wave",
    "vgpr",
    "agpr",
    "sgpr",
    "spill v/s",
    "lds",
    "scratch",
    "waves/SIMD",
];

/// One row per kernel under a line naming its code object, columns aligned across all.
fn table(objects: &[codeobj::CodeObject]) -> String {
    let rows: Vec<Vec<Vec<String>>> = objects
        .iter()
        .map(|co| co.kernels.iter().map(|k| row(co, k)).collect())
        .collect();
    let widths: Vec<usize> = (0..HEADER.len())
        .map(|c| {
            rows.iter()
                .flatten()
                .map(|r| r[c].chars().count())
                .chain([HEADER[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(s, w)| format!("{s:<w$}"))
            .collect();
        format!("  {}\n", padded.join("  ").trim_end())
    };
    let mut out = line(&HEADER.map(String::from));
    for (co, rows) in objects.iter().zip(&rows) {
        out.push_str(&co.source);
        out.push('\n');
        for r in rows {
            out.push_str(&line(r));
        }
    }
    out
}

fn row(co: &codeobj::CodeObject, k: &codeobj::Kernel) -> Vec<String> {
    let m = &k.meta;
    vec![
        co.target_id.clone(),
        k.demangled.clone().unwrap_or_else(|| m.name.clone()),
        m.wavefront_size.to_string(),
        m.vgpr_count.to_string(),
        m.agpr_count.unwrap_or(0).to_string(),
        m.sgpr_count.to_string(),
        format!("{}/{}", m.vgpr_spill_count, m.sgpr_spill_count),
        m.group_segment_fixed_size.to_string(),
        m.private_segment_fixed_size.to_string(),
        match k.occupancy {
            Some(o) => format!("{} ({})", o.waves_per_simd, o.limited_by.as_str()),
            None => "unknown arch".to_string(),
        },
    ]
}
