//! Roofline figures from counters (rocprof-compute's formulas) checked by hand, peak
//! selection, and a well-formed SVG plot.

mod common;
use common::*;
use profiler::roofline::{self, MI210, MI300X};

#[test]
fn mi200_formula_on_rocprofv3_counters() {
    let p = profiler::load(&[testdata("rocprofv3-1.0")]).unwrap();
    let peaks = roofline::peaks_for(p.arch(), p.product()).unwrap();
    assert_eq!(peaks.gpu, "mi210");
    let r = roofline::roofline(&p, peaks);
    assert_eq!(r.kernels.len(), 1);
    let k = &r.kernels[0];
    assert_eq!(
        k.name,
        "void vecAdd<float>(float*, float const*, float const*, int)"
    );
    assert_eq!(k.calls, 2);
    // Per dispatch: 64 * 1024 ADD_F32 = 65536 FLOP; bytes = 0*32 + (4096-0)*64 + 2048*64
    // + (2048-2048)*32 = 393216. Two dispatches (1000 + 1200 ns).
    assert_close(k.flops, 131_072.0, 1e-9);
    assert_close(k.hbm_bytes, 786_432.0, 1e-9);
    assert_eq!(k.time_ns, 2200);
    // AI = 1/6; 131072 / 2200 ns = 59.5782 GFLOP/s; 786432 / 2200 = 357.4691 GB/s.
    assert_close(k.arithmetic_intensity, 1.0 / 6.0, 1e-9);
    assert_close(k.gflops, 59.578182, 1e-5);
    assert_close(k.gbps, 357.469091, 1e-5);
    // Vector FP32 ceiling 22600 GFLOP/s, ridge 22600 / 1638.4 = 13.7939 -> memory-bound;
    // roof at AI 1/6 = 273.0667 GFLOP/s -> 21.818 % of it.
    assert_eq!(k.ceiling, "vector-fp32");
    assert_close(k.ridge_ai, 13.793945, 1e-5);
    assert_eq!(k.bound, "memory");
    assert_close(k.percent_of_roof, 21.8182, 1e-3);
}

#[test]
fn rocprof_compute_instances_and_sums() {
    let p = profiler::load(&[testdata("rocprof-compute/MI200")]).unwrap();
    let r = roofline::roofline(&p, roofline::peaks_for(p.arch(), p.product()).unwrap());
    let k = &r.kernels[0];
    // Per dispatch: FMA_F64 512 -> 64*2*512 = 65536 FLOP; RDREQ 8192 (the _sum column),
    // RDREQ_32B 1024 -> 1024*32 + 7168*64 = 491520; WRREQ 4096, all 64B -> 262144; 753664 B.
    assert_close(k.flops, 3.0 * 65_536.0, 1e-9);
    assert_close(k.hbm_bytes, 3.0 * 753_664.0, 1e-9);
    // 51000 ns: 196608/51000 = 3.85506 GFLOP/s, 2260992/51000 = 44.33318 GB/s, AI 0.0869565.
    assert_close(k.gflops, 3.855059, 1e-5);
    assert_close(k.gbps, 44.333176, 1e-5);
    assert_close(k.arithmetic_intensity, 0.08695652, 1e-7);
    assert_eq!(k.ceiling, "vector-fp64");
    assert_eq!(k.bound, "memory");
}

#[test]
fn compute_bound_verdict() {
    // 1e9 FMA_F64 instructions over 1 MB of traffic in 10 ms on an MI210: AI = 128e9 / 1e6
    // = 128000 FLOP/B, far right of the ridge (22600/1638.4 = 13.79) -> compute-bound;
    // 128e9 FLOP / 0.01 s = 12800 GFLOP/s = 56.637 % of 22600.
    let mut m = std::collections::BTreeMap::new();
    m.insert("SQ_INSTS_VALU_FMA_F64".to_string(), 1e9);
    m.insert("TCC_EA_RDREQ".to_string(), 15_625.0); // 15625 * 64 B = 1e6 B
    let mut p = profiler::Profile::new(profiler::Source::Rocpd, "t");
    p.kernels.push(profiler::KernelInfo {
        name: "dgemm".into(),
        runtime: false,
    });
    p.dispatches.push(profiler::Dispatch {
        kernel: 0,
        process: 0,
        agent: 0,
        queue: 0,
        stream: None,
        dispatch_id: 1,
        start_ns: 0,
        end_ns: 10_000_000,
        counters: Some(Box::new(m)),
    });
    let k = &roofline::roofline(&p, &MI210).kernels[0];
    assert_close(k.arithmetic_intensity, 128_000.0, 1e-6);
    assert_eq!(k.bound, "compute");
    assert_close(k.percent_of_roof, 56.637168, 1e-5);
}

