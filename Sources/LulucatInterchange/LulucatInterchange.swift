// LulucatInterchange: getting notes out of and into the app.
//
// - `Zip/`: `ZipWriter` and `ZipReader`, a zip archive writer and an untrusted-input reader over
//   the system zlib (`docs/export-format.md`).
// - `Package/`: `PackageArchive` and `PackageLayout`, a document package as one zip file.
// - `InkML/`: `InkMLReader` and `InkMLWriter`, W3C InkML import and export (`docs/inkml.md`).
