#!/bin/sh
# Builds the libFuzzer binary (LulucatInk and LulucatStore sources plus fuzz/*.swift, -O, with the
# fuzzer and AddressSanitizer) and runs one target for SECONDS.
#   fuzz/run.sh TARGET SECONDS [extra libFuzzer flags]    TARGET: page | document | manifest
# The corpus lives in fuzz/corpus-TARGET (seeded with real package files on first run); findings
# (crash-*, oom-*, timeout-*) land in fuzz/out/TARGET. Every finding becomes a regression test in
# Tests/LulucatStoreTests/CrashSafety/FuzzRegressionTests.swift.
set -eu
cd "$(dirname "$0")/.."
TARGET=${1:?usage: fuzz/run.sh page|document|manifest SECONDS}
SECONDS_TO_RUN=${2:?usage: fuzz/run.sh TARGET SECONDS}
shift 2
case "$TARGET" in page|document|manifest) ;; *) echo "unknown target $TARGET" >&2; exit 64 ;; esac

B=${LNOTE_FUZZ_BUILD:-fuzz/out/build}
mkdir -p "$B" "fuzz/out/$TARGET" "fuzz/corpus-$TARGET"
BIN="$B/lnote-fuzz"
SRCS_INK=$(find Sources/LulucatInk -name '*.swift' | sort)
SRCS_STORE=$(find Sources/LulucatStore -name '*.swift' | sort)
SRCS_SQLITE=$(find Sources/LulucatSQLite -name '*.swift' | sort)
SRCS_RENDER=$(find Sources/LulucatRender -name '*.swift' | sort)
NEWEST=$(ls -t $SRCS_INK $SRCS_STORE $SRCS_SQLITE $SRCS_RENDER Sources/CCRC32C/*.c Sources/CJPEG/*.c Sources/CLulucatVFS/*.c fuzz/*.swift fuzz/run.sh | head -1)
if [ ! -x "$BIN" ] || [ "$NEWEST" -nt "$BIN" ]; then
    echo "building $BIN" >&2
    FLAGS="-O -sanitize=fuzzer,address -parse-as-library -swift-version 6"
    # The modules LulucatStore depends on, built as the package builds them.
    for c in CCRC32C CJPEG; do
        lower=$(echo $c | tr A-Z a-z)
        mkdir -p "$B/$lower"
        printf 'module %s {\n    header "%s"\n    export *\n}\n' $c "$PWD/Sources/$c/include/$lower.h" > "$B/$lower/module.modulemap"
        clang -O2 -fsanitize=address,fuzzer-no-link -ISources/$c/include -c Sources/$c/$lower.c -o "$B/$lower.o"
    done
    # The WAL write buffer VFS and the FileSystem VFS (LulucatSQLite imports them): one object file.
    mkdir -p "$B/clulucatvfs"
    printf 'module CLulucatVFS {\n    header "%s"\n    header "%s"\n    export *\n}\n' "$PWD/Sources/CLulucatVFS/include/lulucat_vfs.h" \
        "$PWD/Sources/CLulucatVFS/include/lulucat_fsvfs.h" > "$B/clulucatvfs/module.modulemap"
    clang -O2 -fsanitize=address,fuzzer-no-link -ISources/CLulucatVFS/include -c Sources/CLulucatVFS/lulucat_vfs.c -o "$B/clulucatvfs-wal.o"
    clang -O2 -fsanitize=address,fuzzer-no-link -ISources/CLulucatVFS/include -c Sources/CLulucatVFS/lulucat_fsvfs.c -o "$B/clulucatvfs-fs.o"
    ld -r "$B/clulucatvfs-wal.o" "$B/clulucatvfs-fs.o" -o "$B/clulucatvfs.o"
    swiftc $FLAGS -module-name LulucatInk -I "$B/ccrc32c" -emit-module -emit-module-path "$B/LulucatInk.swiftmodule" \
        -emit-library -static -o "$B/libLulucatInk.a" $SRCS_INK
    swiftc $FLAGS -module-name LulucatSQLite -I Sources/CSQLite -I "$B/clulucatvfs" -emit-module -emit-module-path "$B/LulucatSQLite.swiftmodule" \
        -emit-library -static -o "$B/libLulucatSQLite.a" $SRCS_SQLITE
    swiftc $FLAGS -module-name LulucatRender -I "$B" -I "$B/ccrc32c" -I "$B/cjpeg" -I Sources/CZlib -emit-module \
        -emit-module-path "$B/LulucatRender.swiftmodule" -emit-library -static -o "$B/libLulucatRender.a" $SRCS_RENDER
    # LulucatStore plus the fuzz entry, one module, so the entry reaches the internal decoders.
    swiftc $FLAGS -module-name LulucatStore -I "$B" -I "$B/ccrc32c" -I "$B/cjpeg" -I "$B/clulucatvfs" -I Sources/CSQLite -I Sources/CZlib -L "$B" \
        -lLulucatRender -lLulucatInk -lLulucatSQLite -lsqlite3 -ljpeg -lz "$B/ccrc32c.o" "$B/cjpeg.o" "$B/clulucatvfs.o" \
        -o "$BIN" $SRCS_STORE fuzz/FuzzEntry.swift fuzz/FuzzTargets.swift 2>&1 \
        | grep -v 'Cannot export local symbol' >&2 || true
    [ -x "$BIN" ] && [ "$BIN" -nt "$NEWEST" ] || { echo "build failed" >&2; exit 1; }
fi
SEEDS="fuzz/out/seeds-$TARGET"
mkdir -p "$SEEDS"
SWIFT_BACKTRACE=enable=no LNOTE_FUZZ_TARGET=$TARGET LNOTE_FUZZ_SEED_DIR=$SEEDS "$BIN" \
    -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="fuzz/out/$TARGET/" -print_final_stats=1 "$@" "fuzz/corpus-$TARGET" "$SEEDS"
