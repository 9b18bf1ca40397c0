//! Refusing to write credentials into `vx.lock`: a lock file is committed,
//! so a token pasted into a command would leak with it. Checked: well-known
//! token prefixes, private key blocks, `…KEY=`/`…TOKEN=`/`…PASSWORD=`/
//! `…SECRET=` assignments of literal values, and long high-entropy words.

use std::sync::OnceLock;

use regex::Regex;

use super::LockError;
use crate::config::{Command, Workspace};

/// Prefixes of tokens issued by common services.
const PREFIXES: [&str; 16] = [
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xapp-",
    "sk_live_",
    "rk_live_",
    "npm_",
    "AKIA",
    "AIza",
    "hf_",
];

fn assignment() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r#"(?i)\b[A-Z0-9_]*(?:KEY|TOKEN|PASSWORD|PASSWD|SECRET)[A-Z0-9_]*\s*=\s*([^\s$'"`][^\s]*|'[^'$]+'|"[^"$]+"|`[^`]+`)"#,
        )
        .expect("the assignment pattern compiles")
    })
}

/// Bits of entropy per character of `word`.
fn entropy(word: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for c in word.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let n = word.chars().count() as f64;
    counts.values().map(|&c| c as f64 / n).map(|p| -p * p.log2()).sum()
}

/// Why `text` looks like it holds a credential, if it does (the reason
/// shows only the start of the match).
pub(crate) fn find_secret(text: &str) -> Option<String> {
    if text.contains("PRIVATE KEY-----") {
        return Some("a private key block".into());
    }
    for word in text.split(|c: char| c.is_whitespace() || "\"'=,;:()[]{}<>".contains(c)) {
        if let Some(prefix) = PREFIXES.iter().find(|p| word.starts_with(**p) && word.len() >= p.len() + 12) {
            return Some(format!("a token starting with `{prefix}`"));
        }
        let token_chars = word.chars().all(|c| c.is_ascii_alphanumeric() || "+/_-=".contains(c));
        if word.len() >= 32 && token_chars && entropy(word) >= 4.3 {
            return Some(format!("a long random-looking string `{}…`", &word[..6]));
        }
    }
    if let Some(m) = assignment().captures(text) {
        let whole = m.get(0).map_or("", |m| m.as_str());
        let name = whole.split('=').next().unwrap_or("").trim();
        return Some(format!("a literal value assigned to `{name}`"));
    }
    None
}

/// Refuses a workspace with a task whose command, inputs or outputs look
/// like they hold a credential.
pub(crate) fn refuse_secrets(ws: &Workspace) -> Result<(), LockError> {
    for p in &ws.projects {
        for t in p.tasks.values() {
            let command = match &t.command {
                Command::Shell(s) => s.clone(),
                Command::Argv(a) => a.join(" "),
            };
            let fields = [
                ("command", command),
                ("inputs", t.inputs.clone().unwrap_or_default().join(" ")),
                ("outputs", t.outputs.join(" ")),
                ("runtime", t.runtime.join(" ")),
            ];
            for (field, text) in fields {
                if let Some(why) = find_secret(&text) {
                    return Err(LockError::Secret { project: p.name.clone(), task: t.name.clone(), field, why });
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catches_credentials() {
        assert!(find_secret("curl -H 'Authorization: ghp_abcdefghijklmnop1234' x").is_some());
        assert!(find_secret("API_KEY=abc123 node deploy.js").is_some());
        assert!(find_secret("DB_PASSWORD='hunter2' ./migrate").is_some());
        assert!(find_secret("deploy --token=Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNbVcXz").is_some());
        assert!(find_secret("-----BEGIN RSA PRIVATE KEY-----").is_some());
    }

    #[test]
    fn leaves_ordinary_commands_alone() {
        for ok in [
            "tsc -b",
            "node build.js",
            "API_KEY=$API_KEY node deploy.js",
            "TOKEN=\"$TOKEN\" ./x",
            "echo 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "KEYBOARD_LAYOUT",
            "webpack --mode production --config webpack.prod.config.js",
        ] {
            assert_eq!(find_secret(ok), None, "{ok}");
        }
    }
}
