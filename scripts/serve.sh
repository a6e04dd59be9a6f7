#!/usr/bin/env bash
# `make serve`: the finance API on 127.0.0.1:8000 and the Responses API on 127.0.0.1:8001,
# on the embedded defaults (SQLite and Parquet files under ./var).
#
# Ctrl-C or SIGTERM stops both servers (each finishes its requests and hands unfinished
# background work back to its queue) and exits 0. If one server exits on its own, the
# other is stopped and the script exits with the first one's status.
set -uo pipefail
PY=${PY:-.venv/bin/python}
export QC_DEMO_DATA=${QC_DEMO_DATA:-1}
PORT=${PORT:-8000}
TEXTGEN_PORT=${TEXTGEN_PORT:-8001}
mkdir -p var

# One demo key for the Responses API, created on first start and kept (mode 600) beside the data.
key_file=var/textgen-demo-key
if [ ! -s "$key_file" ]; then
  (umask 077 && "$PY" -m textgen keys create demo > "$key_file") || exit 1
  echo "Responses API demo key (kept in $key_file): $(cat "$key_file")"
else
  echo "Responses API demo key: in $key_file"
fi

pids=()
stopping=0
stop() {
  stopping=1
  trap - INT TERM
  [ ${#pids[@]} -gt 0 ] && kill -TERM "${pids[@]}" 2>/dev/null
  for _ in $(seq 1 100); do  # up to 10 s, then no more waiting
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && return 0
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null
}
trap 'stop; exit 0' INT TERM

"$PY" -m textgen serve --host 127.0.0.1 --port "$TEXTGEN_PORT" &
pids+=($!)
"$PY" -m service serve --host 127.0.0.1 --port "$PORT" --access-log &
pids+=($!)

# `wait -n` returns when either server exits, or at once when a trapped signal arrives.
wait -n "${pids[@]}"
status=$?
[ "$stopping" = 1 ] && exit 0
stop
exit "$status"
