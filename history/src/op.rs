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
    /// A cas that returned "the key held another value": it had no effect,
    /// and at some instant between invoke and complete the key held a value
    /// other than `expect` (a read of "not `expect`"). Only for cas.
    #[serde(rename = "cas_mismatch")]
    CasMismatch,
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
    /// Append to the key's list (Elle's list-append: one element; Porcupine's
    /// key-value store: a string concatenated to the key's string).
    Append(Seq),
    /// Read the key's whole list (or string); a key never appended to holds
    /// the empty list.
    Read(Seq),
}

/// The value of a list key, or what an append adds to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seq {
    /// A list of elements (Elle's list-append).
    List(Vec<Element>),
    /// A string, appended to character by character (Porcupine's model).
    Text(String),
}

/// One element of a list: what Elle's workloads append (usually integers).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Element {
    /// An integer element.
    Int(i64),
    /// A string element.
    Text(String),
}

impl fmt::Display for Element {
    /// The element as JSON: `5` or `"a"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Element::Int(n) => write!(f, "{n}"),
            Element::Text(t) => write!(f, "{}", quote(Some(t))),
        }
    }
}

impl Seq {
    /// The units an append adds and a read compares: the elements, or the
    /// characters of a string.
    pub(crate) fn tokens(&self) -> Vec<String> {
        match self {
            Seq::List(items) => items.iter().map(ToString::to_string).collect(),
            Seq::Text(text) => text.chars().map(String::from).collect(),
        }
    }
}

impl fmt::Display for Seq {
    /// A list as `[1, 2]`, a string JSON-quoted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Seq::List(items) => {
                let shown: Vec<String> = items.iter().map(ToString::to_string).collect();
                write!(f, "[{}]", shown.join(", "))
            }
            Seq::Text(text) => write!(f, "{}", quote(Some(text))),
        }
    }
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
            Action::Append(Seq::List(items)) if items.len() == 1 => {
                write!(f, "append {key} {}", items[0])
            }
            Action::Append(v) => write!(f, "append {key} {v}"),
            Action::Read(v) => write!(f, "read {key} -> {v}"),
        }
    }
}

impl Operation {
    /// The operation with its process and time interval, e.g.
    /// `put k1="v1" by process 3 [t=1.000000000s .. t=1.002000000s]`.
    pub fn describe(&self) -> String {
        let end = match (self.complete, self.outcome) {
            (Some(t), Outcome::Ok) => time(t),
            (Some(t), Outcome::CasMismatch) => format!("{}, found another value", time(t)),
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
