// The bounded, deadline-aware HTTP exchange every HTTP remote makes (WebDAV; an S3 remote too):
// URLSession (FoundationNetworking on Linux) driven by a data delegate, so a reply body is counted
// as it arrives and never held past its cap; a watchdog ends a request whose server is silent, too
// slow, or past its deadline or the round's (docs/sync.md §9.4). Redirects are refused and
// authentication challenges cancelled here, for every remote alike.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How long one request may take and how slowly its reply may come (docs/sync.md §9.4). The
/// defaults let a page blob of 250 KB cross a slow mobile link many times over and still end any
/// request a stalled or trickling server holds within two minutes.
public struct TransferLimits: Sendable, Equatable {
    /// The longest the server may send nothing (no reply yet, or no byte of the body): 30 s by
    /// default. Before the reply, a request with a body gets one more second for every
    /// `minimumRate` bytes it sends.
    public var silence: Duration
    /// The slowest a reply body may arrive, in bytes a second, measured over each `rateWindow`
    /// once the reply has begun: 1 KiB/s by default (a reply trickled at one byte a second ends
    /// after one window).
    public var minimumRate: Int
    /// The span the minimum rate is measured over: 15 s by default.
    public var rateWindow: Duration
    /// The longest one request may take, whatever it moves: 120 s by default.
    public var requestDeadline: Duration

    /// Limits of one request; every value is clamped to at least a millisecond (and the rate to at least one byte a second).
    public init(silence: Duration = .seconds(30), minimumRate: Int = 1024, rateWindow: Duration = .seconds(15),
                requestDeadline: Duration = .seconds(120)) {
        let ms = Duration.milliseconds(1)
        self.silence = max(silence, ms)
        self.minimumRate = max(minimumRate, 1)
        self.rateWindow = max(rateWindow, ms)
        self.requestDeadline = max(requestDeadline, ms)
    }
}

/// Why a request was ended before its reply was whole (in `RemoteError.timedOut`).
public enum RemoteTimeout: Sendable, Equatable, CustomStringConvertible {
    /// The server sent nothing for this many seconds.
    case silent(seconds: Double)
    /// The reply came slower than the minimum rate: `bytes` in the last `seconds`.
    case tooSlow(bytes: Int, seconds: Double, minimumRate: Int)
    /// The request took longer than its deadline.
    case requestDeadline(seconds: Double)
    /// The round's deadline passed (`SyncOptions.roundDeadline`).
    case roundDeadline(seconds: Double)

    /// The reason in words.
    public var description: String {
        switch self {
        case .silent(let s): return "the server sent nothing for \(Self.format(s)) s"
        case let .tooSlow(b, s, r):
            return "the server answered too slowly (\(b) bytes in \(Self.format(s)) s, below the minimum of \(r) bytes a second)"
        case .requestDeadline(let s): return "the server answered too slowly: the request took more than \(Self.format(s)) s"
        case .roundDeadline(let s): return "the sync round took more than its deadline of \(Self.format(s)) s"
        }
    }

    static func format(_ s: Double) -> String {
        s == s.rounded() ? String(Int(s)) : String(format: "%.1f", s)
    }
}

/// The limits a sync round puts on the requests made on its behalf: set for the round's task by
/// `LibrarySync.sync`, read by every request that starts in it (a remote's own limits apply
/// outside a round).
package struct TransferBudget: Sendable {
    package var limits: TransferLimits
    /// When the round must be over; nil: no round deadline.
    package var roundEnds: ContinuousClock.Instant?
    /// The round's deadline as configured (for the message).
    package var roundDeadline: Duration?

    package init(limits: TransferLimits, roundDeadline: Duration?) {
        self.limits = limits
        self.roundDeadline = roundDeadline
        roundEnds = roundDeadline.map { ContinuousClock.now + $0 }
    }

    /// The round's deadline as a timeout error when it has passed.
    package func roundOver(_ path: String) -> RemoteError? {
        guard let end = roundEnds, let d = roundDeadline, ContinuousClock.now >= end else { return nil }
        return .timedOut(path, .roundDeadline(seconds: d.seconds))
    }

    @TaskLocal package static var current: TransferBudget?
}

