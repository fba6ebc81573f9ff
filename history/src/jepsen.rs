//! Jepsen's `history.edn` and Porcupine's key-value logs as [`Operation`]s.
//!
//! Both are EDN maps, one event each: an `:invoke` and, from the same
//! process, its completion (`:ok`, `:fail` or `:info`). Jepsen's register
//! and cas-register workloads say `:f :read/:write/:cas` with a plain value
//! (`3`, `[expect new]`) or, in independent (multi-key) histories, a keyed
//! one (`[k 3]`, `[k [expect new]]`). Porcupine's logs say `:f
//! :get/:put/:append` with `:key` and a string `:value` (append
//! concatenates; a missing key reads `""`). Events are ordered as in the
//! file; their times are `:time` (ns) when every event has one, else the
//! event's position.

use std::collections::HashMap;

use crate::edn::{read_all, Edn};
use crate::error::HistoryError;
use crate::op::{Action, Operation, Outcome, Seq};

/// Which dialect the events are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// Jepsen register / cas-register.
    Jepsen,
    /// Porcupine's key-value log.
    Porcupine,
}

/// One event, as read.
struct Event {
    line: usize,
    process: u64,
    kind: Kind,
    f: String,
    key: Option<String>,
    value: Edn,
    time: Option<u64>,
    /// `:error` was given (a Jepsen `:fail` of a cas with no error is a
    /// compare that found another value).
    error: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Invoke,
    Ok,
    Fail,
    Info,
}

/// Whether `text`'s first EDN map names a `:key` (Porcupine's logs do,
/// Jepsen's do not).
pub(crate) fn looks_like_porcupine(text: &str) -> bool {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    first.contains(":key ")
}

/// Parses a Jepsen or Porcupine EDN history.
pub(crate) fn parse(text: &str, dialect: Dialect) -> Result<Vec<Operation>, HistoryError> {
    let forms = read_all(text).map_err(|e| HistoryError::Syntax {
        line: e.line,
        message: e.message,
    })?;
    // A history may also be one vector of maps.
    let forms = match forms.as_slice() {
        [(line, Edn::Seq(items))] => items.iter().map(|f| (*line, f.clone())).collect(),
        _ => forms,
    };
    let mut events = Vec::new();
    for (line, form) in forms {
        if let Some(event) = event(line, &form, dialect)? {
            events.push(event);
        }
    }
    let timed = !events.is_empty() && events.iter().all(|e| e.time.is_some());
    let at = |i: usize, e: &Event| if timed { e.time.unwrap_or(0) } else { i as u64 };
    let mut open: HashMap<u64, usize> = HashMap::new();
    let mut pairs: Vec<(usize, Option<usize>)> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if e.kind == Kind::Invoke {
            if let Some(&prev) = open.get(&e.process) {
                return Err(field(
                    e.line,
                    "process",
                    format!(
                        "process {} invokes again before its operation of line {} completed",
                        e.process, events[prev].line
                    ),
                ));
            }
            open.insert(e.process, pairs.len());
            pairs.push((i, None));
        } else {
            let Some(slot) = open.remove(&e.process) else {
                return Err(field(
                    e.line,
                    "type",
                    format!(
                        "process {} completes an operation it never invoked",
                        e.process
                    ),
                ));
            };
            let invoke = &events[pairs[slot].0];
            if invoke.f != e.f {
                return Err(field(
                    e.line,
                    "f",
                    format!(
                        ":{} completes the :{} invoked on line {}",
                        e.f, invoke.f, invoke.line
                    ),
                ));
            }
            pairs[slot].1 = Some(i);
        }
    }
    pairs
        .into_iter()
        .map(|(inv, done)| {
            let invoke = &events[inv];
            let done = done.map(|d| (d, &events[d]));
            let outcome = match done.map(|(_, e)| e.kind) {
                Some(Kind::Ok) => Outcome::Ok,
                Some(Kind::Fail) if dialect == Dialect::Jepsen && invoke.f == "cas" => {
                    if done.is_some_and(|(_, e)| e.error) {
                        Outcome::Fail
                    } else {
                        Outcome::CasMismatch
                    }
                }
                Some(Kind::Fail) => Outcome::Fail,
                Some(Kind::Info) | Some(Kind::Invoke) | None => Outcome::Unknown,
            };
            let complete = match outcome {
                Outcome::Unknown => None,
                _ => done.map(|(d, e)| at(d, e)),
            };
            // An ok read's value is in the completion; everything else's
            // arguments are in the invocation.
            let source = match (outcome, done) {
                (Outcome::Ok, Some((_, e))) => e,
                _ => invoke,
            };
            let (key, action) = match dialect {
                Dialect::Jepsen => jepsen_action(invoke, source)?,
                Dialect::Porcupine => porcupine_action(invoke, source)?,
            };
            Ok(Operation {
                process: invoke.process,
                key,
                action,
                invoke: at(inv, invoke),
                complete,
                outcome,
            })
        })
        .collect()
}

fn field(line: usize, name: &str, message: String) -> HistoryError {
    HistoryError::Field {
        line,
        field: name.to_string(),
        message,
    }
}