#[test]
fn peak_selection() {
    assert_eq!(
        roofline::peaks_for(Some("gfx90a"), Some("AMD Instinct MI250X"))
            .unwrap()
            .gpu,
        "mi250x"
    );
    assert_eq!(
        roofline::peaks_for(Some("gfx90a"), Some("AMD Instinct MI210"))
            .unwrap()
            .gpu,
        "mi210"
    );
    assert_eq!(
        roofline::peaks_for(Some("gfx90a"), None).unwrap().gpu,
        "mi210"
    );
    assert_eq!(
        roofline::peaks_for(Some("gfx942"), None).unwrap().gpu,
        "mi300x"
    );
    assert!(roofline::peaks_for(Some("gfx942"), Some("AMD Instinct MI300A")).is_none());
    assert!(roofline::peaks_for(Some("gfx1100"), None).is_none());
    assert_eq!(roofline::peaks_named("MI300X").unwrap(), &MI300X);
}

#[test]
fn svg_is_well_formed() {
    let p = profiler::load(&[testdata("rocprofv3-1.0")]).unwrap();
    let r = roofline::roofline(&p, &MI210);
    let text = roofline::svg(&r);
    let doc = roxmltree::Document::parse(&text).expect("well-formed SVG");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(
        root.tag_name().namespace(),
        Some("http://www.w3.org/2000/svg")
    );
    assert_eq!(
        root.descendants()
            .filter(|n| n.has_tag_name("polyline"))
            .count(),
        3
    );
    let circles: Vec<_> = root
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .collect();
    assert_eq!(circles.len(), 1);
    // The kernel name with `<float>` survives escaping.
    let title = circles[0]
        .children()
        .find(|n| n.has_tag_name("title"))
        .unwrap()
        .text()
        .unwrap();
    assert!(title.starts_with("void vecAdd<float>("), "{title}");
    assert!(title.contains("memory-bound"));
    // Every coordinate is a finite number inside the canvas.
    for c in &circles {
        let cx: f64 = c.attribute("cx").unwrap().parse().unwrap();
        let cy: f64 = c.attribute("cy").unwrap().parse().unwrap();
        assert!(
            (0.0..=900.0).contains(&cx) && (0.0..=600.0).contains(&cy),
            "{cx},{cy}"
        );
    }
}

#[test]
fn chrome_trace_events() {
    let p = profiler::load(&[testdata("rocprofv3-1.0")]).unwrap();
    let v = profiler::trace::chrome_trace(&p);
    let ev = v["traceEvents"].as_array().unwrap();
    let x: Vec<_> = ev.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(x.len(), 7);
    // First dispatch at ts 0, 1000 ns = 1 us; transpose on stream 2 starts 5000 ns in.
    assert_eq!(x[0]["ts"].as_f64(), Some(0.0));
    assert_eq!(x[0]["dur"].as_f64(), Some(1.0));
    let tr2 = x.iter().find(|e| e["args"]["dispatch_id"] == 6).unwrap();
    assert_eq!(tr2["ts"].as_f64(), Some(5.0));
    assert_eq!(tr2["dur"].as_f64(), Some(5.0));
    // Two streams on one agent: one pid, two tids, named by metadata events.
    let pids: std::collections::BTreeSet<_> =
        x.iter().map(|e| e["pid"].as_u64().unwrap()).collect();
    let tids: std::collections::BTreeSet<_> =
        x.iter().map(|e| e["tid"].as_u64().unwrap()).collect();
    assert_eq!((pids.len(), tids.len()), (1, 2));
    let names: Vec<_> = ev
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, vec!["stream 1", "stream 2"]);
    assert_eq!(
        x.iter().find(|e| e["args"]["dispatch_id"] == 2).unwrap()["cat"],
        "runtime-kernel"
    );
}

