//! Writes a snapshot directory as one fuzz input: `seed_snapshot DIR OUT`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: seed_snapshot SNAPSHOT_DIR OUT_FILE");
        std::process::exit(2);
    }
    match codeobj_fuzz::snapshot::flatten(std::path::Path::new(&args[1])) {
        Ok(b) => std::fs::write(&args[2], b).unwrap_or_else(|e| {
            eprintln!("error: {}: {e}", args[2]);
            std::process::exit(2)
        }),
        Err(e) => {
            eprintln!("error: {}: {e}", args[1]);
            std::process::exit(2);
        }
    }
}