/// Reads one map; `None` for events of no client (the nemesis).
fn event(line: usize, form: &Edn, dialect: Dialect) -> Result<Option<Event>, HistoryError> {
    if !matches!(form, Edn::Map(_)) {
        return Err(HistoryError::Syntax {
            line,
            message: format!("expected an operation map {{:type ..., :f ...}}, found {form}"),
        });
    }
    let keyword = |name: &str| match form.get(name) {
        Some(Edn::Keyword(k)) => Ok(k.clone()),
        Some(other) => Err(field(
            line,
            name,
            format!("expected a keyword, found {other}"),
        )),
        None => Err(field(line, name, format!("missing :{name}"))),
    };
    let process = match form.get("process") {
        Some(Edn::Int(p)) if *p >= 0 => *p as u64,
        Some(Edn::Keyword(_)) => return Ok(None),
        Some(other) => {
            return Err(field(
                line,
                "process",
                format!("expected a process number, found {other}"),
            ))
        }
        None => return Err(field(line, "process", "missing :process".into())),
    };
    let kind = match keyword("type")?.as_str() {
        "invoke" => Kind::Invoke,
        "ok" => Kind::Ok,
        "fail" => Kind::Fail,
        "info" => Kind::Info,
        other => {
            return Err(field(
                line,
                "type",
                format!(":{other} is not :invoke, :ok, :fail or :info"),
            ))
        }
    };
    let f = keyword("f")?;
    let allowed: &[&str] = match dialect {
        Dialect::Jepsen => &["read", "write", "cas"],
        Dialect::Porcupine => &["get", "put", "append"],
    };
    if !allowed.contains(&f.as_str()) {
        return Err(field(
            line,
            "f",
            format!(":{f} is not one of :{}", allowed.join(", :")),
        ));
    }
    let key = match (dialect, form.get("key")) {
        (Dialect::Porcupine, Some(Edn::Str(k))) => Some(k.clone()),
        (Dialect::Porcupine, Some(other)) => {
            return Err(field(
                line,
                "key",
                format!("expected a string, found {other}"),
            ))
        }
        (Dialect::Porcupine, None) => return Err(field(line, "key", "missing :key".into())),
        (Dialect::Jepsen, _) => None,
    };
    let time = match form.get("time") {
        Some(Edn::Int(t)) if *t >= 0 => Some(*t as u64),
        Some(other) => {
            return Err(field(
                line,
                "time",
                format!("expected nanoseconds, found {other}"),
            ))
        }
        None => None,
    };
    Ok(Some(Event {
        line,
        process,
        kind,
        f,
        key,
        value: form.get("value").cloned().unwrap_or(Edn::Nil),
        time,
        error: form.get("error").is_some_and(|e| *e != Edn::Nil),
    }))
}

/// A register value: `nil` is absent, a string is itself, anything else
/// its EDN text.
fn text(value: &Edn) -> Option<String> {
    match value {
        Edn::Nil => None,
        other => Some(other.to_string()),
    }
}

/// Key (`register` in a single-register history) and action of a Jepsen op.
fn jepsen_action(invoke: &Event, source: &Event) -> Result<(String, Action), HistoryError> {
    let bad = |what: &str| {
        field(
            source.line,
            "value",
            format!("{what}, found {}", source.value),
        )
    };
    // Keyed (independent) values are [k v] with v itself a vector for a cas.
    let (key, value) = match (&invoke.value, invoke.f.as_str()) {
        (Edn::Seq(kv), "cas") if kv.len() == 2 && matches!(kv[1], Edn::Seq(_)) => {
            (kv[0].to_string(), kv[1].clone())
        }
        (Edn::Seq(kv), "read" | "write") if kv.len() == 2 => {
            let value = match &source.value {
                Edn::Seq(skv) if skv.len() == 2 => skv[1].clone(),
                _ => return Err(bad("a keyed read or write needs [key value]")),
            };
            (kv[0].to_string(), value)
        }
        _ => ("register".to_string(), source.value.clone()),
    };
    let action = match invoke.f.as_str() {
        "read" => Action::Get(text(&value)),
        "write" => Action::Put(text(&value).ok_or_else(|| bad("a write needs a value"))?),
        _ => match &value {
            Edn::Seq(en) if en.len() == 2 => Action::Cas {
                expect: text(&en[0]),
                new: text(&en[1]).ok_or_else(|| bad("a cas needs [expect new]"))?,
            },
            _ => return Err(bad("a cas needs [expect new]")),
        },
    };
    Ok((key, action))
}

/// Key and action of a Porcupine key-value op.
fn porcupine_action(invoke: &Event, source: &Event) -> Result<(String, Action), HistoryError> {
    let key = invoke.key.clone().unwrap_or_default();
    let string = |e: &Event| match &e.value {
        Edn::Str(s) => Ok(s.clone()),
        Edn::Nil => Ok(String::new()),
        other => Err(field(
            e.line,
            "value",
            format!("expected a string, found {other}"),
        )),
    };
    let action = match invoke.f.as_str() {
        "get" => Action::Read(Seq::Text(string(source)?)),
        "put" => Action::Put(string(invoke)?),
        _ => Action::Append(Seq::Text(string(invoke)?)),
    };
    Ok((key, action))
}
