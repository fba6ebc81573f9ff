//! A minimal HTTP/1.1 client: one POST per connection, with timeouts.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Why a request got no answer.
pub enum Error {
    /// The connection could not be made: the request never left.
    Connect,
    /// Sent, but the answer did not come (timeout, reset, garbage).
    NoAnswer,
}

const TIMEOUT: Duration = Duration::from_secs(1);

/// POSTs a JSON body; returns the status code and the response body.
pub fn post(endpoint: &str, path: &str, body: &str) -> Result<(u16, String), Error> {
    let addr = endpoint
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or(Error::Connect)?;
    let mut s = TcpStream::connect_timeout(&addr, TIMEOUT).map_err(|_| Error::Connect)?;
    let _ = s.set_read_timeout(Some(TIMEOUT));
    let _ = s.set_write_timeout(Some(TIMEOUT));
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: {endpoint}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).map_err(|_| Error::NoAnswer)?;
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).map_err(|_| Error::NoAnswer)?;
    let text = String::from_utf8_lossy(&resp);
    let (head, rest) = text.split_once("\r\n\r\n").ok_or(Error::NoAnswer)?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or(Error::NoAnswer)?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(rest)
    } else {
        rest.to_string()
    };
    Ok((status, body))
}

/// Joins the chunks of a chunked body.
fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}
