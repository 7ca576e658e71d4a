#!/usr/bin/env python3
"""The SQLite engine's workload through Python's database modules, next to `lnote-dev bench sqlite`.

The seed's measurement: 100 strokes of 3,400 samples (5,440,000 bytes of fixed16 BLOBs; also
2,550 samples, 4,080,000 bytes) inserted in one transaction into a fresh database, as a multiple
of the plain floor: the same bytes written to one file and fsynced, measured in the same run
(medians of N repetitions, the variants alternated). Reading all the BLOBs back is compared with
reading the same bytes from the plain file.

Peers: Python's sqlite3 (with its default settings, and with the pragmas of our engine), and apsw,
libsql and pyturso when they are importable (none is required). Given --lnote PATH, it also runs
`PATH bench sqlite --json` and prints our ratios beside the peers'.

    python3 Benchmarks/sqlite_peers.py [--repetitions 7] [--lnote .build/release/lnote-dev] [--json]
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SCHEMA = """
CREATE TABLE pages (id BLOB NOT NULL PRIMARY KEY, canvas_width INTEGER NOT NULL, canvas_height INTEGER NOT NULL);
CREATE TABLE strokes (page_id BLOB NOT NULL, z INTEGER NOT NULL, stroke_id BLOB NOT NULL, tool INTEGER NOT NULL,
    rgba INTEGER NOT NULL, width INTEGER NOT NULL, channels INTEGER NOT NULL, sample_count INTEGER NOT NULL,
    samples BLOB NOT NULL);
