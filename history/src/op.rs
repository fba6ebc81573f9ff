//! A validated client operation, the checker's input.
//!
//! Unlike a [`crate::Record`], an [`Operation`] cannot be inconsistent (a
//! put always has a string, an `ok` operation always has a completion
//! time), so the checker never has to second-guess its input.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What the client learnt about whether its operation took effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// It took effect between invoke and complete and returned; a get's
    /// value is what it read, a cas found its expected value.
    Ok,
    /// It definitely did not take effect (a refused request, a cas whose
    /// comparison failed). The checker ignores it.
    Fail,
    /// It may or may not have taken effect, at any time after invoke (a
    /// timeout, a crash of the client's server). Its completion is treated
    /// as never, and its return value as unknown.
    Unknown,
}

/// The operation and its arguments or, for a get, its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Write the value.
    Put(String),
    /// Read; `None` = the key was absent.
    Get(Option<String>),
    /// Write `new` if the key holds `expect` (`None` = absent).
    Cas {
        /// The value the key must hold.
        expect: Option<String>,
        /// The value written.
        new: String,
    },
    /// Remove the key.
    Delete,
}

/// One client operation on one key with its virtual times (ns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// Client id, named in explanations.
    pub process: u64,
    /// The key operated on.
    pub key: String,
    /// What was done (and read).
    pub action: Action,
    /// When the request was sent.
    pub invoke: u64,
    /// When the reply arrived; `None` if it never did. Always `Some` for
    /// [`Outcome::Ok`], and never earlier than `invoke`.
    pub complete: Option<u64>,
    /// Whether it took effect.
    pub outcome: Outcome,
}

impl fmt::Display for Operation {
    /// A short human form such as `put k1="v1"`, used in explanations.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = &self.key;
        match &self.action {
            Action::Put(v) => write!(f, "put {key}={}", quote(Some(v))),
            Action::Get(v) => write!(f, "get {key} -> {}", quote(v.as_deref())),
            Action::Cas { expect, new } => write!(
                f,
                "cas {key} {}->{}",
                quote(expect.as_deref()),
                quote(Some(new))
            ),
            Action::Delete => write!(f, "delete {key}"),
        }
    }
}

impl Operation {
    /// The operation with its process and time interval, e.g.
    /// `put k1="v1" by process 3 [t=1.000000000s .. t=1.002000000s]`.
    pub fn describe(&self) -> String {
        let end = match (self.complete, self.outcome) {
            (Some(t), Outcome::Ok) => time(t),
            _ => "never acknowledged (outcome unknown)".to_string(),
        };
        format!(
            "{self} by process {} [{} .. {end}]",
            self.process,
            time(self.invoke)
        )
    }
}

/// A value as shown to users: JSON-quoted, or `nothing` for absent.
pub(crate) fn quote(value: Option<&str>) -> String {
    match value {
        Some(v) => serde_json::Value::from(v).to_string(),
        None => "nothing".to_string(),
    }
}

/// A virtual time as the runner prints it: `t=5.873034010s`.
pub(crate) fn time(ns: u64) -> String {
    format!("t={}.{:09}s", ns / 1_000_000_000, ns % 1_000_000_000)
}
