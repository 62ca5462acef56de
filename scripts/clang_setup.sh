#!/usr/bin/env bash
# Sourced by scripts/fuzz.sh and scripts/sanitize.sh: installs clang and its runtime libraries
# (libFuzzer, the sanitizers) from Debian's packages when they are missing.
if ! command -v clang++ >/dev/null 2>&1 ||
   [ -z "$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null | grep /)" ] ||
   [ ! -f "$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a)" ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang
  major="$(clang++ --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "libclang-rt-${major}-dev" || true
fi
