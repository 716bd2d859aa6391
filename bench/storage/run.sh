#!/bin/sh
# Measures a hot-table storage design under a transaction held open:
#   sh bench/storage/run.sh single|rotating SECONDS [lock]
# PGURL (default postgres://postgres@127.0.0.1:5432/postgres) names the
# database; the prototype lives in schema hotproto, dropped at the end.
# A producer offers 100 jobs per insert at RATE inserts/s (default 30);
# two clients claim and two complete, 100 jobs a statement, until a minute
# after the producer stops. A session
# holds a repeatable-read snapshot for the whole run (with "lock" it has
# also read the queue's tables, so it holds their locks); the script
# prints the tables' size and the jobs completed every 10 s, then ends the
# hold and prints the size each 10 s for a minute more. The rotating design
# rotates every EVERY seconds (default 1).
set -eu
design=$1; secs=$2; lock=${3:-}
url=${PGURL:-postgres://postgres@127.0.0.1:5432/postgres}
rate=${RATE:-30}
every=${EVERY:-1}
dir=$(cd "$(dirname "$0")" && pwd)
psql -q -v ON_ERROR_STOP=1 "$url" -f "$dir/$design.sql"
hold="SELECT 1;"
[ "$lock" = lock ] && hold="SELECT count(*) FROM hotproto.q;"
( printf 'BEGIN ISOLATION LEVEL REPEATABLE READ;\n%s\nSELECT pg_sleep(%s);\nCOMMIT;\n' "$hold" "$secs" | psql -q "$url" >/dev/null ) &
holdpid=$!
sleep 1
pgbench -n "$url" -f "$dir/produce_$design.sql" -c 1 -R "$rate" -T "$secs" >/dev/null 2>&1 &
# The workers go on for a minute after the producer stops: the backlog
# drains, and the sizes after the hold are those of a drained queue.
pgbench -n "$url" -f "$dir/claim.sql" -c 2 -T "$((secs + 60))" >/dev/null 2>&1 &
pgbench -n "$url" -f "$dir/complete.sql" -c 2 -T "$((secs + 60))" >/dev/null 2>&1 &
end=$(( $(date +%s) + secs ))
prev=0
rotated=0
while [ "$(date +%s)" -lt "$end" ]; do
    if [ "$design" = rotating ] && [ $(( $(date +%s) - rotated )) -ge "$every" ]; then
        rotated=$(date +%s)
        psql -qAt "$url" -c "SET lock_timeout = '50ms'; SELECT hotproto.rotate();" >/dev/null 2>&1 || true
    fi
    t=$(( secs - (end - $(date +%s)) ))
    if [ "$t" -ge $(( prev + 10 )) ]; then
        prev=$(( t - t % 10 ))
        echo "t=${t}s held $(psql -qAt -F ' ' "$url" -c 'SELECT bytes, done FROM hotproto.sizes')"
    fi
    sleep 1
done
wait $holdpid 2>/dev/null || true
for t in 10 20 30 40 50 60; do
    [ "$design" = rotating ] && psql -qAt "$url" -c "SET lock_timeout = '50ms'; SELECT hotproto.rotate(); SELECT hotproto.rotate(); SELECT hotproto.rotate();" >/dev/null 2>&1 || true
    sleep 10
    echo "after+${t}s $(psql -qAt -F ' ' "$url" -c 'SELECT bytes, done FROM hotproto.sizes')"
done
wait
psql -q "$url" -c 'DROP SCHEMA hotproto CASCADE'
