//! A report folder on disk: writing every report file of a suite's records (`runs.csv`, the
//! summaries, `report.html`, `junit.xml`, each run's folder), writing it again from its run
//! folders, and reading run files back.

use std::borrow::Cow;
use std::io;
use std::path::{Path, PathBuf};

use super::error::ReportError;
use super::summary::{run_order, sorted};
use crate::record::{RUN_FILE_NAME, RunFile, RunRecord};

/// The column documentation of `runs.csv` and `summary.csv`.
pub const COLUMNS_DOC: &str = include_str!("COLUMNS.md");

/// Where a report went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportPaths {
    pub dir: PathBuf,
    pub runs_csv: PathBuf,
    pub summary_csv: PathBuf,
    pub summary_md: PathBuf,
    /// `report.html`, unless turned off.
    pub report_html: Option<PathBuf>,
    /// `junit.xml`, unless turned off.
    pub junit_xml: Option<PathBuf>,
    /// The run folders written by this call for the run files passed in (the folders it had to
    /// complete for runs that had none are not listed).
    pub run_dirs: Vec<PathBuf>,
}

/// What a report folder holds besides the CSV and markdown files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportOptions {
    /// Write `report.html`.
    pub html: bool,
    /// Write `junit.xml`.
    pub junit: bool,
    /// Append `summary.md` to this file (the CLI passes `$GITHUB_STEP_SUMMARY`).
    pub step_summary: Option<PathBuf>,
    /// Past these, `report.html` links each run's own page instead of holding every panel.
    pub inline: super::html::InlineLimit,
    /// One line said first in `summary.md` (as a quote) and `report.html`: the report is
    /// partial (interrupted, or merged with shards missing).
    pub notice: Option<String>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            html: true,
            junit: true,
            step_summary: None,
            inline: super::html::InlineLimit::default(),
            notice: None,
        }
    }
}

/// Writes `runs.csv`, `summary.csv`, `summary.md`, `report.html` and `junit.xml` for `records`,
/// and a run folder for each of `runs` (the runner instead writes run folders as runs finish,
/// with [`write_run_artifacts`], and passes no run files here), with the default
/// [`ReportOptions`].
pub fn write_report(
    dir: &Path,
    records: &[RunRecord],
    runs: &[RunFile],
) -> Result<ReportPaths, ReportError> {
    write_report_with(dir, records, runs, &ReportOptions::default())
}

