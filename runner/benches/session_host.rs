//! The host work of a bench session on a simulated GPU of GPU-like bandwidth
//! (`runner::sim::Model::gpu_like`: 25 GB/s between host and device, 2 TB/s device copies),
//! with a spec of one input and one output of `--mb` MB each (default 1600, issue 27's spec):
//! the time a session takes to open and each variant to be prepared as the tuner's `bench`
//! backend prepares it (compile, from the warm cache; one launch; the outputs read and checked
//! against the baseline's; the inputs checked unchanged), less the simulated device's own time,
//! and the process's resident memory after 1, 5 and 10 variants (`--checkpoints`), with the
//! session's own accounting where the code has one.
//!
//! Half the variants compute the baseline's outputs exactly; the other half differ from them in
//! every element by one ulp, within the spec's tolerance (the worst case: every piece differs,
//! so every byte is hashed and compared). The simulated kernel itself runs on the host and counts
//! as device time.
//!
//! `bench/session_host.sh` runs it on this tree and on the session code before issue 27 in one
//! run; by hand: `cargo bench -p runner --bench session_host -- --mb 400 --variants 5`.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

#[path = "session_host/api.rs"]
mod api;

use runner::build::{BuildOptions, Target};
use runner::device::Api;
use runner::session::{Backend, Options, Session};
use runner::sim::{Memory, Model, SimDevice};
use runner::Spec;
use std::time::{Duration, Instant};

struct Args {
    mb: usize,
    variants: usize,
    checkpoints: Vec<usize>,
}

fn args() -> Args {
    let mut a = Args {
        mb: 1600,
        variants: 10,
        checkpoints: vec![1, 5, 10],
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || {
            it.next().unwrap_or_else(|| {
                eprintln!("{arg} needs a value");
                std::process::exit(2)
            })
        };
        match arg.as_str() {
            "--mb" => a.mb = value().parse().expect("--mb N"),
            "--variants" => a.variants = value().parse().expect("--variants N"),
            "--checkpoints" => {
                a.checkpoints = value()
                    .split(',')
                    .map(|n| n.parse().expect("--checkpoints 1,5,10"))
                    .collect()
            }
            // `cargo bench` adds it.
            "--bench" => {}
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2)
            }
        }
    }
    a
}

/// The CPU time of the whole process so far.
fn process_cpu() -> Duration {
    runner::sim::process_cpu().unwrap_or_default()
}

/// The median of some seconds (NaN for none).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The process's resident memory, bytes (`VmRSS`).
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn gb(bytes: u64) -> String {
    format!("{:.2} GB", bytes as f64 / 1e9)
}

