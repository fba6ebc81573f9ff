//! What a seed leaves behind: the checks that judge it, its artifact
//! directory and its timeline page, the run's summary.json and JUnit XML.

pub mod artifacts;
pub mod checks;
pub mod divergence;
pub mod history_page;
pub mod junit;
pub mod lanes;
pub mod progress;
pub mod provenance;
pub mod replays;
pub mod summary;

pub mod timeline;
pub mod timeline_error;
