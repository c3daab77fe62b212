//! `--format json`: the serde shape of [`guards::CheckOutput`], the contract other tools read.

use guards::CheckOutput;

/// The report as pretty-printed JSON, newline-terminated.
pub fn render(output: &CheckOutput) -> String {
    // Serialising plain structs of strings and integers cannot fail.
    let mut s = serde_json::to_string_pretty(output).expect("CheckOutput serialises");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys appear in this order in the text (the contract's order, not just its set).
    fn assert_key_order(text: &str, keys: &[&str]) {
        let mut at = 0;
        for k in keys {
            let needle = if k.starts_with('"') {
                k.to_string()
            } else {
                format!("\"{k}\":")
            };
            let pos = text[at..]
                .find(&needle)
                .unwrap_or_else(|| panic!("{needle} after byte {at}"));
            at += pos + needle.len();
        }
    }

    #[test]
    fn json_contract_shape() {
        let (out, _) = super::super::fixtures::output();
        let text = render(&out);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["version"], 1);
        let l = &v["files"][0]["functions"][0]["loops"][0];
        assert_key_order(
            &text,
            &[
                "id",
                "line",
                "column",
                "kind",
                "depth",
                "trip_count",
                "unroll_pragma",
                "verdict",
                "blockers",
            ],
        );
        assert_eq!(l.as_object().unwrap().len(), 9);
        assert_eq!(l["kind"], "for");
        assert_eq!(l["verdict"], "blocked");
        let d = &v["diagnostics"][0];
        assert_key_order(
            &text,
            &[
                "\"diagnostics\"",
                "path",
                "line",
                "column",
                "rule",
                "severity",
                "message",
            ],
        );
        assert_eq!(d.as_object().unwrap().len(), 6);
        assert_eq!(v["files"][0]["functions"][0]["kind"], "kernel");
        // `unresolved` only where a loop has some, after `blockers`.
        let l1 = &v["files"][0]["functions"][0]["loops"][1];
        assert_eq!(l1["unresolved"], serde_json::json!(["ext_scale"]));
        assert_eq!(l1.as_object().unwrap().len(), 10);
        assert_eq!(v["diagnostics"][3]["rule"], "include-not-found");
        assert!(v["files"][0]["functions"][0].get("resources").is_none());
        insta::assert_snapshot!(text);
    }
}
