//! The line protocol, one request and one reply per `\n`-terminated line:
//!
//! ```text
//! PUT key value   ->  OK            (the put is durable)
//! GET key         ->  VALUE value | NONE
//! anything else   ->  ERR usage
//! ```
//!
//! A server that cannot make a put durable replies `ERR write` or
//! `ERR fsync` and exits. Keys and values are tokens of printable ASCII
//! without spaces, and keys have no `=`, so a `key=value` log line splits
//! unambiguously and a torn or zero-filled log line is recognisably invalid.

/// A parsed request.
#[derive(Debug, PartialEq, Eq)]
pub enum Request<'a> {
    /// `PUT key value`.
    Put(&'a str, &'a str),
    /// `GET key`.
    Get(&'a str),
}

impl<'a> Request<'a> {
    /// Parses one request line (without its `\n`); `None` if malformed.
    pub fn parse(line: &'a str) -> Option<Request<'a>> {
        let words: Vec<&str> = line.split(' ').collect();
        match words[..] {
            ["PUT", key, value] if is_key(key) && is_value(value) => Some(Request::Put(key, value)),
            ["GET", key] if is_key(key) => Some(Request::Get(key)),
            _ => None,
        }
    }
}

/// A value: a non-empty token of printable, non-space ASCII.
pub fn is_value(token: &str) -> bool {
    !token.is_empty() && token.bytes().all(|b| b.is_ascii_graphic())
}

/// A key: a value that contains no `=` (the log's separator).
pub fn is_key(token: &str) -> bool {
    is_value(token) && !token.contains('=')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_put_and_get() {
        assert_eq!(
            Request::parse("PUT k1 v=1"),
            Some(Request::Put("k1", "v=1"))
        );
        assert_eq!(Request::parse("GET k1"), Some(Request::Get("k1")));
    }

    #[test]
    fn rejects_malformed_requests() {
        for line in [
            "",
            "PUT k1",
            "PUT k=1 v",
            "PUT k1  v",
            "GET",
            "GET k\0",
            "DEL k1",
            "get k1",
        ] {
            assert_eq!(Request::parse(line), None, "{line:?}");
        }
    }
}
