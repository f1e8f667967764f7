#!/usr/bin/env bash
# Starts a local moto S3 server on 127.0.0.1, runs zarrpp-bench-remote against it, stops it.
# Arguments go to zarrpp-bench-remote (e.g. --shape 1024,1024 for a quick run).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release --target zarrpp-bench-remote >/dev/null
port=${PORT:-$(/usr/bin/python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")}
log=$(mktemp /tmp/zarrpp-bench-moto.XXXXXX.log)
moto_server -H 127.0.0.1 -p "$port" >"$log" 2>&1 &
moto=$!
trap 'kill $moto 2>/dev/null || true; rm -f "$log"' EXIT
up=0
for _ in $(seq 100); do
  if curl -s "http://127.0.0.1:$port/" >/dev/null; then up=1; break; fi
  sleep 0.2
done
if [ "$up" != 1 ]; then
  echo "bench_remote.sh: moto_server did not start on port $port:" >&2
  cat "$log" >&2
  exit 1
fi
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
curl -s -X PUT "http://127.0.0.1:$port/zarrpp-bench" >/dev/null
./build/release/zarrpp-bench-remote "http://127.0.0.1:$port" zarrpp-bench "$@"
