//! `vx upgrade [--check]`: fetch the release metadata, report current vs
//! latest, and (without `--check`) download, verify and install the asset
//! for this platform.

use clap::Args;

use crate::error::Result;
use crate::upgrade::{Release, fetch, install, install_target, is_newer, platform, release_url};

const UPGRADE_HELP: &str = "Examples:
  vx upgrade            install the latest release over this vx
  vx upgrade --check    only say whether a newer release exists

The feed is VX_RELEASE_URL, else the project's release.json.";

/// Replace this vx with the latest release.
#[derive(Debug, Args)]
#[command(after_help = UPGRADE_HELP)]
pub struct UpgradeArgs {
    /// Only report the current and latest versions; change nothing.
    #[arg(long)]
    pub check: bool,
}

pub fn cmd_upgrade(args: UpgradeArgs) -> Result<u8> {
    let url = release_url();
    let current = env!("CARGO_PKG_VERSION");
    let release = Release::parse(&url, &fetch(&url, None)?.body)?;
    let target = platform();
    let newer = is_newer(&release.version, current);
    if args.check {
        println!("current: {current}");
        println!("latest: {}", release.version);
        println!("platform: {target}");
        let asset = release.assets.iter().any(|a| a.target == target);
        let verdict = match (newer, asset) {
            (false, _) => "vx is up to date",
            (true, true) => "a newer release is available: run `vx upgrade`",
            (true, false) => "a newer release exists, but without an asset for this platform",
        };
        println!("{verdict}");
        return Ok(0);
    }
    if !newer {
        println!("vx {current} is up to date (latest: {})", release.version);
        return Ok(0);
    }
    let asset = release.asset_for(&url, &target)?;
    let bytes = fetch(&asset.url, asset.size)?.body;
    let path = install_target()?;
    install(&asset, &bytes, &path)?;
    println!("upgraded vx {current} → {} ({})", release.version, path.display());
    Ok(0)
}
