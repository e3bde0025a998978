//! Structured output without trusting the model: find the JSON in a reply (the whole
//! text, a fenced block, or the first balanced object or array, after any reasoning
//! the model wrote in `<think>` tags) and validate it against a JSON schema (pure).
//!
//! How the server is asked is the profile's structured-output form
//! ([`super::profile::SchemaForm`]), found when the profile is tested
//! ([`super::Runtime::find_schema_form`]): `json_schema`, llama.cpp's `json_object`
//! with a schema, or [`instructions`] in the prompt for a server that takes neither.
//! Whatever the form, every reply is extracted and validated here, and a reply that
//! fails is sent back for repair: a server's constraint is a help, not the guarantee.

use serde_json::Value;

/// A compiled JSON schema.
pub struct Validator {
    inner: jsonschema::Validator,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Validator")
    }
}

/// The schema itself is not a valid JSON schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the JSON schema is invalid: {0}")]
pub struct InvalidSchema(pub String);

/// One way a value breaks its schema, at a JSON pointer into the value (`""` for the
/// whole value, `/items/0/title` for a nested field).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub pointer: String,
    pub message: String,
}

/// The first few violations of a value, in the order the validator found them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.0.iter().map(|v| if v.pointer.is_empty() { v.message.clone() } else { format!("{}: {}", v.pointer, v.message) }).collect::<Vec<_>>().join("; "))]
pub struct Violations(pub Vec<Violation>);

impl Validator {
    pub fn new(schema: &Value) -> Result<Validator, InvalidSchema> {
        jsonschema::validator_for(schema).map(|inner| Validator { inner }).map_err(|e| InvalidSchema(e.to_string()))
    }

    /// `Err` holds at most five violations, each with its JSON pointer.
    pub fn check(&self, value: &Value) -> Result<(), Violations> {
        let problems: Vec<Violation> = self.inner.iter_errors(value).take(5).map(|e| Violation { pointer: e.instance_path().to_string(), message: e.to_string() }).collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Violations(problems))
        }
    }
}

/// The instruction that asks for JSON matching `schema` when the server is not asked
/// by a `response_format` ([`super::profile::SchemaForm::Instructions`]).
pub fn instructions(schema: &Value) -> String {
    format!("Reply with only a JSON value (no prose, no code fence) that matches this JSON schema:\n{schema}")
}

/// The JSON value in a model's reply, if any: the whole reply, else a fenced block,
/// else the first balanced object or array that parses, each looked for after a
/// closed `<think>…</think>` block (small local models often reason aloud first).
pub fn extract_json(text: &str) -> Option<Value> {
    let text = match text.rfind("</think>") {
        Some(end) => &text[end + "</think>".len()..],
        None => text,
    };
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str::<Value>(trimmed) {
        if value.is_object() || value.is_array() {
            return Some(value);
        }
    }
    // A fenced block: ```json ... ``` or ``` ... ```.
    let mut rest = trimmed;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map(|n| n + 1).unwrap_or(0);
        let Some(close) = after[body_start..].find("```") else { break };
        if let Ok(value) = serde_json::from_str::<Value>(after[body_start..body_start + close].trim()) {
            return Some(value);
        }
        rest = &after[body_start + close + 3..];
    }
    // The first balanced object or array that parses.
    for (start, c) in trimmed.char_indices() {
        if c != '{' && c != '[' {
            continue;
        }
        if let Some(end) = balanced_end(&trimmed[start..]) {
            if let Ok(value) = serde_json::from_str::<Value>(&trimmed[start..start + end]) {
                return Some(value);
            }
        }
    }
    None
}

/// The byte length of the balanced bracket expression at the start of `text`.
fn balanced_end(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (idx, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(idx + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_json_in_replies() {
        assert_eq!(extract_json("{\"a\":1}"), Some(json!({"a": 1})));
        assert_eq!(extract_json("Sure!\n```json\n{\"a\": [1, 2]}\n```\nDone."), Some(json!({"a": [1, 2]})));
        assert_eq!(extract_json("The answer is {\"t\": \"a } b\"} as asked."), Some(json!({"t": "a } b"})));
        assert_eq!(extract_json("no json here"), None);
        assert_eq!(extract_json("{broken"), None);
        // What small local models write around the JSON when no response format holds them.
        assert_eq!(extract_json("<think>The schema wants {ok}.</think>\n{\"ok\": true}"), Some(json!({"ok": true})));
        assert_eq!(extract_json("Here is the JSON you asked for:\n\n```\n{\"ok\": true}\n```"), Some(json!({"ok": true})));
        assert_eq!(extract_json("好的，结果如下：{\"summary\": \"改写了开头\"}。"), Some(json!({"summary": "改写了开头"})));
    }

    #[test]
    fn validates_against_a_schema() {
        let validator = Validator::new(&json!({"type": "object", "required": ["title"], "properties": {"title": {"type": "string"}}})).unwrap();
        assert_eq!(validator.check(&json!({"title": "x"})), Ok(()));
        let error = validator.check(&json!({"title": 3})).unwrap_err();
        assert_eq!(error.0.len(), 1);
        assert_eq!(error.0[0].pointer, "/title");
        assert!(error.to_string().starts_with("/title: "), "{error}");
        assert_eq!(validator.check(&json!({})).unwrap_err().0[0].pointer, "", "a missing field is reported at the object");
        assert!(Validator::new(&json!({"type": 7})).is_err());
    }
}
