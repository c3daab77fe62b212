//! `hip-unroll inspect FILE... [--format table|json]`: one row per kernel per target of every
//! AMDGPU code object in the files (bare ELF, offload bundles, compressed bundles, host binaries).

use anyhow::bail;
use clap::ValueEnum;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Clone, Copy, ValueEnum, Default)]
pub enum Format {
    #[default]
    Table,
    Json,
}

#[derive(clap::Args)]
pub struct InspectArgs {
    /// Code objects (.hsaco, .co), offload bundles, or host executables / shared libraries.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
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
            Err(e) => errors.push(e.to_string()),
        }
    }
    if !errors.is_empty() {
        bail!("{}", errors.join("\nerror: "));
    }
    match args.format {
        Format::Json => {
            let out = codeobj::inspect::document(&objects);
            println!("{}", serde_json::to_string_pretty(&out)?);
        }
        Format::Table => print_table(&objects),
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(objects: &[codeobj::CodeObject]) {
    let header = [
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
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for co in objects {
        for k in &co.kernels {
            let m = &k.meta;
            table.push(vec![
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
            ]);
        }
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut last_source = None;
    for (i, row) in table.iter().enumerate() {
        if i > 0 {
            // Print each code object's source above its rows.
            let co_idx = objects.iter().scan(0usize, |acc, co| {
                *acc += co.kernels.len();
                Some(*acc)
            });
            let src = objects
                .iter()
                .zip(co_idx)
                .find(|(_, end)| i <= *end)
                .map(|(co, _)| co.source.as_str());
            if src != last_source {
                println!("{}", src.unwrap_or(""));
                last_source = src;
            }
        }
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, s)| format!("{:<w$}", s, w = widths[c]))
            .collect();
        println!("  {}", line.join("  ").trim_end());
    }
}
