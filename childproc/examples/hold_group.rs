//! Test helper for `tests/childproc.rs`: runs one job whose program starts a grandchild that
//! writes its pid to PIDFILE and sleeps, so that the test can `kill -9` this parent and see
//! whether the grandchild survives. Usage: `hold_group PIDFILE guard|no-guard`.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (pidfile, guard) = match args.as_slice() {
        [_, p, g] => (p.clone(), g == "guard"),
        _ => {
            eprintln!("usage: hold_group PIDFILE guard|no-guard");
            std::process::exit(2);
        }
    };
    let script = format!(
        "sh -c 'echo $$ > {pidfile}.tmp; mv {pidfile}.tmp {pidfile}; exec sleep 300' & wait"
    );
    let mut job =
        childproc::Job::new("sh", std::time::Duration::from_secs(600)).args(["-c", &script]);
    job.group_dies_with_parent = guard;
    let _ = job.run(|_| {});
}
