#!/bin/sh
# Builds the libFuzzer binary (-O, with the fuzzer and AddressSanitizer) and runs one target for SECONDS.
#   fuzz/run.sh TARGET SECONDS [extra libFuzzer flags]
#   TARGET: page | document | manifest   the package's own files (PageFile, document.json, manifest.json)
#           journal                      a page's journal replayed on a snapshot, then written after
#           inkml                        InkML import, and our writer's round trip of what imports
#           zip                          a one-file export: listed, extracted in memory, re-exported
# The libraries are built as static modules (LulucatStore and LulucatInterchange with
# -enable-testing), with the workshop modules beside them (LulucatHandwriting, LulucatStoreTesting,
# LulucatInterchangeTesting), then fuzz/*.swift as the executable module LulucatFuzz, which reaches
# the libraries' internals with @testable import. The journal, InkML and zip checks live in
# Sources/LulucatStoreTesting/JournalFuzz.swift and Sources/LulucatInterchangeTesting/ and are
# shared with the bounded tests of swift test.
# The corpus lives in fuzz/corpus-TARGET, seeded with files the project's writers make (and, for
# inkml, the shared InkML files of at most 64 KiB beside the repository); findings (crash-*,
# oom-*, timeout-*) land in fuzz/out/TARGET. Every finding goes to fuzz/regressions/TARGET/,
# replayed by Tests/LulucatStoreTests/CrashSafety/FuzzRegressionTests.swift (page, document,
# manifest, journal) and Tests/LulucatInterchangeTests/FuzzRegressionTests.swift (inkml, zip).
# LNOTE_FUZZ_BUILD=/tmp/dir keeps the build out of the tree (default fuzz/out/build).
set -eu
cd "$(dirname "$0")/.."
USAGE="usage: fuzz/run.sh page|document|manifest|journal|inkml|zip SECONDS [libFuzzer flags]"
TARGET=${1:?$USAGE}
SECONDS_TO_RUN=${2:?$USAGE}
shift 2
case "$TARGET" in page|document|manifest|journal|inkml|zip) ;; *) echo "unknown target $TARGET; $USAGE" >&2; exit 64 ;; esac

