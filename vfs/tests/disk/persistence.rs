//! One test per persistence property of the crash model.

use vfs::{CrashModel, DiskConfig, SECTOR_SIZE};

use crate::support::{bytes, model, seeded, Sim, Snapshot};

const SECTOR: usize = SECTOR_SIZE as usize;

#[test]
fn synced_data_survives_crash() {
    for seed in 0..20 {
        let mut sim = Sim::new(seed, seeded());
        sim.mkdir("wal");
        assert_eq!(sim.fsync_dir(""), None);
        sim.durable_file("wal/0.log", b"entry one\n");
        let before = sim.snapshot();
        let report = sim.crash();
        assert_eq!(sim.snapshot(), before, "seed {seed}");
        assert!(report.files.is_empty() && report.dir_ops.is_empty());
    }
}

#[test]
fn unsynced_append_is_lost_under_strict() {
    let mut sim = Sim::strict();
    let ino = sim.durable_file("log", b"abc");
    sim.append(ino, b"def");
    let report = sim.crash();
    assert_eq!(sim.read("log").unwrap(), b"abc");
    let file = &report.files[0];
    assert_eq!(
        (file.lost_changes, file.len_before, file.len_after),
        (1, 6, 3)
    );
}

#[test]
fn torn_write_keeps_a_sector_prefix() {
    let torn_seed = (0..200).find_map(|seed| {
        let mut sim = Sim::new(seed, seeded());
        let ino = sim.durable_file("db", &bytes(b'a', 8 * SECTOR));
        sim.write(ino, 100, &bytes(b'b', 6 * SECTOR));
        let torn = sim.crash().files[0].torn.clone()?;
        let kept = torn.persisted as usize;
        assert!(
            (100 + kept).is_multiple_of(SECTOR),
            "tears end on a sector boundary"
        );
        assert!(kept > 0 && kept < 6 * SECTOR);
        let mut expected = bytes(b'a', 8 * SECTOR);
        expected[100..100 + kept].fill(b'b');
        assert_eq!(sim.read("db").unwrap(), expected);
        Some(seed)
    });
    assert!(torn_seed.is_some(), "no seed tore the write");
}

/// How much of write `i` (two sectors of byte `i + 1` at sector `2 * i`) survived.
fn survived(content: &[u8], i: usize) -> usize {
    let start = 2 * i * SECTOR;
    let region = content.get(start..).unwrap_or_default();
    region
        .iter()
        .take(2 * SECTOR)
        .take_while(|&&b| b == i as u8 + 1)
        .count()
}

#[test]
fn unsynced_writes_survive_as_a_prefix() {
    let (mut some_kept, mut some_lost) = (false, false);
    for seed in 0..100 {
        let mut sim = Sim::new(seed, seeded());
        let ino = sim.durable_file("log", b"");
        for i in 0..8 {
            sim.write(
                ino,
                (2 * i * SECTOR) as u64,
                &bytes(i as u8 + 1, 2 * SECTOR),
            );
        }
        sim.crash();
        let content = sim.read("log").unwrap();
        let kept: Vec<usize> = (0..8).map(|i| survived(&content, i)).collect();
        let whole = kept.iter().take_while(|&&n| n == 2 * SECTOR).count();
        assert!(
            kept[whole..].iter().skip(1).all(|&n| n == 0),
            "seed {seed}: a later write survived an earlier lost one: {kept:?}"
        );
        assert_eq!(
            content.len(),
            2 * whole * SECTOR + kept.get(whole).unwrap_or(&0)
        );
        some_kept |= whole > 0;
        some_lost |= whole < 8;
    }
    assert!(some_kept && some_lost);
}

#[test]
fn writes_across_files_survive_as_one_prefix_without_reordering() {
    let config = DiskConfig {
        reorder_across_files: false,
        ..seeded()
    };
    for seed in 0..50 {
        let mut sim = Sim::new(seed, config.clone());
        let a = sim.durable_file("a", b"");
        let b = sim.durable_file("b", b"");
        for i in 0..4 {
            sim.append(a, &[i; SECTOR]);
            sim.append(b, &[i; SECTOR]);
        }
        sim.crash();
        let (len_a, len_b) = (sim.read("a").unwrap().len(), sim.read("b").unwrap().len());
        assert!(
            len_a == len_b || len_a == len_b + SECTOR,
            "seed {seed}: a kept {len_a} bytes, b kept {len_b}"
        );
    }
}

#[test]
fn unsynced_truncate_is_reverted_under_strict() {
    let mut sim = Sim::strict();
    let ino = sim.durable_file("f", b"0123456789");
    sim.truncate(ino, 2);
    sim.crash();
    assert_eq!(sim.read("f").unwrap(), b"0123456789");
}

#[test]
fn unsynced_fallocate_growth_is_lost_under_strict() {
    let mut sim = Sim::strict();
    let ino = sim.durable_file("wal", b"hdr");
    sim.disk.on_fallocate(ino, 0, 64 << 20).unwrap();
    sim.crash();
    assert_eq!(sim.read("wal").unwrap(), b"hdr");

    let ino = sim.disk.lookup("wal").unwrap();
    sim.disk.on_fallocate(ino, 0, 64 << 20).unwrap();
    sim.fsync(ino);
    sim.crash();
    assert_eq!(sim.read("wal").unwrap().len(), 64 << 20);
}

