//! The smallest JSON reader that pulls the members out of one JSON object: RFC 7628's
//! OAUTHBEARER error object and Kafka Streams' process file (`kafka-streams-process-metadata`).
//! Hand-written to avoid a JSON dependency for a few fields; bounded in depth so hostile
//! input cannot overflow the stack.

const MAX_DEPTH: usize = 16;

/// The string values of `keys` among the members of the JSON object `input`: `None` where a
/// key is absent or not a string, and for every key if `input` is not one JSON object.
pub(crate) fn string_members<const N: usize>(
    input: &[u8],
    keys: &[&str; N],
) -> [Option<String>; N] {
    let mut out: [Option<String>; N] = std::array::from_fn(|_| None);
    for (key, value) in members(input).unwrap_or_default() {
        if let (Some(pos), Value::Str(v)) = (keys.iter().position(|k| *k == key), value) {
            out[pos] = Some(v);
        }
    }
    out
}

/// The members of the JSON object `input` is (whitespace around it allowed), in document
/// order; `None` if `input` is not exactly one JSON object.
pub(crate) fn members(input: &[u8]) -> Option<Vec<(String, Value)>> {
    let mut p = Parser { s: input, i: 0 };
    let mut found = Vec::new();
    p.ws();
    p.object(0, Some(&mut found))?;
    p.ws();
    (p.i == input.len()).then_some(found)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

/// A member's value, as far as the readers here need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// A string.
    Str(String),
    /// `null`.
    Null,
    /// A number, `true`, `false`, an object or an array.
    Other,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }
    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.i += 1)
    }
    fn object(&mut self, depth: usize, mut out: Option<&mut Vec<(String, Value)>>) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.eat(b'{')?;
        self.ws();
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            let value = self.value(depth)?;
            if let Some(out) = out.as_deref_mut() {
                out.push((key, value));
            }
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }
    fn array(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.eat(b'[')?;
        self.ws();
        if self.eat(b']').is_some() {
            return Some(());
        }
        loop {
            self.ws();
            self.value(depth)?;
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }
    fn value(&mut self, depth: usize) -> Option<Value> {
        match self.peek()? {
            b'"' => self.string().map(Value::Str),
            b'{' => self.object(depth + 1, None).map(|_| Value::Other),
            b'[' => self.array(depth + 1).map(|_| Value::Other),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null").map(|_| Value::Null),
            b'-' | b'0'..=b'9' => {
                while matches!(
                    self.peek(),
                    Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                ) {
                    self.i += 1;
                }
                Some(Value::Other)
            }
            _ => None,
        }
    }
    fn literal(&mut self, word: &[u8]) -> Option<Value> {
        let end = self.i.checked_add(word.len())?;
        (self.s.get(self.i..end)? == word).then(|| {
            self.i = end;
            Value::Other
        })
    }
    fn hex4(&mut self) -> Option<u32> {
        let end = self.i.checked_add(4)?;
        let digits = std::str::from_utf8(self.s.get(self.i..end)?).ok()?;
        let v = u32::from_str_radix(digits, 16).ok()?;
        self.i = end;
        Some(v)
    }
    fn string(&mut self) -> Option<String> {
        self.eat(b'"')?;
        let mut out = Vec::new();
        loop {
            let b = self.peek()?;
            self.i += 1;
            match b {
                b'"' => return String::from_utf8(out).ok(),
                b'\\' => {
                    let e = self.peek()?;
                    self.i += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&hi) {
                                self.eat(b'\\')?;
                                self.eat(b'u')?;
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return None;
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            char::from_u32(code)?
                        }
                        _ => return None,
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                0x00..=0x1f => return None,
                _ => out.push(b),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::string_members;

    #[test]
    fn extracts_members() {
        let doc = br#" {"status":"invalid_token","scope":"a b","openid-configuration":"https://x/.well-known","n":[1,{"q":null}],"t":true} "#;
        let [s, sc, o] = string_members(doc, &["status", "scope", "openid-configuration"]);
        assert_eq!(s.as_deref(), Some("invalid_token"));
        assert_eq!(sc.as_deref(), Some("a b"));
        assert_eq!(o.as_deref(), Some("https://x/.well-known"));
    }

    #[test]
    fn members_keep_nulls_and_order() {
        let m = super::members(br#"{"a":null,"b":"x","c":[1]}"#).unwrap();
        assert_eq!(
            m,
            [
                ("a".to_string(), super::Value::Null),
                ("b".to_string(), super::Value::Str("x".into())),
                ("c".to_string(), super::Value::Other),
            ]
        );
        assert_eq!(super::members(b"[1]"), None);
    }

    #[test]
    fn escapes_and_garbage() {
        let [s] = string_members(br#"{"status":"a\"\u00e9\ud83d\ude00"}"#, &["status"]);
        assert_eq!(s.as_deref(), Some("a\"é😀"));
        for bad in [
            &b"not json"[..],
            b"{",
            b"{\"status\":\"x\"",
            b"{\"status\":\"x\"} trailing",
            b"[]",
        ] {
            assert_eq!(string_members(bad, &["status"]), [None]);
        }
        let deep = format!("{}{}", "{\"a\":".repeat(10_000), "1");
        assert_eq!(string_members(deep.as_bytes(), &["a"]), [None]);
    }
}