#[test]
fn report_formats() {
    let p = profiler::load(&[testdata("rocprofv3-1.0")]).unwrap();
    let s = profiler::stats::summarize(&p);
    let cp = profiler::critical::critical_path(&p, &Default::default());
    let r =
        profiler::report::Report::new(&p, s, Some(cp), Some(roofline::roofline(&p, &MI210)), None);
    let j: serde_json::Value = serde_json::from_str(&profiler::report::json(&r)).unwrap();
    assert_eq!(j["source"], "rocprofv3-csv");
    let k0 = &j["kernels"][0];
    for key in [
        "name",
        "calls",
        "total_ns",
        "mean_ns",
        "median_ns",
        "min_ns",
        "max_ns",
        "stddev_ns",
        "percent",
    ] {
        assert!(k0.get(key).is_some(), "missing {key}");
    }
    assert_eq!(k0["name"], "transpose(float*, float*, int, int)");
    assert!(j["critical_path"]["length_ns"].as_u64().unwrap() > 0);
    assert_eq!(j["roofline"]["kernels"][0]["bound"], "memory");
    let csv = profiler::report::csv(&r);
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(
        &rows[1][0],
        "void vecAdd<float>(float*, float const*, float const*, int)"
    );
    assert_eq!(&rows[1][4], "1150");
    let md = profiler::report::markdown(&r);
    assert!(
        md.lines()
            .any(|l| l.starts_with("| 1 | `transpose(float*, float*, int, int)` | 2 | 8000 |")),
        "{md}"
    );
    let t = profiler::report::table(&r);
    assert!(
        t.contains("Critical path") && t.contains("memory-bound"),
        "{t}"
    );
}

/// `analyze` (what `profile` does with a loaded profile): the critical path before the kernel
/// filter, a regex that keeps nothing is an error naming it, an unknown GPU name is an error,
/// a profile without counters has no roofline and says why, and one with them has it.
#[test]
fn analyze_filters_after_the_critical_path_and_says_why_there_is_no_roofline() {
    use profiler::analyze::{analyze, NoRoofline, Options};
    let with = || profiler::load(&[testdata("rocprofv3-1.0")]).unwrap();
    let mut p = with();
    let all = analyze(&mut p.clone(), &Options::default()).unwrap();
    assert!(all.roofline.is_ok(), "{:?}", all.roofline.err());
    let cp_all = all.critical_path.clone().unwrap();
    let first = all.kernels[0].name.clone();
    let one = analyze(
        &mut p,
        &Options {
            kernel: Some(
                profiler::regex::Regex::new(&format!("^{}$", regex_escape(&first))).unwrap(),
            ),
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(one.kernels.len(), 1);
    let cp = one.critical_path.unwrap();
    assert_eq!(
        cp.length_ns, cp_all.length_ns,
        "computed over every dispatch"
    );
    assert!(cp.kernels.iter().all(|k| k.name == first));
    let e = analyze(
        &mut with(),
        &Options {
            kernel: Some(profiler::regex::Regex::new("^no-such-kernel$").unwrap()),
            ..Options::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(&e, profiler::Error::NoKernelMatches(r) if r == "^no-such-kernel$"),
        "{e}"
    );
    let e = analyze(
        &mut with(),
        &Options {
            gpu: Some("mi999".into()),
            ..Options::default()
        },
    )
    .unwrap_err();
    assert!(matches!(e, profiler::Error::UnknownGpu(_)), "{e}");
    let mut bare = profiler::load(&[testdata("rocprofv3-0.x")]).unwrap();
    assert!(!bare.has_counters(), "a kernel trace alone");
    let a = analyze(&mut bare, &Options::default()).unwrap();
    assert_eq!(a.roofline.err(), Some(NoRoofline::NoCounters));
}

fn regex_escape(s: &str) -> String {
    profiler::regex::escape(s)
}
