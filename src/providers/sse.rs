//! Server-sent events: an incremental parser of `event:`/`data:` lines, as Pi's own parser.
