#!/usr/bin/env bash
# `make serve`: the finance API on 127.0.0.1:8000 and the Responses API on 127.0.0.1:8001,
# on the embedded defaults (SQLite and Parquet files under ./var). Ctrl-C stops both.
set -euo pipefail
PY=${PY:-.venv/bin/python}
export QC_DEMO_DATA=${QC_DEMO_DATA:-1}
TEXTGEN_PORT=${TEXTGEN_PORT:-8001}
mkdir -p var

# One demo key for the Responses API, created on first start and kept (mode 600) beside the data.
key_file=var/textgen-demo-key
if [ ! -s "$key_file" ]; then
  (umask 077 && "$PY" -m textgen keys create demo > "$key_file")
fi

trap 'kill 0' EXIT INT TERM
"$PY" -m textgen serve --host 127.0.0.1 --port "$TEXTGEN_PORT" &
echo "Responses API on http://127.0.0.1:$TEXTGEN_PORT/v1   demo key: $(cat "$key_file")   model: smollm2-135m-instruct (or TEXTGEN_MODELS)"
"$PY" -m service serve --host 127.0.0.1 --port 8000
