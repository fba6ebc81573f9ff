//! The disk faults of the fault log (faults.json, the timelines): an
//! injected fsync or write error with its node, path and errno, and a disk
//! crash with the files whose writes it lost or tore and the directory
//! operations it reverted, by path as the program sees them. Every event of
//! the seed's fault plan is tied to its record, so faults.json is also the
//! plan that `run --schedule` and `shrink` run again.

use std::path::Path;

use serde::Serialize;

use super::{FaultRecord, Supervisor};
use crate::scenario::plan::{PlannedEvent, Scheduled};

/// The kind of a faults.json record that only holds a plan event that did
/// nothing or came after the end: kept for the plan, left out of the
/// timelines, which show what happened.
pub const UNAPPLIED: &str = "unapplied";

/// The files and directory entries a disk fault touched, as the program
/// sees their paths; empty for the faults of the network and of processes.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FaultPaths {
    /// The file an injected error hit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The errno the call failed with (`EIO`, `ENOSPC`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errno: Option<String>,
    /// Files a disk crash took unsynced changes from.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<String>,
    /// Files whose last surviving write a disk crash kept only in part:
    /// `/data/wal: 512 of 4096 bytes at offset 8192`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub torn: Vec<String>,
    /// Directory operations a disk crash reverted (`create /data/x`), and
    /// entries a `lose_dir_entries` bug dropped (`lost entry /data/x`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reverted: Vec<String>,
}

impl FaultPaths {
    /// What a disk crash did, from vfs's report; `root` is where the
    /// program sees the disk.
    fn of_crash(report: &vfs::CrashReport, root: &Path) -> FaultPaths {
        let shown = |p: &Path| root.join(p).display().to_string();
        let lost = report
            .files
            .iter()
            .filter(|f| f.lost_changes + f.dropped_changes > 0)
            .map(|f| shown(&f.path))
            .collect();
        let torn = report
            .files
            .iter()
            .filter_map(|f| {
                let t = f.torn.as_ref()?;
                Some(format!(
                    "{}: {} of {} bytes at offset {}",
                    shown(&f.path),
                    t.persisted,
                    t.len,
                    t.offset
                ))
            })
            .collect();
        let reverted = report
            .dir_ops
            .iter()
            .filter(|o| !o.survived)
            .map(|o| o.op.describe(root))
            .chain(
                report
                    .dropped_entries
                    .iter()
                    .map(|p| format!("lost entry {}", shown(p))),
            )
            .collect();
        FaultPaths {
            lost,
            torn,
            reverted,
            ..FaultPaths::default()
        }
    }

    /// A disk crash's paths in words, for timeline.txt.
    fn crash_words(&self) -> String {
        let parts: Vec<String> = [
            ("lost writes", &self.lost),
            ("torn writes", &self.torn),
            ("reverted", &self.reverted),
        ]
        .iter()
        .filter(|(_, list)| !list.is_empty())
        .map(|(what, list)| format!("{what}: {}", list.join(", ")))
        .collect();
        if parts.is_empty() {
            "nothing unsynced was lost".into()
        } else {
            parts.join("; ")
        }
    }
}

impl Supervisor {
    /// Logs the disk calls vfs failed during the call just handled; their
    /// trace event is recorded right after, so it is the next one.
    pub(crate) fn log_failed_disk_calls(&mut self) {
        for failed in std::mem::take(&mut self.sim.failed_disk_calls) {
            let kind = if failed.call.contains("sync") {
                "fsync_error"
            } else {
                "write_error"
            };
            let errno = failed.errno.name();
            self.fault_log.push(FaultRecord {
                t: self.sim.clock.now(),
                event: self.sim.trace.count() + 1,
                kind: kind.into(),
                node: failed.node,
                detail: format!("{} {}: {errno}", failed.call, failed.path),
                paths: FaultPaths {
                    path: Some(failed.path),
                    errno: Some(errno),
                    ..FaultPaths::default()
                },
                planned: None,
            });
        }
    }

