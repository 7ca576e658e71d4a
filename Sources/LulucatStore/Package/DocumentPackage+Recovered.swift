// The package's recovered/ folder: where damaged bytes are kept (salvage, repair), made durable
// before anything goes in. Every engine and repair use it.

import Foundation

extension DocumentPackage {
    /// Writes `bytes` to `recovered/<name>` (the first free `<name>.<n>` if taken), durably: the
    /// folder is created and the package folder synced before the file is written into it.
    package func keepInRecovered(_ bytes: [UInt8], name: String, fileSystem fs: any FileSystem) throws(StoreError) -> String {
        try StoreError.io { () throws(FileError) -> String in
            try ensureRecovered(fs)
            var target = recoveredPath + "/" + name
            var n = 1
            while try fs.info(target) != nil {
                target = recoveredPath + "/" + name + ".\(n)"
                n += 1
            }
            try fs.writeAtomically(bytes, to: target)
            return target
        }
    }

    /// Creates `recovered/` if needed and makes its entry durable (the package folder synced), so
    /// that nothing renamed or written into it can be lost to a power cut with the folder.
    package func ensureRecovered(_ fs: any FileSystem) throws(FileError) {
        try fs.ensureDirectory(recoveredPath)
        try fs.syncDirectory(path)
    }
}
