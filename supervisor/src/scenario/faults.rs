//! `[[fault]]` entries: each kind's fields, checked against the nodes. A
//! field a kind does not use is an error, never silently ignored.

use std::ops::Range;
use std::path::PathBuf;

use serde::Deserialize;
use toml::Spanned;

use super::error::Problem;
use super::plan::{FaultSpec, Groups, Outage};
use super::{Ctx, ScenarioError};

/// A `[[fault]]` entry as written in the file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Fault {
    kind: Spanned<String>,
    at: Option<Spanned<String>>,
    until: Option<Spanned<String>>,
    isolate: Option<Spanned<Vec<String>>>,
    from: Option<Spanned<Vec<String>>>,
    one_way: Option<Spanned<bool>>,
    node: Option<Spanned<String>>,
    down: Option<Spanned<String>>,
    every: Option<Spanned<String>>,
    min_down: Option<Spanned<String>>,
    max_down: Option<Spanned<String>>,
    max_down_nodes: Option<Spanned<usize>>,
    nodes: Option<Spanned<Vec<String>>>,
    probability: Option<Spanned<f64>>,
    errno: Option<Spanned<String>>,
    dir: Option<Spanned<String>>,
    by: Option<Spanned<String>>,
    max_by: Option<Spanned<String>>,
    ppm: Option<Spanned<i64>>,
    between: Option<Spanned<Vec<String>>>,
    and: Option<Spanned<Vec<String>>>,
    delay_min: Option<Spanned<String>>,
    delay_max: Option<Spanned<String>>,
    loss: Option<Spanned<f64>>,
    duplicate: Option<Spanned<f64>>,
    path: Option<Spanned<String>>,
    bytes: Option<Spanned<u32>>,
}

