//! Directory entries: what a crash keeps of creates, renames, unlinks, links
//! and directories, with and without an fsync of the directory.

use vfs::{DirOp, VfsError};

use crate::support::{seeded, Sim};

#[test]
fn unsynced_create_vanishes_under_strict() {
    let mut sim = Sim::strict();
    let ino = sim.create("wal.log");
    sim.write(ino, 0, b"record");
    assert_eq!(sim.fsync(ino), None, "file data synced, directory not");
    let report = sim.crash();
    assert_eq!(sim.read("wal.log"), None);
    assert!(!report.dir_ops[0].survived);
    assert!(matches!(
        sim.disk.lookup("wal.log"),
        Err(VfsError::NotFound(_))
    ));
}

#[test]
fn create_with_dir_fsync_survives() {
    let mut sim = Sim::strict();
    sim.mkdir("member");
    sim.fsync_dir("");
    let synced = sim.create("member/wal");
    sim.write(synced, 0, b"data");
    sim.fsync(synced);
    let empty = sim.create("member/lock");
    sim.write(empty, 0, b"never synced");
    sim.fsync_dir("member");
    sim.crash();
    assert_eq!(sim.read("member/wal").unwrap(), b"data");
    assert_eq!(
        sim.read("member/lock").unwrap(),
        b"",
        "entry durable, data not"
    );
}

#[test]
fn create_in_unsynced_directory_vanishes_with_it() {
    let mut sim = Sim::strict();
    sim.mkdir("snap");
    sim.durable_file("snap/1.snap", b"state");
    sim.crash();
    assert_eq!(sim.read("snap/1.snap"), None);
    assert!(sim.snapshot().is_empty());
}

#[test]
fn seeded_model_may_keep_an_unsynced_create() {
    let kept: Vec<bool> = (0..20)
        .map(|seed| {
            let mut sim = Sim::new(seed, seeded());
            sim.create("f");
            sim.crash();
            sim.read("f").is_some()
        })
        .collect();
    assert!(kept.contains(&true) && kept.contains(&false), "{kept:?}");
}

#[test]
fn unsynced_rename_reverts_under_strict() {
    let mut sim = Sim::strict();
    sim.durable_file("wal.tmp", b"new");
    sim.durable_file("wal", b"old");
    sim.rename("wal.tmp", "wal");
    assert_eq!(sim.read("wal").unwrap(), b"new");
    let report = sim.crash();
    assert_eq!(sim.read("wal").unwrap(), b"old");
    assert_eq!(sim.read("wal.tmp").unwrap(), b"new");
    let op = DirOp::Rename {
        from: "wal.tmp".into(),
        to: "wal".into(),
    };
    assert_eq!(report.dir_ops[0].op, op);
}

#[test]
fn synced_rename_survives() {
    let mut sim = Sim::strict();
    sim.mkdir("a");
    sim.mkdir("b");
    sim.fsync_dir("");
    sim.durable_file("a/f", b"x");
    sim.rename("a/f", "b/f");
    sim.fsync_dir("a");
    sim.fsync_dir("b");
    sim.crash();
    assert_eq!(sim.read("a/f"), None);
    assert_eq!(sim.read("b/f").unwrap(), b"x");
}

#[test]
fn unsynced_unlink_reappears_under_strict() {
    let mut sim = Sim::strict();
    let ino = sim.durable_file("seg", b"durable");
    sim.write(ino, 0, b"DIRTY");
    sim.unlink("seg");
    // Still writable through the open fd; synced content is what reappears.
    sim.write(ino, 7, b"+synced");
    sim.fsync(ino);
    sim.crash();
    assert_eq!(sim.read("seg").unwrap(), b"DIRTYle+synced");
}

#[test]
fn synced_unlink_stays_gone() {
    let mut sim = Sim::strict();
    sim.durable_file("seg", b"x");
    sim.unlink("seg");
    sim.fsync_dir("");
    sim.crash();
    assert_eq!(sim.read("seg"), None);
}

