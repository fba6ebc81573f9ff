//! What a seed leaves behind: the checks that judge it, its artifact directory and its timeline page.

pub mod artifacts;
pub mod checks;
pub mod history_page;
pub mod lanes;
pub mod timeline;
