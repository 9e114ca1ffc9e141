//! `tools/list` paging.
//!
//! A list is computed per host (§3, §8) from a catalog fixed between manifest changes, so a
//! page is a slice by offset and a cursor names the offset of the next page. A cursor is
//! opaque to the host; one this server could not have issued (not ours, past the end, not
//! on a page boundary) is an invalid-params error (-32602), as MCP asks for an invalid
//! cursor.

use mcpl_protocol::mcp::Tool;

/// The prefix of every cursor this server issues.
const CURSOR_PREFIX: &str = "tools:";

/// Why a cursor was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CursorError {
    /// The host sent a cursor this server never issued.
    #[error("unknown cursor {0:?}")]
    Unknown(String),
}

/// One page of `tools/list`.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The tools on it.
    pub tools: Vec<Tool>,
    /// The next page's cursor, when there is one.
    pub next_cursor: Option<String>,
}

/// The page of `tools` starting at `cursor` (the first page without one). `page_size` is
/// never 0 (the builder refuses it).
pub fn page(
    mut tools: Vec<Tool>,
    cursor: Option<&str>,
    page_size: usize,
) -> Result<Page, CursorError> {
    let len = tools.len();
    let start = match cursor {
        None => 0,
        Some(c) => parse_cursor(c, len, page_size)?,
    };
    let end = (start + page_size).min(len);
    tools.truncate(end);
    let tools = tools.split_off(start);
    let next_cursor = (end < len).then(|| format!("{CURSOR_PREFIX}{end}"));
    Ok(Page { tools, next_cursor })
}

/// The offset a cursor names, if this server could have issued it.
fn parse_cursor(cursor: &str, len: usize, page_size: usize) -> Result<usize, CursorError> {
    let unknown = || CursorError::Unknown(cursor.to_owned());
    let offset: usize = cursor
        .strip_prefix(CURSOR_PREFIX)
        .ok_or_else(unknown)?
        .parse()
        .map_err(|_| unknown())?;
    if offset == 0 || offset >= len || !offset.is_multiple_of(page_size) {
        return Err(unknown());
    }
    Ok(offset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools(n: usize) -> Vec<Tool> {
        (0..n)
            .map(|i| Tool::new(format!("t{i}"), "a tool", json!({"type": "object"})))
            .collect()
    }

    fn names(p: &Page) -> Vec<&str> {
        p.tools.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn pages_walk_every_tool_once_in_order() {
        let p1 = page(tools(5), None, 2).unwrap();
        assert_eq!(names(&p1), ["t0", "t1"]);
        let p2 = page(tools(5), p1.next_cursor.as_deref(), 2).unwrap();
        assert_eq!(names(&p2), ["t2", "t3"]);
        let p3 = page(tools(5), p2.next_cursor.as_deref(), 2).unwrap();
        assert_eq!(names(&p3), ["t4"]);
        assert_eq!(p3.next_cursor, None);
    }

    #[test]
    fn an_exact_fit_has_no_next_page_and_an_empty_list_one_empty_page() {
        let c = page(tools(4), None, 2).unwrap().next_cursor;
        let p2 = page(tools(4), c.as_deref(), 2).unwrap();
        assert_eq!(p2.next_cursor, None);
        let empty = page(tools(0), None, 2).unwrap();
        assert!(empty.tools.is_empty() && empty.next_cursor.is_none());
    }

    #[test]
    fn cursors_we_never_issued_are_refused() {
        for bad in [
            "", "x", "tools:", "tools:0", "tools:1", "tools:6", "tools:-2", "tools:2x", "2",
        ] {
            assert_eq!(
                page(tools(5), Some(bad), 2),
                Err(CursorError::Unknown(bad.to_owned())),
                "{bad}"
            );
        }
    }
}
