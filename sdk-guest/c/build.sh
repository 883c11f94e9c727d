#!/usr/bin/env bash
# Builds a C apconnect plugin: every .c file of PLUGIN_DIR and this SDK,
# with Debian's clang, lld and wasi-libc, into a wasm32-wasi reactor module
# at OUT. `make build` and the Go tests build every C plugin of the
# repository with this script.
#
#   sdk-guest/c/build.sh PLUGIN_DIR OUT.wasm
#   sdk-guest/c/build.sh FILE.c OUT.wasm      # a one-file plugin
#   sdk-guest/c/build.sh --check      # says which toolchain it would use
#   sdk-guest/c/build.sh --test       # the SDK's own tests, natively
#
# Packages: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32
# (the last one holds compiler-rt's builtins for wasm32, which clang links).
# CC overrides the compiler; CFLAGS and LDFLAGS add flags.
#
# The flags that matter (docs/PLUGINS.md, "C"):
#   -mexec-model=reactor      a reactor: _initialize, no _start (a command is refused)
#   -Wl,--stack-first         the stack below the data: an overflow traps instead
#                             of silently overwriting globals
#   -Wl,-z,stack-size=1048576 a 1 MiB stack (the default is 64 KiB)
#   -Wl,--strip-all           no debug sections or names (smaller, reproducible)
#   -ffile-prefix-map         no build paths in the module: the same SHA-256 anywhere
set -euo pipefail

sdk="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cc="${CC:-clang}"

check() {
	if ! command -v "$cc" >/dev/null 2>&1; then
		echo "no $cc; install Debian's: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32" >&2
		return 1
	fi
	local probe
	probe="$(mktemp -d)"
	printf '#include <string.h>\nint f(char *s) { return (int)strlen(s); }\n' >"$probe/p.c"
	if ! "$cc" --target=wasm32-wasi -mexec-model=reactor -o "$probe/p.wasm" "$probe/p.c" 2>"$probe/log"; then
		echo "$cc cannot build a wasm32-wasi reactor; install Debian's: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32" >&2
		sed 's/^/  /' "$probe/log" >&2
		rm -rf "$probe"
		return 1
	fi
	rm -rf "$probe"
}

if [ "${1:-}" = "--check" ]; then
	check
	echo "$("$cc" --version | head -1) ($cc), target wasm32-wasi"
	exit 0
fi
if [ "${1:-}" = "--test" ]; then
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	"$cc" -std=c11 -O1 -g -Wall -Wextra -Werror -fsanitize=undefined -fsanitize-trap=undefined \
		-I "$sdk" -o "$tmp/sdk_test" "$sdk/test/sdk_test.c" "$sdk/apconnect_plugin.c"
	"$tmp/sdk_test"
	exit
fi
if [ $# -ne 2 ]; then
	echo "usage: $0 PLUGIN_DIR OUT.wasm | --check" >&2
	exit 2
fi
check
shopt -s nullglob
if [ -f "$1" ]; then
	dir="$(cd "$(dirname "$1")" && pwd)"
	sources=("$dir/$(basename "$1")")
else
	dir="$(cd "$1" && pwd)"
	sources=("$dir"/*.c)
fi
out="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [ ${#sources[@]} -eq 0 ]; then
	echo "no .c files in $dir" >&2
	exit 1
fi
# shellcheck disable=SC2086 # CFLAGS and LDFLAGS are word lists
"$cc" --target=wasm32-wasi -std=c11 -O2 -Wall -Wextra -Werror=implicit-function-declaration \
	-mexec-model=reactor -Wl,--stack-first -Wl,-z,stack-size=1048576 -Wl,--strip-all \
	-ffile-prefix-map="$dir=plugin" -ffile-prefix-map="$sdk=apconnect_plugin" \
	-I "$sdk" ${CFLAGS:-} ${LDFLAGS:-} \
	-o "$tmp/plugin.wasm" "${sources[@]}" "$sdk/apconnect_plugin.c"
mkdir -p "$(dirname "$out")"
mv "$tmp/plugin.wasm" "$out"
