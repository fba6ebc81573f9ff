//! A gRPC connection to one etcd member (`host:port`), made eagerly, so a
//! caller knows whether a request could have left: a connection that was
//! refused or timed out sent nothing.

use std::time::Duration;

use etcd_client::Client;
use tonic::transport::Endpoint;

/// Why no connection to a member was made (nothing was sent to it).
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// `host:port` does not make a URI.
    #[error("bad endpoint {0:?}")]
    BadEndpoint(String),
    /// The member refused, or did not answer within the timeout.
    #[error("cannot connect to {endpoint}: {source}")]
    Unreachable {
        /// The member.
        endpoint: String,
        /// What the transport said.
        source: tonic::transport::Error,
    },
    /// The connection was not made within the timeout.
    #[error("cannot connect to {0}: timed out")]
    TimedOut(String),
    /// The client could not be set up on the connection.
    #[error("etcd client on {endpoint}: {source}")]
    Client {
        /// The member.
        endpoint: String,
        /// What etcd-client said.
        source: etcd_client::Error,
    },
}

/// Connects to the member at `endpoint` (`host:port`, plain HTTP/2),
/// waiting at most `timeout` for the connection.
pub async fn connect(endpoint: &str, timeout: Duration) -> Result<Client, ConnectError> {
    let uri = Endpoint::from_shared(format!("http://{endpoint}"))
        .map_err(|_| ConnectError::BadEndpoint(endpoint.to_string()))?
        .connect_timeout(timeout);
    let channel = tokio::time::timeout(timeout, uri.connect())
        .await
        .map_err(|_| ConnectError::TimedOut(endpoint.to_string()))?
        .map_err(|source| ConnectError::Unreachable {
            endpoint: endpoint.to_string(),
            source,
        })?;
    Client::from_channel(etcd_client::Channel::Tonic(channel), None)
        .await
        .map_err(|source| ConnectError::Client {
            endpoint: endpoint.to_string(),
            source,
        })
}