extension Duration {
    /// In seconds, as a Double.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// A reply as the transport read it: its status, headers and body (at most the request's cap).
package struct HTTPReply {
    package var status: Int
    package var response: HTTPURLResponse
    package var body: [UInt8]
    /// The server challenged for credentials (a 401 with `WWW-Authenticate`); the request was
    /// cancelled before anything was performed, `status` is 401.
    package var challenged: Bool
}

/// What a transport read: the largest reply body it held (to check memory stays bounded
/// without measuring the process) and how many replies it ended at a cap or a deadline.
package struct TransportCounters: Sendable, Equatable {
    /// The most bytes one reply body held at once.
    package var largestBody = 0
    /// Replies refused or cut off at their size cap.
    package var cappedReplies = 0
    /// Requests ended by a silence, rate or deadline limit.
    package var timedOut = 0
    /// Bytes FoundationNetworking delivered for a request already ended (dropped unread).
    package var droppedBytes = 0
}

/// Bounded HTTP exchanges over one URLSession: each reply body capped while it streams (the
/// announced `Content-Length` checked first, the transfer cancelled at the cap, whatever the
/// server sends), each request ended by the limits of `TransferLimits` and the round's deadline,
/// redirects refused, authentication challenges cancelled.
package final class HTTPTransport: @unchecked Sendable {
    private let sessionLock = NSLock()
    private var _session: URLSession
    private let configuration: URLSessionConfiguration
    let delegate: TransportDelegate
    /// The limits of requests made outside a sync round.
    package let limits: TransferLimits

    /// A transport with its own ephemeral session (no cache, no cookies); `limits` apply to the
    /// requests made outside a round (a round's `SyncOptions.transfer` apply within it).
    package init(limits: TransferLimits = TransferLimits(), maximumConnectionsPerHost: Int = 4) {
        self.limits = limits
        delegate = TransportDelegate()
        let config = URLSessionConfiguration.ephemeral
        config.urlCache = nil
        config.requestCachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        config.httpCookieStorage = nil
        config.httpShouldSetCookies = false
        // A backstop only: the watchdog ends requests first.
        config.timeoutIntervalForRequest = 3600
        config.timeoutIntervalForResource = 24 * 3600
        config.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
        configuration = config
        _session = URLSession(configuration: config, delegate: delegate, delegateQueue: nil)
        delegate.onCut = { [weak self] in self?.retireSession() }
    }

    deinit { sessionLock.withLock { _session }.invalidateAndCancel() }

    var session: URLSession { sessionLock.withLock { _session } }

    /// A transfer was cut (a cap, a limit): its session is let go and later requests use a new
    /// one. FoundationNetworking may go on reading a cut reply for seconds before its
    /// cancellation takes effect, and the session's other tasks wait behind it meanwhile.
    func retireSession() {
        let old: URLSession = sessionLock.withLock {
            let old = _session
            _session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            return old
        }
        DispatchQueue.global().async { old.finishTasksAndInvalidate() }
    }

    /// URLErrors that mean the request never left: nothing can have happened on the server.
    static let notSent: Set<URLError.Code> = [.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
                                              .unsupportedURL, .badURL]

    /// The most of a reply that is not a success a caller may ask to keep (`errorBodyBytes`): 64 KiB.
    package static let maxErrorBodyBytes = TransportDelegate.discardLimit

    /// What this transport has read so far.
    package var counters: TransportCounters { delegate.lock.withLock { delegate.counters } }
    /// Sets the counters back to zero.
    package func resetCounters() { delegate.lock.withLock { delegate.counters = TransportCounters() } }

    /// One request: its reply with a body of at most `maxBytes` (larger, announced or sent, is
    /// `.invalidResponse` and the transfer is cancelled there), within the limits (the round's,
    /// when in a round). The body of a reply that is not a success is not kept, unless
    /// `errorBodyBytes` asks for its first bytes (at most `maxErrorBodyBytes`: an S3 error's
    /// XML names its cause); past `maxErrorBodyBytes` its transfer is cut, its status is the
    /// answer. A failure before a reply is `.failed`, or `.ambiguous` for a `write` that may
    /// have reached the server; a limit met is `.timedOut`, or `.ambiguous` with the same words
    /// for a write. `statistics`, when given, counts the request and the bytes moved.
    package func send(_ request: URLRequest, path: String, write: Bool, maxBytes: Int, errorBodyBytes: Int = 0,
                      statistics: RemoteStatistics?) async throws(RemoteError) -> HTTPReply {
        let method = request.httpMethod ?? "GET"
        let sent = request.httpBody?.count ?? 0
        let budget = TransferBudget.current
        if let over = budget?.roundOver(path) { throw over }
        let limits = budget?.limits ?? self.limits
        let now = ContinuousClock.now
        var deadline = now + limits.requestDeadline
        var deadlineReason = RemoteTimeout.requestDeadline(seconds: limits.requestDeadline.seconds)
        if let end = budget?.roundEnds, end < deadline, let d = budget?.roundDeadline {
            deadline = end
            deadlineReason = .roundDeadline(seconds: d.seconds)
        }
        let transfer = Transfer(path: path, method: method, write: write, cap: max(0, maxBytes),
                                errorCap: min(max(0, errorBodyBytes), HTTPTransport.maxErrorBodyBytes), limits: limits, started: now,
                                deadline: deadline, deadlineReason: deadlineReason,
                                silenceBeforeReply: limits.silence + .seconds(Double(sent) / Double(limits.minimumRate)))
        let task = session.dataTask(with: request)
        transfer.task = task
        let delegate = self.delegate
        let result: Result<HTTPReply, RemoteError> = await withTaskCancellationHandler {
            await withCheckedContinuation { cont in
                transfer.continuation = cont
                delegate.start(transfer, id: ObjectIdentifier(task))
                task.resume()
            }
        } onCancel: {
            delegate.end(ObjectIdentifier(task), with: .failed(path, "\(method): the sync was cancelled"))
        }
        switch result {
        case .success(let reply):
            statistics?.record(sent: sent, received: reply.body.count)
            return reply
        case .failure(let error):
            statistics?.record(sent: sent, received: 0)
            throw error
        }
    }
}

/// One request in flight; every field is guarded by the delegate's lock.
final class Transfer: @unchecked Sendable {
    let path: String
    let method: String
    let write: Bool
    let cap: Int
    /// How much of a reply that is not a success is kept (see `HTTPTransport.send`).
    let errorCap: Int
    let limits: TransferLimits
    let deadline: ContinuousClock.Instant
    let deadlineReason: RemoteTimeout
    let silenceBeforeReply: Duration
    var task: URLSessionDataTask?
    var continuation: CheckedContinuation<Result<HTTPReply, RemoteError>, Never>?
    var response: HTTPURLResponse?
    var body: [UInt8] = []
    var challenged = false
    /// The reply is not a success: its body is not kept beyond `errorCap` bytes (mostly only its
    /// status is used), and a long one is cut after `TransportDelegate.discardLimit` bytes.
    var discarding = false
    var discarded = 0
    var lastActivity: ContinuousClock.Instant
    var windowStart: ContinuousClock.Instant?
    var windowBytes = 0

