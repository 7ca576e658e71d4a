// LulucatStore: module entry; the types live in the files beside this one.
