"""One module per generated target; each turns the IR into source text."""
