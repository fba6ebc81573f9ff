//! Simulated disk of one faultline node (issue 4).
//!
//! A node's data directory is a real folder (so the tracee can `mmap` its
//! files). The supervisor performs the tracee's file syscalls on it and
//! reports each one to a [`Disk`]; vfs never sees ptrace. vfs keeps, per
//! file, the durable bytes (as of the last fsync) plus the unsynced changes
//! in order, and per directory the durable entries (as of the last fsync of
//! that directory) plus the unsynced namespace operations in order. A crash
//! then rewrites the folder to what a power cut would leave:
//!
//! * [`CrashModel::LoseAll`]: nothing unsynced survives.
//! * [`CrashModel::Prefix`]: as below, but no write tears.
//! * [`CrashModel::Subset`]: each unsynced write of a file survives or not
//!   on its own (reordered writes); directory operations as below.
//! * [`CrashModel::PrefixTorn`] (default), after the persistence properties of
//!   the ALICE study: each file keeps a seeded prefix of its unsynced writes
//!   (files independently, i.e. reordered across files, unless
//!   [`DiskConfig::reorder_across_files`] is off); the first write not kept
//!   may persist a seeded prefix of its 512-byte sectors (a torn write);
//!   appends that did not persist shrink the file back; a seeded prefix of
//!   the unsynced namespace operations survives, the rest is reverted
//!   (creates vanish, renames go back, unlinked files reappear with their
//!   durable content). A rename is atomic.
//!
//! Faults: [`Disk::on_fsync`] may fail with EIO (probability or
//! [`Disk::inject_fsync_error`]); as on Linux the file's dirty data is then
//! dropped and no later fsync makes it durable. [`Disk::write_fault`] fails
//! writes with ENOSPC or EIO. Bug switches for harnesses:
//! [`DiskConfig::lying_fsync`] and [`DiskConfig::lose_dir_entries`].
//!
//! # Supervisor contract
//! Paths are relative to the disk root (the tracee's `/data/wal/x` is `wal/x`).
//! Map every open fd to the [`Ino`] from [`Disk::on_create`] (`O_CREAT`) or
//! [`Disk::lookup`]: inodes stay right across renames and unlinks.
//! * write/pwrite/writev: ask [`Disk::write_fault`] first; if it names an
//!   errno fail the call without performing it, else perform it and report
//!   [`Disk::on_write`]. `O_SYNC`/`O_DSYNC` writes then call [`Disk::on_fsync`].
//! * fsync/fdatasync: call [`Disk::on_fsync`] instead of the real call and
//!   return its errno. sync/syncfs: [`Disk::on_sync_all`].
//!   msync(`MS_SYNC`): [`Disk::on_msync`]. sync_file_range promises no
//!   durability and needs no report.
//! * truncate/ftruncate, fallocate (mode 0), mkdir, rmdir, unlink, link,
//!   rename: the matching `on_*` call after the real call succeeded.
//! * Node crash: kill all its processes, then [`Disk::crash`]. Anything done
//!   to the folder but not reported is lost at the crash.
//!
//! Determinism: every choice comes from the seed; faults and crashes use
//! separate random streams, so querying faults never shifts crash outcomes.

#![warn(missing_docs)]

mod backing;
mod config;
mod content;
mod data;
mod dirlog;
mod disk;
mod errno;
mod error;
mod faults;
mod namespace;
mod plan;
mod report;
mod rot;

pub use config::{CrashModel, DiskConfig};
pub use data::SECTOR_SIZE;
pub use dirlog::DirOp;
pub use disk::{Disk, Usage};
pub use errno::Errno;
pub use error::VfsError;
pub use namespace::Ino;
pub use report::{CrashReport, DirOpReport, FileReport, TornWrite};
pub use rot::Flip;
