//! `--format sarif`: a SARIF 2.1.0 log (one run, tool `hip-unroll`) for code-scanning services.
//!
//! Every result has `ruleId`, `ruleIndex`, `level`, `message.text` and one physical location
//! with a relative, forward-slash, percent-encoded URI and a region. Columns are UTF-16 code
//! units (SARIF's default `columnKind`), computed from the source when it is at hand. A
//! diagnostic's fix becomes `fixes` (one `artifactChange` with a `replacement` per edit,
//! `deletedRegion` by `byteOffset`/`byteLength` of the original file, `insertedContent.text`).

use crate::{line_col, ColumnUnit, RuleInfo, Sources};
use guards::{CheckOutput, Severity};
use serde_json::{json, Map, Value};

pub const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

pub fn render(output: &CheckOutput, sources: &Sources, rules: &[RuleInfo]) -> String {
    let mut rule_list: Vec<RuleInfo> = rules.to_vec();
    let mut extra: Vec<&str> = output
        .diagnostics
        .iter()
        .map(|d| d.rule.as_str())
        .filter(|id| !rules.iter().any(|r| r.id == *id))
        .collect();
    extra.sort_unstable();
    extra.dedup();
    rule_list.extend(extra.into_iter().map(|id| {
        let severity = output
            .diagnostics
            .iter()
            .find(|d| d.rule == id)
            .map_or(Severity::Warning, |d| d.severity);
        RuleInfo {
            id: id.into(),
            summary: id.into(),
            doc: String::new(),
            severity,
            kind: "lint",
        }
    }));

    let driver_rules: Vec<Value> = rule_list
        .iter()
        .map(|r| {
            let mut o = Map::new();
            o.insert("id".into(), json!(r.id));
            o.insert("shortDescription".into(), json!({ "text": r.summary }));
            let full = if r.doc.is_empty() {
                r.summary.clone()
            } else {
                r.doc.clone()
            };
            o.insert("fullDescription".into(), json!({ "text": full }));
            o.insert(
                "defaultConfiguration".into(),
                json!({ "level": level(r.severity) }),
            );
            if !r.doc.is_empty() {
                o.insert("help".into(), json!({ "text": r.doc, "markdown": r.doc }));
            }
            Value::Object(o)
        })
        .collect();

    let results: Vec<Value> = output
        .diagnostics
        .iter()
        .map(|d| {
            let index = rule_list.iter().position(|r| r.id == d.rule).unwrap_or(0);
            let source = sources.get(&d.path).map(|v| v.as_slice());
            let mut r = Map::new();
            r.insert("ruleId".into(), json!(d.rule));
            r.insert("ruleIndex".into(), json!(index));
            r.insert("level".into(), json!(level(d.severity)));
            r.insert("message".into(), json!({ "text": d.message }));
            r.insert(
                "locations".into(),
                json!([{ "physicalLocation": physical(&d.path, region(d.span, d.line, d.column, source)) }]),
            );
            if !d.related.is_empty() {
                let related: Vec<Value> = d
                    .related
                    .iter()
                    .enumerate()
                    .map(|(i, rel)| {
                        json!({
                            "id": i,
                            "message": { "text": rel.label },
                            "physicalLocation": physical(&d.path, region(rel.span, rel.line, rel.column, source)),
                        })
                    })
                    .collect();
                r.insert("relatedLocations".into(), Value::Array(related));
            }
            if let Some(fix) = &d.fix {
                r.insert("fixes".into(), json!([fix_value(&d.path, fix)]));
            }
            Value::Object(r)
        })
        .collect();

    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "hip-unroll",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": driver_rules,
            }},
            "columnKind": "utf16CodeUnits",
            "results": results,
        }],
    });
    let mut s = serde_json::to_string_pretty(&log).expect("SARIF value serialises");
    s.push('\n');
    s
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Hint => "note",
    }
}

/// A SARIF 2.1.0 `fix` (§3.55): the description and one artifact change with its replacements.
fn fix_value(path: &str, fix: &guards::Fix) -> Value {
    let replacements: Vec<Value> = fix
        .edits
        .iter()
        .map(|e| {
            json!({
                "deletedRegion": {
                    "byteOffset": e.range.start,
                    "byteLength": e.range.end - e.range.start,
                },
                "insertedContent": { "text": String::from_utf8_lossy(&e.text) },
            })
        })
        .collect();
    json!({
        "description": { "text": fix.message },
        "artifactChanges": [{
            "artifactLocation": { "uri": uri(path) },
            "replacements": replacements,
        }],
    })
}

