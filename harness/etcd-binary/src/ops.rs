//! One put or get through etcd's v3 gRPC API on one member, turned into a
//! history outcome: what the client can know about its effect.

use std::future::Future;
use std::time::Duration;

use etcd_client::{Client, GetOptions};

use crate::history::Outcome;

/// How long a connection or a request may take before it counts as lost.
pub const TIMEOUT: Duration = Duration::from_secs(1);

/// A client's connections, one per member, made when first needed and
/// dropped after an error (the next operation there connects again).
pub struct Members {
    endpoints: Vec<String>,
    clients: Vec<Option<Client>>,
}

impl Members {
    /// No connections yet.
    pub fn new(endpoints: &[String]) -> Members {
        Members {
            endpoints: endpoints.to_vec(),
            clients: vec![None; endpoints.len()],
        }
    }

    /// How many members there are.
    pub fn len(&self) -> usize {
        self.endpoints.len()
    }

    /// Puts `key`=`value` on member `i`.
    pub async fn put(&mut self, i: usize, key: &str, value: &str) -> Outcome {
        let Some(mut client) = self.connected(i).await else {
            // No connection: the request never left.
            return Outcome::Fail;
        };
        match within(client.put(key, value, None)).await {
            Some(Ok(_)) => Outcome::Ok(None),
            // Sent, but no answer or an error: it may have been applied.
            _ => {
                self.clients[i] = None;
                Outcome::Unknown
            }
        }
    }

    /// Gets `key` from member `i`: linearizable, or serializable (answered
    /// from the member's own state) if `serializable`.
    pub async fn get(&mut self, i: usize, key: &str, serializable: bool) -> Outcome {
        let Some(mut client) = self.connected(i).await else {
            return Outcome::Fail;
        };
        let options = serializable.then(|| GetOptions::new().with_serializable());
        match within(client.get(key, options)).await {
            Some(Ok(resp)) => Outcome::Ok(
                resp.kvs()
                    .first()
                    .map(|kv| String::from_utf8_lossy(kv.value()).into_owned()),
            ),
            // A read that failed had no effect.
            _ => {
                self.clients[i] = None;
                Outcome::Fail
            }
        }
    }

    /// Member `i`'s client (a cheap clone sharing the connection), connecting first if needed.
    async fn connected(&mut self, i: usize) -> Option<Client> {
        if self.clients[i].is_none() {
            self.clients[i] = etcd_harness::member::connect(&self.endpoints[i], TIMEOUT)
                .await
                .ok();
        }
        self.clients[i].clone()
    }
}

/// `request`'s result, or `None` if it took longer than [`TIMEOUT`].
async fn within<T>(request: impl Future<Output = T>) -> Option<T> {
    tokio::time::timeout(TIMEOUT, request).await.ok()
}
