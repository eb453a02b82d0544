#!/usr/bin/env bash
# Differential testing budget: generated programs on the JIT and the
# interpreter (full budget + tiny-gas reruns), fixed seed; fails on any
# divergence (movejit diff exits 1). Call from .ci/run:
#   .ci/diff.sh            # x86-64: 2,000 programs
#   DIFF_COUNT=200 .ci/diff.sh   # smaller budget (e.g. aarch64 under qemu)
set -euo pipefail
cd "$(dirname "$0")/.."
count="${DIFF_COUNT:-2000}"
seed="${DIFF_SEED:-1}"
echo "== diff: JIT vs interpreter, seed $seed, $count generated programs"
cargo run --release --locked -p movejit-cli -- diff --quiet --jobs 2 --seed "$seed" --count "$count"
echo "== diff: the same under Aptos's gas schedule, seed $seed, $((count / 2)) generated programs"
cargo run --release --locked -p movejit-cli -- diff --quiet --jobs 2 --seed "$seed" --count "$((count / 2))" --gas-schedule aptos
echo "== diff: conformance modules' public functions"
cargo run --release --locked -p movejit-cli -- diff --quiet --seed "$seed" --rounds 2 ../shared/conformance/aptos/modules
