// Text from files (titles, names, messages that quote them) shown safely on a terminal: a file
// from another device must not be able to move the cursor, set the window title, ring the bell,
// forge an extra `list` row or reverse the text around it.

import Foundation

/// `s` with every character a terminal would act on shown visibly instead: control characters
/// (C0, DEL, C1) as `\n`, `\t`, `\r`, `\e` or `\u{XX}`, line and paragraph separators and the
/// bidirectional controls as `\u{XXXX}`, and a backslash as `\\`, so what is shown reads back
/// unambiguously. Every command prints file-derived text through this (JSON output goes through
/// `jsonText`, which keeps the exact value).
func terminalSafe(_ s: String) -> String {
    var out = ""
    out.reserveCapacity(s.utf8.count)
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case "\u{1B}": out += "\\e"
        default:
            if isTerminalControl(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out
}

/// Characters a terminal acts on or that reorder the text around them.
func isTerminalControl(_ c: Unicode.Scalar) -> Bool {
    switch c.value {
    case 0x00...0x1F, 0x7F...0x9F: return true          // C0, DEL, C1 (CSI is U+009B)
    case 0x2028, 0x2029: return true                    // line and paragraph separators
    case 0x200E, 0x200F, 0x061C: return true            // LRM, RLM, ALM
    case 0x202A...0x202E, 0x2066...0x2069: return true  // embeddings, overrides, isolates
    default: return false
    }
}

/// JSON text with the characters `isTerminalControl` names written as `\uXXXX` escapes: the same
/// JSON value, but nothing in it a terminal acts on. (JSONSerialization escapes C0 controls
/// itself, but writes DEL, C1 and the bidirectional controls raw.) These characters can only
/// occur inside JSON strings, where an escape means the same character.
func jsonText(_ json: String) -> String {
    guard json.unicodeScalars.contains(where: isTerminalControl) else { return json }
    var out = ""
    for scalar in json.unicodeScalars {
        if isTerminalControl(scalar) && scalar.value >= 0x20 {
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}

/// A count and its noun, the noun plural unless the count is one: "1 page", "2 pages", "0 pages".
func counted(_ n: Int, _ noun: String) -> String {
    "\(n) " + (n == 1 ? noun : noun + "s")
}
