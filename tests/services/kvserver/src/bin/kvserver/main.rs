//! `kvserver --listen ADDR --data DIR [--bug NAME]`: a key-value server
//! whose puts are acknowledged only once durable in `DIR/wal.log` (see the
//! crate docs and tests/services/README.md). One thread per connection.

mod bug;
mod session;
mod store;
mod wal;

use std::net::TcpListener;
use std::path::Path;
use std::process::exit;
use std::sync::Arc;
use std::thread;

use kvserver::args::Flags;

use bug::Bug;
use store::Store;
use wal::Wal;

const USAGE: &str = "usage: kvserver --listen ADDR --data DIR \
                     [--bug ack-before-fsync|no-dir-fsync|ignore-fsync-error]";

fn main() {
    let (listen, data, bug) = parse_args().unwrap_or_else(|e| {
        eprintln!("kvserver: {e}\n{USAGE}");
        exit(1)
    });
    let recovered = Wal::open(Path::new(&data), bug != Some(Bug::NoDirFsync))
        .unwrap_or_else(|e| fail(&format!("opening {data}/wal.log"), e));
    let records = recovered.records.len();
    let store = Store::start(recovered.wal, recovered.records, bug);
    let listener =
        TcpListener::bind(&listen).unwrap_or_else(|e| fail(&format!("listening on {listen}"), e));
    println!(
        "kvserver: listening on {listen}, replayed {records} puts ({} keys, {} torn bytes dropped), bug {}",
        store.len(),
        recovered.discarded,
        bug.map_or("none".to_owned(), |b| b.to_string()),
    );
    for stream in listener.incoming() {
        match stream {
            Ok(stream) => {
                let store = Arc::clone(&store);
                thread::spawn(move || {
                    if let Err(e) = session::serve(stream, &store) {
                        eprintln!("kvserver: connection: {e}");
                    }
                });
            }
            Err(e) => eprintln!("kvserver: accept: {e}"),
        }
    }
}

fn parse_args() -> Result<(String, String, Option<Bug>), String> {
    let flags = Flags::parse(std::env::args().skip(1), &["--listen", "--data", "--bug"])?;
    let listen = flags.required("--listen")?.to_owned();
    let data = flags.required("--data")?.to_owned();
    let bug = flags.get("--bug").map(str::parse).transpose()?;
    Ok((listen, data, bug))
}

fn fail(what: &str, e: std::io::Error) -> ! {
    eprintln!("kvserver: {what}: {e}");
    exit(1)
}
