#!/bin/sh
# Prints the SHA-256 that goldfhe.fatbin.sha256 records: the hash of the
# kernel sources the fatbin is built from. Definition (kernels/fatbin.go,
# sourceHash, computes the same and a Go test compares the two):
#   every regular file of this directory named *.cu or *.cuh, sorted
#   bytewise (LC_ALL=C); for each the line "<sha256 hex>  <name>" exactly
#   as sha256sum prints it; the SHA-256 (hex) of those lines.
set -eu
cd "$(dirname "$0")"
LC_ALL=C
export LC_ALL
for f in *.cu *.cuh; do
	[ -f "$f" ] && printf '%s\n' "$f"
done | sort | while IFS= read -r f; do
	sha256sum "$f"
done | sha256sum | cut -d' ' -f1
