//! `OAUTHBEARER` (RFC 7628) client initial response, as Kafka's Java client sends it:
//!
//! ```text
//!   n,,\x01auth=Bearer <token>\x01[<key>=<value>\x01]*\x01
//! ```
//!
//! The token comes from an application callback (fetching and refreshing tokens is the
//! application's business: it knows its identity provider). A broker that accepts the token
//! answers with empty bytes; one that rejects it sends an RFC 7628 §3.2.2 JSON error document,
//! which [`OAuthBearer::step`] turns into [`SaslError::OAuthBearerServerError`].

use std::fmt;

use super::{SaslError, SaslStep};
pub use crate::common::sasl::{OAuthToken, OAuthTokenCallback};

/// The mechanism name.
pub const MECHANISM: &str = crate::common::sasl::OAUTHBEARER;

/// RFC 7628 key/value separator.
const KVSEP: u8 = 0x01;

/// RFC 6750 `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Initial,
    Sent,
    Done,
    Failed,
}

/// OAUTHBEARER client state. `Debug` never shows the token.
pub struct OAuthBearer {
    token: OAuthToken,
    state: State,
}

impl fmt::Debug for OAuthBearer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthBearer")
            .field("token", &self.token)
            .field("state", &self.state)
            .finish()
    }
}

impl OAuthBearer {
    /// The single byte a client sends after a server error document (RFC 7628 §3.2.3), so
    /// the server can complete the failed exchange.
    pub const ABORT_RESPONSE: &'static [u8] = &[KVSEP];

    /// Calls the application's callback and validates the token it returns.
    pub fn from_callback(callback: &OAuthTokenCallback) -> Result<Self, SaslError> {
        let token = callback().map_err(|message| SaslError::TokenCallback { message })?;
        Self::new(token)
    }

    /// Validates `token` (RFC 6750 `b64token`) and its extensions (letters-only keys, not
    /// `auth`; values of visible ASCII, space, tab, CR, LF).
    pub fn new(token: OAuthToken) -> Result<Self, SaslError> {
        let bad = |reason: String| SaslError::InvalidCredentials {
            mechanism: MECHANISM,
            reason,
        };
        if !is_b64token(&token.value) {
            return Err(bad("token is not an RFC 6750 b64token".to_owned()));
        }
        for (key, value) in &token.extensions {
            if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphabetic()) {
                return Err(bad(format!("extension key {key:?} must be letters only")));
            }
            if key == "auth" {
                return Err(bad("extension key \"auth\" is reserved".to_owned()));
            }
            let value_ok = value
                .bytes()
                .all(|b| (0x21..=0x7e).contains(&b) || b" \t\r\n".contains(&b));
            if !value_ok {
                return Err(bad(format!("extension {key:?} has a disallowed character")));
            }
        }
        Ok(OAuthBearer {
            token,
            state: State::Initial,
        })
    }

    /// The client initial response.
    pub fn start(&mut self) -> Vec<u8> {
        self.state = State::Sent;
        let mut out = Vec::with_capacity(32 + self.token.value.len());
        out.extend_from_slice(b"n,,");
        out.push(KVSEP);
        out.extend_from_slice(b"auth=Bearer ");
        out.extend_from_slice(self.token.value.as_bytes());
        out.push(KVSEP);
        for (key, value) in &self.token.extensions {
            out.extend_from_slice(key.as_bytes());
            out.push(b'=');
            out.extend_from_slice(value.as_bytes());
            out.push(KVSEP);
        }
        out.push(KVSEP);
        out
    }

    /// Empty server bytes mean success; anything else is the server's error document.
    pub fn step(&mut self, server_msg: &[u8]) -> Result<SaslStep, SaslError> {
        if self.state != State::Sent {
            return Err(SaslError::UnexpectedServerMessage {
                mechanism: MECHANISM,
            });
        }
        if server_msg.is_empty() {
            self.state = State::Done;
            return Ok(SaslStep::Done(None));
        }
        self.state = State::Failed;
        let fields = json::string_members(server_msg, &["status", "scope", "openid-configuration"]);
        let [status, scope, openid_configuration] = fields;
        Err(SaslError::OAuthBearerServerError {
            status,
            scope,
            openid_configuration,
        })
    }

    /// Whether the server accepted the token.
    pub fn is_complete(&self) -> bool {
        self.state == State::Done
    }
}

