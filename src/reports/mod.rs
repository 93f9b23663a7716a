//! Reports: `runs.csv`, `summary.csv`, `summary.md`, transcripts and diffs under `reports/`, and the terminal summary.
