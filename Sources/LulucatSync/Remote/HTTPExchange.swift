// One HTTP request and its reply over URLSession, shared by the WebDAV and S3 remotes: an
// ephemeral session without caches or cookies, redirects refused, authentication challenges
// cancelled and remembered. The bounded streaming transport replaces this one function.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A URLSession as the remotes use it, and its one call.
final class HTTPExchange: @unchecked Sendable {
    let session: URLSession
    let delegate = RedirectRefuser()

    /// URLErrors that mean the request never left: nothing can have happened on the server.
    static let notSent: Set<URLError.Code> = [.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
                                              .unsupportedURL, .badURL]

    /// A session whose requests give up after `timeout` seconds of silence (four times that in all).
    init(timeout: TimeInterval) {
        let config = URLSessionConfiguration.ephemeral
        config.urlCache = nil
        config.requestCachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        config.httpCookieStorage = nil
        config.httpShouldSetCookies = false
        config.timeoutIntervalForRequest = timeout
        config.timeoutIntervalForResource = timeout * 4
        config.httpMaximumConnectionsPerHost = 4
        session = URLSession(configuration: config, delegate: delegate, delegateQueue: nil)
    }

    deinit { session.invalidateAndCancel() }

    /// Sends `request`: the reply (any status) or the transport's error, and whether the server
    /// answered with an authentication challenge (the task is then cancelled: see `RedirectRefuser`).
    func send(_ request: URLRequest) async -> (result: Result<(Data, URLResponse), Error>, challenged: Bool) {
        var request = request
        request.cachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        let session = self.session
        let (result, taskID): (Result<(Data, URLResponse), Error>, Int) = await withCheckedContinuation { cont in
            let id = TaskIdentifier()
            let task = session.dataTask(with: request) { data, response, error in
                if let error { cont.resume(returning: (.failure(error), id.value)) }
                else if let response { cont.resume(returning: (.success((data ?? Data(), response)), id.value)) }
                else { cont.resume(returning: (.failure(URLError(.badServerResponse)), id.value)) }
            }
            id.value = task.taskIdentifier
            task.resume()
        }
        return (result, delegate.wasChallenged(taskID))
    }
}

/// A task's identifier, set before the task can complete.
private final class TaskIdentifier: @unchecked Sendable {
    var value = 0
}

/// Refuses every redirect: the 3xx reply comes back to the caller, which fails the request.
final class RedirectRefuser: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    /// A challenge (a 401 with WWW-Authenticate) is cancelled and remembered: credentials are sent
    /// with every request, so a challenge means they are missing or wrong and asking again would not
    /// help; and FoundationNetworking on Linux never completes a task whose challenge it handles by
    /// default without a credential (swift-corelibs-foundation#5456). The caller turns the cancelled
    /// task into a 401 failure: the server refused the request before performing it.
    private let lock = NSLock()
    private var challenged: Set<Int> = []

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        _ = lock.withLock { challenged.insert(task.taskIdentifier) }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    /// Whether the task met an authentication challenge (and forgets it).
    func wasChallenged(_ task: Int) -> Bool { lock.withLock { challenged.remove(task) != nil } }
}
