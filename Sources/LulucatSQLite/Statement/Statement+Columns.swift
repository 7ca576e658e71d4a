// Reading the columns of the current row. A BLOB is read with one copy into [UInt8], or lent to a
// closure without any copy.

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// The storage class of a value in the current row.
package enum ColumnType: Int32, Sendable {
    case integer = 1, real = 2, text = 3, blob = 4, null = 5
}

extension Statement {
    package var columnCount: Int { Int(sqlite3_column_count(handle)) }

    package func columnName(at index: Int) -> String {
        sqlite3_column_name(handle, Int32(index)).map { String(cString: $0) } ?? ""
    }

    package func columnType(at index: Int) -> ColumnType {
        ColumnType(rawValue: sqlite3_column_type(handle, Int32(index))) ?? .null
    }

    package func isNull(at index: Int) -> Bool { columnType(at: index) == .null }

    package func int64(at index: Int) -> Int64 { sqlite3_column_int64(handle, Int32(index)) }

    package func double(at index: Int) -> Double { sqlite3_column_double(handle, Int32(index)) }

    package func string(at index: Int) -> String? {
        guard let text = sqlite3_column_text(handle, Int32(index)) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return String(decoding: UnsafeRawBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Lends the column's bytes to `body` without copying them. The buffer is valid only inside
    /// `body` (SQLite frees it at the next step or reset). NULL and empty values give an empty buffer.
    package func withBlob<R>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        // Order matters: column_blob first, then column_bytes (SQLite's documented sequence).
        let base = sqlite3_column_blob(handle, Int32(index))
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        guard let base, count > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// The column's bytes, copied once into a new array.
    package func bytes(at index: Int) -> [UInt8] {
        withBlob(at: index) { raw in
            [UInt8](unsafeUninitializedCapacity: raw.count) { dst, initialized in
                if let src = raw.baseAddress { UnsafeMutableRawPointer(dst.baseAddress!).copyMemory(from: src, byteCount: raw.count) }
                initialized = raw.count
            }
        }
    }

    /// Byte length of the column's value (BLOB or text), without reading it.
    package func byteCount(at index: Int) -> Int { Int(sqlite3_column_bytes(handle, Int32(index))) }
}
