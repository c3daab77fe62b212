//! Every input kind on realistic fixtures (testdata/profiler), each statistic checked against
//! values computed by hand in the comments.

mod common;
use common::*;
use profiler::Source;

const VA: &str = "void vecAdd<float>(float*, float const*, float const*, int)";
const TR: &str = "transpose(float*, float*, int, int)";
const FILL: &str = "__amd_rocclr_fillBufferAligned";

/// rocprofv3 1.0 directory (kernel trace with Stream_Id, agent info, counter collection).
#[test]
fn rocprofv3_directory_with_streams() {
    let p = profiler::load(&[testdata("rocprofv3-1.0")]).unwrap();
    assert_eq!(p.source, Source::Rocprofv3Csv);
    assert_eq!(p.format, "rocprofv3-kernel-trace-stream");
    assert_eq!(p.dispatches.len(), 7);
    assert_eq!(p.arch(), Some("gfx90a"));
    assert_eq!(p.product(), Some("AMD Instinct MI210"));
    assert_eq!(
        p.dispatches
            .iter()
            .filter_map(|d| d.stream)
            .collect::<Vec<_>>(),
        vec![1, 1, 1, 2, 1, 2, 1]
    );
    let s = profiler::stats::summarize(&p);
    // Grand total 4800 + 8000 + 200 = 13000 ns.
    // transpose: 3000, 5000 -> total 8000, mean 4000, median 4000,
    //   sample sd = sqrt((1000^2 + 1000^2) / 1) = 1414.2136, 8000/13000 = 61.5385 %.
    check(
        find(&s, TR),
        2,
        8000.0,
        4000.0,
        Some(4000.0),
        3000.0,
        5000.0,
        1414.2136,
        61.5385,
    );
    // vecAdd: 1000, 1200, 1100, 1500 -> total 4800, mean 1200, median (1100+1200)/2 = 1150,
    //   deviations -200, 0, -100, 300 -> sum sq 140000 / 3 = 46666.67 -> sd 216.0247; 36.9231 %.
    check(
        find(&s, VA),
        4,
        4800.0,
        1200.0,
        Some(1150.0),
        1000.0,
        1500.0,
        216.0247,
        36.9231,
    );
    // The runtime fill kernel: kept, 200/13000 = 1.5385 %, marked and not ranked.
    let fill = find(&s, FILL);
    check(
        fill,
        1,
        200.0,
        200.0,
        Some(200.0),
        200.0,
        200.0,
        0.0,
        1.5385,
    );
    assert!(fill.runtime);
    assert_eq!(fill.rank, None);
    assert_eq!(
        s.iter().map(|k| k.rank).collect::<Vec<_>>(),
        vec![Some(1), Some(2), None]
    );
    // Counters joined by Dispatch_Id onto dispatches 1 and 4 only.
    let with: Vec<u64> = p
        .dispatches
        .iter()
        .filter(|d| d.counters.is_some())
        .map(|d| d.dispatch_id)
        .collect();
    assert_eq!(with, vec![1, 4]);
    assert_eq!(
        p.dispatches[0].counters.as_ref().unwrap()["TCC_EA_RDREQ"],
        4096.0
    );
}

/// The stats CSV alone (rocprofv3 `--stats`), agreeing with the trace-derived figures:
/// rocprofv3's StdDev is the sample standard deviation, as ours.
#[test]
fn rocprofv3_stats_only() {
    let p = profiler::load(&[testdata("rocprofv3-stats/run_kernel_stats.csv")]).unwrap();
    assert_eq!(p.source, Source::Rocprofv3Csv);
    assert_eq!(p.format, "rocprofv3-kernel-stats");
    let s = profiler::stats::summarize(&p);
    check(
        find(&s, TR),
        2,
        8000.0,
        4000.0,
        None,
        3000.0,
        5000.0,
        1414.2136,
        61.5385,
    );
    check(
        find(&s, VA),
        4,
        4800.0,
        1200.0,
        None,
        1000.0,
        1500.0,
        216.0247,
        36.9231,
    );
    let fill = find(&s, FILL);
    assert!(fill.runtime && fill.rank.is_none());
    // Same numbers as computed from the trace of the same run.
    let t = profiler::stats::summarize(&profiler::load(&[testdata("rocprofv3-1.0")]).unwrap());
    for k in &s {
        let o = find(&t, &k.name);
        assert_close(k.stddev_ns, o.stddev_ns, 1e-3);
        assert_close(k.total_ns, o.total_ns, 1e-9);
    }
}

