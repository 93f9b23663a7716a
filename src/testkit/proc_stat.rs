//! CPU times of a process from `/proc/PID/stat`, for the benchmarks that measure the harness's
//! own CPU apart from its children's.

use std::process::Command;

/// What `/proc/PID/stat` says of a process's CPU, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuTimes {
    /// The state letter (`R`, `S`, `Z` for a zombie, ...).
    pub state: char,
    /// Its own CPU: utime + stime.
    pub own: f64,
    /// The CPU of its children it has waited for: cutime + cstime.
    pub children: f64,
}

/// Parses the text of a `/proc/PID/stat`; `tick` is [`clock_ticks_per_second`]. `None` when the
/// text is not such a line.
pub fn parse(stat: &str, tick: f64) -> Option<CpuTimes> {
    // Fields after the command name (which may hold spaces and parentheses) start at field 3,
    // the state.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| -> Option<f64> { fields.get(i)?.parse().ok() };
    Some(CpuTimes {
        state: fields.first()?.chars().next()?,
        own: (num(11)? + num(12)?) / tick,
        children: (num(13)? + num(14)?) / tick,
    })
}

/// Reads and parses `path` (`/proc/self/stat`, `/proc/PID/stat`); panics with the path when it
/// cannot (a benchmark has nothing to measure then).
pub fn read(path: &str, tick: f64) -> CpuTimes {
    let stat = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    parse(&stat, tick).unwrap_or_else(|| panic!("{path}: not a stat line: {stat}"))
}

/// Clock ticks per second, the unit of those times (`getconf CLK_TCK`; 100 when it cannot be
/// asked, Linux's value nearly everywhere).
pub fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_gives_state_and_cpu_even_with_spaces_in_the_name() {
        let line =
            "42 (tokio rt) worker) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 30 20 20 0 9 0 123 0 0";
        assert_eq!(
            parse(line, 100.0),
            Some(CpuTimes {
                state: 'S',
                own: 3.0,
                children: 0.5
            })
        );
        assert_eq!(parse("42 (x) Z 1", 100.0), None);
        assert_eq!(parse("garbage", 100.0), None);
        let me = read("/proc/self/stat", clock_ticks_per_second());
        // The main thread of a test binary may well be asleep: any state letter will do.
        assert!(me.state.is_ascii_alphabetic() && me.own >= 0.0, "{me:?}");
    }
}