/// The smallest JSON reader that can pull string members out of RFC 7628's error object.
/// Hand-written to avoid a JSON dependency for three fields; bounded in depth so hostile input
/// cannot overflow the stack. Anything unparsable yields `None` for every member.
mod json {
    const MAX_DEPTH: usize = 16;

    pub(super) fn string_members<const N: usize>(
        input: &[u8],
        keys: &[&str; N],
    ) -> [Option<String>; N] {
        let mut out: [Option<String>; N] = std::array::from_fn(|_| None);
        let mut p = Parser { s: input, i: 0 };
        let mut found = Vec::new();
        p.ws();
        if p.object(0, Some(&mut found)).is_none() {
            return out;
        }
        p.ws();
        if p.i != input.len() {
            return out;
        }
        for (key, value) in found {
            if let Some(pos) = keys.iter().position(|k| *k == key) {
                out[pos] = Some(value);
            }
        }
        out
    }

    struct Parser<'a> {
        s: &'a [u8],
        i: usize,
    }

    enum Value {
        Str(String),
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
        fn object(
            &mut self,
            depth: usize,
            mut out: Option<&mut Vec<(String, String)>>,
        ) -> Option<()> {
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
                if let (Value::Str(v), Some(out)) = (self.value(depth)?, out.as_deref_mut()) {
                    out.push((key, v));
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
                b'n' => self.literal(b"null"),
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn initial_response_layout() {
        let mut m = OAuthBearer::new(OAuthToken::new("eyJ.abc-_.sig")).unwrap();
        assert_eq!(m.start(), b"n,,\x01auth=Bearer eyJ.abc-_.sig\x01\x01");
        let tok = OAuthToken::new("t0k")
            .with_extension("traceId", "123")
            .with_extension("b", "x y");
        let mut m = OAuthBearer::new(tok).unwrap();
        assert_eq!(
            m.start(),
            b"n,,\x01auth=Bearer t0k\x01b=x y\x01traceId=123\x01\x01"
        );
        assert_eq!(m.step(b"").unwrap(), SaslStep::Done(None));
        assert!(m.is_complete());
    }

    #[test]
    fn rejects_invalid_tokens_and_extensions() {
        for t in ["", "a b", "a\x01b", "==", "tok\n"] {
            assert!(OAuthBearer::new(OAuthToken::new(t)).is_err(), "{t:?}");
        }
        assert!(OAuthBearer::new(OAuthToken::new("abc==")).is_ok());
        for (k, v) in [("auth", "x"), ("a1", "x"), ("", "x"), ("k", "a\x01b")] {
            assert!(OAuthBearer::new(OAuthToken::new("t").with_extension(k, v)).is_err());
        }
    }

    #[test]
    fn callback_errors_are_typed() {
        let cb: OAuthTokenCallback = Arc::new(|| Err("idp unreachable".to_owned()));
        match OAuthBearer::from_callback(&cb) {
            Err(SaslError::TokenCallback { message }) => assert_eq!(message, "idp unreachable"),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn server_error_document_is_typed() {
        let mut m = OAuthBearer::new(OAuthToken::new("t")).unwrap();
        m.start();
        let err = m
            .step(br#"{"status":"invalid_token","scope":"kafka"}"#)
            .unwrap_err();
        assert_eq!(
            err,
            SaslError::OAuthBearerServerError {
                status: Some("invalid_token".into()),
                scope: Some("kafka".into()),
                openid_configuration: None
            }
        );
        assert!(!m.is_complete());
        assert!(matches!(
            m.step(b""),
            Err(SaslError::UnexpectedServerMessage { .. })
        ));
    }
}
