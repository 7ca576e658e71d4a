// apply(_:to:): batches land whole or not at all, and the changes it returns undo them exactly
// (seeded random batches of every kind of change, on every engine).

import Foundation
import Testing
import LulucatInk
import LulucatHandwriting
@testable import LulucatStore
@testable import LulucatStoreSQLite
import LulucatStoreTesting

@Suite struct BatchUndoTests {
    init() { Library.enableSQLiteEngine() }
    private func stroke(_ rng: inout SeededRandom, _ n: Int) -> Stroke {
        let x0 = Int32(rng.next() % 5000), y0 = Int32(rng.next() % 5000)
        var samples: [Sample] = []
        for i in 0..<n {
            let x: Int32 = x0 + Int32(i * 7)
            let y: Int32 = y0 + Int32(i % 5)
            samples.append(Sample(x: x, y: y, radius: 10, pressure: 500, time: UInt32(i * 4)))
        }
        return Stroke(ink: Ink(tool: .pen, color: RGBA8(r: 1, g: 2, b: 3), width: 10), samples: samples)
    }

    private func randomChange(_ rng: inout SeededRandom, on content: PageContent) -> PageChange {
        let ids = content.elements.map(\.id)
        func subset() -> [UUID] { ids.filter { _ in rng.next() % 4 == 0 } }
        switch ids.isEmpty ? 0 : rng.next() % 6 {
        case 0: return .append((0..<Int(1 + rng.next() % 3)).map { _ in .stroke(stroke(&rng, 4)) })
        case 1: return .delete(subset())
        case 2:
            let id = ids[Int(rng.next() % UInt64(ids.count))]
            return .replace(id, with: (0..<Int(rng.next() % 3)).map { _ in .stroke(stroke(&rng, 3)) })
        case 3:
            let t = QuantizedTransform.translation(dx: Int32(rng.next() % 50), dy: -7)
            return .update(subset().map { t.apply(to: content.elements[content.index(of: $0)!]) })
        case 4:
            let moved = subset()
            let positions: [ZPosition] = [.front, .back, .index(Int(rng.next() % UInt64(ids.count - moved.count + 1)))]
            return .move(moved, to: positions[Int(rng.next() % 3)])
        default: return .resize(QuantizedSize(width: Int32(1000 + rng.next() % 9000), height: 8000))
        }
    }

    @Test(arguments: EngineKind.allCases)
    func randomBatchesUndoAndRedoExactly(engine: EngineKind) async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Undo", engine: engine)
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        var rng = SeededRandom(seed: engine == .snapshot ? 1 : engine == .journal ? 2 : 3)
        try await session.append((0..<20).map { _ in .stroke(stroke(&rng, 5)) }, to: page)
        for round in 0..<150 {
            let before = try await session.content(of: page)
            var expected = before
            var batch: [PageChange] = []
            for _ in 0..<Int(1 + rng.next() % 4) {
                let c = randomChange(&rng, on: expected)
                try expected.apply(c)
                batch.append(c)
            }
            let undo = try await session.apply(batch, to: page)
            #expect(try await session.content(of: page) == expected, "round \(round): \(batch)")
            let redo = try await session.apply(undo, to: page)
            #expect(try await session.content(of: page) == before, "round \(round): undo of \(batch)")
            try await session.apply(redo, to: page)
            #expect(try await session.content(of: page) == expected, "round \(round): redo of \(batch)")
            if round % 50 == 49 { try await session.save() }
        }
        let final = try await session.content(of: page)
        try await session.close()
        let again = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        #expect(try await again.content(of: page) == final)
        try await again.close()
    }

    /// A batch whose last change does not fit leaves the page as it was, and says which change.
    @Test func aBatchThatDoesNotFitChangesNothing() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "All or none")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        var rng = SeededRandom(seed: 9)
        let a = stroke(&rng, 4), b = stroke(&rng, 4)
        try await session.append(.stroke(a), to: page)
        try await session.save()
        let before = try await session.content(of: page)
        do {
            try await session.apply([.append([.stroke(b)]), .delete([a.id]), .delete([UUID()])], to: page)
            Issue.record("an unfit batch was applied")
        } catch {
            guard case .invalidArgument(let m) = error else { Issue.record("\(error)"); return }
            #expect(m.contains("change 3 of 3"))
        }
        #expect(try await session.content(of: page) == before)
        #expect(await session.dirtyPageIDs.isEmpty)
        try await session.close()
    }
}

