/work/main/preload/target/release/deps/faultline_channel-9b56c892fe2121c7.d: /work/main/channel/src/lib.rs

/work/main/preload/target/release/deps/libfaultline_channel-9b56c892fe2121c7.rmeta: /work/main/channel/src/lib.rs

/work/main/channel/src/lib.rs:
