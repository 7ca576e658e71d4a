#!/bin/sh
# What a minimal app pays in size for LulucatStore: a release executable that creates a Library and
# lists it, stripped, minus the same program written with Foundation alone (issue 12's figure).
#   Benchmarks/client-size.sh [PACKAGE_DIR]      (default: this checkout)
# Both clients are built in release in a temporary folder (LNOTE_SIZE_DIR keeps it), so the
# figure is the same however the package itself was last built. Prints the two sizes in bytes and
# the growth in MB.
set -eu
ROOT=$(cd "${1:-$(dirname "$0")/..}" && pwd)
IDENTITY=$(basename "$ROOT" | tr 'A-Z' 'a-z')
W=${LNOTE_SIZE_DIR:-$(mktemp -d)}
mkdir -p "$W/client/Sources/client" "$W/plain/Sources/plain"

cat > "$W/client/Package.swift" <<SWIFT
// swift-tools-version: 6.0
import PackageDescription
let package = Package(name: "client", platforms: [.macOS(.v13)],
    dependencies: [.package(path: "$ROOT")],
    targets: [.executableTarget(name: "client", dependencies: [.product(name: "LulucatStore", package: "$IDENTITY")])])
SWIFT
cat > "$W/client/Sources/client/main.swift" <<'SWIFT'
import Foundation
import LulucatStore

let library = Library(root: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : NSTemporaryDirectory() + "client-library")
for entry in try library.list() { print(entry.id, entry.title) }
SWIFT

cat > "$W/plain/Package.swift" <<'SWIFT'
// swift-tools-version: 6.0
import PackageDescription
let package = Package(name: "plain", targets: [.executableTarget(name: "plain")])
SWIFT
cat > "$W/plain/Sources/plain/main.swift" <<'SWIFT'
import Foundation

let root = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : NSTemporaryDirectory() + "client-library"
for name in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] { print(name) }
SWIFT

for p in client plain; do
    (cd "$W/$p" && swift build -c release >"$W/$p.log" 2>&1) || { cat "$W/$p.log" >&2; exit 1; }
    cp "$W/$p/.build/release/$p" "$W/$p.stripped"
    strip "$W/$p.stripped"
done
c=$(wc -c < "$W/client.stripped"); p=$(wc -c < "$W/plain.stripped")
echo "client (Library + list), stripped: $c bytes"
echo "Foundation alone, stripped:        $p bytes"
awk -v c="$c" -v p="$p" 'BEGIN { printf "growth: %.2f MB\n", (c - p) / 1e6 }'
