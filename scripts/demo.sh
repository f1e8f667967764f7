#!/usr/bin/env bash
# The main job: set up, build, and run the prepend walkthrough on a local directory store.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target zarrpp-cli
./build/release/zarrpp demo "${1:-build/demo.zarr}"