/// rocprofv3 0.x kernel trace (ROCm 6.2/6.3 columns: no Stream_Id, Private/Group_Segment_Size).
#[test]
fn rocprofv3_old_generation_trace() {
    let p = profiler::load(&[testdata("rocprofv3-0.x/1234_kernel_trace.csv")]).unwrap();
    assert_eq!(p.format, "rocprofv3-kernel-trace");
    assert!(p.dispatches.iter().all(|d| d.stream.is_none()));
    let s = profiler::stats::summarize(&p);
    let ak = "void addition_kernel<float>(float*, float const*, float const*, int, int)";
    // addition_kernel: 50, 70, 90 -> total 210, mean 70, median 70, sd sqrt((400+0+400)/2) = 20;
    // 210 / 310 = 67.7419 %.
    check(
        find(&s, ak),
        3,
        210.0,
        70.0,
        Some(70.0),
        50.0,
        90.0,
        20.0,
        67.7419,
    );
    // subtract_kernel: one call of 100 ns: sd 0, 100/310 = 32.2581 %.
    check(
        find(
            &s,
            "subtract_kernel(float*, float const*, float const*, int, int)",
        ),
        1,
        100.0,
        100.0,
        Some(100.0),
        100.0,
        100.0,
        0.0,
        32.2581,
    );
}

/// Legacy rocprof v1 results.csv: `[clone .kd]` and a mangled `.kd` symbol, counters as columns.
#[test]
fn rocprof_v1_results() {
    let p = profiler::load(&[testdata("rocprof-v1/results.csv")]).unwrap();
    assert_eq!(p.source, Source::RocprofV1);
    assert_eq!(p.format, "rocprof-v1-results");
    let s = profiler::stats::summarize(&p);
    // matrixTranspose: BeginNs..EndNs = 2000, 2600, 2300 -> total 6900, mean 2300, median 2300,
    //   sd sqrt((300^2 + 300^2 + 0) / 2) = 300; 6900 / 7800 = 88.4615 %.
    check(
        find(&s, "matrixTranspose(float*, float*, int)"),
        3,
        6900.0,
        2300.0,
        Some(2300.0),
        2000.0,
        2600.0,
        300.0,
        88.4615,
    );
    // _Z6vecAddPfS_S_i.kd demangled: 900 ns, 900/7800 = 11.5385 %.
    check(
        find(&s, "vecAdd(float*, float*, float*, int)"),
        1,
        900.0,
        900.0,
        Some(900.0),
        900.0,
        900.0,
        0.0,
        11.5385,
    );
    let c = p.dispatches[0].counters.as_ref().unwrap();
    assert_eq!(c.get("SQ_WAVES"), Some(&16384.0));
    assert_eq!(c.get("GRBM_GUI_ACTIVE"), Some(&30210.0));
    assert_eq!(c.len(), 2, "only counter columns become counters: {c:?}");
}

/// rocprofv2 kernel CSV (`results_<pid>.csv`), ` (.kd)` suffix.
#[test]
fn rocprof_v2_results() {
    let p = profiler::load(&[testdata("rocprof-v2")]).unwrap();
    assert_eq!(p.source, Source::RocprofV1);
    assert_eq!(p.format, "rocprofv2-kernel-csv");
    let s = profiler::stats::summarize(&p);
    // 16000 and 14000 -> total 30000, mean = median = 15000, sd sqrt(2 * 1000^2 / 1) = 1414.2136.
    check(
        find(&s, "vecCopy(double*, double*, double*, int, int)"),
        2,
        30000.0,
        15000.0,
        Some(15000.0),
        14000.0,
        16000.0,
        1414.2136,
        100.0,
    );
}

