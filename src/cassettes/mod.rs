//! Cassettes: recorded provider traffic (`../shared/design/cassettes.md`), a transport that records or replays.
