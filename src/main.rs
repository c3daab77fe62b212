//! The `hip-unroll` command line: parses arguments and dispatches to one module per command.
//!
//! Exit status (as ruff): 0 clean, 1 findings at or above the failing level (or a refused
//! transform), 2 usage, input or I/O errors. Library errors become messages only here.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod cli;
mod files;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "hip-unroll",
    version,
    about = "Find, guard, rewrite and measure loop unrolling in HIP kernels"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Lint: list every loop of the HIP kernels in files or directories, with unroll verdicts.
    Check(cli::check::CheckArgs),
    /// Print the documentation of a rule.
    Explain(cli::explain::ExplainArgs),
    /// Read AMDGPU code objects (hsaco, offload bundles, host executables): kernels, resources, occupancy.
    Inspect(cli::inspect::InspectArgs),
    /// Compile a baseline and a variant and judge the variant's register cost (vgpr-pressure guard).
    Pressure(cli::pressure::PressureArgs),
    /// Rewrite one loop so that it is unrolled (pragma or manual).
    Unroll(cli::unroll::UnrollArgs),
    /// Run a workload under rocprofv3, or read its outputs, and summarise per-kernel timings.
    Profile(cli::profile::ProfileArgs),
    /// Time one kernel in isolation on the GPU from a launch spec (or compare a variant with it).
    Bench(cli::bench::BenchArgs),
    /// Run an application and capture one kernel dispatch (code object, kernargs, memory) into a snapshot.
    Capture(cli::capture::CaptureArgs),
    /// Replay a captured dispatch alone (or a variant's code object), time it, compare outputs.
    Replay(cli::replay::ReplayArgs),
    /// The closed loop: try the safe unrollings of a kernel repository, measure them, keep what is faster.
    Tune(Box<cli::tune::TuneArgs>),
    /// Language server (LSP over stdin/stdout): check's diagnostics, quick fixes, unroll
    /// refactors and loop verdicts in an editor.
    Server(cli::server::ServerArgs),
    /// One lane of `tune --executor slurm`, in a job step: tasks as JSON lines on stdin,
    /// events on stdout.
    #[command(hide = true)]
    TuneWorker,
}

/// mimalloc for Rust allocations, and (first thing in `main`) for tree-sitter's C allocations:
/// the lint allocates many small short-lived objects on every thread.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // SAFETY: called once, before any tree-sitter object exists in this process.
    unsafe { frontend::use_mimalloc_for_tree_sitter() };
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Check(a) => cli::check::run(a),
        Command::Explain(a) => cli::explain::run(a),
        Command::Inspect(a) => cli::inspect::run(a),
        Command::Pressure(a) => cli::pressure::run(a),
        Command::Unroll(a) => cli::unroll::run(a),
        Command::Profile(a) => cli::profile::run(a),
        Command::Bench(a) => cli::bench::run(a),
        Command::Capture(a) => cli::capture::run(a),
        Command::Replay(a) => cli::replay::run(a),
        Command::Tune(a) => cli::tune::run(*a),
        Command::Server(a) => cli::server::run(a),
        Command::TuneWorker => cli::tune::worker(),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
