//! The on-disk history record: one JSON object per line, format 1.
//!
//! These are the serde types a workload client writes (in Rust it can use
//! them directly; any other language writes the same JSON). They mirror the
//! file exactly and reject unknown fields, so a typo in a client
//! (`"complet"`) is an error instead of a silently missing completion time.
//! [`crate::parse`] turns them into validated [`Operation`]s.

use serde::{Deserialize, Serialize};

use crate::op::{Action, Element, Operation, Outcome, Seq};

/// The history format this crate reads and writes. A record may carry
/// `"format": 1`; without it, format 1 is implied. A later, incompatible
/// format gets a new number so an old checker refuses it instead of
/// misreading it.
pub const FORMAT: u32 = 1;

/// One line of a history file: a client operation with its virtual times.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// Format version; omitted means [`FORMAT`]. Any other value is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<u32>,
    /// Client id. Only used in explanations: real-time order comes from the
    /// times, not from the process.
    pub process: u64,
    /// Which operation the client issued.
    pub op: OpKind,
    /// The key the operation addressed.
    pub key: String,
    /// Depends on `op`: put: the written string; get: the string read, or
    /// null (or omitted) when the key was absent; cas: `{"expect", "new"}`;
    /// delete: null or omitted; append: the element appended (string or
    /// integer; an array appends several); read: the list read (an array;
    /// null = empty). `{"text": ...}` is Porcupine's string model (append
    /// concatenates, read returns the string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Payload>,
    /// Virtual time (ns) at which the client sent the request.
    pub invoke: u64,
    /// Virtual time (ns) at which the client saw the reply; null when it
    /// never did (outcome `unknown`).
    pub complete: Option<u64>,
    /// What the client learnt about the effect of the operation.
    pub outcome: Outcome,
}

/// The operation names of the `op` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    /// Write `value` to `key`.
    Put,
    /// Read `key`; `value` is what was read.
    Get,
    /// Compare-and-set: write `value.new` if `key` holds `value.expect`.
    Cas,
    /// Remove `key`.
    Delete,
    /// Append `value` to `key`'s list.
    Append,
    /// Read `key`'s list; `value` is what was read.
    Read,
}

/// The non-null shapes of the `value` field (which one is allowed depends
/// on `op`, checked when the record becomes an [`Operation`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "expected a string, an integer, an array, null, {\"expect\": ..., \"new\": ...} or {\"text\": ...}"
)]
pub enum Payload {
    /// The value of a put, the value a get read, or a string element.
    Text(String),
    /// An integer element of a list.
    Int(i64),
    /// A list read, or the elements of one append.
    List(Vec<Element>),
    /// The arguments of a cas.
    Cas(CasValue),
    /// A string of Porcupine's string-append model.
    Chars(TextValue),
}

/// The `value` of an append or read of Porcupine's string model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextValue {
    /// The string appended or read.
    pub text: String,
}

/// The `value` of a cas record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CasValue {
    /// The value the key must hold for the cas to apply; null = absent.
    pub expect: Option<String>,
    /// The value written when it applies.
    pub new: String,
}

impl From<&Operation> for Record {
    fn from(op: &Operation) -> Self {
        let (kind, value) = match &op.action {
            Action::Put(v) => (OpKind::Put, Some(Payload::Text(v.clone()))),
            Action::Get(v) => (OpKind::Get, v.clone().map(Payload::Text)),
            Action::Cas { expect, new } => (
                OpKind::Cas,
                Some(Payload::Cas(CasValue {
                    expect: expect.clone(),
                    new: new.clone(),
                })),
            ),
            Action::Delete => (OpKind::Delete, None),
            Action::Append(seq) => (OpKind::Append, Some(seq_payload(seq, true))),
            Action::Read(seq) => (OpKind::Read, Some(seq_payload(seq, false))),
        };
        Record {
            format: None,
            process: op.process,
            op: kind,
            key: op.key.clone(),
            value,
            invoke: op.invoke,
            complete: op.complete,
            outcome: op.outcome,
        }
    }
}

/// The `value` of an append or read; a one-element append is written as
/// the bare element.
fn seq_payload(seq: &Seq, append: bool) -> Payload {
    match seq {
        Seq::List(items) if append && items.len() == 1 => match &items[0] {
            Element::Int(n) => Payload::Int(*n),
            Element::Text(t) => Payload::Text(t.clone()),
        },
        Seq::List(items) => Payload::List(items.clone()),
        Seq::Text(text) => Payload::Chars(TextValue { text: text.clone() }),
    }
}

/// Renders operations as a format-1 history file (one record per line),
/// e.g. for a Rust workload client or a generated test history.
pub fn to_json_lines(ops: &[Operation]) -> String {
    let mut out = String::new();
    for op in ops {
        let line = serde_json::to_string(&Record::from(op))
            .expect("a record of strings and integers always serializes");
        out.push_str(&line);
        out.push('\n');
    }
    out
}
