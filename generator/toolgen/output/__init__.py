"""Output: staging, writing and committing the package, checking it, and telling when it drifted."""
