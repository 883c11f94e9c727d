//! Strict JSON: a parser for the host's input envelopes and a closed
//! encoder for the outputs.
//!
//! The parser accepts exactly RFC 8259 text that is also I-JSON (RFC 7493):
//! valid UTF-8, no duplicate member names, no lone surrogates, nothing after
//! the value. The host writes compact JSON and escapes `<`, `>`, `&`,
//! U+2028 and U+2029 as `\u` sequences; they decode like any other escape.
//! Objects keep their members in the order they came.
//!
//! The encoder writes what [`Value`] holds and nothing else: strings are
//! escaped, non-finite floats (which JSON cannot hold) become `null`.

use std::fmt;
use std::ops::Index;

/// Arrays and objects may nest this deep in parsed input; deeper input is
/// an error rather than a stack overflow.
pub const MAX_DEPTH: usize = 256;

/// One JSON value. Integers that fit an `i64` are [`Value::Int`]; every
/// other number is [`Value::Float`].
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    Array(Vec<Value>),
    /// Members in order; names are unique in parsed input.
    Object(Vec<(String, Value)>),
}

impl Default for Value {
    fn default() -> Self {
        Value::Null
    }
}

static NULL: Value = Value::Null;

/// Why a text is not strict JSON: what and the byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub message: String,
    pub offset: usize,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl Value {
    /// Parses one strict JSON text.
    pub fn parse(text: &str) -> Result<Value, Error> {
        Value::parse_bytes(text.as_bytes())
    }

    /// Parses one strict JSON text given as bytes (checked for UTF-8).
    pub fn parse_bytes(b: &[u8]) -> Result<Value, Error> {
        if let Err(e) = std::str::from_utf8(b) {
            return Err(Error { message: "invalid UTF-8".into(), offset: e.valid_up_to() });
        }
        let mut p = Parser { b, i: 0, depth: 0 };
        p.ws();
        let v = p.value()?;
        p.ws();
        if p.i != b.len() {
            return Err(p.err("unexpected data after the value"));
        }
        Ok(v)
    }

    /// An empty object, to fill with [`Value::set`].
    pub fn object() -> Value {
        Value::Object(Vec::new())
    }

    /// Sets member `name` of an object (replacing an existing one) and
    /// returns the object. Does nothing on other values.
    pub fn set(mut self, name: &str, v: impl Into<Value>) -> Value {
        self.insert(name, v);
        self
    }

    /// Sets member `name` of an object in place, replacing an existing one.
    pub fn insert(&mut self, name: &str, v: impl Into<Value>) {
        if let Value::Object(m) = self {
            let v = v.into();
            match m.iter_mut().find(|(k, _)| k == name) {
                Some(slot) => slot.1 = v,
                None => m.push((name.to_string(), v)),
            }
        }
    }

    /// Member `name` of an object.
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Object(m) => m.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Follows an RFC 6901 JSON pointer ("" is the value itself).
    pub fn pointer(&self, ptr: &str) -> Option<&Value> {
        if ptr.is_empty() {
            return Some(self);
        }
        if !ptr.starts_with('/') {
            return None;
        }
        let mut cur = self;
        for seg in ptr[1..].split('/') {
            let seg = seg.replace("~1", "/").replace("~0", "~");
            cur = match cur {
                Value::Object(_) => cur.get(&seg)?,
                Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(cur)
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// Any number as a float.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(n) => Some(*n as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// An array of strings; None when any element is not a string.
    pub fn as_strings(&self) -> Option<Vec<String>> {
        self.as_array()?.iter().map(|v| v.as_str().map(str::to_string)).collect()
    }

    /// The value as compact JSON text.
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    /// Appends the value as compact JSON text.
    pub fn write(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Int(n) => out.push_str(&n.to_string()),
            Value::Float(f) => {
                if f.is_finite() {
                    let s = f.to_string();
                    out.push_str(&s);
                } else {
                    out.push_str("null");
                }
            }
            Value::String(s) => write_string(out, s),
            Value::Array(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Value::Object(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(out, k);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// `v["name"]` is the member, or null when v is not an object or has none.
impl Index<&str> for Value {
    type Output = Value;
    fn index(&self, name: &str) -> &Value {
        self.get(name).unwrap_or(&NULL)
    }
}

/// `v[i]` is element i, or null when v is not an array or is shorter.
impl Index<usize> for Value {
    type Output = Value;
    fn index(&self, i: usize) -> &Value {
        match self {
            Value::Array(a) => a.get(i).unwrap_or(&NULL),
            _ => &NULL,
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Int(n)
    }
}
impl From<i32> for Value {
    fn from(n: i32) -> Value {
        Value::Int(n as i64)
    }
}
impl From<usize> for Value {
    fn from(n: usize) -> Value {
        Value::Int(n as i64)
    }
}
impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Float(f)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        match v {
            Some(v) => v.into(),
            None => Value::Null,
        }
    }
}

/// Appends s as a JSON string: `"` and `\` escaped, control characters and
/// U+2028/U+2029 as `\u` sequences, everything else as UTF-8.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Builds an RFC 6901 pointer from member names and indexes:
/// `pointer(&["payload", "option_ids", "1"])` is `/payload/option_ids/1`.
/// `~` and `/` in a segment are escaped.
pub fn pointer(segments: &[&str]) -> String {
    let mut p = String::new();
    for s in segments {
        p.push('/');
        p.push_str(&s.replace('~', "~0").replace('/', "~1"));
    }
    p
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, msg: &str) -> Error {
        Error { message: msg.to_string(), offset: self.i }
    }

    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn literal(&mut self, word: &str, v: Value) -> Result<Value, Error> {
        if self.b[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err("invalid literal"))
        }
    }

    fn value(&mut self) -> Result<Value, Error> {
        match self.peek() {
            None => Err(self.err("unexpected end of input")),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b'[') => self.array(),
            Some(b'{') => self.object(),
            Some(c) if c == b'-' || c.is_ascii_digit() => self.number(),
            Some(_) => Err(self.err("unexpected character")),
        }
    }

    fn enter(&mut self) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("nesting deeper than 256 levels"));
        }
        self.i += 1;
        self.ws();
        Ok(())
    }

    fn array(&mut self) -> Result<Value, Error> {
        self.enter()?;
        let mut out = Vec::new();
        if self.peek() == Some(b']') {
            self.i += 1;
            self.depth -= 1;
            return Ok(Value::Array(out));
        }
        loop {
            out.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.ws();
                }
                Some(b']') => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(Value::Array(out));
                }
                _ => return Err(self.err("expected , or ]")),
            }
        }
    }

    fn object(&mut self) -> Result<Value, Error> {
        self.enter()?;
        let mut out: Vec<(String, Value)> = Vec::new();
        if self.peek() == Some(b'}') {
            self.i += 1;
            self.depth -= 1;
            return Ok(Value::Object(out));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.err("expected a member name"));
            }
            let at = self.i;
            let name = self.string()?;
            if out.iter().any(|(k, _)| *k == name) {
                return Err(Error { message: format!("duplicate member {:?}", name), offset: at });
            }
            self.ws();
            if self.peek() != Some(b':') {
                return Err(self.err("expected :"));
            }
            self.i += 1;
            self.ws();
            let v = self.value()?;
            out.push((name, v));
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.ws();
                }
                Some(b'}') => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(Value::Object(out));
                }
                _ => return Err(self.err("expected , or }")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, Error> {
        if self.i + 4 > self.b.len() {
            return Err(self.err("short \\u escape"));
        }
        let mut n = 0u32;
        for k in 0..4 {
            let d = match self.b[self.i + k] {
                c @ b'0'..=b'9' => c - b'0',
                c @ b'a'..=b'f' => c - b'a' + 10,
                c @ b'A'..=b'F' => c - b'A' + 10,
                _ => return Err(self.err("invalid \\u escape")),
            };
            n = n * 16 + d as u32;
        }
        self.i += 4;
        Ok(n)
    }

    fn string(&mut self) -> Result<String, Error> {
        self.i += 1; // the opening quote
        let mut out = String::new();
        let mut start = self.i;
        loop {
            let c = match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(c) => c,
            };
            match c {
                b'"' => {
                    // The input was checked for UTF-8 and runs end on ASCII.
                    out.push_str(std::str::from_utf8(&self.b[start..self.i]).unwrap_or(""));
                    self.i += 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(std::str::from_utf8(&self.b[start..self.i]).unwrap_or(""));
                    self.i += 1;
                    let e = match self.peek() {
                        None => return Err(self.err("unterminated escape")),
                        Some(e) => e,
                    };
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let cp = if (0xD800..0xDC00).contains(&hi) {
                                if !self.b[self.i..].starts_with(b"\\u") {
                                    return Err(self.err("lone surrogate"));
                                }
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.err("lone surrogate"));
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return Err(self.err("lone surrogate"));
                            } else {
                                hi
                            };
                            match char::from_u32(cp) {
                                Some(ch) => out.push(ch),
                                None => return Err(self.err("invalid code point")),
                            }
                        }
                        _ => return Err(self.err("invalid escape")),
                    }
                    start = self.i;
                }
                c if c < 0x20 => return Err(self.err("control character in string")),
                _ => self.i += 1,
            }
        }
    }

    fn number(&mut self) -> Result<Value, Error> {
        let start = self.i;
        let mut float = false;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(c) if c.is_ascii_digit() => self.digits(),
            _ => return Err(self.err("invalid number")),
        }
        if self.peek() == Some(b'.') {
            float = true;
            self.i += 1;
            if !matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
                return Err(self.err("invalid number"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e') | Some(b'E')) {
            float = true;
            self.i += 1;
            if matches!(self.peek(), Some(b'+') | Some(b'-')) {
                self.i += 1;
            }
            if !matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
                return Err(self.err("invalid number"));
            }
            self.digits();
        }
        let text = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("");
        if !float {
            if let Ok(n) = text.parse::<i64>() {
                return Ok(Value::Int(n));
            }
        }
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::Float(f)),
            _ => Err(Error { message: "number out of range".into(), offset: start }),
        }
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
            self.i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_encodes() {
        let v = Value::parse(r#" {"a":[1,-2.5,true,null,"x\u003cy\ud83d\ude00"],"b":{}} "#).unwrap();
        assert_eq!(v["a"][0].as_i64(), Some(1));
        assert_eq!(v["a"][1].as_f64(), Some(-2.5));
        assert_eq!(v["a"][4].as_str(), Some("x<y😀"));
        assert!(v["missing"]["deeper"].is_null());
        assert_eq!(v.pointer("/a/2"), Some(&Value::Bool(true)));
        assert_eq!(v.to_json(), r#"{"a":[1,-2.5,true,null,"x<y😀"],"b":{}}"#);
        let s = Value::from("q\"\\\n\u{1}\u{2028}").to_json();
        assert_eq!(s, r#""q\"\\\n\u0001\u2028""#);
    }

    #[test]
    fn refuses_what_is_not_strict() {
        for bad in [
            r#"{"a":1,"a":2}"#,
            r#"{"a":1,}"#,
            r#"[1 2]"#,
            r#""\ud800""#,
            r#""\udc00x""#,
            "\"tab\there\"",
            r#"01"#,
            r#"1."#,
            r#"-"#,
            r#"{} x"#,
            r#"nul"#,
            r#"'a'"#,
            r#"1e999"#,
            "",
        ] {
            assert!(Value::parse(bad).is_err(), "accepted {:?}", bad);
        }
        assert!(Value::parse_bytes(b"\"\xff\"").is_err());
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(Value::parse(&deep).is_err());
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(Value::parse(&ok).is_ok());
    }

    #[test]
    fn builds_objects_and_pointers() {
        let v = Value::object().set("n", 3).set("s", "x").set("n", 4);
        assert_eq!(v.to_json(), r#"{"n":4,"s":"x"}"#);
        assert_eq!(pointer(&["payload", "a/b", "~c", "0"]), "/payload/a~1b/~0c/0");
        let big = Value::parse("9007199254740993").unwrap();
        assert_eq!(big.as_i64(), Some(9007199254740993));
    }
}