    init(path: String, method: String, write: Bool, cap: Int, errorCap: Int, limits: TransferLimits, started: ContinuousClock.Instant,
         deadline: ContinuousClock.Instant, deadlineReason: RemoteTimeout, silenceBeforeReply: Duration) {
        (self.path, self.method, self.write, self.cap, self.errorCap, self.limits) = (path, method, write, cap, errorCap, limits)
        (self.deadline, self.deadlineReason, self.silenceBeforeReply) = (deadline, deadlineReason, silenceBeforeReply)
        lastActivity = started
    }

    /// A limit met, as the error a caller sees: a write may have happened.
    func timeout(_ reason: RemoteTimeout) -> RemoteError {
        write ? .ambiguous(path, "\(method): \(reason)") : .timedOut(path, reason)
    }

    /// The limit this transfer has met at `now`, if any.
    func limitMet(at now: ContinuousClock.Instant) -> RemoteTimeout? {
        if now >= deadline { return deadlineReason }
        let silence = response == nil ? silenceBeforeReply : limits.silence
        if now - lastActivity >= silence { return .silent(seconds: (now - lastActivity).seconds.rounded(.down)) }
        if let start = windowStart, now - start >= limits.rateWindow {
            let seconds = (now - start).seconds
            if Double(windowBytes) < Double(limits.minimumRate) * seconds {
                return .tooSlow(bytes: windowBytes, seconds: seconds.rounded(.down), minimumRate: limits.minimumRate)
            }
            windowStart = now
            windowBytes = 0
        }
        return nil
    }
}

/// The session's delegate: routes each task's events to its `Transfer`, caps bodies, runs the
/// watchdog, refuses redirects and cancels challenges.
final class TransportDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let lock = NSLock()
    /// Called when a transfer is cut (see `HTTPTransport.retireSession`).
    var onCut: (@Sendable () -> Void)?
    private var transfers: [ObjectIdentifier: Transfer] = [:]
    var counters = TransportCounters()
    private var watchdog: DispatchSourceTimer?
    private static let tick = DispatchTimeInterval.milliseconds(50)

