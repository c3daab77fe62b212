//! `--format github`: GitHub Actions workflow commands, one `::warning file=...::message` a line.
//!
//! Escaping follows the runner's rules (actions/toolkit `command.ts`): in the message `%`, `\r`
//! and `\n` are percent-encoded; in property values `:` and `,` are too.

use guards::{CheckOutput, Severity};

pub fn render(output: &CheckOutput) -> String {
    let mut s = String::new();
    for d in &output.diagnostics {
        let command = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Hint => "notice",
        };
        s.push_str(&format!(
            "::{command} file={},line={},col={},title={}::{}\n",
            escape_property(&d.path),
            d.line,
            d.column,
            escape_property(&format!("hip-unroll {}", d.rule)),
            escape_data(&d.message),
        ));
    }
    s
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_data_and_properties() {
        assert_eq!(escape_data("100% a\r\nb: c, d"), "100%25 a%0D%0Ab: c, d");
        assert_eq!(escape_property("a:b,c%d\ne"), "a%3Ab%2Cc%25d%0Ae");
    }

    #[test]
    fn github_snapshot() {
        let (out, _) = super::super::fixtures::output();
        let text = render(&out);
        // Every line is one command; no raw newline survives inside a message.
        assert_eq!(text.lines().count(), out.diagnostics.len());
        assert!(text.lines().all(|l| l.starts_with("::")));
        insta::assert_snapshot!(text);
    }
}
