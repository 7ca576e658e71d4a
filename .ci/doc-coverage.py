#!/usr/bin/env python3
"""Doc comment coverage of public declarations, read from symbol graphs.

Usage: doc-coverage.py SYMBOLGRAPH_DIR MODULE[,MODULE...]

Reads MODULE.symbols.json and MODULE@*.symbols.json (extensions of other modules' types) as
`swift package dump-symbol-graph --minimum-access-level public` writes them, counts the public and
open declarations (not the compiler's synthesized ones, not extension blocks) and those with a
doc comment, prints
"MODULE: N of M public declarations documented" per module with each undocumented one as
"file:line name", and exits 1 when any is undocumented or a module has no symbol graph.
"""
import glob
import json
import os
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 64
    directory, modules = sys.argv[1], [m for m in sys.argv[2].split(",") if m]
    gaps = False
    all_total = all_documented = 0
    for module in modules:
        files = glob.glob(os.path.join(directory, module + ".symbols.json"))
        if not files:
            print(f"{module}: no symbol graph in {directory}")
            gaps = True
            continue
        files += glob.glob(os.path.join(directory, module + "@*.symbols.json"))
        seen = set()
        total = documented = 0
        missing = []
        for path in sorted(files):
            with open(path, encoding="utf-8") as f:
                graph = json.load(f)
            for symbol in graph.get("symbols", []):
                if symbol.get("accessLevel") not in ("public", "open"):
                    continue
                precise = symbol["identifier"]["precise"]
                if "::SYNTHESIZED::" in precise or precise in seen:
                    continue
                # An extension block (dump-symbol-graph --emit-extension-block-symbols) is not a
                # declaration of its own: its members are counted.
                if symbol.get("kind", {}).get("identifier") == "swift.extension":
                    continue
                seen.add(precise)
                total += 1
                if symbol.get("docComment"):
                    documented += 1
                else:
                    location = symbol.get("location", {})
                    uri = location.get("uri", "?").split("/Sources/")[-1]
                    line = location.get("position", {}).get("line", -1) + 1
                    missing.append((uri, line, ".".join(symbol.get("pathComponents", [])) or precise))
        all_total += total
        all_documented += documented
        share = 100 * documented / total if total else 100
        print(f"{module}: {documented} of {total} public declarations documented ({share:.1f} %)")
        for uri, line, name in sorted(missing):
            print(f"    {uri}:{line} {name}")
        if missing:
            gaps = True
    share = 100 * all_documented / all_total if all_total else 100
    print(f"all: {all_documented} of {all_total} public declarations documented ({share:.1f} %)")
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main())
