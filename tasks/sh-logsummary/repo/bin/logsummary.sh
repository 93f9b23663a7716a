#!/usr/bin/env bash
# logsummary.sh: summarise application log files.
#
# usage: logsummary.sh FILE...
#   Prints one line per log level, "LEVEL COUNT", levels in alphabetical order.
#
# Log lines look like "2024-05-01T10:00:00Z ERROR database timeout (table=users)":
# a timestamp, a level, then the message. Lines of any other shape are ignored.
set -euo pipefail
export LC_ALL=C

if [ $# -eq 0 ]; then
    echo "usage: logsummary.sh FILE..." >&2
    exit 2
fi

# Keep well-formed lines only: a date-time stamp followed by a level.
awk '$1 ~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T/ && NF >= 2 { print $2 }' "$@" |
    sort | uniq -c | awk '{ print $2, $1 }'
