// What a round did: counts, the documents it left alone and why, the problems it met.

import Foundation

/// What a round did.
public struct SyncReport: Sendable, CustomStringConvertible {
    /// Requests made to the remote.
    public var requests = 0
    /// Bytes sent to the remote.
    public var bytesSent = 0
    /// Bytes received from it.
    public var bytesReceived = 0
    /// Documents here or on the remote that the round looked at.
    public var documentsChecked = 0
    /// Documents that took changes from other devices.
    public var documentsPulled = 0
    /// Documents whose changes here were published.
    public var documentsPushed = 0
    /// Documents changed both here and elsewhere, merged.
    public var documentsMerged = 0
    /// Documents new to this device.
    public var documentsCreated = 0
    /// Documents moved to the trash because another device deleted them.
    public var documentsTrashed = 0
    /// Documents brought back from the trash by an edit elsewhere.
    public var documentsRestored = 0
    /// Pages written here from other devices.
    public var pagesPulled = 0
    /// Page blobs uploaded.
    public var pagesPushed = 0
    /// Blobs uploaded (pages and assets).
    public var blobsUploaded = 0
    /// Blobs the server had lost that this round uploaded again, asked by another device (their names).
    public var blobsRestored: [String] = []
    /// Documents left alone this round, and why (open in a session, a head that cannot be read...).
    public var skipped: [UUID: String] = [:]
    /// Problems that kept a head or a page out of the merge (both kept).
    public var problems: [String] = []
    /// The garbage collection this round ran, if it ran one.
    public var garbage: GarbageReport?
    /// Element fingerprints computed this round (the rest came from the bases' print tables).
    package var fingerprinted = 0
    /// Strokes read hollow this round (their samples not decoded: their bytes copied into a blob).
    package var readHollow = 0
    /// How this round reached each document it worked on (the tests and the crash check tell
    /// the paths apart).
    package var paths: [UUID: DocumentPath] = [:]

    /// The round in a few lines: counts, then each skipped document and problem.
    public var description: String {
        var s = "\(documentsChecked) documents checked: \(documentsPulled) pulled, \(documentsPushed) pushed, "
            + "\(documentsMerged) merged (\(documentsCreated) new here, \(documentsTrashed) to the trash, \(documentsRestored) restored); "
            + "pages \(pagesPulled) pulled, \(pagesPushed) pushed; \(requests) requests, \(bytesSent) bytes sent, \(bytesReceived) received"
        for (id, why) in skipped.sorted(by: { $0.key.precedesInBytes($1.key) }) { s += "\nskipped \(id): \(why)" }
        for p in problems { s += "\nproblem: \(p)" }
        return s
    }
}

/// How a round reached a document.
package enum DocumentPath: Sendable, Equatable {
    /// Changed here only, closed: read under its writer lock, no session.
    case underLock
    /// Through a session the round opened.
    case session
    /// Through the app's own session (open in this process).
    case appSession
}