/// [`write_report`] with `options`.
///
/// The records passed in are the truth: a run folder whose `run.json` holds an older record (the
/// runner adds notes after writing it) is written again, and a run without a folder (skipped, or
/// ended before the agent started) gets one holding its record alone.
pub fn write_report_with(
    dir: &Path,
    records: &[RunRecord],
    runs: &[RunFile],
    options: &ReportOptions,
) -> Result<ReportPaths, ReportError> {
    create_dir(dir)?;
    let mut run_dirs = Vec::new();
    for file in runs {
        run_dirs.push(write_run_artifacts(dir, file)?);
    }
    let sorted = sorted(records);
    let runs_csv = dir.join("runs.csv");
    write_file(
        &runs_csv,
        super::csv::runs_csv(&sorted).map_err(|source| ReportError::Csv {
            path: runs_csv.clone(),
            source,
        })?,
    )?;
    let summary_csv = dir.join("summary.csv");
    write_file(
        &summary_csv,
        super::csv::summary_csv(&sorted).map_err(|source| ReportError::Csv {
            path: summary_csv.clone(),
            source,
        })?,
    )?;
    let summary_md = dir.join("summary.md");
    let markdown = match &options.notice {
        Some(notice) => format!("> **{notice}**\n\n{}", super::markdown::summary_md(&sorted)),
        None => super::markdown::summary_md(&sorted),
    };
    write_file(&summary_md, markdown.clone())?;
    // Every run file, one at a time: completed or refreshed, its record as stored and its edit
    // strategy kept, the rest (messages, tool calls, diff) dropped at once. A large report links
    // each run's own page instead of holding every panel, and those pages are written here.
    let name = folder_name(dir);
    let linked_by_count = options.html && sorted.len() > options.inline.runs;
    let mut stored: Vec<RunRecord> = Vec::with_capacity(sorted.len());
    let mut strategies: Vec<Option<String>> = Vec::with_capacity(sorted.len());
    let mut run_file_bytes = 0u64;
    // While they are small: kept for the panels (`InlineLimit::held`).
    let mut held: Option<Vec<RunFile>> = (options.html && !linked_by_count).then(Vec::new);
    for record in &sorted {
        let (file, bytes) = complete_run_file(dir, record)?;
        run_file_bytes += bytes;
        if linked_by_count {
            write_run_page(dir, &file, &name)?;
        }
        if run_file_bytes > options.inline.held {
            held = None;
        }
        match held.as_mut() {
            Some(held) => {
                strategies.push(file.edit_strategy.clone());
                stored.push(file.record.clone());
                held.push(file);
            }
            None => {
                strategies.push(file.edit_strategy);
                stored.push(file.record);
            }
        }
    }
    let rows: Vec<super::html::RunRow<'_>> = stored
        .iter()
        .zip(&strategies)
        .map(|(record, strategy)| super::html::RunRow {
            record,
            strategy: strategy.as_deref(),
        })
        .collect();
    let report_html = if options.html {
        let linked = linked_by_count || run_file_bytes > options.inline.bytes;
        if linked && !linked_by_count {
            for row in &rows {
                let file = read_run_file(&dir.join(row.record.run_dir()).join(RUN_FILE_NAME))?;
                write_run_page(dir, &file, &name)?;
            }
        }
        let path = dir.join(super::html::REPORT_HTML);
        let io = |source| ReportError::Io {
            path: path.clone(),
            source,
        };
        let mut out = io::BufWriter::new(std::fs::File::create(&path).map_err(io)?);
        let mut load = |i: usize| -> Result<Cow<'_, RunFile>, ReportError> {
            if let Some(file) = held.as_ref().and_then(|held| held.get(i)) {
                return Ok(Cow::Borrowed(file));
            }
            let run = dir.join(rows[i].record.run_dir()).join(RUN_FILE_NAME);
            read_run_file(&run).map(Cow::Owned)
        };
        let panels = if linked {
            super::html::Panels::Linked
        } else {
            super::html::Panels::Inline(&mut load)
        };
        super::html::write_report_html(
            &mut out,
            &path,
            &rows,
            &name,
            panels,
            options.notice.as_deref(),
        )?;
        io::Write::flush(&mut out).map_err(io)?;
        Some(path)
    } else {
        None
    };
    let junit_xml = if options.junit {
        let path = dir.join(super::junit::JUNIT_XML);
        let records: Vec<&RunRecord> = stored.iter().collect();
        write_file(&path, super::junit::junit_xml(&records, &name))?;
        Some(path)
    } else {
        None
    };
    if let Some(path) = &options.step_summary {
        append_file(path, &markdown)?;
    }
    Ok(ReportPaths {
        dir: dir.to_path_buf(),
        runs_csv,
        summary_csv,
        summary_md,
        report_html,
        junit_xml,
        run_dirs,
    })
}

/// Writes the report folder `dir` again from its run folders alone (every `runs/*/run.json`).
pub fn rewrite_report(dir: &Path, options: &ReportOptions) -> Result<ReportPaths, ReportError> {
    let records = read_run_records(dir)?;
    write_report_with(dir, &records, &[], options)
}

/// The run file of `record`, and the size of its `run.json`: read from its folder (and written
/// again when its record is not the one passed in), or written from the record alone when the run
/// has no folder.
fn complete_run_file(dir: &Path, record: &RunRecord) -> Result<(RunFile, u64), ReportError> {
    let path = dir.join(record.run_dir()).join(RUN_FILE_NAME);
    // The record as its run file holds it (times to the millisecond), so that a folder written
    // again from its run files is the same as the one written now.
    let record = as_stored(record).map_err(|source| ReportError::Json {
        path: path.clone(),
        source,
    })?;
    match read_run_file_sized(&path) {
        Ok((mut file, bytes)) => {
            if file.record != record {
                file.record = record;
                write_run_artifacts(dir, &file)?;
            }
            Ok((file, bytes))
        }
        Err(ReportError::ReadFile { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            let file = RunFile::record_only(record);
            write_run_artifacts(dir, &file)?;
            Ok((file, 0))
        }
        Err(e) => Err(e),
    }
}

/// Writes `runs/<run>/run.html`, the run's own page.
fn write_run_page(dir: &Path, file: &RunFile, name: &str) -> Result<(), ReportError> {
    let path = dir.join(file.record.run_dir()).join(super::html::RUN_HTML);
    write_file(&path, super::html::run_page(file, name))
}

/// `record` after a round trip through its JSON form.
fn as_stored(record: &RunRecord) -> Result<RunRecord, serde_json::Error> {
    serde_json::from_value(serde_json::to_value(record)?)
}

/// Reads one `run.json`.
pub fn read_run_file(path: &Path) -> Result<RunFile, ReportError> {
    read_run_file_sized(path).map(|(file, _)| file)
}

/// Reads one `run.json`, and says how many bytes it has.
fn read_run_file_sized(path: &Path) -> Result<(RunFile, u64), ReportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::ReadFile {
        path: path.to_path_buf(),
        source,
    })?;
    let file = serde_json::from_str(&text).map_err(|source| ReportError::Parse {
        path: path.to_path_buf(),
        source,
    })?;
    Ok((file, text.len() as u64))
}

