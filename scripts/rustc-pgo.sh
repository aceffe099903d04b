#!/bin/sh
# An opt-in rustc wrapper for a profile-guided build:
#   bash scripts/pgo.sh                                   # writes pgo/ (not in git)
#   RUSTC_WRAPPER=scripts/rustc-pgo.sh cargo build --release
# Optimised builds of the topocoll crates (the workspace's own) use the profile in pgo/ when
# the compiler's LLVM is the one that wrote it; everything else compiles as is.
# Profile-guided optimisation cut the simulator's instructions by 15% and
# its time by 1.12-1.20x (docs/PERFORMANCE.md).
#
# A function changed since the profile was written gets no profile: LLVM's
# warning for each such function is turned off, as the build stays correct
# and only that function's speed is lost. Run scripts/pgo.sh after
# changing the simulator's hot path.
dir=$(cd "$(dirname "$0")/.." && pwd)
profile="$dir/pgo/topocoll.profdata"
case " $* " in
*" --crate-name topocoll"*" opt-level=3 "*)
    llvm=$("$1" -vV 2>/dev/null | sed -n 's/^LLVM version: //p')
    if [ -f "$profile" ] && [ -n "$llvm" ] && [ "$llvm" = "$(cat "$dir/pgo/llvm-version" 2>/dev/null)" ]; then
        exec "$@" -Cprofile-use="$profile" -Cllvm-args=-no-pgo-warn-mismatch
    fi
    ;;
esac
exec "$@"
