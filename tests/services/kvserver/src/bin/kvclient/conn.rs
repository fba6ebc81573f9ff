//! A connection to the server that survives the server: a request that
//! fails (connect refused, reset, EOF, timeout, an `ERR` reply from a server
//! about to exit) is retried on a new connection with backoff, since its
//! outcome is unknown and both requests are idempotent. After 30 s of
//! consecutive failures the server is declared gone.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::thread;
use std::time::{Duration, Instant};

const MIN_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_millis(100);
const GIVE_UP: Duration = Duration::from_secs(30);
/// Bounds on one connect and one request, so that a server that went away
/// silently (a partition, a crash without RST) costs a retry, not a hang.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// The server stayed unreachable for [`GIVE_UP`]; carries the last error.
#[derive(Debug)]
pub struct GaveUp(pub io::Error);

/// A lazily (re)connected line-protocol connection.
#[derive(Debug)]
pub struct Conn {
    server: String,
    stream: Option<BufReader<TcpStream>>,
}

impl Conn {
    /// A connection to `server` (`host:port`), opened on first use.
    pub fn new(server: &str) -> Conn {
        Conn {
            server: server.to_owned(),
            stream: None,
        }
    }

    /// Sends `request` until some server answers it without `ERR`, and
    /// returns that reply (without its `\n`).
    pub fn call(&mut self, request: &str) -> Result<String, GaveUp> {
        let mut backoff = MIN_BACKOFF;
        let mut failing_since = None;
        loop {
            match self.try_call(request) {
                Ok(reply) => return Ok(reply),
                Err(e) => {
                    self.stream = None;
                    let since = *failing_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= GIVE_UP {
                        return Err(GaveUp(e));
                    }
                    eprintln!("kvclient: {request}: {e}; retrying in {backoff:?}");
                    thread::sleep(backoff);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    fn try_call(&mut self, request: &str) -> io::Result<String> {
        let stream = match &mut self.stream {
            Some(stream) => stream,
            None => self.stream.insert(BufReader::new(connect(&self.server)?)),
        };
        // Reads are buffered, writes are not: one write() per request.
        stream
            .get_mut()
            .write_all(format!("{request}\n").as_bytes())?;
        let mut line = String::new();
        stream.read_line(&mut line)?;
        let Some(reply) = line.strip_suffix('\n') else {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed before a full reply",
            ));
        };
        if reply.starts_with("ERR") {
            return Err(io::Error::other(format!("server replied {reply:?}")));
        }
        Ok(reply.to_owned())
    }
}

/// Connects to the first address of `server` that accepts.
fn connect(server: &str) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{server}: no address"));
    for addr in server.to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(stream) => {
                stream.set_read_timeout(Some(IO_TIMEOUT))?;
                stream.set_write_timeout(Some(IO_TIMEOUT))?;
                return Ok(stream);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}
