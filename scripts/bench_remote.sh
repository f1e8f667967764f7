#!/usr/bin/env bash
# Starts a local moto S3 server on 127.0.0.1, runs zarrpp-bench-remote against it, stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${PORT:-45123}
moto_server -H 127.0.0.1 -p "$port" >/tmp/zarrpp-bench-moto.log 2>&1 &
moto=$!
trap 'kill $moto 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -s "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.2; done
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
curl -s -X PUT "http://127.0.0.1:$port/zarrpp-bench" >/dev/null
./build/release/zarrpp-bench-remote "http://127.0.0.1:$port" zarrpp-bench