#[test]
fn msync_makes_mapped_stores_durable() {
    let mut sim = Sim::strict();
    let ino = sim.durable_file("bolt.db", &bytes(0, 4096));
    // A store through a shared mapping: it reaches the file, vfs does not see it.
    std::os::unix::fs::FileExt::write_all_at(
        &std::fs::OpenOptions::new()
            .write(true)
            .open(sim.host("bolt.db"))
            .unwrap(),
        b"page",
        1024,
    )
    .unwrap();
    assert_eq!(sim.disk.on_msync(ino, 1024, 4).unwrap(), None);
    sim.crash();
    assert_eq!(&sim.read("bolt.db").unwrap()[1024..1028], b"page");
}

#[test]
fn crash_during_large_multi_sector_write() {
    const OLD: usize = 1 << 20;
    const OFFSET: usize = OLD / 2;
    const NEW: usize = OLD + 12_345;
    let mut outcomes = std::collections::BTreeSet::new();
    for seed in 0..30 {
        let mut sim = Sim::new(seed, seeded());
        let ino = sim.durable_file("big", &bytes(b'a', OLD));
        sim.write(ino, OFFSET as u64, &bytes(b'b', NEW));
        let report = sim.crash();
        let content = sim.read("big").unwrap();
        let persisted = content[OFFSET..].iter().take_while(|&&b| b == b'b').count();
        assert!(content[..OFFSET].iter().all(|&b| b == b'a'));
        assert!(
            persisted == 0 || persisted == NEW || (OFFSET + persisted).is_multiple_of(SECTOR),
            "seed {seed}: {persisted} bytes persisted"
        );
        assert_eq!(content.len(), OLD.max(OFFSET + persisted), "seed {seed}");
        assert!(content[OFFSET + persisted..].iter().all(|&b| b == b'a'));
        assert_eq!(report.files[0].len_after as usize, content.len());
        outcomes.insert(persisted);
    }
    assert!(outcomes.len() > 2, "only saw {outcomes:?}");

    let mut sim = Sim::strict();
    let ino = sim.durable_file("big", &bytes(b'a', OLD));
    sim.write(ino, OFFSET as u64, &bytes(b'b', NEW));
    sim.crash();
    assert_eq!(sim.read("big").unwrap(), bytes(b'a', OLD));
}

/// Many unsynced changes of every kind, then a crash.
fn busy_crash(seed: u64) -> (Snapshot, vfs::CrashReport) {
    let mut sim = Sim::new(seed, seeded());
    let wal = sim.durable_file("wal", b"");
    let db = sim.durable_file("db", &bytes(b'x', 4 * SECTOR));
    sim.durable_file("old", b"old");
    for i in 0..6u8 {
        sim.append(wal, &bytes(i, 3 * SECTOR));
        sim.write(db, u64::from(i) * 100, &bytes(i, 2 * SECTOR));
    }
    let tmp = sim.create("tmp");
    sim.write(tmp, 0, b"snapshot");
    sim.fsync(tmp);
    sim.rename("tmp", "snap");
    sim.unlink("old");
    sim.mkdir("dir");
    let report = sim.crash();
    (sim.snapshot(), report)
}

#[test]
fn same_seed_same_crash_outcome() {
    for seed in [1, 7, 42] {
        let (first, report) = busy_crash(seed);
        let (second, again) = busy_crash(seed);
        assert_eq!(first, second, "seed {seed}");
        assert_eq!(report, again, "seed {seed}");
        assert_eq!(
            serde_json::to_string(&report).unwrap(),
            serde_json::to_string(&again).unwrap()
        );
    }
}

#[test]
fn different_seeds_give_different_outcomes() {
    let outcomes: std::collections::BTreeSet<Snapshot> =
        (0..10).map(|seed| busy_crash(seed).0).collect();
    assert!(outcomes.len() > 1);
}

#[test]
fn surviving_state_is_durable() {
    for seed in 0..10 {
        let mut sim = Sim::new(seed, seeded());
        let ino = sim.durable_file("f", b"base");
        sim.append(ino, &bytes(b'z', 3000));
        sim.create("new");
        sim.crash();
        let survived = sim.snapshot();
        sim.disk.config_mut().crash_model = CrashModel::LoseAll;
        let report = sim.crash();
        assert_eq!(sim.snapshot(), survived, "seed {seed}");
        assert!(report.files.is_empty() && report.dir_ops.is_empty());
        // The disk keeps working on the surviving state.
        let ino = sim.disk.lookup("f").unwrap();
        sim.disk.on_write(ino, 0, b"B").unwrap();
    }
}

#[test]
fn files_found_at_open_count_as_durable() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data/member")).unwrap();
    std::fs::write(dir.path().join("data/member/db"), b"found").unwrap();
    std::fs::hard_link(
        dir.path().join("data/member/db"),
        dir.path().join("data/db.link"),
    )
    .unwrap();
    let mut sim = Sim::over(dir, 0, model(CrashModel::LoseAll));
    let before = sim.snapshot();
    sim.crash();
    assert_eq!(sim.snapshot(), before);
    assert_eq!(
        sim.disk.lookup("member/db").unwrap(),
        sim.disk.lookup("db.link").unwrap()
    );
}
