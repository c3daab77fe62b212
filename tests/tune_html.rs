//! `tune --format html` as a user sees it: a real tune of the example repository
//! (testdata/tune, the deterministic cost build of tests/tune_cli.rs) writes its report as JSON
//! and then, reusing the same ledger, as HTML; the page is opened in Debian's headless Chromium
//! over the DevTools protocol (`headless_chrome`). The page must load with no console message of
//! level error or warning (a Content-Security-Policy violation, a failed load, a script error),
//! a screenshot must be a PNG that decodes to the window's size, and the forest plots in the
//! browser's DOM must hold one mark per measured candidate of the JSON report, each titled with
//! that candidate's loop, variant and speedup. Needs the `chromium` capability (Debian's
//! `chromium` package, installed by .ci/run); without it the test is a counted skip, and a
//! failure where `HIP_UNROLL_EXPECT` names `chromium`.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use headless_chrome::protocol::cdp::types::Event;
use headless_chrome::protocol::cdp::{Log, Page, Runtime};
use headless_chrome::{Browser, LaunchOptions};
use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");
const CHROMIUM: &str = "/usr/bin/chromium";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch copy of testdata/tune whose gates' code objects are cached under the tests' target
/// directory (content-addressed, shared with later runs of this test).
fn example() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(repo().join("testdata/tune")).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), d.path().join(e.file_name())).unwrap();
        }
    }
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tune-html-objects");
    std::fs::write(
        d.path().join("hip-unroll.toml"),
        format!("[compile]\ncache-dir = \"{}\"\n", cache.display()),
    )
    .unwrap();
    d
}

