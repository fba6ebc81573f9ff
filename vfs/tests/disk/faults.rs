//! fsync and write faults, and the bug switches the etcd harness uses.

use vfs::{CrashModel, DiskConfig, Errno};

use crate::support::{model, seeded, Sim};

#[test]
fn fsync_eio_drops_dirty_data_even_if_a_later_fsync_succeeds() {
    for seed in 0..20 {
        let mut sim = Sim::new(seed, seeded());
        let ino = sim.durable_file("wal", b"0000");
        sim.write(ino, 0, b"AAAA");
        sim.disk.inject_fsync_error("wal");
        assert_eq!(sim.fsync(ino), Some(Errno::EIO));
        // The page cache still shows the write...
        assert_eq!(sim.read("wal").unwrap(), b"AAAA");
        sim.write(ino, 4, b"BBBB");
        assert_eq!(sim.fsync(ino), None, "the retry succeeds");
        let report = sim.crash();
        // ...but it never reached the disk, while the later write did.
        assert_eq!(sim.read("wal").unwrap(), b"0000BBBB", "seed {seed}");
        assert_eq!(report.files[0].dropped_changes, 1);
    }
}

#[test]
fn planned_fsync_error_fires_once_and_only_under_its_prefix() {
    let mut sim = Sim::strict();
    sim.mkdir("wal");
    let other = sim.create("db");
    let wal = sim.create("wal/0.wal");
    sim.disk.inject_fsync_error("wal");
    assert_eq!(sim.fsync(other), None);
    assert_eq!(sim.fsync(wal), Some(Errno::EIO));
    assert_eq!(sim.fsync(wal), None);
}

#[test]
fn fsync_eio_probability_is_seeded() {
    let config = DiskConfig {
        fsync_eio_probability: 0.5,
        ..seeded()
    };
    let run = |seed| {
        let mut sim = Sim::new(seed, config.clone());
        let ino = sim.create("f");
        (0..64)
            .map(|_| sim.fsync(ino).is_some())
            .collect::<Vec<_>>()
    };
    let failures = run(3);
    assert_eq!(failures, run(3));
    let count = failures.iter().filter(|&&failed| failed).count();
    assert!((10..54).contains(&count), "{count} of 64 failed");
}

#[test]
fn failed_directory_fsync_leaves_entries_unsynced() {
    let mut sim = Sim::strict();
    sim.create("f");
    sim.disk.inject_fsync_error("");
    assert_eq!(sim.fsync_dir(""), Some(Errno::EIO));
    sim.crash();
    assert_eq!(sim.read("f"), None);
}

#[test]
fn write_faults_follow_odds_and_plans() {
    let mut sim = Sim::new(
        0,
        DiskConfig {
            write_enospc_probability: 1.0,
            ..seeded()
        },
    );
    let ino = sim.create("f");
    assert_eq!(sim.disk.write_fault(ino), Some(Errno::ENOSPC));
    sim.disk.config_mut().write_enospc_probability = 0.0;
    assert_eq!(sim.disk.write_fault(ino), None);
    sim.disk.inject_write_error("f", Errno::EIO);
    assert_eq!(sim.disk.write_fault(ino), Some(Errno::EIO));
    assert_eq!(sim.disk.write_fault(ino), None);
}

#[test]
fn lying_fsync_loses_acknowledged_data() {
    for seed in 0..20 {
        let mut sim = Sim::new(seed, seeded());
        let ino = sim.durable_file("wal", b"put k1");
        sim.disk.config_mut().lying_fsync = true;
        sim.append(ino, b" put k2");
        assert_eq!(sim.fsync(ino), None, "acknowledged");
        sim.disk.on_sync_all();
        sim.crash();
        assert_eq!(sim.read("wal").unwrap(), b"put k1", "seed {seed}");
    }
}

#[test]
fn lose_dir_entries_drops_synced_entries() {
    let config = DiskConfig {
        lose_dir_entries: vec!["member/wal".into()],
        ..model(CrashModel::LoseAll)
    };
    let mut sim = Sim::new(0, config);
    sim.mkdir("member");
    sim.fsync_dir("");
    sim.mkdir("member/wal");
    sim.mkdir("member/snap");
    sim.fsync_dir("member");
    sim.durable_file("member/wal/0.wal", b"entries");
    sim.durable_file("member/snap/db", b"state");
    let report = sim.crash();
    assert_eq!(sim.read("member/wal/0.wal"), None);
    assert_eq!(sim.read("member/snap/db").unwrap(), b"state");
    assert_eq!(
        report.dropped_entries,
        [std::path::PathBuf::from("member/wal/0.wal")]
    );
}
