//! `spec new` over every kernel of a source tree (real repositories): how many kernels get a
//! draft, how many are refused and why (grouped by the error's kind and, for refused parameters,
//! the reason), how many arguments are outputs, have a min-length, are placeholders or guesses,
//! and whether anything panicked. Used by bench/spec_new_corpus.sh; prints a summary and, with
//! `--list`, one line per kernel.
//!
//! Usage: cargo run --release -p specgen --example corpus_drafts -- DIR [--list]
#![allow(clippy::print_stdout)]

use specgen::{new_spec, DraftKind, NewError, NewRequest};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

const EXTS: &[&str] = &["cu", "cuh", "hip", "cpp", "cc", "h", "hpp"];

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        let hidden = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        if hidden {
            continue;
        }
        if p.is_dir() {
            walk(&p, out);
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| EXTS.contains(&e.to_ascii_lowercase().as_str()))
        {
            out.push(p);
        }
    }
}

/// The error's kind and, for a refused parameter, its reason's first words (the reason without
/// names, to group).
fn error_kind(e: &NewError) -> String {
    match e {
        NewError::Read(_) => "read".into(),
        NewError::NoKernel { .. } => "no kernel".into(),
        NewError::Ambiguous { .. } => "ambiguous (overloads)".into(),
        NewError::NeedsInstantiation { .. } => "template: needs an instantiation".into(),
        NewError::BadInstantiation { .. } => "template: bad instantiation".into(),
        NewError::Unreadable { .. } => "unreadable signature".into(),
        NewError::Unsupported { reason, .. } => {
            // The reason with its names (between backquotes) and numbers blanked, to group.
            let mut short = String::new();
            for (k, part) in reason.split('`').enumerate() {
                short.push_str(if k % 2 == 1 { "_" } else { part });
            }
            let short: String = short
                .split(['(', ':'])
                .next()
                .unwrap_or_default()
                .chars()
                .map(|c| if c.is_ascii_digit() { 'N' } else { c })
                .collect();
            format!("refused: {}", short.trim())
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().expect("usage: corpus_drafts DIR [--list]"));
    let list = args.next().as_deref() == Some("--list");
    let mut files = Vec::new();
    walk(&dir, &mut files);

    let mut kernels = 0usize;
    let mut drafted = 0usize;
    let mut panics = Vec::new();
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    let (mut n_args, mut buffers, mut outputs, mut bounded, mut fills, mut guesses) =
        (0usize, 0usize, 0usize, 0usize, 0usize, 0usize);
    let mut no_output = 0usize;
    let mut via_instance = 0usize;
    let started = Instant::now();
    for path in &files {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let parsed = frontend::parse(&bytes);
        let mut names: Vec<String> = Vec::new();
        for f in &parsed.functions {
            if f.kind == frontend::FunctionKind::Kernel && !names.contains(&f.qualified_name) {
                names.push(f.qualified_name.clone());
            }
        }
        for name in names {
            kernels += 1;
            let req = NewRequest {
                source: path.clone(),
                source_in_spec: path.display().to_string(),
                kernel: name.clone(),
                include_dirs: Vec::new(),
            };
            let mut r = std::panic::catch_unwind(|| new_spec(&req));
            // A template named bare: the first instantiation the file spells or launches, as
            // the CLI's message suggests.
            if let Ok(Err(NewError::NeedsInstantiation { instances, .. })) = &r {
                if let Some(first) = instances.first() {
                    let named = NewRequest {
                        kernel: first.clone(),
                        ..req.clone()
                    };
                    let again = std::panic::catch_unwind(|| new_spec(&named));
                    let listed = !matches!(again, Ok(Err(_)));
                    via_instance += usize::from(listed);
                    if listed {
                        r = again;
                    }
                }
            }
            let line = match r {
                Err(_) => {
                    panics.push(format!("{}: {name}", path.display()));
                    "PANIC".to_string()
                }
                Ok(Err(e)) => {
                    *errors.entry(error_kind(&e)).or_default() += 1;
                    format!("refused: {e}")
                }
                Ok(Ok(d)) => {
                    drafted += 1;
                    n_args += d.args.len();
                    fills += d.fills.len();
                    guesses += d.guesses;
                    let mut outs = 0;
                    for a in &d.args {
                        if let DraftKind::Buffer { output, bound, .. } = &a.kind {
                            buffers += 1;
                            outs += usize::from(output.is_some());
                            bounded += usize::from(bound.is_ok());
                        }
                    }
                    outputs += outs;
                    no_output += usize::from(outs == 0);
                    format!(
                        "drafted: {} args, {} outputs, {} fills, {} guesses",
                        d.args.len(),
                        outs,
                        d.fills.len(),
                        d.guesses
                    )
                }
            };
            if list {
                println!("{}\t{name}\t{line}", path.display());
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "files: {}; kernels: {kernels}; drafted: {drafted}; refused: {}; panics: {}",
        files.len(),
        errors.values().sum::<usize>(),
        panics.len()
    );
    println!("drafted by the first instantiation a template's refusal lists: {via_instance}");
    println!(
        "drafted specs: {n_args} args, {buffers} buffers, {outputs} outputs, {bounded} buffers with a min-length, \
         {no_output} specs without an output, {fills} placeholders, {guesses} guesses"
    );
    for (k, n) in &errors {
        println!("  {n:5}  {k}");
    }
    for p in &panics {
        println!("  PANIC  {p}");
    }
    println!("seconds: {secs:.2}");
}
