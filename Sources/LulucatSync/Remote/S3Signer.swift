// AWS Signature Version 4 for S3 requests (docs/sync.md §9.3), on the crypto layer's SHA-256 and
// HMAC-SHA256 (libcrypto on Linux, CryptoKit on Apple): the canonical request, the string to sign,
// the signing key derived from the secret and the date, and the Authorization header.

import Foundation
import LulucatCrypto

/// An S3 access key, its secret, and a session token when the keys are temporary.
public struct S3Credentials: Sendable, Equatable {
    /// The access key id (`AWS_ACCESS_KEY_ID`); sent in every request's Authorization header.
    public var accessKey: String
    /// The secret key (`AWS_SECRET_ACCESS_KEY`); never sent, only signed with.
    public var secretKey: String
    /// A session token for temporary credentials (`AWS_SESSION_TOKEN`), sent as `x-amz-security-token`.
    public var sessionToken: String?

    /// Credentials for one key.
    public init(accessKey: String, secretKey: String, sessionToken: String? = nil) {
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.sessionToken = sessionToken
    }
}

/// Signs S3 requests with AWS Signature Version 4 (header-based, the payload's SHA-256 signed).
package struct S3Signer: Sendable {
    /// The keys signed with.
    package let credentials: S3Credentials
    /// The region the signature names (the endpoint refuses another).
    package let region: String
    /// The service the signature names.
    package static let service = "s3"

    /// A signer for `region`.
    package init(credentials: S3Credentials, region: String) {
        self.credentials = credentials
        self.region = region
    }

    /// What signing made, every step kept for tests and error messages.
    package struct Signature: Sendable, Equatable {
        /// The canonical request, exactly as hashed.
        package var canonicalRequest: String
        /// The string to sign, exactly as signed.
        package var stringToSign: String
        /// The signature, 64 lowercase hex digits.
        package var signature: String
        /// The value of the Authorization header.
        package var authorization: String
    }

    /// Signs one request.
    /// - Parameters:
    ///   - encodedPath: the URL's path, already URI-encoded as `S3Signer.encode(path:)` does (it is
    ///     used as is, as S3 wants: not normalized, not encoded again).
    ///   - query: the query's names and values, not encoded (they are encoded here).
    ///   - headers: every header to sign, `host`, `x-amz-date` and `x-amz-content-sha256` among
    ///     them (names in any case; values are trimmed and inner runs of spaces made one).
    ///   - payloadHash: the hex SHA-256 of the body (also the value of `x-amz-content-sha256`).
    ///   - amzDate: the request's time as `YYYYMMDD'T'HHMMSS'Z'` (the value of `x-amz-date`).
    package func sign(method: String, encodedPath: String, query: [(String, String)], headers: [(String, String)],
                      payloadHash: String, amzDate: String) throws(RemoteError) -> Signature {
        let encoded: [(name: String, value: String)] = query.map { (S3Signer.encode($0.0), S3Signer.encode($0.1)) }
        let sorted = encoded.sorted { (a: (name: String, value: String), b: (name: String, value: String)) -> Bool in
            a.name == b.name ? a.value < b.value : a.name < b.name
        }
        let canonicalQuery = sorted.map { (p: (name: String, value: String)) -> String in p.name + "=" + p.value }.joined(separator: "&")
        var byName: [String: String] = [:]
        for (name, value) in headers {
            let v = value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            let n = name.lowercased()
            byName[n] = byName[n].map { $0 + "," + v } ?? v
        }
        let names = byName.keys.sorted()
        let signedHeaders = names.joined(separator: ";")
        let canonicalHeaders = names.map { $0 + ":" + byName[$0]! + "\n" }.joined()
        let canonicalRequest = [method, encodedPath, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].joined(separator: "\n")
        let day = String(amzDate.prefix(8))
        let scope = "\(day)/\(region)/\(S3Signer.service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, try S3Signer.sha256Hex(Array(canonicalRequest.utf8))].joined(separator: "\n")
        let signature: String
        do {
            var key = SecretBytes(Array(("AWS4" + credentials.secretKey).utf8))
            for part in [day, region, S3Signer.service, "aws4_request"] {
                key = SecretBytes(try CryptoBackend.hmacSHA256(key: key, message: Array(part.utf8)))
            }
            signature = hex(try CryptoBackend.hmacSHA256(key: key, message: Array(stringToSign.utf8)))
        } catch {
            throw .failed("", "the request could not be signed: \(error)")
        }
        let authorization = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKey)/\(scope),SignedHeaders=\(signedHeaders),Signature=\(signature)"
        return Signature(canonicalRequest: canonicalRequest, stringToSign: stringToSign, signature: signature, authorization: authorization)
    }

    /// The hex SHA-256 of `bytes` (a payload hash).
    package static func sha256Hex(_ bytes: [UInt8]) throws(RemoteError) -> String {
        do { return hex(try CryptoBackend.sha256(bytes)) } catch { throw .failed("", "SHA-256 failed: \(error)") }
    }

    /// The SHA-256 of no bytes, the payload hash of a request without a body.
    package static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// SigV4's URI encoding: every byte of the UTF-8 but `A-Z a-z 0-9 - . _ ~` as `%XX` (uppercase
    /// hex); a `/` too unless `keepSlash` (for a path).
    package static func encode(_ text: String, keepSlash: Bool = false) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for b in text.utf8 {
            if isUnreserved(b) || (keepSlash && b == 0x2F) { out.append(b) } else { out += [0x25, digits[Int(b >> 4)], digits[Int(b & 15)]] }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `A-Z a-z 0-9 - . _ ~`.
    static func isUnreserved(_ b: UInt8) -> Bool {
        switch b {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E: return true
        default: return false
        }
    }

    /// A path for the URL and the canonical request: "/" and each segment encoded.
    package static func encode(path: String) -> String { encode(path, keepSlash: true) }

    /// `date` as SigV4 writes it: `YYYYMMDD'T'HHMMSS'Z'`, in UTC.
    package static func amzDate(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ v: Int?) -> String { let v = v ?? 0; return v < 10 ? "0\(v)" : "\(v)" }
        return "\(c.year ?? 0)\(two(c.month))\(two(c.day))T\(two(c.hour))\(two(c.minute))\(two(c.second))Z"
    }
}
