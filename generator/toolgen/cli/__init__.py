"""The `toolgen` command line: verbs, options and printers over the library's API."""