    /// Ties plan event `scheduled`, just applied, to the first record it
    /// made (those from index `logged` on); one that made none (a restart
    /// of a node that is up) still gets a record, of kind `unapplied`,
    /// outside the trace: a replayed plan must hold it too, since its time
    /// is a deadline the run advanced to.
    pub(super) fn log_planned(&mut self, scheduled: Scheduled, logged: usize, why: &str) {
        let Some(fault) = scheduled.fault else {
            return;
        };
        let planned = PlannedEvent {
            fault,
            at: scheduled.t,
            event: scheduled.event,
        };
        if let Some(first) = self.fault_log.get_mut(logged) {
            first.planned = Some(planned);
            return;
        }
        self.fault_log.push(FaultRecord {
            t: self.sim.clock.now().max(planned.at),
            event: self.sim.trace.count(),
            kind: UNAPPLIED.into(),
            node: planned.event.node().unwrap_or_default().to_string(),
            detail: format!("planned {}: {why}", planned.event.kind()),
            paths: FaultPaths::default(),
            planned: Some(planned),
        });
    }

    /// Records the plan events the run ended before (see `log_planned`).
    pub(super) fn log_unreached(&mut self) {
        for scheduled in std::mem::take(&mut self.plan) {
            let logged = self.fault_log.len();
            self.log_planned(scheduled, logged, "the run ended first");
        }
    }

    /// Power-cuts disk `disk` of node `name` (its processes are dead) and
    /// logs what the crash took back.
    pub(super) fn crash_disk(&mut self, disk: usize, name: &str) {
        let d = self.sim.disks.get_mut(disk);
        let report = match d.disk.crash() {
            Ok(report) => report,
            Err(e) => {
                eprintln!("faultline: internal error: crash of {name}'s disk: {e}");
                return;
            }
        };
        let paths = FaultPaths::of_crash(&report, &d.visible);
        let args = [
            report
                .files
                .iter()
                .map(|f| f.lost_changes + f.dropped_changes)
                .sum::<usize>() as i64,
            paths.torn.len() as i64,
            report.dir_ops.iter().filter(|o| !o.survived).count() as i64,
        ];
        let detail = paths.crash_words();
        self.fault("disk_crash", name, &args, detail);
        if let Some(last) = self.fault_log.last_mut() {
            last.paths = paths;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A strict disk (a crash loses everything unsynced) in a fresh folder.
    fn strict_disk(label: &str) -> (std::path::PathBuf, vfs::Disk) {
        let root = std::env::temp_dir().join(format!("fault-log-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let config = vfs::DiskConfig {
            crash_model: vfs::CrashModel::LoseAll,
            lose_dir_entries: vec!["snap".into()],
            ..vfs::DiskConfig::default()
        };
        let disk = vfs::Disk::with_config(&root, 1, config).unwrap();
        (root, disk)
    }

    #[test]
    fn a_crash_names_the_lost_and_reverted_paths() {
        let (root, mut d) = strict_disk("crash");
        std::fs::create_dir(root.join("snap")).unwrap();
        d.on_mkdir("snap").unwrap();
        std::fs::write(root.join("snap/x"), b"").unwrap();
        d.on_create("snap/x").unwrap();
        std::fs::write(root.join("wal"), b"synced+lost").unwrap();
        let wal = d.on_create("wal").unwrap();
        d.on_write(wal, 0, b"synced").unwrap();
        d.on_sync_all();
        d.on_write(wal, 6, b"+lost").unwrap();
        std::fs::write(root.join("a.tmp"), b"").unwrap();
        d.on_create("a.tmp").unwrap();
        let report = d.crash().unwrap();
        let p = FaultPaths::of_crash(&report, Path::new("/data"));
        assert_eq!(p.lost, ["/data/wal"]);
        assert!(p.torn.is_empty(), "{p:?}");
        assert_eq!(
            p.reverted,
            ["create /data/a.tmp", "lost entry /data/snap/x"]
        );
        assert_eq!(
            p.crash_words(),
            "lost writes: /data/wal; reverted: create /data/a.tmp, lost entry /data/snap/x"
        );
        assert_eq!(std::fs::read(root.join("wal")).unwrap(), b"synced");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