/// rocprof-compute workload: timestamps.csv + pmc_perf.csv (per-instance and _sum columns) +
/// sysinfo.csv.
#[test]
fn rocprof_compute_workload() {
    let p = profiler::load(&[testdata("rocprof-compute/MI200")]).unwrap();
    assert_eq!(p.source, Source::RocprofCompute);
    assert_eq!(p.arch(), Some("gfx90a"));
    let s = profiler::stats::summarize(&p);
    // 20000, 15000, 16000 -> total 51000, mean 17000, median 16000,
    //   deviations 3000, -2000, -1000 -> 14e6 / 2 = 7e6 -> sd 2645.7513.
    check(
        find(&s, "vecCopy(double*, double*, double*, int, int)"),
        3,
        51000.0,
        17000.0,
        Some(16000.0),
        15000.0,
        20000.0,
        2645.7513,
        100.0,
    );
    let c = p.dispatches[0].counters.as_ref().unwrap();
    // TCC_EA_RDREQ_sum (8192) wins over the instance columns; RDREQ_32B = 0 + 1024 summed.
    assert_eq!(c["TCC_EA_RDREQ"], 8192.0);
    assert_eq!(c["TCC_EA_RDREQ_32B"], 1024.0);
    assert_eq!(c["TCC_EA_WRREQ"], 4096.0);
    assert_eq!(c["TCC_EA_WRREQ_64B"], 4096.0);
    assert_eq!(c["SQ_INSTS_VALU_FMA_F64"], 512.0);
    assert!(!c.contains_key("XCC_Index") && !c.contains_key("GPU_ID"));
}

/// `--kernel` filtering happens on normalised names.
#[test]
fn kernel_filter() {
    let mut p = profiler::load(&[testdata("rocprofv3-1.0")]).unwrap();
    p.retain_kernels(&regex::Regex::new("^transpose").unwrap());
    let s = profiler::stats::summarize(&p);
    assert_eq!(s.len(), 1);
    // Percent is relative to what remains.
    check(
        &s[0],
        2,
        8000.0,
        4000.0,
        Some(4000.0),
        3000.0,
        5000.0,
        1414.2136,
        100.0,
    );
}

/// Empty, malformed, ragged and foreign CSVs and a corrupt database: errors, never panics.
#[test]
fn malformed_inputs() {
    use profiler::Error;
    let e = profiler::load(&[testdata("bad/empty_kernel_trace.csv")]).unwrap_err();
    assert!(matches!(e, Error::EmptyCsv { .. }), "{e}");
    let e = profiler::load(&[testdata("bad/badnum_kernel_trace.csv")]).unwrap_err();
    assert!(
        matches!(e, Error::BadCsv { .. })
            && e.to_string().contains("Start_Timestamp")
            && e.to_string().contains("12x34"),
        "{e}"
    );
    let e = profiler::load(&[testdata("bad/ragged_kernel_trace.csv")]).unwrap_err();
    assert!(matches!(e, Error::BadCsv { .. }), "{e}");
    let f = tempfile::tempdir().unwrap();
    let nots = f.path().join("results.csv");
    std::fs::write(
        &nots,
        "Index,KernelName,gpu-id,queue-id,SQ_WAVES\n0,\"k [clone .kd]\",0,0,64\n",
    )
    .unwrap();
    let e = profiler::load(&[nots]).unwrap_err();
    assert!(e.to_string().contains("--timestamp on"), "{e}");
    let e = profiler::load(&[testdata("bad/foreign.csv")]).unwrap_err();
    assert!(matches!(e, Error::UnknownCsv { .. }), "{e}");
    let e = profiler::load(&[testdata("bad/corrupt_results.db")]).unwrap_err();
    assert!(matches!(e, Error::NotRocpd { .. }), "{e}");
    let e = profiler::load(&[testdata("does-not-exist.db")]).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let e = profiler::load(&[dir.path().to_path_buf()]).unwrap_err();
    assert!(matches!(e, Error::NothingFound { .. }), "{e}");
    // A header-only kernel trace: no kernels.
    let f = dir.path().join("x_kernel_trace.csv");
    std::fs::write(&f, "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n").unwrap();
    let e = profiler::load(&[f]).unwrap_err();
    assert!(matches!(e, Error::NoKernels { .. }), "{e}");
}