#[test]
fn hard_links_need_a_dir_fsync_and_share_content() {
    let mut sim = Sim::strict();
    let ino = sim.durable_file("a", b"1");
    sim.link("a", "b");
    sim.crash();
    assert_eq!(sim.read("b"), None);

    sim.link("a", "b");
    sim.fsync_dir("");
    sim.crash();
    assert_eq!(
        sim.disk.lookup("a").unwrap(),
        ino,
        "survivors keep their inode"
    );
    assert_eq!(sim.disk.lookup("b").unwrap(), ino);
    let host_ino = |path: &str| {
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(sim.host(path)).unwrap())
    };
    assert_eq!(host_ino("a"), host_ino("b"), "rebuilt as a hard link");
}

#[test]
fn unsynced_mkdir_and_rmdir_revert_under_strict() {
    let mut sim = Sim::strict();
    sim.mkdir("keep");
    sim.fsync_dir("");
    sim.rmdir("keep");
    sim.mkdir("gone");
    sim.crash();
    assert_eq!(sim.snapshot().keys().collect::<Vec<_>>(), ["keep"]);
}

#[test]
fn notifications_that_contradict_the_model_are_errors() {
    let mut sim = Sim::strict();
    sim.mkdir("d");
    sim.create("d/f");
    assert!(matches!(sim.disk.on_rmdir("d"), Err(VfsError::NotEmpty(_))));
    assert!(matches!(
        sim.disk.on_unlink("d"),
        Err(VfsError::IsADirectory(_))
    ));
    assert!(matches!(
        sim.disk.on_mkdir("d"),
        Err(VfsError::AlreadyExists(_))
    ));
    assert!(matches!(
        sim.disk.on_create("../x"),
        Err(VfsError::InvalidPath(_))
    ));
    assert!(matches!(
        sim.disk.on_create("nope/x"),
        Err(VfsError::NotFound(_))
    ));
    let ino = sim.disk.lookup("d").unwrap();
    assert!(matches!(
        sim.disk.on_write(ino, 0, b"x"),
        Err(VfsError::UnknownInode(_))
    ));
}

/// ext4/xfs-like ordered metadata: a file fsync also makes the earlier
/// directory operations durable, even in a directory never fsynced (the
/// pattern etcd 3.4 relies on when it renames its wal.tmp directory).
#[test]
fn ordered_metadata_makes_earlier_entries_durable_on_any_fsync() {
    let mut config = crate::support::model(vfs::CrashModel::LoseAll);
    config.ordered_metadata = true;
    let mut sim = Sim::new(0, config);
    sim.mkdir("wal.tmp");
    let ino = sim.create("wal.tmp/0.wal");
    sim.write(ino, 0, b"record");
    assert_eq!(sim.fsync(ino), None);
    sim.create("after-the-fsync");
    sim.crash();
    assert_eq!(sim.read("wal.tmp/0.wal").unwrap(), b"record");
    assert_eq!(
        sim.read("after-the-fsync"),
        None,
        "created after the last fsync: not durable"
    );
}

#[test]
fn usage_counts_named_files_once_and_forgets_unlinked_ones() {
    let mut sim = Sim::strict();
    let empty = sim.disk.usage();
    assert_eq!((empty.bytes, empty.inodes), (0, 1), "the root only");
    sim.mkdir("wal");
    let a = sim.create("wal/a");
    sim.write(a, 0, &[1; 3000]);
    sim.link("wal/a", "wal/b");
    let c = sim.create("c");
    sim.write(c, 0, &[2; 500]);
    let u = sim.disk.usage();
    assert_eq!((u.bytes, u.inodes), (3500, 4), "root, wal, a=b, c");
    sim.unlink("c");
    sim.truncate(a, 100);
    let u = sim.disk.usage();
    assert_eq!((u.bytes, u.inodes), (100, 3));
}
