//! Tunables of the simulated network; all times are virtual nanoseconds.

use serde::{Deserialize, Serialize};

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000 * MS;

/// How one directed link between two hosts behaves: every message on it is
/// delayed by a uniform draw from `delay_min..=delay_max`, datagrams are
/// lost with probability `loss` and delivered twice with probability
/// `duplicate`, and each transmission of a stream segment is lost with
/// probability `stream_loss`: streams are reliable, so a lost segment is
/// sent again after the retransmission timeout (doubling each time), which
/// delays it and everything behind it, and only gives up (ETIMEDOUT) once
/// the retransmit timeout is spent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LinkParams {
    /// Shortest delivery delay (ns).
    pub delay_min: u64,
    /// Longest delivery delay (ns).
    pub delay_max: u64,
    /// Probability in `0.0..=1.0` that a datagram is lost.
    pub loss: f64,
    /// Probability in `0.0..=1.0` that a datagram arrives twice.
    pub duplicate: f64,
    /// Probability in `0.0..=1.0` that one transmission of a stream
    /// segment is lost (and sent again later).
    pub stream_loss: f64,
}

impl Default for LinkParams {
    fn default() -> Self {
        LinkParams {
            delay_min: MS,
            delay_max: 5 * MS,
            loss: 0.0,
            duplicate: 0.0,
            stream_loss: 0.0,
        }
    }
}

impl LinkParams {
    /// Checks the parameters, so a bad fault plan is reported as bad input.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.delay_min > self.delay_max {
            return Err(ConfigError::DelayRange);
        }
        for p in [self.loss, self.duplicate, self.stream_loss] {
            if !(0.0..=1.0).contains(&p) {
                return Err(ConfigError::Loss);
            }
        }
        Ok(())
    }
}

/// Configuration of a [`crate::Network`]; the defaults model a healthy LAN
/// with kernel-like TCP timeouts shortened so they show up in short runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NetConfig {
    /// Behaviour of every link without its own [`crate::Network::set_link`],
    /// including each host's link to itself (loopback).
    pub link: LinkParams,
    /// How long a connect waits for its SYN-ACK before failing with ETIMEDOUT.
    pub connect_timeout: u64,
    /// How long a stream segment may stay undeliverable (partition) before
    /// its sender's connection fails with ETIMEDOUT.
    pub retransmit_timeout: u64,
    /// Gap between delivery attempts of a held segment; after a heal, held
    /// data moves on at the next attempt.
    pub retransmit_interval: u64,
    /// Bytes a stream may have sent but its peer not yet read; a send beyond
    /// that is partial or would block.
    pub send_buffer: usize,
    /// Bytes of datagrams a datagram socket queues before dropping more.
    pub dgram_recv_buffer: usize,
    /// Largest stream segment; larger writes become several segments.
    pub segment_size: usize,
    /// Whether to keep the message log drained by [`crate::Network::drain_events`].
    pub log_events: bool,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            link: LinkParams::default(),
            connect_timeout: 20 * SEC,
            retransmit_timeout: 15 * SEC,
            retransmit_interval: 200 * MS,
            send_buffer: 256 * 1024,
            dgram_recv_buffer: 256 * 1024,
            segment_size: 64 * 1024,
            log_events: true,
        }
    }
}

impl NetConfig {
    /// Checks the configuration, so a bad scenario is reported as bad input
    /// rather than panicking in [`crate::Network::new`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.link.validate()?;
        if self.retransmit_interval == 0 {
            return Err(ConfigError::ZeroInterval);
        }
        if self.send_buffer == 0 || self.dgram_recv_buffer == 0 || self.segment_size == 0 {
            return Err(ConfigError::ZeroSize);
        }
        Ok(())
    }
}

/// Why a configuration was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `delay_min` exceeds `delay_max`.
    #[error("link delay_min is larger than delay_max")]
    DelayRange,
    /// `loss`, `duplicate` or `stream_loss` is not a probability.
    #[error("link loss and duplicate must be between 0.0 and 1.0")]
    Loss,
    /// A zero retransmit interval would retry forever at one instant.
    #[error("retransmit_interval must be positive")]
    ZeroInterval,
    /// A zero buffer or segment size could never carry data.
    #[error("buffer and segment sizes must be positive")]
    ZeroSize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_rejected() {
        assert_eq!(NetConfig::default().validate(), Ok(()));
        let mut c = NetConfig::default();
        c.link.loss = 1.5;
        assert_eq!(c.validate(), Err(ConfigError::Loss));
        c.link = LinkParams {
            delay_min: 2,
            delay_max: 1,
            ..LinkParams::default()
        };
        assert_eq!(c.validate(), Err(ConfigError::DelayRange));
        c.link = LinkParams {
            duplicate: -0.1,
            ..LinkParams::default()
        };
        assert_eq!(c.validate(), Err(ConfigError::Loss));
        c.link = LinkParams {
            delay_min: 2,
            delay_max: 1,
            ..LinkParams::default()
        };
        assert_eq!(c.validate(), Err(ConfigError::DelayRange));
    }
}