/// The record of every run file of the report folder `dir` (`runs/*/run.json`), in report
/// order, without the rest of each file (messages, tool calls, diff): what a whole report is
/// written from, in memory that grows with the records alone.
pub fn read_run_records(dir: &Path) -> Result<Vec<RunRecord>, ReportError> {
    /// A run file's record; serde skips the other fields.
    #[derive(serde::Deserialize)]
    struct RecordOnly {
        record: RunRecord,
    }
    let mut records = Vec::new();
    for path in run_file_paths(dir)? {
        let text = std::fs::read_to_string(&path).map_err(|source| ReportError::ReadFile {
            path: path.clone(),
            source,
        })?;
        let only: RecordOnly =
            serde_json::from_str(&text).map_err(|source| ReportError::Parse { path, source })?;
        records.push(only.record);
    }
    records.sort_by(|a, b| run_order(a).cmp(&run_order(b)));
    Ok(records)
}

/// The `run.json` of every run folder of the report folder `dir`.
fn run_file_paths(dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let runs = dir.join("runs");
    let entries = std::fs::read_dir(&runs).map_err(|source| ReportError::ReadFile {
        path: runs.clone(),
        source,
    })?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| ReportError::ReadFile {
            path: runs.clone(),
            source,
        })?;
        let path = entry.path().join(RUN_FILE_NAME);
        if path.is_file() {
            paths.push(path);
        }
    }
    Ok(paths)
}

/// Every run file of the report folder `dir` (`runs/*/run.json`), in report order.
pub fn read_run_files(dir: &Path) -> Result<Vec<RunFile>, ReportError> {
    let mut files = run_file_paths(dir)?
        .iter()
        .map(|path| read_run_file(path))
        .collect::<Result<Vec<_>, _>>()?;
    files.sort_by(|a, b| run_order(&a.record).cmp(&run_order(&b.record)));
    Ok(files)
}

/// Writes one run's folder under `dir`, at the paths its record names: `run.json`,
/// `transcript.md`, `transcript.json`, `diff.patch`, and `trajectory.json` when the run has
/// messages; returns the folder.
pub fn write_run_artifacts(dir: &Path, file: &RunFile) -> Result<PathBuf, ReportError> {
    let record = &file.record;
    let run_dir = dir.join(record.run_dir());
    create_dir(&run_dir)?;
    let json =
        |path: PathBuf, value: Result<String, serde_json::Error>| -> Result<(), ReportError> {
            let text = value.map_err(|source| ReportError::Json {
                path: path.clone(),
                source,
            })?;
            write_file(&path, text)
        };
    json(run_dir.join(RUN_FILE_NAME), serde_json::to_string(file))?;
    write_file(
        &dir.join(&record.transcript_path),
        super::transcript::transcript_md(file),
    )?;
    json(
        run_dir.join("transcript.json"),
        super::transcript::transcript_json(file),
    )?;
    if !file.messages.is_empty() {
        json(
            run_dir.join(super::trajectory::TRAJECTORY_JSON),
            serde_json::to_string_pretty(&super::trajectory::trajectory(file)),
        )?;
    }
    write_file(&dir.join(&record.diff_path), file.diff.clone())?;
    Ok(run_dir)
}

/// Writes one more file into a run's folder (`divergence.md`, ...); returns its path.
pub fn write_run_file(
    dir: &Path,
    record: &RunRecord,
    name: &str,
    text: String,
) -> Result<PathBuf, ReportError> {
    let path = dir.join(record.run_dir()).join(name);
    write_file(&path, text)?;
    Ok(path)
}

/// The last component of the report folder (its timestamp), for titles.
fn folder_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn create_dir(dir: &Path) -> Result<(), ReportError> {
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

/// Appends `text` and a newline to the file at `path` (created if missing): how summaries go to
/// `$GITHUB_STEP_SUMMARY`.
pub fn append_file(path: &Path, text: &str) -> Result<(), ReportError> {
    use std::io::Write;
    let io = |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io)?;
    file.write_all(text.as_bytes()).map_err(io)?;
    file.write_all(b"\n").map_err(io)
}

fn write_file(path: &Path, text: String) -> Result<(), ReportError> {
    if let Some(parent) = path.parent() {
        create_dir(parent)?;
    }
    std::fs::write(path, text).map_err(|source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    })
}
