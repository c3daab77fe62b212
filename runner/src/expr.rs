//! The `min-length` expressions of a spec: integer arithmetic (`+ - * / %`, parentheses) over
//! literals and names (`grid.x`, `block.x`, `threads`, `blocks`, scalar arguments such as `n`),
//! evaluated with checked 128-bit arithmetic. Division rounds down; `ceil(a, b)` rounds up.
//! Nesting (parentheses, unary minus, function arguments) is limited to [`MAX_DEPTH`] levels
//! and the text to [`MAX_LEN`] bytes, so no expression can overflow the stack.

use std::collections::HashMap;

/// Deepest nesting of parentheses, unary minus and function calls.
pub const MAX_DEPTH: usize = 64;
/// Longest expression, in bytes.
pub const MAX_LEN: usize = 4096;

/// Evaluate `text` with `names`; the error says what is wrong and where.
pub fn eval(text: &str, names: &HashMap<String, i128>) -> Result<i128, String> {
    if text.len() > MAX_LEN {
        return Err(format!(
            "expression of {} bytes is longer than the limit of {MAX_LEN}",
            text.len()
        ));
    }
    let tokens = lex(text)?;
    let mut p = Parser {
        tokens: &tokens,
        pos: 0,
        names,
        depth: 0,
    };
    let v = p.sum()?;
    match p.tokens.get(p.pos) {
        None => Ok(v),
        Some(t) => Err(format!("unexpected `{}`", t.show())),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(i128),
    Name(String),
    Op(char),
}

impl Tok {
    fn show(&self) -> String {
        match self {
            Tok::Num(n) => n.to_string(),
            Tok::Name(n) => n.clone(),
            Tok::Op(c) => c.to_string(),
        }
    }
}

fn lex(text: &str) -> Result<Vec<Tok>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
                i += 1;
            }
            let digits: String = text[start..i].chars().filter(|c| *c != '_').collect();
            out.push(Tok::Num(
                digits
                    .parse()
                    .map_err(|_| format!("number `{digits}` too large"))?,
            ));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            out.push(Tok::Name(text[start..i].to_string()));
        } else if "+-*/%(),".contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else {
            return Err(format!("unexpected character `{c}`"));
        }
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: &'a [Tok],
    pos: usize,
    names: &'a HashMap<String, i128>,
    /// Current nesting (see [`MAX_DEPTH`]).
    depth: usize,
}

const OVERFLOW: &str = "arithmetic overflow";

impl Parser<'_> {
    fn peek_op(&self) -> Option<char> {
        match self.tokens.get(self.pos) {
            Some(Tok::Op(c)) => Some(*c),
            _ => None,
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.peek_op() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("expected `{c}`"))
        }
    }

    fn sum(&mut self) -> Result<i128, String> {
        let mut v = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek_op() {
            self.pos += 1;
            let r = self.product()?;
            v = if op == '+' {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            }
            .ok_or(OVERFLOW)?;
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<i128, String> {
        let mut v = self.unary()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek_op() {
            self.pos += 1;
            let r = self.unary()?;
            v = match op {
                '*' => v.checked_mul(r).ok_or(OVERFLOW)?,
                _ if r == 0 => return Err("division by zero".into()),
                '/' => v.div_euclid(r),
                _ => v.rem_euclid(r),
            };
        }
        Ok(v)
    }

    fn unary(&mut self) -> Result<i128, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!(
                "nested deeper than the limit of {MAX_DEPTH} levels"
            ));
        }
        let v = if self.peek_op() == Some('-') {
            self.pos += 1;
            self.unary()
                .and_then(|v| v.checked_neg().ok_or_else(|| OVERFLOW.into()))
        } else {
            self.atom()
        };
        self.depth -= 1;
        v
    }

    fn atom(&mut self) -> Result<i128, String> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        match t {
            Some(Tok::Num(n)) => Ok(n),
            Some(Tok::Op('(')) => {
                let v = self.sum()?;
                self.expect(')')?;
                Ok(v)
            }
            Some(Tok::Name(n)) if n == "ceil" || n == "min" || n == "max" => {
                self.expect('(')?;
                let a = self.sum()?;
                self.expect(',')?;
                let b = self.sum()?;
                self.expect(')')?;
                match n.as_str() {
                    "min" => Ok(a.min(b)),
                    "max" => Ok(a.max(b)),
                    _ if b == 0 => Err("division by zero".into()),
                    _ => Ok(-((-a).div_euclid(b))),
                }
            }
            Some(Tok::Name(n)) => self.names.get(&n).copied().ok_or_else(|| {
                let mut known: Vec<&str> = self.names.keys().map(String::as_str).collect();
                known.sort_unstable();
                format!("unknown name `{n}` (known: {})", known.join(", "))
            }),
            Some(t) => Err(format!("unexpected `{}`", t.show())),
            None => Err("unexpected end of expression".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> HashMap<String, i128> {
        [
            ("grid.x", 4),
            ("block.x", 256),
            ("threads", 1024),
            ("n", 1000),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    #[test]
    fn evaluates() {
        let n = names();
        assert_eq!(eval("grid.x * block.x", &n), Ok(1024));
        assert_eq!(eval("n + 2 * (4 - 1)", &n), Ok(1006));
        assert_eq!(eval("ceil(n, 256) * 256", &n), Ok(1024));
        assert_eq!(eval("n / 256", &n), Ok(3));
        assert_eq!(
            eval("-n % 7 + max(1, 2)", &n),
            Ok((-1000i128).rem_euclid(7) + 2)
        );
        assert_eq!(eval("1_000", &n), Ok(1000));
    }

    #[test]
    fn errors_say_why() {
        let n = names();
        assert!(eval("m", &n)
            .unwrap_err()
            .starts_with("unknown name `m` (known: block.x, grid.x, n, threads)"));
        assert_eq!(eval("n / 0", &n), Err("division by zero".into()));
        assert_eq!(eval("(n", &n), Err("expected `)`".into()));
        assert_eq!(eval("n n", &n), Err("unexpected `n`".into()));
        assert_eq!(eval("n $", &n), Err("unexpected character `$`".into()));
        assert_eq!(
            eval("170141183460469231731687303715884105727 + 1", &n),
            Err(OVERFLOW.into())
        );
    }

    #[test]
    fn nesting_and_length_are_limited() {
        let n = names();
        let nested = |d: usize| format!("{}n{}", "(".repeat(d), ")".repeat(d));
        // Each level is one unary step for the parentheses' contents, plus the outer term.
        assert_eq!(eval(&nested(MAX_DEPTH - 1), &n), Ok(1000));
        let deep = "nested deeper than the limit of 64 levels".to_string();
        assert_eq!(eval(&nested(MAX_DEPTH), &n), Err(deep.clone()));
        assert_eq!(
            eval(&format!("{}n", "-".repeat(100)), &n),
            Err(deep.clone())
        );
        assert_eq!(
            eval(
                &format!("{}1, 1{}", "max(".repeat(100), ")".repeat(100)),
                &n
            ),
            Err(deep.clone())
        );
        // Far past the limit (it overflowed the stack before the limit existed).
        let big = "(".repeat(2000) + "n" + &")".repeat(2000);
        assert_eq!(eval(&big, &n), Err(deep));
        let long = "1+".repeat(3000) + "1";
        assert!(eval(&long, &n)
            .unwrap_err()
            .contains("longer than the limit of 4096"));
        let ok = "1+".repeat(2000) + "1";
        assert_eq!(eval(&ok, &n), Ok(2001));
    }
}