/// `hip-unroll tune` on the example's cost build (its figure: the control-flow edges the
/// kernels pass, deterministic), dry run, the report in `format` written to `out`.
fn tune(dir: &Path, state: &Path, format: &str, out: &Path) {
    let build = format!(
        "COST=1 HIP_HOST_DIR={} sh build.sh",
        repo().join("testdata/transforms").display()
    );
    let o = Command::new(BIN)
        .args(["tune", "--build", &build, "--run", "./app"])
        .args(["--check", "cmp -s out.txt expected-cost.txt"])
        .args(["--time-regex", "cost: ([0-9]+)", "--time-unit", "edges"])
        .args(["--factors", "4", "--jobs", "2", "--dry-run", "--state"])
        .arg(state)
        .args(["--format", format, "-o"])
        .arg(out)
        .current_dir(dir)
        .env_remove("HIP_UNROLL_TESTPOINT")
        .output()
        .expect("run hip-unroll");
    assert_eq!(
        o.status.code(),
        Some(0),
        "tune --format {format}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The console messages of level error or warning that a page produced, as text.
#[derive(Default)]
struct Console(Mutex<Vec<String>>);

impl Console {
    fn note(&self, e: &Event) {
        let line = match e {
            Event::LogEntryAdded(l) => match l.params.entry.level {
                Log::LogEntryLevel::Error | Log::LogEntryLevel::Warning => Some(format!(
                    "log {:?} {:?}: {}",
                    l.params.entry.level, l.params.entry.source, l.params.entry.text
                )),
                _ => None,
            },
            Event::RuntimeConsoleAPICalled(c) => match c.params.Type {
                Runtime::ConsoleAPICalledEventTypeOption::Error
                | Runtime::ConsoleAPICalledEventTypeOption::Warning
                | Runtime::ConsoleAPICalledEventTypeOption::Assert => {
                    Some(format!("console {:?}: {:?}", c.params.Type, c.params.args))
                }
                _ => None,
            },
            Event::RuntimeExceptionThrown(x) => {
                Some(format!("exception: {}", x.params.exception_details.text))
            }
            _ => None,
        };
        if let Some(line) = line {
            self.0.lock().unwrap().push(line);
        }
    }
}

/// A headless Chromium as root on a machine without network: no sandbox (root), no GPU, no
/// first-run, background or component traffic, a fresh profile directory.
fn browser(profile: &Path) -> Browser {
    let args: Vec<&OsStr> = [
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ]
    .iter()
    .map(OsStr::new)
    .collect();
    let options = LaunchOptions::default_builder()
        .path(Some(PathBuf::from(CHROMIUM)))
        .headless(true)
        .sandbox(false)
        .window_size(Some((1280, 900)))
        .user_data_dir(Some(profile.to_path_buf()))
        .args(args)
        .idle_browser_timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    Browser::new(options).expect("start headless chromium")
}

#[test]
fn the_html_report_renders_in_a_browser_with_a_mark_per_measured_candidate() {
    if testenv::lacks(
        "chromium",
        Path::new(CHROMIUM).exists() && testenv::has_program(CHROMIUM),
        "no /usr/bin/chromium (Debian's chromium package)",
    ) {
        return;
    }
    let dir = example();
    let scratch = tempfile::tempdir().unwrap();
    let state = scratch.path().join("state");
    let json_path = scratch.path().join("tune.json");
    let html_path = scratch.path().join("tune.html");
    tune(dir.path(), &state, "json", &json_path);
    // The same tune again on the same ledger: every decision reused, the report as HTML.
    tune(dir.path(), &state, "html", &html_path);
    let report: Value = serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    let measured: Vec<&Value> = report["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["speedup"].as_f64().is_some_and(f64::is_finite))
        .collect();
    assert!(
        measured.len() >= 2,
        "the example measures several candidates: {report}"
    );

    let profile = tempfile::tempdir().unwrap();
    let browser = browser(profile.path());
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(Duration::from_secs(60));
    let console = Arc::new(Console::default());
    let sink = Arc::clone(&console);
    tab.add_event_listener(Arc::new(move |e: &Event| sink.note(e)))
        .unwrap();
    tab.enable_log().unwrap();
    tab.enable_runtime().unwrap();
    let url = format!("file://{}", html_path.display());
    tab.navigate_to(&url).unwrap();
    tab.wait_until_navigated().unwrap();
    // The page is loaded (and laid out) when its document says so.
    let state = tab
        .evaluate("document.readyState", false)
        .unwrap()
        .value
        .unwrap();
    assert_eq!(state, "complete");

    // One mark per measured candidate in the forest plots, counted in the DOM, each titled with
    // its candidate (loop, line, variant, speedup as the JSON has them).
    let count = tab
        .evaluate(
            r#"document.querySelectorAll('svg.forest [data-mark="candidate"]').length"#,
            false,
        )
        .unwrap()
        .value
        .unwrap();
    assert_eq!(count.as_u64(), Some(measured.len() as u64), "forest marks");
    let titles = tab
        .evaluate(
            r#"JSON.stringify(Array.from(document.querySelectorAll('svg.forest [data-mark="candidate"] > title'), t => t.textContent))"#,
            false,
        )
        .unwrap()
        .value
        .unwrap();
    let titles: Vec<String> = serde_json::from_str(titles.as_str().unwrap()).unwrap();
    assert_eq!(titles.len(), measured.len());
    for c in &measured {
        let variant = match (c["mode"].as_str(), c["factor"].as_u64()) {
            (Some(m), Some(f)) => format!("{m} x{f}"),
            (Some(m), None) => format!("{m} full"),
            _ => "-".into(),
        };
        let head = format!(
            "{} (line {}), {variant}: ",
            c["loop"].as_str().unwrap(),
            c["line"]
        );
        let speed = format!("speedup {:.3}x", c["speedup"].as_f64().unwrap());
        assert!(
            titles
                .iter()
                .any(|t| t.starts_with(&head) && t.contains(&speed)),
            "no mark titled {head}…{speed} in {titles:?}"
        );
    }
    // Every plotted mark (candidates, ratios, reference lines, timing phases) carries a title.
    let untitled = tab
        .evaluate(
            "Array.from(document.querySelectorAll('[data-mark]')).filter(m => !(m.firstElementChild && m.firstElementChild.tagName === 'title')).length",
            false,
        )
        .unwrap()
        .value
        .unwrap();
    assert_eq!(untitled.as_u64(), Some(0), "marks without a <title>");

    // A screenshot of the page: a PNG that decodes, of the viewport's size, not blank.
    let shot = tab
        .capture_screenshot(Page::CaptureScreenshotFormatOption::Png, None, None, true)
        .unwrap();
    let png_path = scratch.path().join("tune.png");
    std::fs::write(&png_path, &shot).unwrap();
    assert!(!shot.is_empty());
    let mut decoder = png::Decoder::new(std::io::Cursor::new(&shot))
        .read_info()
        .expect("a PNG");
    let mut pixels = vec![0; decoder.output_buffer_size().unwrap()];
    let info = decoder.next_frame(&mut pixels).expect("PNG pixels");
    let viewport = tab
        .evaluate(
            "JSON.stringify([innerWidth * devicePixelRatio, innerHeight * devicePixelRatio])",
            false,
        )
        .unwrap()
        .value
        .unwrap();
    let viewport: [f64; 2] = serde_json::from_str(viewport.as_str().unwrap()).unwrap();
    assert_eq!(
        [f64::from(info.width), f64::from(info.height)],
        viewport,
        "the screenshot is the page's viewport"
    );
    let first = &pixels[..info.color_type.samples()];
    let distinct = pixels
        .chunks(info.color_type.samples())
        .filter(|p| *p != first)
        .count();
    assert!(
        distinct > 1000,
        "the screenshot is nearly uniform ({distinct} pixels differ)"
    );

    let messages = console.0.lock().unwrap().clone();
    assert!(
        messages.is_empty(),
        "console errors or warnings: {messages:#?}"
    );

    // The console check can fail: the same page with one reference to fetch (which its policy
    // refuses, and this machine could not reach) reports an error.
    let html = std::fs::read_to_string(&html_path).unwrap();
    let probe_path = scratch.path().join("probe.html");
    std::fs::write(
        &probe_path,
        html.replacen(
            "<body>",
            r#"<body><img src="https://example.invalid/x.png" alt="">"#,
            1,
        ),
    )
    .unwrap();
    tab.navigate_to(&format!("file://{}", probe_path.display()))
        .unwrap();
    tab.wait_until_navigated().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while console.0.lock().unwrap().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let probe = console.0.lock().unwrap().clone();
    assert!(
        probe.iter().any(|m| m.contains("example.invalid")),
        "a refused load was not seen on the console: {probe:#?}"
    );
}
