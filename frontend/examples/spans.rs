//! Debug aid for `bench/safety_corpus.py --execute`: prints, as one JSON line per file named on
//! the command line, every function with its kind, byte span, body span, template flag and
//! parameters (normalised type, pointer or reference), so that a script can blank host code and
//! drive kernels on the host (`cargo build --release -p frontend --example spans`).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use serde_json::json;

fn main() {
    for path in std::env::args().skip(1) {
        let Ok(src) = std::fs::read(&path) else {
            println!("{}", json!({"path": path, "error": "unreadable"}));
            continue;
        };
        let file = frontend::parse(&src);
        let functions: Vec<serde_json::Value> = file
            .functions
            .iter()
            .map(|f| {
                let params: Vec<serde_json::Value> = f
                    .params
                    .iter()
                    .map(|p| {
                        let text = &src[p.span.start.min(src.len())..p.span.end.min(src.len())];
                        json!({
                            "name": p.name,
                            "type": p.type_text,
                            "pointer": p.is_pointer_or_ref,
                            "text": String::from_utf8_lossy(text),
                        })
                    })
                    .collect();
                json!({
                    "name": f.name,
                    "kind": f.kind,
                    "start": f.span.start,
                    "end": f.span.end,
                    "body_start": f.body.start,
                    "body_end": f.body.end,
                    "template": f.is_template,
                    "recovered": f.recovered,
                    "params": params,
                    "loops": f.loops.len(),
                })
            })
            .collect();
        println!(
            "{}",
            json!({"path": path, "parse_errors": file.parse_errors.len(), "functions": functions})
        );
    }
}
