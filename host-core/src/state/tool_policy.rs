//! The host's per-server tool policy: allow and deny lists of tool-name patterns, where `*`
//! matches any run of characters (§6 first bullet: a tool the policy excludes is not
//! announced, not shown by `look`, and not callable through `act`; nor is it in the
//! model's tool list).
//!
//! An agent's own allowed-tools list is one more policy: combine them with
//! [`ToolPolicy::and`].

/// Allow and deny patterns over a server's tool names (the server's own names, not the
/// namespaced `server--tool`). Deny wins; no allow list allows everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolPolicy {
    allow: Option<Vec<String>>,
    deny: Vec<String>,
    /// Further policies every tool must also pass.
    also: Vec<ToolPolicy>,
}

impl ToolPolicy {
    /// Allows every tool.
    pub fn allow_all() -> Self {
        ToolPolicy::default()
    }

    /// Allows only tools matching one of `patterns`.
    pub fn allow_only<S: Into<String>>(patterns: impl IntoIterator<Item = S>) -> Self {
        ToolPolicy {
            allow: Some(patterns.into_iter().map(Into::into).collect()),
            ..Default::default()
        }
    }

    /// The same, also denying tools matching one of `patterns`.
    pub fn deny<S: Into<String>>(mut self, patterns: impl IntoIterator<Item = S>) -> Self {
        self.deny.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// A policy that allows a tool only when both `self` and `other` do.
    pub fn and(mut self, other: ToolPolicy) -> Self {
        self.also.push(other);
        self
    }

    /// True when `tool` may be offered, announced and called.
    pub fn allows(&self, tool: &str) -> bool {
        let allowed = self
            .allow
            .as_ref()
            .is_none_or(|a| a.iter().any(|p| glob_match(p, tool)));
        allowed
            && !self.deny.iter().any(|p| glob_match(p, tool))
            && self.also.iter().all(|p| p.allows(tool))
    }
}

/// True when `name` matches `pattern`, where `*` matches any run of characters (none
/// included) and every other character matches itself. Linear backtracking on the last
/// `*` only: O(pattern × name) at worst, never exponential.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if pi < p.len() && p[pi] == n[ni] {
            pi += 1;
            ni += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_runs() {
        assert!(glob_match("*", ""));
        assert!(glob_match("*", "play"));
        assert!(glob_match("pl*", "play"));
        assert!(glob_match("*ay", "play"));
        assert!(glob_match("p*a*y", "play"));
        assert!(glob_match("play", "play"));
        assert!(!glob_match("play", "plays"));
        assert!(!glob_match("pl*x", "play"));
        assert!(glob_match("a*b*c", "aXbYbZc"));
        assert!(!glob_match("a*b*c", "aXbYbZ"));
        assert!(glob_match("**", "x"));
    }

    #[test]
    fn deny_wins_and_no_allow_list_allows_all() {
        let p = ToolPolicy::allow_all().deny(["admin_*"]);
        assert!(p.allows("play"));
        assert!(!p.allows("admin_reset"));
        let p = ToolPolicy::allow_only(["play", "resign"]).deny(["resign"]);
        assert!(p.allows("play"));
        assert!(!p.allows("resign"));
        assert!(!p.allows("seek"));
    }

    #[test]
    fn combined_policies_must_all_allow() {
        let p = ToolPolicy::allow_all()
            .deny(["x"])
            .and(ToolPolicy::allow_only(["p*"]));
        assert!(p.allows("play"));
        assert!(!p.allows("seek"));
        assert!(!p.allows("x"));
    }

    #[test]
    fn a_long_name_against_many_stars_stays_fast() {
        let name = "a".repeat(5_000);
        let pattern = format!("{}b", "*a".repeat(50));
        assert!(!glob_match(&pattern, &name));
    }
}
