//! A task's key as the cache computes it: the inputs' digests
//! (`crate::inputs`), its hashed variables, its runtime commands' outputs,
//! what the package manager pins for its project, and its dependencies'
//! keys, through the recipe in `key`; and, before storing, whether the
//! files the key read still hold what was read.

use std::path::Path;

use super::{Cache, CacheError, CacheKey, KeyInputs, KeyManifest, LockPart};
use crate::config::Task;

impl Cache {
    /// Computes a task's key from its inputs as they are on disk now.
    pub(crate) fn task_key(
        &self,
        root: &Path,
        project_dir: &Path,
        id: &str,
        task: &Task,
        executor_config: &str,
        deps: &[(String, CacheKey)],
    ) -> Result<(CacheKey, KeyManifest), CacheError> {
        let runtime = self.runtime_outputs(task)?;
        let files = self.inputs.hashes(root, project_dir, task)?;
        let env = self.hashed_env(task);
        let mut deps = deps.to_vec();
        deps.sort();
        let project = self.deps.of(project_dir);
        if let LockPart::Unreadable(why) = &project.lockfile {
            return Err(CacheError::Lockfile(why.clone()));
        }
        let inputs = KeyInputs {
            task: id,
            command: &task.command,
            executor: task.executor.as_str(),
            executor_config,
            env_mode: self.env_mode.as_str(),
            env: &env,
            runtime: &runtime,
            files: &files,
            global: self.inputs.global(),
            deps: &deps,
            package: project,
            outputs: &task.outputs,
        };
        Ok(inputs.compute(&self.env_secret))
    }

    /// The hashed variables of `task` (its `env` and `global-env`) with
    /// their values now.
    fn hashed_env(&self, task: &Task) -> Vec<(String, Option<String>)> {
        if self.global_env.is_empty() && task.env.is_empty() {
            return Vec::new();
        }
        let list = crate::config::env::EnvList::new(&self.global_env, &task.env);
        list.hashed_names(self.env_vars.0.iter().map(|(k, _)| k.as_str()))
            .into_iter()
            .map(|name| {
                let value = self.env_vars.0.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone());
                (name, value)
            })
            .collect()
    }

    /// `(command, output)` of each runtime command of `task`, in order.
    fn runtime_outputs(&self, task: &Task) -> Result<Vec<(String, Vec<u8>)>, CacheError> {
        let mut seen: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for command in self.global_runtime.iter().chain(&task.runtime) {
            if seen.contains(&command.as_str()) {
                continue;
            }
            seen.push(command);
            let output =
                self.runtime.output(command).map_err(|why| CacheError::Runtime { command: command.clone(), why })?;
            out.push((command.clone(), output.to_vec()));
        }
        Ok(out)
    }

    /// The first of the files a key read (`manifest`) that no longer holds
    /// what was read, or is gone: the task's result is then not stored.
    /// An entry stored under the key of the old content with outputs built
    /// from the new would be a wrong hit once the edit is reverted (Bazel
    /// checks the same). Files unchanged since keying cost a `stat` (the
    /// stat index); a new file matters not, as the next key sees it.
    pub(crate) fn changed_input(
        &self,
        root: &Path,
        project_dir: &Path,
        task: &Task,
        manifest: &KeyManifest,
    ) -> Result<Option<String>, CacheError> {
        let now = self.inputs.hashed_now(root, project_dir, task)?;
        let mut now = now.iter().peekable();
        for (path, hash) in manifest.files.0.iter() {
            while now.next_if(|(p, _)| p < path).is_some() {}
            match now.peek() {
                Some((p, h)) if p == path && h == hash => {}
                _ => return Ok(Some(path.clone())),
            }
        }
        // The global inputs the key read, by path: a stat each while they
        // are unchanged (the stat index), as for the task's own.
        for (rel, hex) in &manifest.global {
            let same = self.inputs.digest_now(&root.join(rel)).is_ok_and(|h| h.to_hex().as_str() == hex);
            if !same {
                return Ok(Some(rel.clone()));
            }
        }
        Ok(None)
    }
}