    func start(_ t: Transfer, id: ObjectIdentifier) {
        lock.withLock {
            transfers[id] = t
            if watchdog == nil {
                let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
                timer.schedule(deadline: .now() + Self.tick, repeating: Self.tick, leeway: .milliseconds(20))
                timer.setEventHandler { [weak self] in self?.check() }
                timer.resume()
                watchdog = timer
            }
        }
    }

    /// Ends a transfer with `error` (a limit, a cap, a cancellation): its caller resumes now, its
    /// task is cancelled, and what the task still delivers is dropped.
    func end(_ id: ObjectIdentifier, with error: RemoteError) { end(id, .failure(error)) }

    /// Ends a transfer with `result` (see `end(_:with:)`).
    func end(_ id: ObjectIdentifier, _ result: Result<HTTPReply, RemoteError>) {
        let t: Transfer? = lock.withLock { finish(id) }
        guard let t else { return }
        // Cancelled from another thread: `cancel` waits for FoundationNetworking's work queue,
        // which may be busy reading for a while; the delegate's queue must go on meanwhile, to
        // drop (and free) what is still delivered.
        if let task = t.task { DispatchQueue.global().async { task.cancel() } }
        onCut?()
        t.continuation?.resume(returning: result)
        t.continuation = nil
    }

    /// The most of a reply that is not a success read before it is cut (its status is the answer).
    static let discardLimit = 64 << 10

    /// Removes a transfer (under the lock); stops the watchdog when none is left.
    private func finish(_ id: ObjectIdentifier) -> Transfer? {
        guard let t = transfers.removeValue(forKey: id) else { return nil }
        t.body = []
        if transfers.isEmpty, let w = watchdog {
            w.cancel()
            watchdog = nil
        }
        return t
    }