/// Inputs of different tools are refused rather than silently mixed.
#[test]
fn mixed_tools_refused() {
    let e = profiler::load(&[
        testdata("rocprof-v1/results.csv"),
        testdata("rocprofv3-0.x/1234_kernel_trace.csv"),
    ])
    .unwrap_err();
    assert!(matches!(e, profiler::Error::MixedSources { .. }), "{e}");
}

/// A `hip-unroll profile -o DIR` layout with two counter passes: timings come from pass_1,
/// the counters of pass_2 join by kernel and occurrence (its dispatch ids differ).
#[test]
fn counter_passes_joined() {
    let src = testdata("rocprofv3-1.0/node01/4711");
    let dir = tempfile::tempdir().unwrap();
    for pass in ["pass_1", "pass_2"] {
        std::fs::create_dir(dir.path().join(pass)).unwrap();
        std::fs::copy(
            src.join("run_agent_info.csv"),
            dir.path().join(pass).join("run_agent_info.csv"),
        )
        .unwrap();
    }
    std::fs::copy(
        src.join("run_kernel_trace.csv"),
        dir.path().join("pass_1/run_kernel_trace.csv"),
    )
    .unwrap();
    std::fs::copy(
        src.join("run_counter_collection.csv"),
        dir.path().join("pass_1/run_counter_collection.csv"),
    )
    .unwrap();
    // Pass 2: the same dispatches 100 ids later and slower (counter collection perturbs
    // timing), with other counters.
    let shift = |text: &str, col_ix: &[usize]| -> String {
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let mut w = csv::WriterBuilder::new()
            .quote_style(csv::QuoteStyle::NonNumeric)
            .from_writer(Vec::new());
        w.write_record(rd.headers().unwrap()).unwrap();
        for rec in rd.records() {
            let mut f: Vec<String> = rec.unwrap().iter().map(str::to_string).collect();
            for &c in col_ix {
                f[c] = (f[c].parse::<u64>().unwrap() + 100).to_string();
            }
            w.write_record(&f).unwrap();
        }
        String::from_utf8(w.into_inner().unwrap()).unwrap()
    };
    let trace = std::fs::read_to_string(src.join("run_kernel_trace.csv")).unwrap();
    // Dispatch_Id is column 5; End_Timestamp column 10 gets +100 ns.
    std::fs::write(
        dir.path().join("pass_2/run_kernel_trace.csv"),
        shift(&trace, &[5, 10]),
    )
    .unwrap();
    let counters = std::fs::read_to_string(src.join("run_counter_collection.csv"))
        .unwrap()
        .replace("SQ_INSTS_VALU_ADD_F32", "SQ_INSTS_VALU_MUL_F32")
        .replace("TCC_EA_", "TCC_EAX_");
    std::fs::write(
        dir.path().join("pass_2/run_counter_collection.csv"),
        shift(&counters, &[1]),
    )
    .unwrap();
    let p = profiler::load(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(p.dispatches.len(), 7, "pass_2 adds no dispatches");
    let s = profiler::stats::summarize(&p);
    check(
        find(&s, VA),
        4,
        4800.0,
        1200.0,
        Some(1150.0),
        1000.0,
        1500.0,
        216.0247,
        36.9231,
    );
    let c = p.dispatches[0].counters.as_ref().unwrap();
    assert_eq!(c.get("SQ_INSTS_VALU_ADD_F32"), Some(&1024.0));
    assert_eq!(c.get("SQ_INSTS_VALU_MUL_F32"), Some(&1024.0));
    assert_eq!(c.get("TCC_EAX_RDREQ"), Some(&4096.0));
    assert!(p.dispatches[1].counters.is_none());
}

/// rocprof-compute workload whose pmc_perf.csv carries the timestamps (no timestamps.csv),
/// gfx942 per-instance `TCC_EA0_*[i]` columns, ` (.kd)` names.
#[test]
fn rocprof_compute_pmc_perf_with_timestamps() {
    let p = profiler::load(&[testdata("rocprof-compute/MI300X")]).unwrap();
    assert_eq!(p.source, Source::RocprofCompute);
    let s = profiler::stats::summarize(&p);
    // 12000 and 8000 ns -> total 20000, mean = median = 10000, sd sqrt(2 * 2000^2) = 2828.4271.
    check(
        find(&s, "saxpy(int, float, float const*, float*)"),
        2,
        20000.0,
        10000.0,
        Some(10000.0),
        8000.0,
        12000.0,
        2828.4271,
        100.0,
    );
    let c = p.dispatches[1].counters.as_ref().unwrap();
    assert_eq!(
        (
            c["TCC_EA0_RDREQ"],
            c["TCC_BUBBLE"],
            c["SQ_INSTS_VALU_FMA_F32"]
        ),
        (4096.0, 512.0, 16384.0)
    );
    // MI300 byte formula: 512*128 + 1024*32 + (4096-512-1024)*64 + (2048-2048)*32 + 2048*64
    //   = 65536 + 32768 + 163840 + 0 + 131072 = 393216 B per dispatch;
    // FLOPs 64*2*16384 = 2097152 per dispatch; 20000 ns in all.
    let r = profiler::roofline::roofline(&p, &profiler::roofline::MI300X);
    let k = &r.kernels[0];
    assert_close(k.hbm_bytes, 786_432.0, 1e-9);
    assert_close(k.flops, 4_194_304.0, 1e-9);
    // AI 16/3 = 5.3333; 209.7152 GFLOP/s; 39.3216 GB/s; ridge 163400/5300 = 30.83 -> memory.
    assert_close(k.arithmetic_intensity, 16.0 / 3.0, 1e-9);
    assert_close(k.gflops, 209.7152, 1e-9);
    assert_close(k.gbps, 39.3216, 1e-9);
    assert_eq!(k.bound, "memory");
}

/// Without an agent-info file, one agent number is one agent: dispatches of "Agent 1" on the
/// same queue stay on one lane, so the critical path keeps their program order (a counter
/// collection CSV read alone gave every dispatch an agent of its own).
#[test]
fn unknown_agent_numbers_are_one_agent_each() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata("rocprofv3-1.0/node01/4711/run_counter_collection.csv");
    // Both dispatches on queue 1 (the fixture has the second on queue 2).
    let text = std::fs::read_to_string(src)
        .unwrap()
        .replace(",\"Agent 1\",2,", ",\"Agent 1\",1,");
    let csv = dir.path().join("run_counter_collection.csv");
    std::fs::write(&csv, text).unwrap();
    let p = profiler::load(&[csv]).unwrap();
    assert_eq!(p.dispatches.len(), 2);
    assert_eq!(p.dispatches[0].agent, p.dispatches[1].agent);
    assert_eq!(p.agents.len(), 1);
    let cp = profiler::critical::critical_path(&p, &Default::default());
    assert_eq!((cp.program_order_edges, cp.cross_lane_edges), (1, 0));

    // The same for a kernel trace read without its agent-info file.
    let src = testdata("rocprofv3-1.0/node01/4711/run_kernel_trace.csv");
    let trace = dir.path().join("run_kernel_trace.csv");
    std::fs::copy(src, &trace).unwrap();
    let p = profiler::load(&[trace]).unwrap();
    let agents: std::collections::BTreeSet<u32> = p.dispatches.iter().map(|d| d.agent).collect();
    assert_eq!(agents.len(), 1, "{agents:?}");
    assert_eq!(p.agents.len(), 1);
}
