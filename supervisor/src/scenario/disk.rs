//! The `[disk]` section: how every node's simulated disk behaves (metadata
//! ordering, size, and what a crash keeps of unsynced writes).

use serde::Deserialize;
use toml::Spanned;

use super::error::Problem;
use super::{bytes, Ctx, ScenarioError};

/// `[disk] size` when the file does not say.
pub const DEFAULT_DISK_SIZE: u64 = 10 << 30;

/// The `[disk]` section as written in the file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DiskSection {
    metadata: Option<Spanned<String>>,
    size: Option<Spanned<String>>,
    unsynced: Option<Spanned<String>>,
}

/// The settings every node's simulated disk gets.
#[derive(Debug, Clone)]
pub struct DiskSpec {
    /// Whether the disks journal metadata in order (ext4-like) or follow
    /// POSIX strictly (only a directory's fsync makes its entries durable).
    pub ordered_metadata: bool,
    /// The size of every node's disk, which `statfs` reports with the
    /// bytes the node's files hold taken from it.
    pub size: u64,
    /// What a power-loss crash keeps of unsynced writes.
    pub unsynced: vfs::CrashModel,
}

/// Validates the `[disk]` section.
pub(super) fn spec(ctx: &Ctx, raw: &DiskSection) -> Result<DiskSpec, ScenarioError> {
    let ordered_metadata = match raw
        .metadata
        .as_ref()
        .map(|m| (m.get_ref().as_str(), m.span()))
    {
        None | Some(("posix", _)) => false,
        Some(("ordered", _)) => true,
        Some((other, span)) => {
            return Err(ctx.at(span, Problem::Metadata(other.to_string())));
        }
    };
    let size = match &raw.size {
        None => DEFAULT_DISK_SIZE,
        Some(v) => {
            bytes::parse_bytes(v.get_ref()).map_err(|e| ctx.at(v.span(), Problem::DiskSize(e)))?
        }
    };
    let unsynced = match &raw.unsynced {
        None => vfs::CrashModel::default(),
        Some(v) => vfs::CrashModel::ALL
            .iter()
            .find(|(name, _)| name == v.get_ref())
            .map(|&(_, model)| model)
            .ok_or_else(|| ctx.at(v.span(), Problem::Unsynced(v.get_ref().clone())))?,
    };
    Ok(DiskSpec {
        ordered_metadata,
        size,
        unsynced,
    })
}
