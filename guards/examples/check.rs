//! Debug aid: prints the loop report and diagnostics of a file (`cargo run -p guards --example check FILE`).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
fn main() {
    let path = std::env::args().nth(1).expect("usage: check FILE");
    let src = std::fs::read(&path).expect("read");
    let settings = guards::Settings {
        hints: true,
        ..Default::default()
    };
    let (report, diags) = guards::check_source(&path, &src, &settings);
    for f in &report.functions {
        println!("{} ({:?}) line {}", f.name, f.kind, f.line);
        for l in &f.loops {
            println!(
                "  {} line {} {:?} trip={:?} pragma={:?} {:?} {:?}",
                l.id, l.line, l.kind, l.trip_count, l.unroll_pragma, l.verdict, l.blockers
            );
        }
    }
    for d in &diags {
        println!(
            "{}:{}:{} {} {:?}: {}",
            d.path, d.line, d.column, d.rule, d.severity, d.message
        );
        for r in &d.related {
            println!("    {}:{} {}", r.line, r.column, r.label);
        }
    }
}
