#!/bin/sh
# The whole test suite: unit and integration tests, then the same under
# ASan+UBSan and under valgrind.  Installs what is missing first.
set -e
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
[ -f Makefile ] || ./configure --prefix="$PWD/_inst"
make -j"$(nproc)"
make check
make check-asan
make check-valgrind
echo "test-all: all suites passed"
