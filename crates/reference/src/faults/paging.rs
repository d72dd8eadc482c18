//! Faults of cursor-based paging, shared by every list.

use super::At;
use super::Fault;
use crate::cursor::CursorError;

declare! {
    CursorDuplicates = "cursor-duplicates"
        breaks ["BASE-PAGE-01", "SEP1821-PAG", "SEP1300-FLT-04", "SEARCH-PAG"]:
        "each next page repeats the last item of the previous page";
    InvalidCursorOk = "invalid-cursor-ok"
        breaks ["BASE-PAGE-02"]:
        "an unreadable cursor restarts the list from the first page instead of -32602";
    CursorTrimmed = "cursor-trimmed"
        breaks ["BASE-PAGE-02"]:
        "whitespace around a cursor is trimmed before it is read: ` c ` resumes where `c` does instead of -32602";
}

/// `cursor-trimmed`: whitespace around a cursor is dropped before it is
/// read, so a cursor the server never issued (` c `) resumes where `c` does.
pub fn rewrite_cursor<'a>(ctx: &At<'_, '_>, cursor: &'a str) -> &'a str {
    if ctx.has(Fault::CursorTrimmed) {
        return cursor.trim();
    }
    cursor
}

/// `invalid-cursor-ok`: an unreadable cursor restarts the list instead of
/// being refused.
pub fn rewrite_resume(
    ctx: &At<'_, '_>,
    resumed: Result<usize, CursorError>,
) -> Result<usize, CursorError> {
    match resumed {
        Err(CursorError::Invalid) if ctx.has(Fault::InvalidCursorOk) => Ok(0),
        other => other,
    }
}

/// `cursor-duplicates`: each next page starts on the last item of the page
/// before it.
pub fn rewrite_next_offset(ctx: &At<'_, '_>, offset: usize, end: usize) -> usize {
    if ctx.has(Fault::CursorDuplicates) {
        return (end - 1).max(offset + 1);
    }
    end
}