extension DocumentSession {
    /// Appends elements given one by one (a test convenience).
    func append(_ element: Element, to page: UUID) throws(StoreError) { try append([element], to: page) }
}

#if canImport(Darwin)
typealias ExampleUndoManager = UndoManager
#else
/// swift-corelibs-foundation has no UndoManager: this keeps its rules that the example relies on
/// (an action registered while undoing is a redo, one registered otherwise clears the redo stack).
@MainActor final class ExampleUndoManager {
    private var undoStack: [() -> Void] = [], redoStack: [() -> Void] = []
    private var undoing = false, redoing = false
    var groupsByEvent = true
    var canUndo: Bool { !undoStack.isEmpty }
    var canRedo: Bool { !redoStack.isEmpty }
    func beginUndoGrouping() {}
    func endUndoGrouping() {}
    func registerUndo<T: AnyObject>(withTarget target: T, handler: @escaping (T) -> Void) {
        let action = { [target] in handler(target) }
        if undoing { redoStack.append(action) } else {
            undoStack.append(action)
            if !redoing { redoStack = [] }
        }
    }
    func undo() { guard let a = undoStack.popLast() else { return }; undoing = true; a(); undoing = false }
    func redo() { guard let a = redoStack.popLast() else { return }; redoing = true; a(); redoing = false }
}
#endif

/// The README's undo example, as written there.
@MainActor final class UndoCanvas {
    let session: DocumentSession
    let undoManager: ExampleUndoManager
    init(session: DocumentSession, undoManager: ExampleUndoManager) { self.session = session; self.undoManager = undoManager }

    func perform(_ changes: [PageChange], on page: UUID) async throws {
        let inverse = try await session.apply(changes, to: page)
        register(undo: inverse, redo: changes, on: page)
    }

    /// The redo is registered inside the undo handler, synchronously, so UndoManager files it as a redo.
    func register(undo: [PageChange], redo: [PageChange], on page: UUID) {
        undoManager.registerUndo(withTarget: self) { canvas in
            canvas.register(undo: redo, redo: undo, on: page)
            Task { try await canvas.session.apply(undo, to: page) }
        }
    }
}

@Suite struct UndoManagerExampleTests {
    init() { Library.enableSQLiteEngine() }
    @MainActor @Test func undoAndRedoAnEraseThroughUndoManager() async throws {
        let tmp = TemporaryFolder()
        let library = Library(root: tmp.path)
        let package = try await library.createDocument(title: "Undo manager")
        let session = try await library.open(package.id, options: SessionOptions(autosaveDelay: nil, thumbnails: nil))
        let page = await session.pageIDs()[0]
        let strokes = (0..<3).map { sampleStroke(10, seed: $0) }
        try await session.append(strokes.map(Element.stroke), to: page)
        let before = try await session.content(of: page)
        let undoManager = ExampleUndoManager()
        undoManager.groupsByEvent = false
        let canvas = UndoCanvas(session: session, undoManager: undoManager)
        // Erase the middle of the second stroke: one replace, undone in one step.
        let pieces: [Element] = [.stroke(strokes[1].piece(0..<3)), .stroke(strokes[1].piece(6..<10))]
        undoManager.beginUndoGrouping()
        try await canvas.perform([.replace(strokes[1].id, with: pieces)], on: page)
        undoManager.endUndoGrouping()
        let erased = try await session.content(of: page)
        #expect(erased.elements.count == 4)
        #expect(undoManager.canUndo)
        undoManager.undo()
        try await eventually { try await session.content(of: page) == before }
        #expect(try await session.content(of: page) == before)
        #expect(undoManager.canRedo)
        undoManager.redo()
        try await eventually { try await session.content(of: page) == erased }
        #expect(try await session.content(of: page) == erased)
        try await session.close()
    }
}