CREATE UNIQUE INDEX strokes_by_z ON strokes (page_id, z);
CREATE UNIQUE INDEX strokes_by_id ON strokes (page_id, stroke_id);
"""
INSERT = "INSERT INTO strokes VALUES (?, ?, ?, 0, 255, 20, 0, ?, ?)"
# The pragmas of SQLiteContentStore (docs/sqlite-engine.md).
OURS = ["PRAGMA page_size = 16384", "PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL",
        "PRAGMA journal_size_limit = 16777216", "PRAGMA wal_autocheckpoint = 1024", "PRAGMA cache_size = -4096"]


def ms(t0, t1):
    return (t1 - t0) * 1000.0


def make_blobs(strokes, samples):
    rng = random.Random(samples)
    return [rng.randbytes(samples * 16) for _ in range(strokes)]


def floor_write(path, blobs):
    t0 = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        for b in blobs:
            view = memoryview(b)
            while view:
                n = os.write(fd, view)
                view = view[n:]
        os.fsync(fd)
    finally:
        os.close(fd)
    return ms(t0, time.perf_counter())


def floor_read(path):
    t0 = time.perf_counter()
    with open(path, "rb", buffering=0) as f:
        data = f.read()
    t1 = time.perf_counter()
    return ms(t0, t1), len(data)


class Peer:
    """One database module, driven through the DB-API calls the modules share."""

    def __init__(self, name, connect, pragmas, begin="BEGIN IMMEDIATE"):
        self.name, self.connect, self.pragmas, self.begin = name, connect, pragmas, begin

    def run(self, directory, blobs, samples):
        path = os.path.join(directory, "content.sqlite")
        db = self.connect(path)
        cur = db.cursor()
        for p in self.pragmas:
            cur.execute(p)
            try:  # pragmas that answer with a row must be stepped to the end
                cur.fetchall()
            except Exception:  # apsw: a statement without rows has nothing to fetch
                pass
        for stmt in SCHEMA.strip().split(";"):
            if stmt.strip():
                cur.execute(stmt)
        page = os.urandom(16)
        cur.execute("INSERT INTO pages VALUES (?, 6120, 7920)", (page,))
        commit_if_needed(db)
        rows = [(page, (i + 1) << 16, os.urandom(16), samples, b) for i, b in enumerate(blobs)]
        t0 = time.perf_counter()
        cur.execute(self.begin)
        for r in rows:
            cur.execute(INSERT, r)
        cur.execute("COMMIT")
        t1 = time.perf_counter()
        close(db)
        # Read back through a fresh connection: SQLite's cache empty, the OS cache warm.
        db = self.connect(path)
        cur = db.cursor()
        t2 = time.perf_counter()
        cur.execute("SELECT samples FROM strokes WHERE page_id = ? ORDER BY z", (page,))
        got = cur.fetchall()
        t3 = time.perf_counter()
        close(db)
        total = sum(len(r[0]) for r in got)
        if total != sum(len(b) for b in blobs):
            raise RuntimeError(f"{self.name}: read {total} bytes back")
        return ms(t0, t1), ms(t2, t3)


def commit_if_needed(db):
    try:
        if getattr(db, "in_transaction", False):
            db.commit()
    except Exception:
        pass


def close(db):
    try:
        db.close()
    except Exception:
        pass


def peers():
    out = []
    import sqlite3

    def py_sqlite(path):
        return sqlite3.connect(path, isolation_level=None)

    out.append(Peer(f"python sqlite3 {sqlite3.sqlite_version} defaults", py_sqlite, []))
    out.append(Peer(f"python sqlite3 {sqlite3.sqlite_version} our pragmas", py_sqlite, OURS))
    try:
        import apsw

        out.append(Peer(f"apsw {apsw.sqlite_lib_version()} defaults", lambda p: apsw.Connection(p), []))
        out.append(Peer(f"apsw {apsw.sqlite_lib_version()} our pragmas", lambda p: apsw.Connection(p), OURS))
    except ImportError:
        pass
    for module in ("libsql", "libsql_experimental"):
        try:
            lib = __import__(module)
            out.append(Peer(f"{module} defaults", lambda p, lib=lib: lib.connect(p, isolation_level=None), []))
            break
        except ImportError:
            continue
        except TypeError:
            out.append(Peer(f"{module} defaults", lambda p, lib=lib: lib.connect(p), []))
            break
    try:
        import turso

        out.append(Peer("pyturso defaults", lambda p: turso.connect(p), [], begin="BEGIN"))
    except ImportError:
        pass
    return out


def measure(strokes, samples, repetitions, root):
    blobs = make_blobs(strokes, samples)
    candidates = peers()
    floor_w, floor_r = [], []
    commits = {p.name: [] for p in candidates}
    reads = {p.name: [] for p in candidates}
    failed = {}
    steps = ["floor"] + [p.name for p in candidates]
    run = 0
    for rep in range(repetitions):
        order = steps[rep % len(steps):] + steps[:rep % len(steps)]
        for step in order:
            run += 1
            d = os.path.join(root, f"run{run}")
            os.mkdir(d)
            try:
                if step == "floor":
                    f = os.path.join(d, "floor.bin")
                    floor_w.append(floor_write(f, blobs))
                    floor_r.append(floor_read(f)[0])
                elif step not in failed:
                    peer = next(p for p in candidates if p.name == step)
                    try:
                        c, r = peer.run(d, blobs, samples)
                        commits[step].append(c)
                        reads[step].append(r)
                    except Exception as e:  # a peer that cannot run this workload is reported, not fatal
                        failed[step] = f"{type(e).__name__}: {e}"
            finally:
                shutil.rmtree(d, ignore_errors=True)
    fw, fr = statistics.median(floor_w), statistics.median(floor_r)
    result = {"samples_per_stroke": samples, "blob_bytes": sum(map(len, blobs)),
              "floor_write_ms": round(fw, 3), "floor_read_ms": round(fr, 3), "peers": {}}
    for p in candidates:
        if p.name in failed:
            result["peers"][p.name] = {"error": failed[p.name]}
            continue
        c, r = statistics.median(commits[p.name]), statistics.median(reads[p.name])
        result["peers"][p.name] = {"commit_ms": round(c, 3), "commit_vs_floor": round(c / fw, 3),
                                   "read_ms": round(r, 3), "read_vs_floor": round(r / fr, 3)}
    return result


def run_lnote(path, repetitions, directory):
    cmd = [path, "bench", "sqlite", "--json", "--repetitions", str(repetitions)]
    if directory:
        cmd += ["--dir", directory]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": (done.stderr or done.stdout).strip()}
    return json.loads(done.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repetitions", type=int, default=7)
    ap.add_argument("--strokes", type=int, default=100)
    ap.add_argument("--dir", help="where to write (default: the temporary directory)")
    ap.add_argument("--lnote", help="path of the lnote-dev binary, to run `lnote-dev bench sqlite --json` too")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    root = tempfile.mkdtemp(prefix="sqlite-peers-", dir=args.dir)
    try:
        variants = [measure(args.strokes, s, args.repetitions, root) for s in (3400, 2550)]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    ours = run_lnote(args.lnote, args.repetitions, args.dir) if args.lnote else None
    report = {"repetitions": args.repetitions, "strokes": args.strokes, "variants": variants, "lnote": ours}

    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
        return
    ours_by_samples = {}
    if ours and "variants" in ours:
        ours_by_samples = {v["samples_per_stroke"]: v for v in ours["variants"]}
    for v in variants:
        print(f"\n{args.strokes} strokes x {v['samples_per_stroke']} samples = {v['blob_bytes']:,} bytes of BLOBs "
              f"(medians of {args.repetitions}; floor here: write+fsync {v['floor_write_ms']} ms, read {v['floor_read_ms']} ms)")
        print(f"  {'engine':44} {'commit ms':>10} {'x floor':>8} {'read ms':>9} {'x floor':>8}")
        for name, p in v["peers"].items():
            if "error" in p:
                print(f"  {name:44} failed: {p['error']}")
            else:
                print(f"  {name:44} {p['commit_ms']:>10} {p['commit_vs_floor']:>8} {p['read_ms']:>9} {p['read_vs_floor']:>8}")
        o = ours_by_samples.get(v["samples_per_stroke"])
        if o:
            # The peers save into a brand-new database: compare with lnote's fresh-database figures.
            print(f"  {'lnote (ours) FULL, fresh database':44} {o['commit_full_fresh_db_ms']:>10} {o['commit_vs_floor_full_fresh_db']:>8} "
                  f"{o['read_ms']:>9} {o['read_vs_floor']:>8}")
            print(f"  {'lnote (ours) NORMAL, fresh database':44} {o['commit_normal_fresh_db_ms']:>10} {o['commit_vs_floor_normal_fresh_db']:>8}")
            print(f"  {'lnote (ours) FULL, reused WAL (steady)':44} {o['commit_full_ms']:>10} {o['commit_vs_floor_full']:>8}")
            if "commit_vs_floor_full_fresh_db_unbuffered" in o:  # without the WAL write buffer
                print(f"  {'lnote FULL, fresh db, no WAL write buffer':44} {o['commit_full_fresh_db_unbuffered_ms']:>10} {o['commit_vs_floor_full_fresh_db_unbuffered']:>8}")
                print(f"  {'lnote FULL, reused WAL, no WAL write buffer':44} {o['commit_full_unbuffered_ms']:>10} {o['commit_vs_floor_full_unbuffered']:>8}")
            print(f"    (lnote's own floor in its run: write+fsync {o['floor_write_ms']} ms, read {o['floor_read_ms']} ms)")
    if ours and "error" in ours:
        print(f"\nlnote-dev bench sqlite failed: {ours['error']}")


if __name__ == "__main__":
    sys.exit(main())
