//! Calls that would escape the models (issue 17): a C program makes
//! pwritev2, openat2, mknod/mknodat, symlink/symlinkat, copy_file_range, sendfile, splice,
//! tee, vmsplice, preadv2, renameat2 with flags, a futex2 wait and a call
//! past the syscall table on its node's `data_dir`, on a simulated socket
//! and elsewhere. The modelled ones survive a crash as the disk model saw
//! them; the refused ones fail with the table's errno and a report line;
//! the rest run in the kernel. The run happens twice and must agree.

use faultline_e2e::checks::run_scenario_twice;
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::{Program, ScenarioFile};

#[test]
fn calls_that_escape_the_models_are_modelled_or_refused_with_a_report() {
    let dir = scratch_dir("escapes");
    let data = dir.join("mnt").join("data");
    let text = format!(
        r#"name = "escapes"
duration = "3s"

[[node]]
name = "app"
data_dir = "{data}"
command = ["{program}", "{data}", "{{node_dir}}"]

[[fault]]
kind = "crash"
at = "1s"
node = "app"
down = "100ms"
"#,
        data = data.display(),
        program = Program::c("escapes").path().display(),
    );
    let file = ScenarioFile::raw(&dir, "escapes.toml", &text);
    let run = run_scenario_twice(&file.runner().seed(1));
    run.expect_pass();
    let seed = run.report().seed;
    let out = run.node_stdout(seed, "app");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "pwritev2_at_0 rc=4",
            "pwritev2_append rc=4",
            "openat2 rc=0",
            "mknod_regular rc=0",
            "mknod_fifo rc=-1 errno=EPERM",
            "mknod_raw_fifo rc=-1 errno=EPERM",
            "mknod_fifo_outside rc=0",
            "symlink rc=-1 errno=EPERM",
            "symlinkat rc=-1 errno=EPERM",
            "symlink_outside rc=0",
            "copy_file_range_into_data_dir rc=-1 errno=EINVAL",
            "sendfile_into_data_dir rc=-1 errno=EINVAL",
            "sendfile_data_dir_into_pipe rc=4",
            "tee_pipe_into_pipe rc=4",
            "splice_pipe_into_data_dir rc=-1 errno=EINVAL",
            "vmsplice_into_pipe rc=4",
            "renameat2_exchange rc=-1 errno=EINVAL",
            "renameat2_noreplace rc=0",
            "sendfile_into_socket rc=-1 errno=EINVAL",
            "splice_socket_into_pipe rc=-1 errno=EINVAL",
            "preadv2_socket rc=-1 errno=EOPNOTSUPP",
            "pwritev2_socket rc=-1 errno=EOPNOTSUPP",
            "preadv2_data_dir rc=4",
            "futex_wait rc=-1 errno=ENOSYS",
            "past_the_table rc=-1 errno=ENOSYS",
            "waiting",
            // After the crash: what the disk model saw and was made durable.
            "restarted",
            "a \"PWV2tail\"",
            "b \"OPEN2\"",
            "c \"\"",
            "e \"\"",
            "link_after_crash rc=-1 errno=ENOENT",
            "fifo_after_crash rc=-1 errno=ENOENT",
        ],
        "\n{run}"
    );
    let stderr = &run.run.stderr;
    for (call, why, errno) in [
        ("mknod", "only regular files and directories", "EPERM"),
        ("mknodat", "only regular files and directories", "EPERM"),
        ("symlink", "no symbolic links", "EPERM"),
        ("symlinkat", "no symbolic links", "EPERM"),
        ("copy_file_range", "copy in the kernel", "EINVAL"),
        ("sendfile", "copy in the kernel", "EINVAL"),
        ("splice", "copy in the kernel", "EINVAL"),
        ("renameat2", "RENAME_EXCHANGE", "EINVAL"),
        ("preadv2", "placeholder", "EOPNOTSUPP"),
        ("pwritev2", "placeholder", "EOPNOTSUPP"),
        ("futex_wait", "futex2", "ENOSYS"),
        ("unknown", "call number 470 is newer", "ENOSYS"),
    ] {
        let line = stderr
            .lines()
            .find(|l| l.starts_with(&format!("faultline: unsupported syscall {call} in ")))
            .unwrap_or_else(|| panic!("no report line for {call}\n{run}"));
        assert!(
            line.contains(why) && line.ends_with(&format!("returning {errno}")),
            "{line}"
        );
    }
    for passed in ["tee", "vmsplice"] {
        assert!(
            !stderr.contains(&format!("unsupported syscall {passed} ")),
            "{passed} on pipes only must pass\n{run}"
        );
    }
}
