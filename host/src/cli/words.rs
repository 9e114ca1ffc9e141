//! Splitting what a person types: words separated by whitespace, `"…"` or `'…'` quoting
//! a word with spaces (a backslash escapes the next character inside double quotes), and
//! `key=value` pairs whose value is read as JSON when it is JSON (`9`, `true`,
//! `["a","b"]`, `"9"`) and as a string otherwise (`D4`).

use serde_json::Value;

/// Why a line could not be split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WordsError {
    /// A quote was opened and not closed.
    #[error("a quote is not closed")]
    UnclosedQuote,
}

/// Splits a line into words.
pub fn split(line: &str) -> Result<Vec<String>, WordsError> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '"' | '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        None => return Err(WordsError::UnclosedQuote),
                        Some(q) if q == c => break,
                        Some('\\') if c == '"' => match chars.next() {
                            Some(e) => word.push(e),
                            None => return Err(WordsError::UnclosedQuote),
                        },
                        Some(other) => word.push(other),
                    }
                }
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// A value as typed: JSON when it parses as JSON, else the text itself.
pub fn json_ish(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// `key=value` as (key, value), or `None` for a word without `=` (or one starting with
/// it).
pub fn pair(word: &str) -> Option<(&str, Value)> {
    let (k, v) = word.split_once('=')?;
    (!k.is_empty()).then(|| (k, json_ish(v)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn words_split_on_whitespace_and_quotes_keep_spaces() {
        assert_eq!(
            split(r#"act  say text="hello there" 'a b'"#).unwrap(),
            ["act", "say", "text=hello there", "a b"]
        );
        assert_eq!(split(r#"x "a\"b""#).unwrap(), ["x", "a\"b"]);
        assert_eq!(split("  ").unwrap(), Vec::<String>::new());
        assert_eq!(split("say \"open"), Err(WordsError::UnclosedQuote));
    }

    #[test]
    fn values_are_json_when_they_parse() {
        assert_eq!(pair("size=9"), Some(("size", json!(9))));
        assert_eq!(pair("move=D4"), Some(("move", json!("D4"))));
        assert_eq!(pair("ok=true"), Some(("ok", json!(true))));
        assert_eq!(pair("s=\"9\""), Some(("s", json!("9"))));
        assert_eq!(pair("l=[1,2]"), Some(("l", json!([1, 2]))));
        assert_eq!(pair("e="), Some(("e", json!(""))));
        assert_eq!(pair("D4"), None);
        assert_eq!(pair("=x"), None);
    }
}