    /// The watchdog: each transfer's limits in time.
    private func check() {
        let now = ContinuousClock.now
        let met: [(ObjectIdentifier, RemoteError)] = lock.withLock {
            var out: [(ObjectIdentifier, RemoteError)] = []
            for (id, t) in transfers { if let r = t.limitMet(at: now) { out.append((id, t.timeout(r))) } }
            counters.timedOut += out.count
            return out
        }
        for (id, e) in met { end(id, with: e) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        let id = ObjectIdentifier(dataTask)
        let refused: RemoteError? = lock.withLock {
            guard let t = transfers[id] else { return nil }
            t.response = response as? HTTPURLResponse
            t.lastActivity = .now
            t.windowStart = .now
            if let status = t.response?.statusCode, !(200..<300).contains(status) {
                t.discarding = true
                return nil
            }
            // A reply to HEAD announces the length of a body it never sends (RFC 9110 §9.3.2).
            let announced = t.method == "HEAD" ? 0 : response.expectedContentLength
            if announced > Int64(t.cap) {
                counters.cappedReplies += 1
                return .invalidResponse(t.path, "\(t.method): the server announced \(announced) bytes, more than \(t.cap)")
            }
            if announced > 0 { t.body.reserveCapacity(Int(announced)) }
            return nil
        }
        if let refused {
            // FoundationNetworking ignores the disposition: the task is cancelled by `end`.
            end(id, with: refused)
            completionHandler(.cancel)
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = ObjectIdentifier(dataTask)
        let refused: Result<HTTPReply, RemoteError>? = lock.withLock {
            guard let t = transfers[id] else {
                counters.droppedBytes += data.count
                return nil
            }
            t.lastActivity = .now
            t.windowBytes += data.count
            if t.discarding {
                let keep = min(data.count, t.errorCap - t.body.count)
                if keep > 0 {
                    data.prefix(keep).withUnsafeBytes { t.body.append(contentsOf: $0.bindMemory(to: UInt8.self)) }
                    counters.largestBody = max(counters.largestBody, t.body.count)
                }
                t.discarded += data.count
                guard t.discarded > Self.discardLimit, let r = t.response else { return nil }
                return .success(HTTPReply(status: r.statusCode, response: r, body: t.body, challenged: false))
            }
            guard t.body.count + data.count <= t.cap else {
                counters.cappedReplies += 1
                return .failure(.invalidResponse(t.path, "\(t.method): the reply is larger than \(t.cap) bytes"))
            }
            if t.body.count + data.count > t.body.capacity {
                // Grown geometrically, but never past the cap.
                t.body.reserveCapacity(min(t.cap, max(t.body.capacity * 2, t.body.count + data.count)))
            }
            data.withUnsafeBytes { t.body.append(contentsOf: $0.bindMemory(to: UInt8.self)) }
            counters.largestBody = max(counters.largestBody, t.body.count)
            return nil
        }
        if let refused { end(id, refused) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
                    totalBytesExpectedToSend: Int64) {
        lock.withLock { transfers[ObjectIdentifier(task)]?.lastActivity = .now }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let id = ObjectIdentifier(task)
        let outcome: (Transfer, Result<HTTPReply, RemoteError>)? = lock.withLock {
            guard let t = transfers[id] else { return nil }
            let body = t.body
            _ = finish(id)
            if t.challenged {
                let response = HTTPURLResponse(url: task.originalRequest?.url ?? URL(string: "http://127.0.0.1/")!, statusCode: 401,
                                               httpVersion: nil, headerFields: nil)!
                return (t, .success(HTTPReply(status: 401, response: response, body: [], challenged: true)))
            }
            if let error {
                let code = (error as? URLError)?.code
                // Refused before anything was sent: nothing can have happened.
                let url = task.originalRequest?.url
                let what = "\(t.method): \(Self.words(error, url: url))"
                if t.write, let code, !HTTPTransport.notSent.contains(code) { return (t, .failure(.ambiguous(t.path, what))) }
                // Nothing answered at all: the cause in words (no server, no such host, no network).
                if let code, HTTPTransport.notSent.contains(code) { return (t, .failure(.refused(t.path, .unreachable(Self.words(error, url: url))))) }
                return (t, .failure(.failed(t.path, what)))
            }
            guard let http = t.response ?? (task.response as? HTTPURLResponse) else {
                return (t, .failure(.invalidResponse(t.path, "not an HTTP reply")))
            }
            let encoded = (http.value(forHTTPHeaderField: "Content-Encoding") ?? "identity").lowercased() != "identity"
            // HEAD, 204 and 304 replies have no body whatever their Content-Length says.
            let bodiless = t.method == "HEAD" || http.statusCode == 204 || http.statusCode == 304
            if !encoded, !t.discarding, !bodiless, http.expectedContentLength >= 0, Int64(body.count) != http.expectedContentLength {
                // The connection ended before the announced length: a reply cut mid-body.
                let what = "\(t.method): the reply ended after \(body.count) of \(http.expectedContentLength) bytes"
                return (t, .failure(t.write ? .ambiguous(t.path, what) : .invalidResponse(t.path, what)))
            }
            return (t, .success(HTTPReply(status: http.statusCode, response: http, body: body, challenged: false)))
        }
        guard let (t, result) = outcome else { return }
        t.continuation?.resume(returning: result)
        t.continuation = nil
    }

    /// A connection's failure in words, naming the host (FoundationNetworking's own text is
    /// "The operation could not be completed. (NSURLErrorDomain error -1004.)").
    static func words(_ error: any Error, url: URL?) -> String {
        let host = url.map { ($0.host ?? "the server") + ($0.port.map { ":\($0)" } ?? "") } ?? "the server"
        guard let e = error as? URLError else { return "\(error)" }
        switch e.code {
        case .cannotConnectToHost: return "no server answers at \(host) (the connection was refused)"
        case .cannotFindHost, .dnsLookupFailed: return "the server's name \(host) was not found"
        case .notConnectedToInternet: return "this device has no network connection"
        case .networkConnectionLost: return "the connection to \(host) was lost"
        case .timedOut: return "no answer from \(host) in time"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
             .serverCertificateHasUnknownRoot:
            return "the secure connection to \(host) failed (its certificate was not accepted)"
        case .unsupportedURL, .badURL: return "the address is not one this device can use"
        default: return "the connection to \(host) failed (URL error \(e.code.rawValue))"
        }
    }

    /// Every redirect refused: the 3xx reply comes back to the caller, which fails the request
    /// (URLSession on Linux would re-send a `PUT` without its body).
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    /// A challenge (a 401 with WWW-Authenticate) is cancelled and remembered: credentials are sent
    /// with every request, so a challenge means they are missing or wrong and asking again would not
    /// help; and FoundationNetworking on Linux never completes a task whose challenge it handles by
    /// default without a credential (swift-corelibs-foundation#5456). The reply is a 401 with
    /// `challenged` set: the server refused the request before performing it.
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        lock.withLock { transfers[ObjectIdentifier(task)]?.challenged = true }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }
}
