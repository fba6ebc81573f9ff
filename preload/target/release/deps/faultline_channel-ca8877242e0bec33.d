/work/main/preload/target/release/deps/faultline_channel-ca8877242e0bec33.d: /work/main/channel/src/lib.rs

/work/main/preload/target/release/deps/libfaultline_channel-ca8877242e0bec33.rmeta: /work/main/channel/src/lib.rs

/work/main/channel/src/lib.rs:
