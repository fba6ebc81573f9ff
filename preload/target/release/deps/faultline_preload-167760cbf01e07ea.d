/work/main/preload/target/release/deps/faultline_preload-167760cbf01e07ea.d: src/lib.rs src/channel.rs src/hooks.rs Cargo.toml

/work/main/preload/target/release/deps/libfaultline_preload-167760cbf01e07ea.rmeta: src/lib.rs src/channel.rs src/hooks.rs Cargo.toml

src/lib.rs:
src/channel.rs:
src/hooks.rs:
Cargo.toml:

# env-dep:CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
# env-dep:CLIPPY_CONF_DIR