/// The fields an entry sets, with where.
macro_rules! present {
    ($f:ident; $($k:ident),*) => {{
        let mut v: Vec<(&'static str, Range<usize>)> = Vec::new();
        $( if let Some(x) = &$f.$k { v.push((stringify!($k), x.span())); } )*
        v
    }};
}

impl Fault {
    fn set_fields(&self) -> Vec<(&'static str, Range<usize>)> {
        present!(self; at, until, isolate, from, one_way, node, down, every, min_down,
            max_down, max_down_nodes, nodes, probability, errno, dir, by, max_by, ppm,
            between, and, delay_min, delay_max, loss, duplicate, path, bytes)
    }
}

/// The supported kinds, for the error that names them.
pub(super) const KINDS: &str = "\"partition\", \"crash\", \"kill\", \"pause\", \"clock_jump\", \"clock_drift\", \"link\", \"reset\", \"disk_full\", \"corrupt\", \"fsync_error\", \"write_error\", \"lying_fsync\", \"lose_dir_entries\"";

/// Checks an entry's fields against one kind's, then builds its spec.
struct Entry<'a, 'b> {
    ctx: &'a Ctx<'b>,
    f: &'a Fault,
    names: &'a [String],
    /// The nodes with a `data_dir`: the only ones a disk fault can touch.
    disks: &'a [String],
}

impl Entry<'_, '_> {
    fn kind(&self) -> &str {
        self.f.kind.get_ref()
    }

    fn err(&self, span: Range<usize>, problem: Problem) -> ScenarioError {
        self.ctx.at(span, problem)
    }

    /// Refuses any field outside `allowed` for this `form` of the kind.
    fn only(&self, form: &str, allowed: &[&'static str]) -> Result<(), ScenarioError> {
        for (field, span) in self.f.set_fields() {
            if !allowed.contains(&field) {
                return Err(self.err(
                    span,
                    Problem::FieldUnused {
                        field,
                        form: form.to_string(),
                        allowed: allowed.to_vec(),
                    },
                ));
            }
        }
        Ok(())
    }

    fn missing(&self, field: &'static str) -> ScenarioError {
        let kind = self.kind().to_string();
        self.err(self.f.kind.span(), Problem::FieldMissing { kind, field })
    }

    fn duration(
        &self,
        field: &str,
        v: &Option<Spanned<String>>,
    ) -> Result<Option<u64>, ScenarioError> {
        v.as_ref().map(|v| self.ctx.duration(field, v)).transpose()
    }

    fn need_duration(
        &self,
        field: &'static str,
        v: &Option<Spanned<String>>,
    ) -> Result<u64, ScenarioError> {
        self.duration(field, v)?.ok_or_else(|| self.missing(field))
    }

    /// A duration that may start with `-`.
    fn signed(
        &self,
        field: &'static str,
        v: &Option<Spanned<String>>,
    ) -> Result<i64, ScenarioError> {
        let v = v.as_ref().ok_or_else(|| self.missing(field))?;
        super::duration::parse_signed_ns(v.get_ref()).map_err(|source| {
            let field = field.to_string();
            self.ctx.at(v.span(), Problem::Duration { field, source })
        })
    }

    /// `until`, which must come after `at`.
    fn until(&self, at: u64) -> Result<Option<u64>, ScenarioError> {
        let until = self.duration("until", &self.f.until)?;
        if let (Some(u), Some(span)) = (until, self.f.until.as_ref().map(|u| u.span())) {
            if u <= at {
                return Err(self.err(span, Problem::Rule("field `until`: must be after `at`")));
            }
        }
        Ok(until)
    }

    fn known(
        &self,
        field: &'static str,
        list: &Spanned<Vec<String>>,
    ) -> Result<Vec<String>, ScenarioError> {
        for n in list.get_ref() {
            if !self.names.contains(n) {
                let node = n.clone();
                return Err(self.err(list.span(), Problem::UnknownNode { field, node }));
            }
        }
        Ok(list.get_ref().clone())
    }

    fn nodes(&self) -> Result<Vec<String>, ScenarioError> {
        match &self.f.nodes {
            Some(list) => self.known("nodes", list),
            None => Ok(self.names.to_vec()),
        }
    }

    fn node(&self) -> Result<String, ScenarioError> {
        let node = self.f.node.as_ref().ok_or_else(|| self.missing("node"))?;
        if !self.names.contains(node.get_ref()) {
            return Err(self.err(
                node.span(),
                Problem::UnknownNode {
                    field: "node",
                    node: node.get_ref().clone(),
                },
            ));
        }
        Ok(node.get_ref().clone())
    }

    /// `node` of a disk fault: a node with a simulated disk (on any other
    /// the fault would do nothing).
    fn disk_node(&self) -> Result<String, ScenarioError> {
        let node = self.node()?;
        if !self.disks.contains(&node) {
            let span = self.f.node.as_ref().map_or(0..0, |n| n.span());
            return Err(self.no_disk(span, "node", &node));
        }
        Ok(node)
    }

    /// `nodes` of a disk fault: as written, each with a simulated disk; by
    /// default every node that has one.
    fn disk_nodes(&self) -> Result<Vec<String>, ScenarioError> {
        let Some(list) = &self.f.nodes else {
            if self.disks.is_empty() {
                let kind = self.kind().to_string();
                return Err(self.err(self.f.kind.span(), Problem::NoDisks { kind }));
            }
            return Ok(self.disks.to_vec());
        };
        let nodes = self.known("nodes", list)?;
        match nodes.iter().find(|n| !self.disks.contains(n)) {
            Some(n) => Err(self.no_disk(list.span(), "nodes", n)),
            None => Ok(nodes),
        }
    }

    fn no_disk(&self, span: Range<usize>, field: &'static str, node: &str) -> ScenarioError {
        let (node, kind) = (node.to_string(), self.kind().to_string());
        self.err(span, Problem::NoDataDir { field, node, kind })
    }

    fn groups(&self) -> Result<Groups, ScenarioError> {
        let between = self
            .f
            .between
            .as_ref()
            .ok_or_else(|| self.missing("between"))?;
        Ok(Groups {
            between: self.known("between", between)?,
            and: self
                .f
                .and
                .as_ref()
                .map(|l| self.known("and", l))
                .transpose()?,
        })
    }

    fn probability(&self) -> Result<f64, ScenarioError> {
        match &self.f.probability {
            Some(p) if (0.0..=1.0).contains(p.get_ref()) => Ok(*p.get_ref()),
            Some(p) => Err(self.err(
                p.span(),
                Problem::Rule("field `probability`: must be in [0, 1]"),
            )),
            None => {
                let kind = self.kind().to_string();
                Err(self.err(self.f.kind.span(), Problem::NoProbability { kind }))
            }
        }
    }

    fn partition(&self) -> Result<FaultSpec, ScenarioError> {
        self.only(
            "a \"partition\" fault",
            &["at", "until", "isolate", "from", "one_way"],
        )?;
        let at = self.need_duration("at", &self.f.at)?;
        let isolate = self
            .f
            .isolate
            .as_ref()
            .ok_or_else(|| self.missing("isolate"))?;
        Ok(FaultSpec::Partition {
            at,
            until: self.until(at)?,
            isolate: self.known("isolate", isolate)?,
            from: self
                .f
                .from
                .as_ref()
                .map(|l| self.known("from", l))
                .transpose()?,
            one_way: self.f.one_way.as_ref().is_some_and(|b| *b.get_ref()),
        })
    }

    /// crash, kill and pause: planned (`at`) or random (`every`).
    fn outage(&self, kind: Outage) -> Result<FaultSpec, ScenarioError> {
        let name = kind.name();
        if self.f.every.is_none() {
            self.only(
                &format!("a planned {name:?} (the form with `at`)"),
                &["at", "node", "down"],
            )?;
            return Ok(FaultSpec::OutageAt {
                kind,
                at: self.need_duration("at", &self.f.at)?,
                node: self.node()?,
                down: self.need_duration("down", &self.f.down)?,
            });
        }
        let mut fields = vec!["every", "min_down", "max_down", "max_down_nodes", "nodes"];
        if kind == Outage::Pause {
            fields.extend(["at", "until"]);
        }
        self.only(
            &format!("a random {name:?} (the form with `every`)"),
            &fields,
        )?;
        let (min_down, max_down) = (
            self.need_duration("min_down", &self.f.min_down)?,
            self.need_duration("max_down", &self.f.max_down)?,
        );
        if min_down > max_down {
            return Err(self.err(
                self.f.kind.span(),
                Problem::Rule("field `min_down` is longer than `max_down`"),
            ));
        }
        let from = self.duration("at", &self.f.at)?.unwrap_or(0);
        Ok(FaultSpec::OutageRandom {
            kind,
            every: self.need_duration("every", &self.f.every)?.max(1),
            min_down,
            max_down,
            max_down_nodes: self.f.max_down_nodes.as_ref().map_or(1, |n| *n.get_ref()),
            nodes: self.nodes()?,
            from,
            until: self.until(from)?,
        })
    }

    fn clock_jump(&self) -> Result<FaultSpec, ScenarioError> {
        if self.f.every.is_some() {
            self.only(
                "a random \"clock_jump\" (the form with `every`)",
                &["every", "nodes", "max_by"],
            )?;
            return Ok(FaultSpec::ClockJumpRandom {
                every: self.need_duration("every", &self.f.every)?.max(1),
                nodes: self.nodes()?,
                max_by: self.need_duration("max_by", &self.f.max_by)?,
            });
        }
        self.only(
            "a planned \"clock_jump\" (the form with `at`)",
            &["at", "node", "by"],
        )?;
        Ok(FaultSpec::ClockJump {
            at: self.need_duration("at", &self.f.at)?,
            node: self.node()?,
            by: self.signed("by", &self.f.by)?,
        })
    }

    fn clock_drift(&self) -> Result<FaultSpec, ScenarioError> {
        self.only("a \"clock_drift\" fault", &["node", "ppm", "at", "until"])?;
        let ppm = self.f.ppm.as_ref().ok_or_else(|| self.missing("ppm"))?;
        if !(-500_000..=500_000).contains(ppm.get_ref()) || *ppm.get_ref() == 0 {
            return Err(self.err(
                ppm.span(),
                Problem::Rule("field `ppm`: must be in [-500000, 500000] and not 0"),
            ));
        }
        let at = self.duration("at", &self.f.at)?.unwrap_or(0);
        Ok(FaultSpec::ClockDrift {
            node: self.node()?,
            ppm: *ppm.get_ref(),
            at,
            until: self.until(at)?,
        })
    }

    fn link(&self) -> Result<FaultSpec, ScenarioError> {
        self.only(
            "a \"link\" fault",
            &[
                "between",
                "and",
                "at",
                "until",
                "delay_min",
                "delay_max",
                "loss",
                "duplicate",
            ],
        )?;
        let at = self.need_duration("at", &self.f.at)?;
        let defaults = vnet::LinkParams::default();
        let loss = self.f.loss.as_ref().map_or(0.0, |l| *l.get_ref());
        // `loss` loses datagrams, and transmissions of TCP segments, which
        // are sent again later: the stream sees delay, never a gap.
        let params = vnet::LinkParams {
            delay_min: self
                .duration("delay_min", &self.f.delay_min)?
                .unwrap_or(defaults.delay_min),
            delay_max: self
                .duration("delay_max", &self.f.delay_max)?
                .unwrap_or(defaults.delay_max),
            loss,
            duplicate: self.f.duplicate.as_ref().map_or(0.0, |d| *d.get_ref()),
            stream_loss: loss,
        };
        params
            .validate()
            .map_err(|e| self.ctx.at(self.f.kind.span(), Problem::LinkFault(e)))?;
        Ok(FaultSpec::Link {
            groups: self.groups()?,
            at,
            until: self.until(at)?,
            params,
        })
    }

    fn reset(&self) -> Result<FaultSpec, ScenarioError> {
        self.only("a \"reset\" fault", &["between", "and", "at"])?;
        Ok(FaultSpec::Reset {
            groups: self.groups()?,
            at: self.need_duration("at", &self.f.at)?,
        })
    }

    fn disk_full(&self) -> Result<FaultSpec, ScenarioError> {
        self.only("a \"disk_full\" fault", &["node", "at", "until"])?;
        let at = self.need_duration("at", &self.f.at)?;
        Ok(FaultSpec::DiskFull {
            node: self.disk_node()?,
            at,
            until: self.until(at)?,
        })
    }

    fn corrupt(&self) -> Result<FaultSpec, ScenarioError> {
        self.only("a \"corrupt\" fault", &["node", "at", "path", "bytes"])?;
        let path = self.f.path.as_ref().ok_or_else(|| self.missing("path"))?;
        if path.get_ref().starts_with('/') || path.get_ref().split('/').any(|c| c == "..") {
            return Err(self.err(
                path.span(),
                Problem::Rule("field `path`: a glob relative to the data_dir, without `..`"),
            ));
        }
        Ok(FaultSpec::Corrupt {
            node: self.disk_node()?,
            at: self.need_duration("at", &self.f.at)?,
            path: path.get_ref().clone(),
            bytes: self.f.bytes.as_ref().map_or(1, |b| *b.get_ref()).max(1),
        })
    }

    fn disk_switch(&self) -> Result<FaultSpec, ScenarioError> {
        let lose = self.kind() == "lose_dir_entries";
        self.only(
            &format!("a {:?} fault", self.kind()),
            if lose { &["dir", "nodes"] } else { &["nodes"] },
        )?;
        let lose_dir_entries = if lose {
            let dir = self.f.dir.as_ref().ok_or_else(|| {
                self.err(
                    self.f.kind.span(),
                    Problem::Rule(
                        "a \"lose_dir_entries\" fault needs field `dir` (relative to the data_dir)",
                    ),
                )
            })?;
            Some(PathBuf::from(dir.get_ref()))
        } else {
            None
        };
        Ok(FaultSpec::DiskBug {
            lying_fsync: !lose,
            lose_dir_entries,
            nodes: self.disk_nodes()?,
        })
    }

    fn write_error(&self) -> Result<FaultSpec, ScenarioError> {
        self.only(
            "a \"write_error\" fault",
            &["probability", "errno", "nodes"],
        )?;
        let probability = self.probability()?;
        let errno = match self
            .f
            .errno
            .as_ref()
            .map(|e| (e.get_ref().as_str(), e.span()))
        {
            None | Some(("ENOSPC", _)) => libc::ENOSPC,
            Some(("EIO", _)) => libc::EIO,
            Some((other, span)) => {
                return Err(self.err(span, Problem::Errno(other.to_string())));
            }
        };
        Ok(FaultSpec::WriteError {
            probability,
            errno,
            nodes: self.disk_nodes()?,
        })
    }

    fn fsync_error(&self) -> Result<FaultSpec, ScenarioError> {
        self.only("an \"fsync_error\" fault", &["probability", "nodes"])?;
        Ok(FaultSpec::FsyncError {
            probability: self.probability()?,
            nodes: self.disk_nodes()?,
        })
    }
}

/// Validates one `[[fault]]` entry.
pub(super) fn fault_spec(
    ctx: &Ctx,
    f: &Fault,
    names: &[String],
    disks: &[String],
) -> Result<FaultSpec, ScenarioError> {
    let e = Entry {
        ctx,
        f,
        names,
        disks,
    };
    match e.kind() {
        "partition" => e.partition(),
        "crash" => e.outage(Outage::Crash),
        "kill" => e.outage(Outage::Kill),
        "pause" => e.outage(Outage::Pause),
        "clock_jump" => e.clock_jump(),
        "clock_drift" => e.clock_drift(),
        "link" => e.link(),
        "reset" => e.reset(),
        "disk_full" => e.disk_full(),
        "corrupt" => e.corrupt(),
        "lying_fsync" | "lose_dir_entries" => e.disk_switch(),
        "write_error" => e.write_error(),
        "fsync_error" => e.fsync_error(),
        other => Err(ctx.at(f.kind.span(), Problem::FaultKind(other.to_string()))),
    }
}
