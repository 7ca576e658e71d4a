// `import LulucatStore` is enough for an app: the ink model (Stroke, Sample, Element, PageContent,
// PageChange, ...) comes with it.

@_exported import LulucatInk
