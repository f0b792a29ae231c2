"""Breaking-change checks between two versions of a project's tools."""
