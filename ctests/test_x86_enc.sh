#!/bin/sh
# presets/x86-libpfm.enc is what this x86-64 libpfm4 answers for the
# table's x86 PMUs now (an aarch64 build replays it: mk/x86_64/libpfm-enc.mk).
B=${B:-build}
new=$B/x86-libpfm.enc
[ -s "$new" ] || { echo "FAIL: $new not built"; exit 1; }
if cmp -s "$new" presets/x86-libpfm.enc; then
	echo "test_x86_enc: 1 passed, 0 failed ($(grep -c '^enc' "$new") encodings, $(grep -c '^merge' "$new") merges)"
else
	echo "FAIL: presets/x86-libpfm.enc is stale (the table or libpfm4 changed): run make x86-libpfm-enc and commit it"
	diff "$new" presets/x86-libpfm.enc | head -10
	echo "test_x86_enc: 0 passed, 1 failed"
	exit 1
fi
