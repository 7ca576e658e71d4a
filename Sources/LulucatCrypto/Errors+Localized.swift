// What an app shows of a CryptoError: a sentence a note-taker reads (`errorDescription`, so
// `localizedDescription` is never Foundation's generic "could not be completed") and what they can
// do about it (`recoverySuggestion`). Encrypted data that fails a check is never used; the
// technical account stays in `description`, and none of it carries key material.

import Foundation

extension CryptoError: LocalizedError {
    /// What was refused, in plain words (`localizedDescription`).
    public var errorDescription: String? {
        switch self {
        case .backend: return "The device's encryption library failed, so nothing was encrypted or decrypted."
        case .invalidArgument: return "An encryption step was asked to do something it cannot do, so nothing was encrypted or decrypted."
        case .authenticationFailed, .tampered: return "Encrypted data was altered or damaged, so it was not used."
        case .notAnEncryptedObject: return "The data is not encrypted the way this app encrypts notes, so it was not used."
        case .truncated: return "Encrypted data is incomplete, so it was not used."
        case .unsupportedVersion: return "Encrypted data was made by a newer version of the app, so it was not used."
        case .malformed: return "Encrypted data is damaged, so it was not used."
        case .wrongKind: return "Encrypted data was found in the wrong place, so it was not used."
        case .wrongKey: return "Encrypted data was locked with the key of other notes, so it was not used."
        case .wrongDocument, .wrongName: return "Encrypted data was moved here from another note, so it was not used."
        case .notKeySettings: return "The encryption settings cannot be read, so they were not used."
        case .wrongPassphrase: return "The passphrase does not open the encrypted notes."
        case .weakKeySettings: return "The encryption settings are weaker than this app allows, so they were not used."
        }
    }

    /// What the person can do about it.
    public var recoverySuggestion: String? {
        switch self {
        case .backend, .invalidArgument: return "Try again; if it keeps failing, restart the app and report the problem."
        case .unsupportedVersion: return "Update the app on this device."
        case .wrongPassphrase: return "Enter the passphrase used on your other devices."
        case .wrongKey: return "Check that every device syncs these notes with the same passphrase."
        case .authenticationFailed, .tampered, .wrongDocument, .wrongName, .wrongKind:
            return "Sync again from a device that holds these notes; if it keeps happening, check who can change the files on the sync server."
        case .notAnEncryptedObject, .truncated, .malformed:
            return "Sync again from a device that holds these notes."
        case .notKeySettings, .weakKeySettings:
            return "Set up encrypted sync again from a device you trust."
        }
    }
}
