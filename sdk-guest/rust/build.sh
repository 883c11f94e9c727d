#!/usr/bin/env bash
# Builds a Rust apconnect plugin: the crate in PLUGIN_DIR (src/lib.rs) and
# this SDK, with plain rustc (no cargo, no crates), into a wasm32-wasi
# reactor module at OUT. `make build` and the Go tests build every Rust
# plugin of the repository with this script.
#
#   sdk-guest/rust/build.sh PLUGIN_DIR OUT.wasm
#   sdk-guest/rust/build.sh FILE.rs OUT.wasm   # a one-file crate
#   sdk-guest/rust/build.sh --check      # says which toolchain it would use
#   sdk-guest/rust/build.sh --test       # the SDK's own tests, natively
#
# The toolchain is Debian's (`apt-get install rustc libstd-rust-dev-wasm32`:
# Rust 1.63, target wasm32-wasi): /usr/bin/rustc when present, else rustc on
# PATH; RUSTC and RUST_TARGET override. A rustc whose target list has
# wasm32-wasip1 but not wasm32-wasi (Rust 1.84 and later) uses wasm32-wasip1.
# Paths are remapped, so the same sources and toolchain give the same
# SHA-256 in any directory. With APCONNECT_RUST_SDK_CACHE=DIR the compiled
# SDK (an rlib, keyed by the toolchain, flags and SDK sources) is kept in
# DIR and reused by later builds.
set -euo pipefail

sdk="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rustc="${RUSTC:-}"
if [ -z "$rustc" ]; then
	if [ -x /usr/bin/rustc ]; then rustc=/usr/bin/rustc; else rustc=rustc; fi
fi

check() {
	if ! command -v "$rustc" >/dev/null 2>&1; then
		echo "no rustc ($rustc); install Debian's: apt-get install rustc libstd-rust-dev-wasm32" >&2
		return 1
	fi
	target="${RUST_TARGET:-}"
	if [ -z "$target" ]; then
		targets="$("$rustc" --print target-list)"
		if grep -qx wasm32-wasi <<<"$targets"; then target=wasm32-wasi
		elif grep -qx wasm32-wasip1 <<<"$targets"; then target=wasm32-wasip1
		else echo "$rustc knows no wasm32-wasi target" >&2; return 1; fi
	fi
	if [ ! -d "$("$rustc" --print sysroot)/lib/rustlib/$target/lib" ]; then
		echo "$rustc has no standard library for $target; install Debian's: apt-get install libstd-rust-dev-wasm32" >&2
		return 1
	fi
}

if [ "${1:-}" = "--check" ]; then
	check
	echo "$("$rustc" --version) ($rustc), target $target"
	exit 0
fi
if [ "${1:-}" = "--test" ]; then
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	"$rustc" --edition 2021 --test -o "$tmp/sdk_test" "$sdk/src/lib.rs"
	"$tmp/sdk_test"
	exit
fi
if [ $# -ne 2 ]; then
	echo "usage: $0 PLUGIN_DIR OUT.wasm | --check" >&2
	exit 2
fi
check
if [ -f "$1" ]; then
	dir="$(cd "$(dirname "$1")" && pwd)"
	root="$dir/$(basename "$1")"
	name="$(basename "$1" .rs)"
else
	dir="$(cd "$1" && pwd)"
	root="$dir/src/lib.rs"
	name="$(basename "$dir")"
fi
name="$(tr -- '-' '_' <<<"$name")"
out="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

flags=(--edition 2021 --target "$target" -C opt-level=s -C panic=abort -C codegen-units=1)
sdkflags=("${flags[@]}" --remap-path-prefix "$sdk=apconnect_plugin")
rlib="$tmp/libapconnect_plugin.rlib"
if [ -n "${APCONNECT_RUST_SDK_CACHE:-}" ]; then
	key="$({ "$rustc" -vV; echo "${sdkflags[*]}"; cat "$sdk"/src/*.rs; } | sha256sum | cut -c1-16)"
	mkdir -p "$APCONNECT_RUST_SDK_CACHE"
	rlib="$APCONNECT_RUST_SDK_CACHE/libapconnect_plugin-$key.rlib"
fi
if [ ! -f "$rlib" ]; then
	"$rustc" "${sdkflags[@]}" --crate-type rlib --crate-name apconnect_plugin \
		-o "$tmp/libapconnect_plugin.rlib" "$sdk/src/lib.rs"
	[ "$rlib" = "$tmp/libapconnect_plugin.rlib" ] || mv -f "$tmp/libapconnect_plugin.rlib" "$rlib"
fi
"$rustc" "${flags[@]}" --remap-path-prefix "$dir=$name" --crate-type cdylib --crate-name "$name" -C strip=symbols \
	--extern apconnect_plugin="$rlib" -o "$tmp/$name.wasm" "$root"
mkdir -p "$(dirname "$out")"
mv "$tmp/$name.wasm" "$out"