B=${LNOTE_FUZZ_BUILD:-fuzz/out/build}
mkdir -p "$B" "fuzz/out/$TARGET" "fuzz/corpus-$TARGET"
BIN="$B/lnote-fuzz"
SRCS_INK=$(find Sources/LulucatInk -name '*.swift' | sort)
SRCS_STORE=$(find Sources/LulucatStore -name '*.swift' | sort)
# The store's opt-in products (the SQLite engine, thumbnails, maintenance): LulucatStoreTesting links them.
SRCS_STORE_SQLITE=$(find Sources/LulucatStoreSQLite -name '*.swift' | sort)
SRCS_STORE_THUMBNAILS=$(find Sources/LulucatStoreThumbnails -name '*.swift' | sort)
SRCS_STORE_MAINTENANCE=$(find Sources/LulucatStoreMaintenance -name '*.swift' | sort)
SRCS_SQLITE=$(find Sources/LulucatSQLite -name '*.swift' | sort)
SRCS_RENDER=$(find Sources/LulucatRender -name '*.swift' | sort)
SRCS_INTERCHANGE=$(find Sources/LulucatInterchange -name '*.swift' | sort)
SRCS_HANDWRITING=$(find Sources/LulucatHandwriting -name '*.swift' | sort)
SRCS_STORE_TESTING=$(find Sources/LulucatStoreTesting -name '*.swift' | sort)
SRCS_INTERCHANGE_TESTING=$(find Sources/LulucatInterchangeTesting -name '*.swift' | sort)
NEWEST=$(ls -t $SRCS_INK $SRCS_STORE $SRCS_STORE_SQLITE $SRCS_STORE_THUMBNAILS $SRCS_STORE_MAINTENANCE $SRCS_SQLITE $SRCS_RENDER $SRCS_INTERCHANGE $SRCS_HANDWRITING $SRCS_STORE_TESTING \
    $SRCS_INTERCHANGE_TESTING Sources/CCRC32C/*.c Sources/CJPEG/*.c \
    Sources/CLulucatVFS/*.c fuzz/*.swift fuzz/run.sh | head -1)
if [ ! -x "$BIN" ] || [ "$NEWEST" -nt "$BIN" ]; then
    echo "building $BIN" >&2
    rm -f "$BIN"
    # One package name for every module, as SwiftPM gives them, so that `package` declarations reach.
    FLAGS="-O -sanitize=fuzzer,address -parse-as-library -swift-version 6 -package-name lulucatstore"
    # The C modules, built as the package builds them.
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
    INCLUDES="-I $B -I $B/ccrc32c -I $B/cjpeg -I $B/clulucatvfs -I Sources/CSQLite -I Sources/CZlib"
    lib() {  # lib MODULE EXTRA_FLAGS SOURCES...: a static library and its module
        m=$1; extra=$2; shift 2
        swiftc $FLAGS $extra -module-name "$m" $INCLUDES -emit-module -emit-module-path "$B/$m.swiftmodule" \
            -emit-library -static -o "$B/lib$m.a" "$@"
    }
    lib LulucatInk "" $SRCS_INK
    lib LulucatSQLite "" $SRCS_SQLITE
    lib LulucatRender "" $SRCS_RENDER
    lib LulucatStore -enable-testing $SRCS_STORE
    lib LulucatStoreSQLite "" $SRCS_STORE_SQLITE
    lib LulucatStoreThumbnails "" $SRCS_STORE_THUMBNAILS
    lib LulucatStoreMaintenance "" $SRCS_STORE_MAINTENANCE
    lib LulucatInterchange -enable-testing $SRCS_INTERCHANGE
    lib LulucatHandwriting "" $SRCS_HANDWRITING
    lib LulucatStoreTesting "" $SRCS_STORE_TESTING
    lib LulucatInterchangeTesting "" $SRCS_INTERCHANGE_TESTING
    swiftc $FLAGS -module-name LulucatFuzz $INCLUDES -L "$B" \
        -lLulucatInterchangeTesting -lLulucatStoreTesting -lLulucatHandwriting \
        -lLulucatInterchange -lLulucatStoreMaintenance -lLulucatStoreThumbnails -lLulucatStoreSQLite -lLulucatStore -lLulucatRender -lLulucatInk -lLulucatSQLite -lsqlite3 -ljpeg -lz \
        "$B/ccrc32c.o" "$B/cjpeg.o" "$B/clulucatvfs.o" -o "$BIN" fuzz/*.swift 2>&1 \
        | grep -v 'Cannot export local symbol' >&2 || true
    [ -x "$BIN" ] || { echo "build failed" >&2; exit 1; }
fi
SEEDS="fuzz/out/seeds-$TARGET"
mkdir -p "$SEEDS"
SHARED_INK=""
for d in ../shared/data/ink ../../shared/data/ink; do [ -d "$d" ] && SHARED_INK=$(cd "$d" && pwd) && break; done
# Leak detection is off: the Swift runtime's once-initialised globals (seed pages) show up as
# leaks at exit, and FoundationXML leaks a small string per XML parse error (in
# _CFErrorCreateFromXMLInterface), so an inkml run's memory grows slowly (about 1.3 GB after
# 1.2 million inputs). A single large allocation is still caught by -rss_limit_mb / -malloc_limit_mb.
DICT=""
[ -f "fuzz/$TARGET.dict" ] && DICT="-dict=fuzz/$TARGET.dict"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} SWIFT_BACKTRACE=enable=no LNOTE_FUZZ_TARGET=$TARGET LNOTE_FUZZ_SEED_DIR=$SEEDS LNOTE_FUZZ_SHARED_INK=$SHARED_INK "$BIN" \
    -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -rss_limit_mb=2048 -timeout=10 -detect_leaks=0 $DICT \
    -artifact_prefix="fuzz/out/$TARGET/" -print_final_stats=1 "$@" "fuzz/corpus-$TARGET" "$SEEDS"
