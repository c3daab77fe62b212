//! Snapshot tests of the `table` and `markdown` renderers on the rocprofv3 fixture.

mod common;
use common::testdata;

fn report() -> profiler::report::Report {
    let p = profiler::load(&[testdata("rocprofv3-1.0")]).unwrap();
    let s = profiler::stats::summarize(&p);
    let cp = profiler::critical::critical_path(&p, &Default::default());
    let r = profiler::roofline::roofline(&p, &profiler::roofline::MI210);
    profiler::report::Report::new(&p, s, Some(cp), Some(r), None)
}

#[test]
fn table_snapshot() {
    insta::assert_snapshot!(profiler::report::table(&report()));
}

#[test]
fn markdown_snapshot() {
    insta::assert_snapshot!(profiler::report::markdown(&report()));
}