fn main() {
    let a = args();
    let length = a.mb * 1_000_000 / 4;
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(
        dir.path().join("scale.cu"),
        "#include <hip/hip_runtime.h>\n__global__ void scale(const float* in, float* out, long n) {\n    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {\n        out[i] = 2.0f * in[i];\n    }\n}\n",
    )
    .expect("the kernel");
    let spec_path = dir.path().join("scale.toml");
    // `launches-per-sample = 1`: no warm launch to choose a batch at the session's open (on
    // this simulated device a launch computes the kernel on the host, work a GPU would do in
    // about a millisecond; the figures stay those of the host's own work).
    std::fs::write(
        &spec_path,
        format!(
            "version = 1\nsource = \"scale.cu\"\nkernel = \"scale\"\ngrid = 1024\nblock = 256\nlaunches-per-sample = 1\n[[args]]\nname = \"in\"\nbuffer = \"f32\"\nlength = {length}\ninit = \"uniform\"\nlow = -1.0\nhigh = 1.0\nseed = 1\n[[args]]\nname = \"out\"\nbuffer = \"f32\"\nlength = {length}\noutput = {{ rtol = 1e-6, atol = 0.0 }}\n[[args]]\nname = \"n\"\nscalar = \"i64\"\nvalue = {length}\n"
        ),
    )
    .expect("the spec");
    let spec = Spec::load(&spec_path).unwrap_or_else(|e| panic!("{e}"));
    let opts = Options {
        backend: Backend::Cuda,
        arch: None,
        device: 0,
        timeout: Duration::from_secs(60),
        build: BuildOptions::new(dir.path().join("cache")),
    };
    // Compiles are necessary work of their own (and the tuner's run ahead): warm the cache.
    runner::build::build(
        &spec,
        &spec.source,
        &Target::Cuda("sm_90".into()),
        &opts.build,
    )
    .unwrap_or_else(|e| panic!("{e}"));

    let model = Model::gpu_like();
    let device = SimDevice::new(
        SimDevice::info(Api::Cuda, "sm_90"),
        model,
        // On the calling thread, so that its CPU time is counted as the device's.
        Box::new(|k, _, args, mem: &mut Memory| {
            let (src, dst) = (Memory::pointer(&args[0])?, Memory::pointer(&args[1])?);
            let (x, y) = mem.read_write(src, dst)?;
            let ulp = (k.index % 2) as u32;
            for (o, i) in y.chunks_exact_mut(4).zip(x.chunks_exact(4)) {
                let v = 2.0 * f32::from_le_bytes(i.try_into().expect("4 bytes"));
                o.copy_from_slice(&f32::from_bits(v.to_bits() + ulp).to_le_bytes());
            }
            // A streaming kernel on HBM: read and write every byte at 3 TB/s.
            Ok(Duration::from_secs_f64((x.len() + y.len()) as f64 / 3e12))
        }),
    );
    let ledger = device.ledger();
    // (wall, device time, process CPU, device CPU) now.
    let now = || {
        (
            Instant::now(),
            ledger.device_time(),
            process_cpu(),
            ledger.device_cpu(),
        )
    };
    // Since `now`: wall, device time, host wall (wall less device time) and host CPU (the
    // process's CPU time less the device's), in seconds.
    let since = |(t, d, c, dc): (Instant, Duration, Duration, Duration)| {
        let wall = t.elapsed();
        let dev = ledger.device_time() - d;
        let cpu = (process_cpu() - c).saturating_sub(ledger.device_cpu() - dc);
        (
            wall.as_secs_f64(),
            dev.as_secs_f64(),
            wall.saturating_sub(dev).as_secs_f64(),
            cpu.as_secs_f64(),
        )
    };

    println!(
        "session_host ({}): 2 buffers of {} MB (f32), {} variants, simulated device: host link {} GB/s, device copies {} TB/s, {} us per call; {} threads",
        api::CODE,
        a.mb,
        a.variants,
        model.host_link / 1e9,
        model.device_copy / 1e12,
        model.latency.as_micros(),
        rayon::current_num_threads()
    );
    let session_mem = |s: &Session| {
        api::host_bytes(s)
            .map(|b| format!("  session {}", gb(b as u64)))
            .unwrap_or_default()
    };
    let start = now();
    let mut s =
        Session::with_device(Box::new(device), spec, None, &opts).unwrap_or_else(|e| panic!("{e}"));
    s.check_inputs().unwrap_or_else(|e| panic!("{e}"));
    let (wall, dev, open_host, open_cpu) = since(start);
    println!(
        "open        wall {wall:.3} s  device {dev:.3} s  host {open_host:.3} s (cpu {open_cpu:.3} s)  rss {}{}",
        gb(rss()),
        session_mem(&s)
    );
    let source = s.spec.source.clone();
    // Per kind (identical, 1 ulp off): host wall and host CPU seconds.
    let mut hosts: [Vec<f64>; 2] = Default::default();
    let mut cpus: [Vec<f64>; 2] = Default::default();
    let mut memory = Vec::new();
    for k in 1..=a.variants {
        let start = now();
        let id = s
            .prepare_unchecked(&source)
            .unwrap_or_else(|e| panic!("{e}"));
        let differ = api::differences(&s, id);
        s.check_inputs().unwrap_or_else(|e| panic!("{e}"));
        let (wall, dev, host, cpu) = since(start);
        assert_eq!(differ, 0, "within the tolerance");
        hosts[k % 2].push(host);
        cpus[k % 2].push(cpu);
        let kind = if k % 2 == 1 { "1 ulp off" } else { "identical" };
        print!(
            "variant {k:>2} ({kind})  wall {wall:.3} s  device {dev:.3} s  host {host:.3} s (cpu {cpu:.3} s)"
        );
        if a.checkpoints.contains(&k) {
            let r = rss();
            memory.push(format!("{} after {k}", gb(r)));
            print!("  rss {}{}", gb(r), session_mem(&s));
        }
        println!();
    }
    let [same, off] = &mut hosts;
    let [same_cpu, off_cpu] = &mut cpus;
    let (same, same_cpu, off, off_cpu) =
        (median(same), median(same_cpu), median(off), median(off_cpu));
    println!(
        "summary  open host {open_host:.3} s (cpu {open_cpu:.3} s); per-variant host median: identical {same:.3} s (cpu {same_cpu:.3} s), 1 ulp off {off:.3} s (cpu {off_cpu:.3} s); rss {}",
        memory.join(", ")
    );
    // For bench/session_host.sh's ratios.
    println!(
        "figures open_host={open_host:.4} open_cpu={open_cpu:.4} identical_host={same:.4} identical_cpu={same_cpu:.4} off_host={off:.4} off_cpu={off_cpu:.4}"
    );
}
