#!/usr/bin/env bash
# logsummary.sh: summarise application log files.
#
# usage: logsummary.sh [--level LEVEL] FILE...
#   Prints one line per log level, "LEVEL COUNT", levels in alphabetical order.
#   --level LEVEL  instead prints the messages logged at LEVEL, one line per distinct
#                  message as "COUNT MESSAGE": most frequent first, equal counts in
#                  alphabetical order.
#
# Log lines look like "2024-05-01T10:00:00Z ERROR database timeout (table=users)":
# a timestamp, a level, then the message. Lines of any other shape are ignored.
set -euo pipefail
export LC_ALL=C

usage() {
    echo "usage: logsummary.sh [--level LEVEL] FILE..." >&2
    exit 2
}

level=""
if [ "${1:-}" = "--level" ]; then
    [ $# -ge 2 ] || usage
    level=$2
    shift 2
fi
[ $# -gt 0 ] || usage

# Keep well-formed lines only: a date-time stamp followed by a level.
stamp='^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T'

if [ -n "$level" ]; then
    # The message is the rest of the line after the level, inner spacing kept.
    awk -v stamp="$stamp" -v want="$level" '
        $1 ~ stamp && $2 == want {
            msg = $0
            sub(/^[^ ]+ +[^ ]+ ?/, "", msg)
            count[msg]++
        }
        END { for (m in count) printf "%d\t%s\n", count[m], m }
    ' "$@" | sort -t "$(printf '\t')" -k1,1nr -k2 | tr '\t' ' '
else
    awk -v stamp="$stamp" '$1 ~ stamp && NF >= 2 { print $2 }' "$@" |
        sort | uniq -c | awk '{ print $2, $1 }'
fi
