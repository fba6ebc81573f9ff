//! One client connection: requests are answered in order until EOF. A put
//! that could not be made durable is answered `ERR ...` and the process
//! exits 1 (crash-stop), so the restart's recovery decides what survived.

use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;

use kvserver::protocol::Request;

use crate::store::Store;

/// Serves `stream` until the client closes it or a socket error occurs.
pub fn serve(stream: TcpStream, store: &Store) -> io::Result<()> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        // EOF, or a final line without `\n`: the client died mid-request.
        let Some(request) = line.strip_suffix('\n') else {
            return Ok(());
        };
        let reply = match Request::parse(request) {
            Some(Request::Put(key, value)) => match store.put(key, value) {
                Ok(()) => "OK".to_owned(),
                Err(e) => {
                    eprintln!("kvserver: PUT {key} not durable: {e}; exiting");
                    // Best effort: the client treats a closed connection the same.
                    let _ = reader
                        .get_mut()
                        .write_all(format!("{}\n", e.reply()).as_bytes());
                    std::process::exit(1);
                }
            },
            Some(Request::Get(key)) => match store.get(key) {
                Some(value) => format!("VALUE {value}"),
                None => "NONE".to_owned(),
            },
            None => "ERR usage".to_owned(),
        };
        reader
            .get_mut()
            .write_all(format!("{reply}\n").as_bytes())?;
    }
}
