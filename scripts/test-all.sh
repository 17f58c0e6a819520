#!/bin/sh
# The whole test suite: unit and integration tests, then the same under
# ASan+UBSan and under valgrind, then a short run of every fuzz harness
# (fuzz/, with its regression inputs).  Installs what is missing first.
set -e
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
[ -f Makefile ] || ./configure --prefix="$PWD/_inst"
make -j"$(nproc)"
make check
make check-asan
make check-valgrind
make fuzz-smoke
echo "test-all: all suites passed"
