# stats.sh - shell helpers the bench scripts source (server_gc.sh, server_scaling.sh,
# background_gc.sh): medians of the figures the benchmark programs print.

# median: the median of the numbers on stdin, one per line ("-" when there are none)
median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# med FILE NAME PATTERN: the median of NAME=... over the lines of FILE matching PATTERN
med() { grep -E "$3" "$1" | grep -o "$2=[0-9.]*" | cut -d= -f2 | median; }

# sim FILE COLUMN: the median of a tenure-sim "pause ms:" figure (pct: % of run time; median,
# p95, p99, max)
sim() {
    case "$2" in
    pct) grep "^pause ms:" "$1" | sed 's/.*(\([0-9.]*\)% of run time.*/\1/' | median ;;
    *) grep "^pause ms:" "$1" | grep -o "$2 [0-9.]*" | cut -d' ' -f2 | median ;;
    esac
}