fn physical(path: &str, region: Value) -> Value {
    json!({ "artifactLocation": { "uri": uri(path) }, "region": region })
}

/// The region of `span`; exact (with its end, in UTF-16 columns) when the source is known and
/// agrees with the reported `line`/`column`, else just the reported start.
fn region(span: (usize, usize), line: u32, column: u32, source: Option<&[u8]>) -> Value {
    if let Some(src) = source {
        let (start, end) = span;
        if start <= end
            && end <= src.len()
            && line_col(src, start, ColumnUnit::Bytes) == (line, column)
        {
            let (sl, sc) = line_col(src, start, ColumnUnit::Utf16);
            let (el, ec) = line_col(src, end, ColumnUnit::Utf16);
            if end > start {
                return json!({ "startLine": sl, "startColumn": sc, "endLine": el, "endColumn": ec });
            }
            return json!({ "startLine": sl, "startColumn": sc });
        }
    }
    json!({ "startLine": line.max(1), "startColumn": column.max(1) })
}

/// A path as a URI reference: relative paths stay relative (forward slashes), absolute ones
/// become `file://` URIs; every byte outside RFC 3986's unreserved set and `/` is encoded.
pub fn uri(path: &str) -> String {
    let path = path.replace('\\', "/");
    let mut out = String::with_capacity(path.len() + 8);
    if path.starts_with('/') {
        out.push_str("file://");
    }
    for &b in path.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    #[test]
    fn uris_are_relative_and_encoded() {
        assert_eq!(uri("src/a.cu"), "src/a.cu");
        assert_eq!(uri("odd name,100%:v2.cu"), "odd%20name%2C100%25%3Av2.cu");
        assert_eq!(uri("/abs/x.cu"), "file:///abs/x.cu");
        assert_eq!(uri("dir\\x.cu"), "dir/x.cu");
        assert_eq!(uri("\u{e9}.cu"), "%C3%A9.cu");
    }

    #[test]
    fn sarif_structure_and_snapshot() {
        let (out, sources) = fixtures::output();
        let text = render(&out, &sources, &fixtures::rules());
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["version"], "2.1.0");
        assert_eq!(v["$schema"], SCHEMA);
        let run = &v["runs"][0];
        assert_eq!(run["tool"]["driver"]["name"], "hip-unroll");
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), out.diagnostics.len());
        for r in results {
            let idx = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[idx]["id"], r["ruleId"]);
            assert!(["error", "warning", "note"].contains(&r["level"].as_str().unwrap()));
            let loc = &r["locations"][0]["physicalLocation"];
            assert!(!loc["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
                .starts_with('/'));
            assert!(loc["region"]["startLine"].as_u64().unwrap() >= 1);
            assert!(loc["region"]["startColumn"].as_u64().unwrap() >= 1);
        }
        // The blocked loop's region covers exactly the `for` keyword (line 5, columns 5..8).
        let reg = &results[0]["locations"][0]["physicalLocation"]["region"];
        assert_eq!(
            reg,
            &json!({"startLine": 5, "startColumn": 5, "endLine": 5, "endColumn": 8})
        );
        assert_eq!(
            results[0]["relatedLocations"][0]["physicalLocation"]["region"]["startLine"],
            7
        );
        insta::assert_snapshot!(text);
    }

    #[test]
    fn falls_back_to_reported_position_without_source() {
        let (out, _) = fixtures::output();
        let text = render(&out, &Sources::new(), &[]);
        let v: Value = serde_json::from_str(&text).unwrap();
        let reg = &v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
        assert_eq!(reg, &json!({"startLine": 5, "startColumn": 5}));
        // Rules seen only in diagnostics are still declared, so every ruleIndex resolves.
        assert_eq!(
            v["runs"][0]["tool"]["driver"]["rules"]
                .as_array()
                .unwrap()
                .len(),
            4
        );
        // The include note is a result like any other, at its `#include` line.
        let results = v["runs"][0]["results"].as_array().unwrap();
        let note = results
            .iter()
            .find(|r| r["ruleId"] == "include-not-found")
            .expect("the include note is a SARIF result");
        assert_eq!(note["level"], "note");
        assert_eq!(
            note["locations"][0]["physicalLocation"]["region"]["startLine"],
            12
        );
    }
}
