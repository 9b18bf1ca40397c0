//! `vx upgrade [--check]`: report this vx against the latest release and
//! (without `--check`) have `upgrade` install it; this file prints.

use clap::Args;

use crate::error::Result;
use crate::upgrade::{install_latest, release_url};

const UPGRADE_HELP: &str = "Examples:
  vx upgrade            install the latest release over this vx
  vx upgrade --check    only say whether a newer release exists

The feed is VX_RELEASE_URL, else the project's release.json.";

/// Replace this vx with the latest release.
#[derive(Debug, Args)]
#[command(after_help = UPGRADE_HELP)]
pub(crate) struct UpgradeArgs {
    /// Only report the current and latest versions; change nothing.
    #[arg(long)]
    pub check: bool,
}

pub(crate) fn cmd_upgrade(args: UpgradeArgs) -> Result<u8> {
    let status = crate::upgrade::check(&release_url())?;
    let (current, latest) = (status.current, &status.latest.version);
    if args.check {
        println!("current: {current}");
        println!("latest: {latest}");
        println!("platform: {}", status.platform);
        let verdict = match (status.newer(), status.has_asset()) {
            (false, _) => "vx is up to date",
            (true, true) => "a newer release is available: run `vx upgrade`",
            (true, false) => "a newer release exists, but without an asset for this platform",
        };
        println!("{verdict}");
        return Ok(0);
    }
    if !status.newer() {
        println!("vx {current} is up to date (latest: {latest})");
        return Ok(0);
    }
    let path = install_latest(&status)?;
    println!("upgraded vx {current} → {latest} ({})", path.display());
    Ok(0)
}
